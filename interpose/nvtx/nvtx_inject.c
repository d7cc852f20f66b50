/* interpose/nvtx/nvtx_inject.c: libktrace.so as an NVTX injection library.
 *
 * NVTX v3 is header-only: every library or program that uses it carries
 * its own instance, which on its first call reads NVTX_INJECTION64_PATH,
 * dlopens that library and calls its InitializeInjectionNvtx2 with the
 * instance's export table (NVIDIA/NVTX, nvtxInit.h).  Through the table's
 * callback module tables ktrace points the instance's core entries (marks,
 * start/end and push/pop ranges, ASCII, wide and attribute forms) and the
 * domain entries (domain marks and ranges, domains, registered strings) at
 * its own; entries it leaves alone (naming threads, categories, CUDA
 * objects, sync objects) stay no-ops.  Every instance of the process gets
 * the same functions, so domains and registered strings are ktrace's own
 * objects whichever instance created them.  dlopen of the path of the
 * already preloaded library returns that library.
 *
 * Owns the entry point, the environment variable (set by the constructor
 * when unset), the domains, registered strings and the folder's lock, and
 * turning NVTX's event attributes into a message (nvtx_message.c parses
 * it, nvtx_payload.c reads its payload) for nvtx_stack.c.  Calls libc
 * (dladdr, realpath, setenv) and, once an NVTX instance attached, the
 * fork_handler_install service (model/services.h).
 */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include "interpose/model/services.h"
#include "interpose/nvtx/nvtx.h"
#include "interpose/nvtx/nvtx_internal.h"

#define KT_NVTX_ENV "NVTX_INJECTION64_PATH"

struct kt_nvtx_domain {
	uint32_t id;
	uint16_t len;
	char name[KT_NVTX_DOMAIN_NAME_MAX];
};

static pthread_mutex_t nvtx_mutex = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(struct kt_nvtx_domain *) domains[KT_NVTX_DOMAINS + 1]; /* by id, 1.. */
static uint32_t ndomains;
static atomic_int attached; /* an NVTX instance called InitializeInjectionNvtx2 */

void kt_nvtx_lock(void)
{
	pthread_mutex_lock(&nvtx_mutex);
}

void kt_nvtx_unlock(void)
{
	pthread_mutex_unlock(&nvtx_mutex);
}

/* KTRACE_NVTX=0 (false, no, off): ktrace keeps out of NVTX. */
static int nvtx_wanted(void)
{
	static const char *const no[] = { "0", "false", "no", "off" };
	const char *v = getenv("KTRACE_NVTX");

	for (size_t i = 0; v && i < sizeof no / sizeof no[0]; i++)
		if (strcasecmp(v, no[i]) == 0)
			return 0;
	return 1;
}

/* ---- domains and registered strings ------------------------------------------ */

const char *kt_nvtx_domain_name(uint32_t id, uint16_t *len)
{
	struct kt_nvtx_domain *d = id && id <= KT_NVTX_DOMAINS ? atomic_load(&domains[id]) : NULL;

	*len = d ? d->len : 0;
	return d ? d->name : "";
}

static uint32_t domain_id(nvtxDomainHandle_t h)
{
	return h ? ((const struct kt_nvtx_domain *)(const void *)h)->id : 0;
}

/* The domain of that name, created on first use (the last id is shared by
 * every name past KT_NVTX_DOMAINS). */
static nvtxDomainHandle_t domain_create(const char *name, size_t len)
{
	struct kt_nvtx_domain *d = NULL;

	if (len >= KT_NVTX_DOMAIN_NAME_MAX)
		len = KT_NVTX_DOMAIN_NAME_MAX - 1;
	kt_nvtx_lock();
	for (uint32_t i = 1; i <= ndomains && !d; i++) {
		struct kt_nvtx_domain *e = atomic_load(&domains[i]);

		if (e->len == len && memcmp(e->name, name, len) == 0)
			d = e;
	}
	if (!d && ndomains < KT_NVTX_DOMAINS && (d = calloc(1, sizeof *d))) {
		d->id = ++ndomains;
		d->len = (uint16_t)len;
		memcpy(d->name, name, len);
		atomic_store(&domains[d->id], d);
	}
	if (!d && ndomains)
		d = atomic_load(&domains[ndomains]);
	kt_nvtx_unlock();
	return (nvtxDomainHandle_t)(void *)d;
}

/* Python source locations ("train.py:42"): XLA registers them as strings
 * its range payloads name (nvtx_payload.c). */
static int reads_like_source(const char *s, size_t len)
{
	for (const char *p = s; (p = memchr(p, ':', (size_t)(s + len - p))) != NULL; p++)
		if (p - s >= 3 && !memcmp(p - 3, ".py", 3) && p + 1 < s + len && p[1] >= '0' && p[1] <= '9')
			return 1;
	return 0;
}

static nvtxStringHandle_t string_register(nvtxDomainHandle_t domain, const char *s, size_t len)
{
	size_t keep = len > KT_NVTX_MSG_MAX + 1 ? KT_NVTX_MSG_MAX + 1 : len; /* + 1: "cut" is seen */
	int source = reads_like_source(s, len > KT_NVTX_SOURCE_MAX ? KT_NVTX_SOURCE_MAX : len);
	struct kt_nvtx_regstr *r;

	if (source)
		keep = len > KT_NVTX_SOURCE_MAX ? KT_NVTX_SOURCE_MAX : len;
	if (!(r = malloc(sizeof *r + keep)))
		return NULL;
	r->domain = domain_id(domain);
	memcpy(r->buf, s, keep);
	kt_nvtx_parse(r->buf, keep > KT_NVTX_MSG_MAX + 1 ? KT_NVTX_MSG_MAX + 1 : keep, &r->text);
	r->source_len = (uint16_t)(source ? keep : 0);
	r->source_cut = (uint16_t)(source && len > keep ? KTRACE_RANGEF_SOURCE_CUT : 0);
	return (nvtxStringHandle_t)(void *)r;
}

/* ---- messages ------------------------------------------------------------------------ */

/* The message of attributes a as text: ASCII and registered messages as
 * they are, wide ones as UTF-8 in buf (KT_NVTX_MSG_MAX + 1 bytes); parse 0
 * keeps framework fields (marks). */
static void attr_text(const nvtxEventAttributes_t *a, char *buf, struct kt_nvtx_text *t, int parse)
{
	const char *s = "";
	size_t n = 0;

	memset(t, 0, sizeof *t);
	t->ptr = "";
	if (!a || a->size < offsetof(nvtxEventAttributes_t, message) + sizeof(a->message))
		return;
	if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED && a->message.registered) {
		*t = ((const struct kt_nvtx_regstr *)(const void *)a->message.registered)->text;
		return;
	}
	if (a->messageType == NVTX_MESSAGE_TYPE_ASCII && a->message.ascii) {
		s = a->message.ascii;
		n = strnlen(s, 1u << 16);
	} else if (a->messageType == NVTX_MESSAGE_TYPE_UNICODE && a->message.unicode) {
		s = buf;
		n = kt_nvtx_utf8(a->message.unicode, buf, KT_NVTX_MSG_MAX + 1);
	}
	if (parse) {
		kt_nvtx_parse(s, n, t);
		return;
	}
	t->ptr = s;
	t->len = (uint16_t)(n > KT_NVTX_MSG_MAX ? KT_NVTX_MSG_MAX : n);
}

static uint32_t attr_category(const nvtxEventAttributes_t *a)
{
	return a && a->size >= offsetof(nvtxEventAttributes_t, category) + sizeof(a->category) ? a->category : 0;
}

static void text_ascii(const char *s, struct kt_nvtx_text *t)
{
	kt_nvtx_parse(s ? s : "", s ? strnlen(s, 1u << 16) : 0, t);
}

static void text_wide(const wchar_t *w, char *buf, struct kt_nvtx_text *t)
{
	kt_nvtx_parse(buf, kt_nvtx_utf8(w, buf, KT_NVTX_MSG_MAX + 1), t);
}

/* ---- the callbacks ----------------------------------------------------------------- */

static void NVTX_API d_mark_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	char buf[KT_NVTX_MSG_MAX + 1];
	struct kt_nvtx_text t;

	attr_text(a, buf, &t, 0);
	kt_nvtx_mark(domain_id(d), &t);
}

static void NVTX_API d_end(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
	(void)d;
	kt_nvtx_end(id);
}

/* The forms of a range's start (op start: nvtxDomainRangeStartEx,
 * nvtxRangeStartEx, A, W) or push (op push: nvtxDomainRangePushEx,
 * nvtxRangePushEx, A, W): the core attributes form is the domain one's in no
 * domain, the ASCII and wide forms carry a message alone. */
#define RANGE_FORMS(type, op) \
	static type NVTX_API d_##op##_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) \
	{ \
		char buf[KT_NVTX_MSG_MAX + 1]; \
		struct kt_nvtx_text t; \
		attr_text(a, buf, &t, 1); \
		kt_nvtx_payload_source(a, &t); \
		return kt_nvtx_##op(domain_id(d), attr_category(a), &t); \
	} \
	static type NVTX_API c_##op##_ex(const nvtxEventAttributes_t *a) \
	{ \
		return d_##op##_ex(NULL, a); \
	} \
	static type NVTX_API c_##op##_a(const char *s) \
	{ \
		struct kt_nvtx_text t; \
		text_ascii(s, &t); \
		return kt_nvtx_##op(0, 0, &t); \
	} \
	static type NVTX_API c_##op##_w(const wchar_t *w) \
	{ \
		char buf[KT_NVTX_MSG_MAX + 1]; \
		struct kt_nvtx_text t; \
		text_wide(w, buf, &t); \
		return kt_nvtx_##op(0, 0, &t); \
	}

RANGE_FORMS(nvtxRangeId_t, start)
RANGE_FORMS(int, push)

static int NVTX_API d_pop(nvtxDomainHandle_t d)
{
	return kt_nvtx_pop(domain_id(d));
}

static nvtxStringHandle_t NVTX_API d_register_a(nvtxDomainHandle_t d, const char *s)
{
	return string_register(d, s ? s : "", s ? strnlen(s, 1u << 20) : 0);
}

static nvtxStringHandle_t NVTX_API d_register_w(nvtxDomainHandle_t d, const wchar_t *w)
{
	char buf[KT_NVTX_MSG_MAX + 1];

	return string_register(d, buf, kt_nvtx_utf8(w, buf, sizeof buf));
}

static nvtxDomainHandle_t NVTX_API d_create_a(const char *name)
{
	return domain_create(name ? name : "", name ? strnlen(name, KT_NVTX_DOMAIN_NAME_MAX) : 0);
}

static nvtxDomainHandle_t NVTX_API d_create_w(const wchar_t *name)
{
	char buf[KT_NVTX_DOMAIN_NAME_MAX];

	return domain_create(buf, kt_nvtx_utf8(name, buf, sizeof buf));
}

static void NVTX_API d_destroy(nvtxDomainHandle_t d)
{
	(void)d; /* kept: ranges of it may still be open, records name it */
}

static void NVTX_API c_mark_ex(const nvtxEventAttributes_t *a)
{
	d_mark_ex(NULL, a);
}

static void NVTX_API c_mark_a(const char *s)
{
	struct kt_nvtx_text t = { .ptr = s ? s : "" };

	t.len = (uint16_t)(s ? strnlen(s, KT_NVTX_MSG_MAX) : 0);
	kt_nvtx_mark(0, &t);
}

static void NVTX_API c_mark_w(const wchar_t *w)
{
	char buf[KT_NVTX_MSG_MAX + 1];
	struct kt_nvtx_text t = { .ptr = buf };

	t.len = (uint16_t)kt_nvtx_utf8(w, buf, KT_NVTX_MSG_MAX);
	kt_nvtx_mark(0, &t);
}

static void NVTX_API c_end(nvtxRangeId_t id)
{
	kt_nvtx_end(id);
}

static int NVTX_API c_pop(void)
{
	return kt_nvtx_pop(0);
}

/* ---- attaching to an NVTX instance ------------------------------------------------- */

struct slot_fn {
	unsigned id;
	NvtxFunctionPointer fn;
};

#define FN(f) ((NvtxFunctionPointer)(void (*)(void))(f))

static const struct slot_fn core_fns[] = {
	{ NVTX_CBID_CORE_MarkEx, FN(c_mark_ex) },         { NVTX_CBID_CORE_MarkA, FN(c_mark_a) },
	{ NVTX_CBID_CORE_MarkW, FN(c_mark_w) },           { NVTX_CBID_CORE_RangeStartEx, FN(c_start_ex) },
	{ NVTX_CBID_CORE_RangeStartA, FN(c_start_a) },    { NVTX_CBID_CORE_RangeStartW, FN(c_start_w) },
	{ NVTX_CBID_CORE_RangeEnd, FN(c_end) },           { NVTX_CBID_CORE_RangePushEx, FN(c_push_ex) },
	{ NVTX_CBID_CORE_RangePushA, FN(c_push_a) },      { NVTX_CBID_CORE_RangePushW, FN(c_push_w) },
	{ NVTX_CBID_CORE_RangePop, FN(c_pop) },
};

static const struct slot_fn core2_fns[] = {
	{ NVTX_CBID_CORE2_DomainMarkEx, FN(d_mark_ex) },
	{ NVTX_CBID_CORE2_DomainRangeStartEx, FN(d_start_ex) },
	{ NVTX_CBID_CORE2_DomainRangeEnd, FN(d_end) },
	{ NVTX_CBID_CORE2_DomainRangePushEx, FN(d_push_ex) },
	{ NVTX_CBID_CORE2_DomainRangePop, FN(d_pop) },
	{ NVTX_CBID_CORE2_DomainRegisterStringA, FN(d_register_a) },
	{ NVTX_CBID_CORE2_DomainRegisterStringW, FN(d_register_w) },
	{ NVTX_CBID_CORE2_DomainCreateA, FN(d_create_a) },
	{ NVTX_CBID_CORE2_DomainCreateW, FN(d_create_w) },
	{ NVTX_CBID_CORE2_DomainDestroy, FN(d_destroy) },
};

/* Point the instance's slots of module m at fns; 0, or -1 when the
 * instance has no such table. */
static int fill(const NvtxExportTableCallbacks *cb, NvtxCallbackModule m, const struct slot_fn *fns, size_t n)
{
	NvtxFunctionTable table = NULL;
	unsigned int size = 0;

	if (!cb->GetModuleFunctionTable(m, &table, &size) || !table)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (fns[i].id < size && table[fns[i].id])
			*table[fns[i].id] = fns[i].fn;
	return 0;
}

KTRACE_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
	const NvtxExportTableCallbacks *cb;
	const NvtxExportTableVersionInfo *vi;

	if (!get || !nvtx_wanted())
		return 0;
	cb = (const NvtxExportTableCallbacks *)get(NVTX_ETID_CALLBACKS);
	vi = (const NvtxExportTableVersionInfo *)get(NVTX_ETID_VERSIONINFO);
	if (!cb || cb->struct_size < sizeof(*cb) || !cb->GetModuleFunctionTable)
		return 0;
	if (vi && vi->struct_size >= sizeof(*vi) && vi->SetInjectionNvtxVersion)
		vi->SetInjectionNvtxVersion(NVTX_VERSION);
	if (fill(cb, NVTX_CB_MODULE_CORE, core_fns, sizeof core_fns / sizeof core_fns[0]))
		return 0;
	(void)fill(cb, NVTX_CB_MODULE_CORE2, core2_fns, sizeof core2_fns / sizeof core2_fns[0]);
	ktrace_services.fork_handler_install(); /* the table's lock is taken across fork() from now on */
	atomic_store(&attached, 1);
	return 1;
}

/* ---- the environment ------------------------------------------------------------- */

static char self_path[PATH_MAX];

void ktrace_nvtx_preload_env(void)
{
	Dl_info info;

	if (!nvtx_wanted() || getenv(KT_NVTX_ENV))
		return;
	if (!dladdr((const void *)ktrace_nvtx_preload_env, &info) || !info.dli_fname ||
	    !realpath(info.dli_fname, self_path))
		return;
	setenv(KT_NVTX_ENV, self_path, 0);
}

int ktrace_nvtx_attached(void)
{
	return atomic_load(&attached);
}

const char *ktrace_nvtx_status(void)
{
	const char *v = getenv(KT_NVTX_ENV);

	if (!nvtx_wanted())
		return "off (KTRACE_NVTX=0)";
	if (atomic_load(&attached))
		return "on";
	if (!v || !*v)
		return "off (NVTX_INJECTION64_PATH is not set)";
	return strstr(v, "libktrace") ? "on" : "off (NVTX_INJECTION64_PATH names another tool)";
}
