/* test/unit/meta_cuobjdump_test.c: every parameter's ordinal, offset, size,
 * pointer space and alignment, every kernel's parameter buffer size and launch
 * bounds, as read by meta/, equal what `cuobjdump -elf` printed for the same
 * cubins (reference dumps in test/fixtures/cuobjdump/, see its README); and
 * the fatbin entries cuobjdump lists are the ones meta/ picks per sm. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test/unit/meta_testutil.h"

static struct dump_kernel dk[256];

/* Compare one dump with the parse of one image; returns parameters compared. */
static int compare(const char *dump, const char *image)
{
	int n = meta_read_dump(dump, dk, 256);
	if (n <= 0)
		print_error("cannot read %s\n", dump);
	assert_true(n > 0);
	struct ktrace_meta_image *img = meta_parse_path(image, 0, 0);
	int compared = 0, matched = 0;
	for (int i = 0; i < n; i++) {
		const struct ktrace_meta_kernel *k = ktrace_meta_find(img, dk[i].name);
		if (!k) {
			/* -G builds give device functions their own .nv.info section */
			if (dk[i].nparams != 0)
				print_error("%s: kernel %s of the dump missing\n", image, dk[i].name);
			assert_int_equal(dk[i].nparams, 0);
			continue;
		}
		matched++;
		if ((int)k->nparams != dk[i].nparams)
			print_error("%s: %s: %u parameters, cuobjdump %d\n", image, k->name, k->nparams, dk[i].nparams);
		assert_int_equal(k->nparams, dk[i].nparams);
		assert_int_equal(k->layout_source, KTRACE_LAYOUT_NVINFO);
		for (int j = 0; j < dk[i].nparams; j++) {
			const struct dump_param *d = &dk[i].p[j];
			assert_in_range(d->ordinal, 0, (int)k->nparams - 1);
			const struct ktrace_meta_param *p = &k->params[d->ordinal];
			if ((int)p->offset != d->offset || (int)p->size != d->size)
				print_error("%s: %s param %d: offset %u size %u, cuobjdump %d %d\n", image, k->name,
					    d->ordinal, p->offset, p->size, d->offset, d->size);
			assert_int_equal(p->ordinal, d->ordinal);
			assert_int_equal(p->offset, d->offset);
			assert_int_equal(p->size, d->size);
			assert_int_equal(p->space, d->space);
			assert_int_equal(p->log_align, d->log_align);
			compared++;
		}
		if (dk[i].cbank_param_size >= 0)
			assert_int_equal(k->param_bytes, dk[i].cbank_param_size);
		if (dk[i].max_threads[0])
			assert_int_equal(k->max_threads,
					 dk[i].max_threads[0] * dk[i].max_threads[1] * dk[i].max_threads[2]);
		else
			assert_int_equal(k->max_threads, 0);
		for (int r = 0; r < 3; r++)
			assert_int_equal(k->reqntid[r], dk[i].reqntid[r]);
		assert_int_equal(k->cuda_api_version, dk[i].cuda_api_version);
	}
	/* and nothing extra on our side */
	assert_int_equal(matched, img->nkernels);
	ktrace_meta_free(img);
	return compared;
}

static void check_built(const char *cubin)
{
	char buf[512], dump[512];
	const char *img = meta_cubin(cubin, buf, sizeof buf);
	META_NEED(img, cubin);
	snprintf(dump, sizeof dump, META_FIXTURES "/%s.elf.txt", cubin);
	int c = compare(dump, img);
	assert_true(c > 90); /* kernels.cu has 98 parameters; handwritten 16 */
}

static void test_sm80(void **s) { (void)s; check_built("kernels_sm80.cubin"); }
static void test_sm90(void **s) { (void)s; check_built("kernels_sm90.cubin"); }
static void test_sm100(void **s) { (void)s; check_built("kernels_sm100.cubin"); }
static void test_sm120(void **s) { (void)s; check_built("kernels_sm120.cubin"); }
static void test_sm90_G(void **s) { (void)s; check_built("kernels_sm90_G.cubin"); }
static void test_sm120_G(void **s) { (void)s; check_built("kernels_sm120_G.cubin"); }
static void test_sm90_lineinfo(void **s) { (void)s; check_built("kernels_sm90_lineinfo.cubin"); }

static void test_handwritten(void **s)
{
	(void)s;
	char buf[512];
	const char *img = meta_cubin("handwritten_sm90.cubin", buf, sizeof buf);
	META_NEED(img, "handwritten_sm90.cubin");
	assert_int_equal(compare(META_FIXTURES "/handwritten_sm90.cubin.elf.txt", img), 16);
}

/* The Triton fixture cubins are in the repository: these always run. */
static void test_triton_fixtures(void **s)
{
	(void)s;
	DIR *d = opendir(META_FIXTURES);
	assert_non_null(d);
	struct dirent *de;
	int files = 0, params = 0;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "triton-", 7) != 0 || !strstr(de->d_name, ".elf.txt"))
			continue;
		/* triton-<hash8>-<kernel>.cubin.elf.txt */
		char hash[9], kernel[256];
		memcpy(hash, de->d_name + 7, 8);
		hash[8] = 0;
		snprintf(kernel, sizeof kernel, "%s", de->d_name + 16);
		*strstr(kernel, ".elf.txt") = 0;
		DIR *t = opendir(META_TRITON);
		assert_non_null(t);
		struct dirent *he;
		char image[1024] = "";
		while ((he = readdir(t)) != NULL)
			if (!strncmp(he->d_name, hash, 8))
				snprintf(image, sizeof image, META_TRITON "/%s/%s", he->d_name, kernel);
		closedir(t);
		assert_true(image[0]);
		char dump[1024];
		snprintf(dump, sizeof dump, META_FIXTURES "/%s", de->d_name);
		params += compare(dump, image);
		files++;
	}
	closedir(d);
	assert_int_equal(files, 5);
	assert_int_equal(params, 6 + 5 + 9 + 5 + 6);
}

/* cuobjdump --list-elf / --list-ptx of a fatbin: for every listed ELF sm,
 * parsing for that sm uses that ELF; for an sm above every ELF and at or
 * above the PTX, the PTX. */
static void check_list(const char *fatbin)
{
	char buf[512], list[512], line[512];
	const char *img = meta_cubin(fatbin, buf, sizeof buf);
	META_NEED(img, fatbin);
	snprintf(list, sizeof list, META_FIXTURES "/%s.list.txt", fatbin);
	FILE *f = fopen(list, "r");
	assert_non_null(f);
	int nelf = 0, nptx = 0;
	uint32_t ptx_sm = 0;
	while (fgets(line, sizeof line, f)) {
		const char *sm = strstr(line, ".sm_");
		if (!sm)
			continue;
		uint32_t v = (uint32_t)strtoul(sm + 4, NULL, 10);
		if (!strncmp(line, "ELF file", 8)) {
			struct ktrace_meta_image *m = meta_parse_path(img, v, 0);
			assert_true(m->nkernels > 0);
			for (uint32_t i = 0; i < m->nkernels; i++)
				assert_int_equal(m->kernels[i].sm, v);
			ktrace_meta_free(m);
			nelf++;
		} else if (!strncmp(line, "PTX file", 8)) {
			ptx_sm = v;
			nptx++;
		}
	}
	fclose(f);
	assert_true(nelf > 0);
	if (nptx) {
		/* an sm with no ELF of its major, at or above the PTX: JIT from PTX */
		struct ktrace_meta_image *m = meta_parse_path(img, ptx_sm + 10 - ptx_sm % 10 + 100, 0);
		for (uint32_t i = 0; i < m->nkernels; i++) {
			assert_int_equal(m->kernels[i].layout_source, KTRACE_LAYOUT_PTX);
			assert_int_equal(m->kernels[i].sm, 0);
		}
		ktrace_meta_free(m);
	}
}

static void test_list_multi(void **s) { (void)s; check_list("kernels_multi.fatbin"); }
static void test_list_compress_all(void **s) { (void)s; check_list("kernels_compress_all.fatbin"); }
static void test_list_mode_size(void **s) { (void)s; check_list("kernels_mode_size.fatbin"); }
static void test_list_mode_speed(void **s) { (void)s; check_list("kernels_mode_speed.fatbin"); }
static void test_list_mode_none(void **s) { (void)s; check_list("kernels_mode_none.fatbin"); }
static void test_list_handwritten(void **s) { (void)s; check_list("handwritten.fatbin"); }

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_triton_fixtures),
		cmocka_unit_test(test_sm80),
		cmocka_unit_test(test_sm90),
		cmocka_unit_test(test_sm100),
		cmocka_unit_test(test_sm120),
		cmocka_unit_test(test_sm90_G),
		cmocka_unit_test(test_sm120_G),
		cmocka_unit_test(test_sm90_lineinfo),
		cmocka_unit_test(test_handwritten),
		cmocka_unit_test(test_list_multi),
		cmocka_unit_test(test_list_compress_all),
		cmocka_unit_test(test_list_mode_size),
		cmocka_unit_test(test_list_mode_speed),
		cmocka_unit_test(test_list_mode_none),
		cmocka_unit_test(test_list_handwritten),
	};
	return cmocka_run_group_tests_name("meta_cuobjdump", tests, NULL, NULL);
}
