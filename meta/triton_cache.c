/* meta/triton_cache.c: argument names from Triton's on-disk cache.
 *
 * Roots searched: opts->triton_dirs; with use_env_caches also
 * $TRITON_CACHE_DIR (else ~/.triton/cache) and <inductor root>/triton (for
 * each Inductor cache root, see inductor.c).  Every `*.cubin` up to three
 * levels below a root is indexed by size (one process-wide index, guarded by
 * a mutex; a lookup considers only the roots its options name).  A loaded
 * image is matched byte for byte against the cubins of its size (the file
 * named <kernel>.cubin first); on a miss the roots are rescanned, at most
 * once every KT_TRITON_RESCAN_MS.  Beside the matching cubin, <kernel>.ttir
 * (else .source) carries
 *   tt.func public @k(%x_ptr: !tt.ptr<f32> {...} loc("x_ptr"(#loc)), ...)
 * TTIR argument i is cubin parameter i (constexprs are gone); the one or two
 * parameters after them are Triton's global and profile scratch pointers.
 * The .ttir and the <kernel>.ptx beside it also say which parameters the
 * kernel can write through (ttir_writes.c, ptx_writes.c).
 *
 * Owns the cubin index, kt_triton_find, kt_triton_names, the cache roots
 * (kt_triton_roots, kt_inductor_roots) and kt_read_file.  Calls inductor.c,
 * the name setters, ttir_writes.c and ptx.c through meta_internal.h,
 * common/read_all.h and libc.
 */
#include "meta/meta_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/read_all.h"

#define KT_TRITON_RESCAN_MS 250
#define KT_TRITON_MAX_FILES 200000
#define KT_TRITON_MAX_ROOTS 32

char *kt_read_file(const char *path, size_t max, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > max) {
		close(fd);
		return NULL;
	}
	size_t n = (size_t)st.st_size;
	char *buf = malloc(n + 1);
	if (!buf) {
		close(fd);
		return NULL;
	}
	size_t got = ktrace_read_all(fd, buf, n);
	close(fd);
	buf[got] = 0;
	if (len)
		*len = got;
	return buf;
}

static int add_root(char roots[][4096], int n, int max, const char *a, const char *b)
{
	if (n >= max || !a || !*a)
		return n;
	char p[4096];
	if (snprintf(p, sizeof p, "%s%s", a, b ? b : "") >= (int)sizeof p)
		return n;
	for (int i = 0; i < n; i++)
		if (!strcmp(roots[i], p))
			return n;
	memcpy(roots[n], p, strlen(p) + 1);
	return n + 1;
}

/* add_root of each directory of the NULL-terminated list dirs (NULL: none). */
static int add_roots(char roots[][4096], int n, int max, const char *const *dirs)
{
	for (int i = 0; dirs && dirs[i]; i++)
		n = add_root(roots, n, max, dirs[i], NULL);
	return n;
}

int kt_inductor_roots(const struct ktrace_meta_opts *opts, char roots[][4096], int max)
{
	int n = add_roots(roots, 0, max, opts->inductor_dirs);
	if (opts->use_env_caches) {
		const char *d = getenv("TORCHINDUCTOR_CACHE_DIR");
		if (d && *d) {
			n = add_root(roots, n, max, d, NULL);
		} else {
			const char *u = getenv("USER");
			char p[512];
			snprintf(p, sizeof p, "/tmp/torchinductor_%s", u && *u ? u : "root");
			n = add_root(roots, n, max, p, NULL);
		}
	}
	return n;
}

int kt_triton_roots(const struct ktrace_meta_opts *opts, char roots[][4096], int max)
{
	int n = add_roots(roots, 0, max, opts->triton_dirs);
	if (opts->use_env_caches) {
		const char *d = getenv("TRITON_CACHE_DIR");
		const char *home = getenv("HOME");
		if (d && *d)
			n = add_root(roots, n, max, d, NULL);
		else if (home && *home)
			n = add_root(roots, n, max, home, "/.triton/cache");
	}
	char ind[8][4096];
	int ni = kt_inductor_roots(opts, ind, 8);
	for (int i = 0; i < ni; i++)
		n = add_root(roots, n, max, ind[i], "/triton");
	return n;
}

/* ---- the process-wide index ------------------------------------------- */

/* One *.cubin under a root. */
struct cached_cubin {
	uint64_t size;
	char *path;
	int root; /* index in tc.roots */
};

static struct {
	pthread_mutex_t mu;
	struct cached_cubin *files;
	size_t n, cap;
	char *roots[KT_TRITON_MAX_ROOTS];
	int nroots;
	struct timespec last_scan;
	int scanned;
} tc = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* Fork hooks (kernel_meta.h), called by libktrace.so's fork handler. */
KT_META_FORK_HOOKS(ktrace_triton_cache, tc.mu)

static int cmp_file(const void *a, const void *b)
{
	const struct cached_cubin *x = a, *y = b;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* Add the *.cubin files under dir, `depth` levels of folders down (Triton's
 * tmp.* folders skipped), to the index. */
static void scan_dir(const char *dir, int depth, int root)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d)) != NULL && tc.n < KT_TRITON_MAX_FILES) {
		const char *name = de->d_name;
		if (name[0] == '.')
			continue;
		char path[4096];
		if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
			continue;
		size_t len = strlen(name);
		int is_cubin = len > 6 && !strcmp(name + len - 6, ".cubin");
		if (de->d_type == DT_DIR || (de->d_type == DT_UNKNOWN && !is_cubin)) {
			if (depth > 0 && strncmp(name, "tmp.", 4) != 0)
				scan_dir(path, depth - 1, root);
			continue;
		}
		if (!is_cubin)
			continue;
		struct stat st;
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (ktrace_grow(&tc.files, &tc.cap, tc.n + 1, sizeof *tc.files))
			break;
		char *dup = strdup(path);
		if (!dup)
			break;
		tc.files[tc.n++] = (struct cached_cubin){.size = (uint64_t)st.st_size, .path = dup, .root = root};
	}
	closedir(d);
}

static void rescan_locked(void)
{
	for (size_t i = 0; i < tc.n; i++)
		free(tc.files[i].path);
	tc.n = 0;
	for (int i = 0; i < tc.nroots; i++)
		scan_dir(tc.roots[i], 3, i);
	if (tc.n > 1)
		qsort(tc.files, tc.n, sizeof *tc.files, cmp_file);
	clock_gettime(CLOCK_MONOTONIC, &tc.last_scan);
	tc.scanned = 1;
}

static int64_t ms_since(const struct timespec *t)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)(now.tv_sec - t->tv_sec) * 1000 + (now.tv_nsec - t->tv_nsec) / 1000000;
}

/* Compare a file's bytes with the image. */
static int same_bytes(const char *path, const uint8_t *img, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	uint8_t buf[65536];
	size_t off = 0;
	int same = 1;
	while (off < len) {
		size_t want = len - off < sizeof buf ? len - off : sizeof buf;
		ssize_t r = read(fd, buf, want);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || memcmp(buf, img + off, (size_t)r) != 0) {
			same = 0;
			break;
		}
		off += (size_t)r;
	}
	if (same && read(fd, buf, 1) != 0)
		same = 0; /* file grew */
	close(fd);
	return same;
}

/* Search the files under the wanted roots; fills dir on a match.  Caller
 * holds the lock. */
static int lookup_locked(const uint8_t *img, size_t len, const char *kernel, const char *want_root,
			 char *dir, size_t dirlen)
{
	size_t lo = 0, hi = tc.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (tc.files[mid].size < len)
			lo = mid + 1;
		else
			hi = mid;
	}
	char want[512];
	snprintf(want, sizeof want, "/%s.cubin", kernel);
	size_t wl = strlen(want);
	/* two passes: the file named after the kernel first, then any */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = lo; i < tc.n && tc.files[i].size == len; i++) {
			const char *p = tc.files[i].path;
			if (!want_root[tc.files[i].root])
				continue;
			size_t pl = strlen(p);
			int named = pl >= wl && !strcmp(p + pl - wl, want);
			if (named != (pass == 0))
				continue;
			if (!same_bytes(p, img, len))
				continue;
			const char *slash = strrchr(p, '/');
			size_t dl = (size_t)(slash - p);
			if (dl + 1 > dirlen)
				return 0;
			memcpy(dir, p, dl);
			dir[dl] = 0;
			return 1;
		}
	}
	return 0;
}

int kt_triton_find(const struct ktrace_meta_opts *opts, const uint8_t *cubin, size_t len,
		   const char *kernel, char *dir, size_t dirlen)
{
	char (*roots)[4096] = malloc(KT_TRITON_MAX_ROOTS * sizeof *roots);
	if (!roots)
		return 0;
	int nr = kt_triton_roots(opts, roots, KT_TRITON_MAX_ROOTS);
	int found = 0;
	pthread_mutex_lock(&tc.mu);
	int added = 0;
	char want[KT_TRITON_MAX_ROOTS] = {0};
	for (int i = 0; i < nr; i++) {
		int known = -1;
		for (int j = 0; j < tc.nroots; j++)
			if (!strcmp(tc.roots[j], roots[i]))
				known = j;
		if (known < 0 && tc.nroots < KT_TRITON_MAX_ROOTS) {
			char *d = strdup(roots[i]);
			if (d) {
				known = tc.nroots;
				tc.roots[tc.nroots++] = d;
				added = 1;
			}
		}
		if (known >= 0)
			want[known] = 1;
	}
	if (added || !tc.scanned)
		rescan_locked();
	found = lookup_locked(cubin, len, kernel, want, dir, dirlen);
	if (!found && !added && ms_since(&tc.last_scan) >= KT_TRITON_RESCAN_MS) {
		rescan_locked();
		found = lookup_locked(cubin, len, kernel, want, dir, dirlen);
	}
	pthread_mutex_unlock(&tc.mu);
	free(roots);
	return found;
}

/* ---- TTIR signatures ------------------------------------------------------ */

void kt_triton_type_to_sig(const char *t, size_t n, char *out, size_t outlen)
{
	char base[64];
	int ptr = 0;
	if (n > 9 && !memcmp(t, "!tt.ptr<", 8) && t[n - 1] == '>') {
		/* "!tt.ptr<f32>" or "!tt.ptr<f32, 1>" */
		t += 8;
		n -= 9;
		const char *comma = memchr(t, ',', n);
		if (comma)
			n = (size_t)(comma - t);
		ptr = 1;
	}
	if (n >= sizeof base)
		n = sizeof base - 1;
	memcpy(base, t, n);
	base[n] = 0;
	const char *s = base;
	if (!strcmp(base, "f32")) s = "fp32";
	else if (!strcmp(base, "f16")) s = "fp16";
	else if (!strcmp(base, "f64")) s = "fp64";
	else if (!strcmp(base, "f8E4M3FN")) s = "fp8e4nv";
	else if (!strcmp(base, "f8E5M2")) s = "fp8e5";
	snprintf(out, outlen, "%s%s", ptr ? "*" : "", s);
}

/* One TTIR argument: its name (the loc("...") name, else the SSA name) and
 * MLIR type, pointing into the text. */
struct ttir_arg {
	const char *name;
	size_t nlen;
	const char *type;
	size_t tlen;
};

/* Skip an argument's attributes and location, up to the next top-level ','
 * or ')'; a `loc("name"` inside gives the argument's name. */
static const char *skip_arg_attributes(const char *p, const char *e, const char *type, struct ttir_arg *arg)
{
	int parens = 0, braces = 0;
	while (p < e) {
		if (*p == '(') {
			parens++;
		} else if (*p == ')') {
			if (!parens)
				break;
			parens--;
		} else if (*p == '{') {
			braces++;
		} else if (*p == '}') {
			braces--;
		} else if (*p == ',' && !parens && !braces) {
			break;
		} else if (*p == '"' && parens == 1 && p >= type + 5 && !memcmp(p - 4, "loc(", 4)) {
			const char *q = memchr(p + 1, '"', (size_t)(e - p - 1));
			if (q) {
				arg->name = p + 1;
				arg->nlen = (size_t)(q - p - 1);
				p = q;
			}
		}
		p++;
	}
	return p;
}

/* Arguments of `tt.func ... @kernel(` in TTIR text; count or -1. */
static int ttir_args(const char *text, size_t len, const char *kernel, struct ttir_arg *args, int max)
{
	char pat[512];
	snprintf(pat, sizeof pat, "@%s(", kernel);
	const char *p = memmem(text, len, pat, strlen(pat));
	if (!p)
		return -1;
	const char *e = text + len;
	p += strlen(pat);
	int n = 0;
	while (p < e) {
		while (p < e && (*p == ' ' || *p == '\n' || *p == ','))
			p++;
		if (p >= e || *p == ')')
			break;
		if (*p != '%')
			return -1;
		const char *ssa_name = ++p;
		while (p < e && *p != ':' && *p != ' ')
			p++;
		struct ttir_arg arg = {.name = ssa_name, .nlen = (size_t)(p - ssa_name)};
		if (p >= e || *p != ':')
			return -1;
		p++;
		while (p < e && *p == ' ')
			p++;
		arg.type = p;
		int angles = 0;
		while (p < e && (angles || (*p != ' ' && *p != ',' && *p != ')'))) {
			if (*p == '<')
				angles++;
			else if (*p == '>')
				angles--;
			p++;
		}
		arg.tlen = (size_t)(p - arg.type);
		p = skip_arg_attributes(p, e, arg.type, &arg);
		if (n < max)
			args[n] = arg;
		n++;
		if (n > KT_META_MAX_PARAMS)
			return -1;
	}
	return n;
}

/* Inductor's module, when the TTIR names one that can be found: its
 * signature's names and types for the n arguments of k. */
static void apply_module_signature(const struct ktrace_meta_opts *opts, struct ktrace_meta_kernel *k,
				   const char *ttir, size_t ttir_len, int n)
{
	char module_path[4096];
	if (kt_ttir_module_path(ttir, ttir_len, module_path, sizeof module_path) != 0)
		return;
	size_t module_len;
	char *module = kt_inductor_read_module(opts, module_path, &module_len);
	if (!module)
		return;
	struct kt_sig_arg sig[512];
	uint64_t extent[512];
	int nsig = kt_inductor_signature(module, module_len, k->name, sig, 512);
	if (nsig == n) {
		kt_inductor_extents(module, module_len, k->name, sig, nsig, extent);
		for (int i = 0; i < nsig; i++) {
			kt_param_set_name(&k->params[i], sig[i].name, strlen(sig[i].name), KTRACE_NAME_INDUCTOR);
			kt_param_set_type(&k->params[i], sig[i].type, strlen(sig[i].type), KT_TPRIO_TRITON + 1);
			k->params[i].extent = extent[i];
		}
	}
	if (nsig > 0)
		kt_sig_args_free(sig, nsig < 512 ? nsig : 512);
	free(module);
}

/* What the kernel's n TTIR arguments are written through, from its TTIR. */
static void ttir_writes(struct ktrace_meta_kernel *k, const char *ttir, size_t len, uint32_t n)
{
	uint8_t written[512];
	if (n > 512 || kt_ttir_writes(ttir, len, k->name, n, written) != 0)
		return;
	for (uint32_t i = 0; i < n; i++)
		kt_param_set_written(&k->params[i], written[i], KTRACE_WRITTEN_SRC_TTIR);
}

/* What the kernel writes through its parameters (the scratch pointers too),
 * from the .ptx beside its cubin. */
static void cached_ptx_writes(struct kt_meta_builder *b, struct ktrace_meta_kernel *k, const char *dir)
{
	char path[4600];
	size_t len = 0;
	snprintf(path, sizeof path, "%s/%s.ptx", dir, k->name);
	char *ptx = kt_read_file(path, 64u << 20, &len);
	if (ptx)
		kt_ptx_merge_writes(b, (uint32_t)(k - b->img->kernels), ptx, len);
	free(ptx);
}

void kt_triton_names(struct kt_meta_builder *b, struct ktrace_meta_kernel *k, const char *dir)
{
	static const char *const exts[] = {"ttir", "source"};
	char path[4600];
	size_t len = 0;
	char *text = NULL;
	for (int i = 0; i < 2 && !text; i++) {
		snprintf(path, sizeof path, "%s/%s.%s", dir, k->name, exts[i]);
		text = kt_read_file(path, 64u << 20, &len);
	}
	if (!text) {
		kt_meta_warn(b, "kernel %s: Triton cache entry %s has no .ttir or .source", k->name, dir);
		return;
	}
	struct ttir_arg args[512];
	int n = ttir_args(text, len, k->name, args, 512);
	if (n < 0 || n > 512 || (uint32_t)n > k->nparams || k->nparams - (uint32_t)n > 2) {
		kt_meta_warn(b, "kernel %s: %s lists %d arguments for %u parameters; names not used", k->name,
			     path, n, k->nparams);
		free(text);
		return;
	}
	for (int i = 0; i < n; i++) {
		struct ktrace_meta_param *p = &k->params[i];
		kt_param_set_name(p, args[i].name, args[i].nlen, KTRACE_NAME_TRITON_CACHE);
		char sig[80];
		kt_triton_type_to_sig(args[i].type, args[i].tlen, sig, sizeof sig);
		kt_param_set_type(p, sig, strlen(sig), KT_TPRIO_TRITON);
	}
	static const char *const scratch[2] = {"global_scratch", "profile_scratch"};
	for (uint32_t i = (uint32_t)n; i < k->nparams; i++) {
		struct ktrace_meta_param *p = &k->params[i];
		const char *s = scratch[i - (uint32_t)n];
		kt_param_set_name(p, s, strlen(s), KTRACE_NAME_TRITON_SCRATCH);
		kt_param_set_type(p, "*i8", 3, KT_TPRIO_TRITON);
		p->flags |= KTRACE_PARAMF_SCRATCH | KTRACE_PARAMF_HIDDEN;
	}
	apply_module_signature(b->opts, k, text, len, n);
	if (!strcmp(path + strlen(path) - 5, ".ttir"))
		ttir_writes(k, text, len, (uint32_t)n);
	free(text);
	cached_ptx_writes(b, k, dir);
}
