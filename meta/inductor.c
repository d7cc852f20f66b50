/* meta/inductor.c: argument names and Triton types from Inductor modules.
 *
 * Inductor writes each generated kernel into a Python module
 * <root>/<xx>/<hash>.py (root: $TORCHINDUCTOR_CACHE_DIR, else
 * /tmp/torchinductor_$USER, plus opts->inductor_dirs) whose decorator holds
 *   triton_meta={'signature': {'in_ptr0': '*fp32', 'xnumel': 'i32', 'XBLOCK': 'constexpr'}, ...}
 * just before `def <kernel>(...)`.  The module is found from the path the
 * kernel's TTIR names in its first `#loc = loc("<path>":...)` (tried as is,
 * then as <xx>/<hash>.py under each root, for a moved cache), or, for a
 * Triton kernel that matched no cache entry, through an index of the `def
 * triton_*` lines of every module under the roots (rebuilt on a miss at most
 * once every KT_INDUCTOR_RESCAN_MS).  Constexpr arguments are dropped, as in
 * the cubin.
 *
 * Owns the module index, kt_inductor_signature, kt_inductor_lookup,
 * kt_inductor_read_module and kt_ttir_module_path.  Calls kt_read_file and
 * kt_inductor_roots (triton_cache.c) through meta_internal.h, and libc.
 */
#include "meta/meta_internal.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define KT_INDUCTOR_RESCAN_MS 2000
#define KT_INDUCTOR_MAX_MODULE (16u << 20)
#define KT_INDUCTOR_MAX_DEFS 200000

void kt_sig_args_free(struct kt_sig_arg *args, int n)
{
	for (int i = 0; i < n; i++) {
		free(args[i].name);
		free(args[i].type);
	}
}

/* A quoted Python string at *pp ('...' or "..."); advances past it. */
static int read_quoted(const char **pp, const char *e, const char **s, size_t *n)
{
	const char *p = *pp;
	if (p >= e || (*p != '\'' && *p != '"'))
		return -1;
	char q = *p++;
	const char *start = p;
	while (p < e && *p != q && *p != '\n')
		p++;
	if (p >= e || *p != q)
		return -1;
	*s = start;
	*n = (size_t)(p - start);
	*pp = p + 1;
	return 0;
}

static const char *find_def(const char *text, size_t len, const char *kernel)
{
	char pat[512];
	int pl = snprintf(pat, sizeof pat, "def %s(", kernel);
	if (pl <= 0 || (size_t)pl >= sizeof pat)
		return NULL;
	const char *p = text, *e = text + len;
	while (p < e) {
		const char *d = memmem(p, (size_t)(e - p), pat, (size_t)pl);
		if (!d)
			return NULL;
		if (d == text || d[-1] == '\n' || d[-1] == ' ')
			return d;
		p = d + 1;
	}
	return NULL;
}

static const char *last_before(const char *text, const char *end, const char *pat)
{
	size_t pl = strlen(pat);
	const char *last = NULL, *p = text;
	while (p < end) {
		const char *d = memmem(p, (size_t)(end - p), pat, pl);
		if (!d)
			break;
		last = d;
		p = d + 1;
	}
	return last;
}

int kt_inductor_signature(const char *text, size_t len, const char *kernel, struct kt_sig_arg *args, int max)
{
	const char *def = find_def(text, len, kernel);
	if (!def)
		return -1;
	const char *sig = last_before(text, def, "'signature': {");
	if (!sig)
		return -1;
	const char *prevdef = last_before(sig, def, "\ndef ");
	if (prevdef)
		return -1; /* the signature belongs to another kernel */
	const char *p = sig + strlen("'signature': {"), *e = def;
	int n = 0;
	for (;;) {
		while (p < e && (*p == ' ' || *p == ',' || *p == '\n'))
			p++;
		if (p >= e)
			goto bad;
		if (*p == '}')
			break;
		const char *k, *v;
		size_t kn, vn;
		if (read_quoted(&p, e, &k, &kn) != 0)
			goto bad;
		while (p < e && *p == ' ')
			p++;
		if (p >= e || *p != ':')
			goto bad;
		p++;
		while (p < e && *p == ' ')
			p++;
		if (read_quoted(&p, e, &v, &vn) != 0)
			goto bad;
		if (vn == 9 && !memcmp(v, "constexpr", 9))
			continue;
		if (n >= max)
			goto bad;
		args[n].name = kt_strndup(k, kn);
		args[n].type = kt_strndup(v, vn);
		n++;
		if (!args[n - 1].name || !args[n - 1].type)
			goto bad;
	}
	return n;
bad:
	kt_sig_args_free(args, n);
	return -1;
}

int kt_ttir_module_path(const char *text, size_t len, char *path, size_t pathlen)
{
	static const char pat[] = "#loc = loc(\"";
	const char *p = memmem(text, len, pat, sizeof pat - 1);
	if (!p)
		return -1;
	p += sizeof pat - 1;
	const char *e = text + len;
	const char *q = p;
	while (q < e && *q != '"' && *q != '\n')
		q++;
	size_t n = (size_t)(q - p);
	if (q >= e || *q != '"' || n < 4 || n >= pathlen || memcmp(q - 3, ".py", 3) != 0)
		return -1;
	memcpy(path, p, n);
	path[n] = 0;
	return 0;
}

char *kt_inductor_read_module(const struct ktrace_meta_opts *opts, const char *path, size_t *len)
{
	char *t = kt_read_file(path, KT_INDUCTOR_MAX_MODULE, len);
	if (t)
		return t;
	/* a moved cache: <xx>/<hash>.py under each root */
	const char *slash = strrchr(path, '/');
	if (!slash || slash == path)
		return NULL;
	const char *prev = slash - 1;
	while (prev > path && *prev != '/')
		prev--;
	if (*prev != '/')
		return NULL;
	char (*roots)[4096] = malloc(8 * sizeof *roots);
	if (!roots)
		return NULL;
	int nr = kt_inductor_roots(opts, roots, 8);
	for (int i = 0; i < nr && !t; i++) {
		char p[8200];
		snprintf(p, sizeof p, "%s%s", roots[i], prev);
		t = kt_read_file(p, KT_INDUCTOR_MAX_MODULE, len);
	}
	free(roots);
	return t;
}

/* ---- fallback index: kernel name -> module --------------------------------- */

/* One `def triton_*(` line: the kernel it defines and its module. */
struct kernel_def {
	char *kernel;
	char *path;
};

static struct {
	pthread_mutex_t mu;
	struct kernel_def *defs;
	size_t n, cap;
	struct timespec last_scan;
	int scanned;
	char roots_key[1024];
} ind = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* Fork hooks (kernel_meta.h), called by libktrace.so's fork handler. */
KT_META_FORK_HOOKS(ktrace_inductor_cache, ind.mu)

static int cmp_def(const void *a, const void *b)
{
	const struct kernel_def *x = a, *y = b;
	int c = strcmp(x->kernel, y->kernel);
	return c ? c : strcmp(x->path, y->path);
}

/* Add the `def triton_*(` lines of the module at path to the index. */
static void index_module(const char *path)
{
	size_t len;
	char *text = kt_read_file(path, KT_INDUCTOR_MAX_MODULE, &len);
	if (!text)
		return;
	const char *p = text, *e = text + len;
	while (p < e && ind.n < KT_INDUCTOR_MAX_DEFS) {
		const char *def = memmem(p, (size_t)(e - p), "def triton_", 11);
		if (!def)
			break;
		const char *name = def + 4, *name_end = name;
		while (name_end < e && (*name_end == '_' || (*name_end >= '0' && *name_end <= '9') ||
					(*name_end >= 'a' && *name_end <= 'z') || (*name_end >= 'A' && *name_end <= 'Z')))
			name_end++;
		p = name_end;
		if (name_end >= e || *name_end != '(' || (def != text && def[-1] != '\n' && def[-1] != ' '))
			continue;
		if (ktrace_grow(&ind.defs, &ind.cap, ind.n + 1, sizeof *ind.defs))
			break;
		char *kernel = kt_strndup(name, (size_t)(name_end - name)), *module = strdup(path);
		if (!kernel || !module) {
			free(kernel);
			free(module);
			break;
		}
		ind.defs[ind.n++] = (struct kernel_def){.kernel = kernel, .path = module};
	}
	free(text);
}

/* Index every module <root>/<xx>/<name>.py. */
static void scan_root(const char *root)
{
	DIR *d = opendir(root);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || strlen(de->d_name) != 2)
			continue;
		char sub[4200];
		snprintf(sub, sizeof sub, "%s/%s", root, de->d_name);
		DIR *subdir = opendir(sub);
		if (!subdir)
			continue;
		struct dirent *fe;
		while ((fe = readdir(subdir)) != NULL) {
			size_t len = strlen(fe->d_name);
			if (len < 4 || strcmp(fe->d_name + len - 3, ".py") != 0)
				continue;
			char path[4500];
			snprintf(path, sizeof path, "%s/%s", sub, fe->d_name);
			index_module(path);
		}
		closedir(subdir);
	}
	closedir(d);
}

static void rescan(char roots[][4096], int nr)
{
	for (size_t i = 0; i < ind.n; i++) {
		free(ind.defs[i].kernel);
		free(ind.defs[i].path);
	}
	ind.n = 0;
	for (int i = 0; i < nr; i++)
		scan_root(roots[i]);
	if (ind.n > 1)
		qsort(ind.defs, ind.n, sizeof *ind.defs, cmp_def);
	clock_gettime(CLOCK_MONOTONIC, &ind.last_scan);
	ind.scanned = 1;
}

static size_t first_def(const char *kernel)
{
	size_t lo = 0, hi = ind.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(ind.defs[mid].kernel, kernel) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Extents of the same kernel in another module: any that differ are unknown. */
static void agree_extents(uint64_t *extents, const uint64_t *other, int n)
{
	for (int j = 0; j < n; j++)
		if (extents[j] != other[j])
			extents[j] = 0;
}

int kt_inductor_lookup(const struct ktrace_meta_opts *opts, const char *kernel, uint32_t nargs,
		       struct kt_sig_arg *args, int max, uint64_t *extents)
{
	char (*roots)[4096] = malloc(8 * sizeof *roots);
	if (!roots)
		return -1;
	int nr = kt_inductor_roots(opts, roots, 8);
	if (nr == 0) {
		free(roots);
		return -1;
	}
	char key[1024] = "";
	for (int i = 0; i < nr; i++) {
		size_t l = strlen(key);
		snprintf(key + l, sizeof key - l, "%s:", roots[i]);
	}
	int n = -1;
	pthread_mutex_lock(&ind.mu);
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	int64_t since = (int64_t)(now.tv_sec - ind.last_scan.tv_sec) * 1000 +
			(now.tv_nsec - ind.last_scan.tv_nsec) / 1000000;
	size_t i = 0;
	int changed = strcmp(key, ind.roots_key) != 0;
	if (!ind.scanned || changed) {
		snprintf(ind.roots_key, sizeof ind.roots_key, "%s", key);
		rescan(roots, nr);
	}
	i = first_def(kernel);
	if ((i >= ind.n || strcmp(ind.defs[i].kernel, kernel) != 0) && !changed && ind.scanned &&
	    since >= KT_INDUCTOR_RESCAN_MS) {
		rescan(roots, nr);
		i = first_def(kernel);
	}
	/* every module defining the kernel must agree on the signature */
	for (; i < ind.n && !strcmp(ind.defs[i].kernel, kernel); i++) {
		size_t len;
		char *t = kt_read_file(ind.defs[i].path, KT_INDUCTOR_MAX_MODULE, &len);
		if (!t)
			continue;
		struct kt_sig_arg tmp[256];
		uint64_t ext[256];
		int m = kt_inductor_signature(t, len, kernel, tmp, 256);
		if (m >= 0 && m <= 256)
			kt_inductor_extents(t, len, kernel, tmp, m, ext);
		free(t);
		if (m < 0 || (uint32_t)m > nargs || nargs - (uint32_t)m > 2 || m > max) {
			if (m > 0)
				kt_sig_args_free(tmp, m);
			continue;
		}
		if (n < 0) {
			memcpy(args, tmp, (size_t)m * sizeof *tmp);
			if (extents)
				memcpy(extents, ext, (size_t)m * sizeof *ext);
			n = m;
			continue;
		}
		if (extents && m == n)
			agree_extents(extents, ext, m);
		int same = m == n;
		for (int j = 0; same && j < m; j++)
			same = !strcmp(args[j].name, tmp[j].name) && !strcmp(args[j].type, tmp[j].type);
		kt_sig_args_free(tmp, m);
		if (!same) {
			kt_sig_args_free(args, n);
			n = -1;
			break;
		}
	}
	pthread_mutex_unlock(&ind.mu);
	free(roots);
	return n;
}
