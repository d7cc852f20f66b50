/* test/unit/meta_testutil.c: see meta_testutil.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test/unit/meta_testutil.h"

const char *meta_cubin(const char *name, char *buf, size_t cap)
{
	const char *b = getenv("BUILD");
	snprintf(buf, cap, "%s/cubins/%s", b && *b ? b : "build", name);
	return access(buf, R_OK) == 0 ? buf : NULL;
}

static int hexnum(const char *line, const char *key, int *out)
{
	const char *p = strstr(line, key);
	if (!p)
		return 0;
	p += strlen(key);
	while (*p == ' ' || *p == '\t' || *p == ':')
		p++;
	*out = (int)strtol(p, NULL, 0);
	return 1;
}

int meta_read_dump(const char *path, struct dump_kernel *out, int max)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char line[8192];
	int n = -1;
	char attr[128] = "";
	int vals_for = 0; /* 1: the next Value line belongs to attr */
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, ".nv.info.", 9)) {
			if (n + 1 >= max)
				break;
			n++;
			memset(&out[n], 0, sizeof out[n]);
			snprintf(out[n].name, sizeof out[n].name, "%.1000s", line + 9);
			out[n].cbank_param_size = -1;
			attr[0] = 0;
			continue;
		}
		if (n < 0)
			continue;
		struct dump_kernel *k = &out[n];
		const char *a = strstr(line, "Attribute:");
		if (a) {
			a += 10;
			while (*a == ' ' || *a == '\t')
				a++;
			snprintf(attr, sizeof attr, "%.100s", a);
			vals_for = 1;
			continue;
		}
		const char *v = strstr(line, "Value:");
		if (!strncmp(attr, "EIATTR_KPARAM_INFO", 18)) {
			int ord, off, size;
			if (hexnum(line, "Ordinal", &ord) && hexnum(line, "Offset", &off) && hexnum(line, "Size", &size) &&
			    k->nparams < (int)(sizeof k->p / sizeof k->p[0])) {
				struct dump_param *p = &k->p[k->nparams++];
				p->ordinal = ord;
				p->offset = off;
				p->size = size;
			} else if (k->nparams && hexnum(line, "logAlignment", &ord)) {
				struct dump_param *p = &k->p[k->nparams - 1];
				p->log_align = ord;
				hexnum(line, "Space", &p->space);
			}
			continue;
		}
		if (!v || !vals_for)
			continue;
		v += 6;
		vals_for = 0;
		if (!strcmp(attr, "EIATTR_CBANK_PARAM_SIZE"))
			k->cbank_param_size = (int)strtol(v, NULL, 0);
		else if (!strcmp(attr, "EIATTR_CUDA_API_VERSION"))
			k->cuda_api_version = (int)strtol(v, NULL, 0);
		else if (!strcmp(attr, "EIATTR_MAX_THREADS") || !strcmp(attr, "EIATTR_REQNTID")) {
			int *dst = attr[7] == 'M' ? k->max_threads : k->reqntid;
			char *e;
			for (int i = 0; i < 3; i++) {
				dst[i] = (int)strtol(v, &e, 0);
				v = e;
			}
		}
	}
	fclose(f);
	return n + 1;
}

struct ktrace_meta_image *meta_parse_path(const char *path, uint32_t sm, int dwarf)
{
	struct ktrace_meta_opts o = {.device_sm = sm, .use_dwarf = dwarf};
	struct ktrace_meta_image *img = NULL;
	char err[512];
	int rc = ktrace_meta_parse_file(path, &o, &img, err, sizeof err);
	if (rc != 0)
		print_error("%s\n", err);
	assert_int_equal(rc, 0);
	assert_non_null(img);
	return img;
}

const struct ktrace_meta_kernel *meta_kernel(const struct ktrace_meta_image *img, const char *name)
{
	const struct ktrace_meta_kernel *k = ktrace_meta_find(img, name);
	if (!k)
		print_error("kernel %s not found\n", name);
	assert_non_null(k);
	return k;
}

uint8_t *meta_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	assert_true(n > 0);
	uint8_t *buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = 0;
	fclose(f);
	*len = (size_t)n;
	return buf;
}
