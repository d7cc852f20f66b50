/* common/allocator_env.c: the allocator settings a traced program gets,
 * their description for the HEADER and their account on the library's
 * start-up line (common/allocator_env.h).  Reads PyTorch's setting as
 * PyTorch documents it: options `key:value` separated by commas, a value
 * possibly a bracketed list with commas of its own
 * (`roundup_power2_divisions:[256:1,512:2]`).  Calls libc only.
 */
#include "common/allocator_env.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#define TORCH_BACKEND "cudaMallocAsync"
#define JAX_ALLOCATOR "platform"

/* What a PyTorch setting says about the allocator. */
struct torch_conf {
	char backend[64];    /* the value of `backend`, "" when absent */
	int expandable;      /* `expandable_segments` set to true */
};

/* s[0..n) without blanks on either side. */
static void trim(const char **s, size_t *n)
{
	while (*n && (**s == ' ' || **s == '\t')) {
		(*s)++;
		(*n)--;
	}
	while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
		(*n)--;
}

/* Record the option key:value (not NUL-terminated) in *c. */
static void take_option(const char *opt, size_t n, struct torch_conf *c)
{
	const char *colon = memchr(opt, ':', n);
	const char *key = opt, *val;
	size_t klen, vlen;

	if (!colon)
		return;
	klen = (size_t)(colon - opt);
	val = colon + 1;
	vlen = n - klen - 1;
	trim(&key, &klen);
	trim(&val, &vlen);
	if (klen == 7 && !memcmp(key, "backend", 7) && vlen < sizeof c->backend) {
		memcpy(c->backend, val, vlen);
		c->backend[vlen] = '\0';
	} else if (klen == 19 && !memcmp(key, "expandable_segments", 19)) {
		c->expandable = vlen == 4 && !strncasecmp(val, "true", 4);
	}
}

/* Split s at the commas outside brackets and read each option. */
static struct torch_conf parse_torch_conf(const char *s)
{
	struct torch_conf c = { "", 0 };
	const char *start = s;
	int depth = 0;

	for (const char *p = s;; p++) {
		if (*p == '[')
			depth++;
		else if (*p == ']' && depth)
			depth--;
		else if ((*p == ',' && !depth) || !*p) {
			take_option(start, (size_t)(p - start), &c);
			start = p + 1;
		}
		if (!*p)
			break;
	}
	return c;
}

static int set_and_not_empty(const char *v)
{
	return v && *v;
}

/* The plan for one PyTorch variable the user set (value v): into out, or a
 * note.  `name` names the variable in the note. */
static void plan_torch(const char *name, const char *v, char *out, size_t cap, char *note, size_t notecap)
{
	struct torch_conf c = parse_torch_conf(v);
	int n;

	if (c.backend[0])
		return; /* the user chose a backend: theirs */
	if (c.expandable) {
		snprintf(note, notecap,
			 "%s sets expandable_segments, which the " TORCH_BACKEND " backend does not support: "
			 "keeping it and PyTorch's caching allocator (buffer extents are inferred within its segments)",
			 name);
		return;
	}
	n = snprintf(out, cap, "backend:" TORCH_BACKEND ",%s", v);
	if (n < 0 || (size_t)n >= cap) {
		out[0] = '\0';
		snprintf(note, notecap, "%s is too long to add backend:" TORCH_BACKEND " to: keeping it", name);
	}
}

static const char *const var_names[3] = { "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF",
					   "XLA_PYTHON_CLIENT_ALLOCATOR" };

/* Append ",entry" (or "entry" first) to out, cut at cap. */
static void add_entry(char *out, size_t cap, const char *entry)
{
	size_t used = strlen(out);

	if (used + 1 < cap)
		snprintf(out + used, cap - used, "%s%s", used ? "," : "", entry);
}

/* p->set_by_ktrace: the names of the variables the plan sets, else "none". */
static void plan_set_by(struct ktrace_allocator_plan *p)
{
	const int set[3] = { p->cuda_alloc_conf[0] != '\0', p->alloc_conf[0] != '\0', p->xla_allocator != NULL };

	p->set_by_ktrace[0] = '\0';
	for (int i = 0; i < 3; i++)
		if (set[i])
			add_entry(p->set_by_ktrace, sizeof p->set_by_ktrace, var_names[i]);
	if (!p->set_by_ktrace[0])
		snprintf(p->set_by_ktrace, sizeof p->set_by_ktrace, "none");
}

void ktrace_allocator_plan(const char *cuda_conf, const char *conf, const char *xla, int keep,
			   struct ktrace_allocator_plan *p)
{
	memset(p, 0, sizeof *p);
	if (keep) {
		snprintf(p->set_by_ktrace, sizeof p->set_by_ktrace, "keep");
		return;
	}
	if (!set_and_not_empty(cuda_conf) && !set_and_not_empty(conf))
		snprintf(p->cuda_alloc_conf, sizeof p->cuda_alloc_conf, "backend:" TORCH_BACKEND);
	if (set_and_not_empty(cuda_conf))
		plan_torch("PYTORCH_CUDA_ALLOC_CONF", cuda_conf, p->cuda_alloc_conf, sizeof p->cuda_alloc_conf, p->note,
			   sizeof p->note);
	if (set_and_not_empty(conf))
		plan_torch("PYTORCH_ALLOC_CONF", conf, p->alloc_conf, sizeof p->alloc_conf, p->note, sizeof p->note);
	if (!set_and_not_empty(xla))
		p->xla_allocator = JAX_ALLOCATOR;
	plan_set_by(p);
}

/* v as a word of the HEADER's config string (KEY=VALUE pairs joined by
 * spaces): letters, digits and "_.+-" kept, anything else becomes '?'. */
static void config_word(const char *v, char *out, size_t cap)
{
	size_t i = 0;

	for (; v[i] && i + 1 < cap; i++)
		out[i] = (strchr("_.+-", v[i]) || (v[i] >= '0' && v[i] <= '9') || ((v[i] | 0x20) >= 'a' &&
			  (v[i] | 0x20) <= 'z')) ? v[i] : '?';
	out[i] = '\0';
}

void ktrace_allocator_describe(const char *cuda_conf, const char *conf, const char *xla, char *out, size_t cap)
{
	char entry[160], word[96];

	if (!cap)
		return;
	out[0] = '\0';
	if (set_and_not_empty(cuda_conf) || set_and_not_empty(conf)) {
		struct torch_conf c = parse_torch_conf(set_and_not_empty(cuda_conf) ? cuda_conf : conf);

		if (!c.backend[0] && set_and_not_empty(cuda_conf) && set_and_not_empty(conf))
			c = parse_torch_conf(conf);
		config_word(c.backend[0] ? c.backend : "native", word, sizeof word);
		snprintf(entry, sizeof entry, "pytorch:%s%s", word, c.expandable ? "+expandable_segments" : "");
		add_entry(out, cap, entry);
	}
	if (set_and_not_empty(xla)) {
		config_word(xla, word, sizeof word);
		snprintf(entry, sizeof entry, "jax:%s", word);
		add_entry(out, cap, entry);
	}
	if (!out[0])
		snprintf(out, cap, "program");
}

/* ---- the start-up line ---------------------------------------------------------------- */

#define SHOWN_VALUE_MAX 200

/* 1 when name is one of the comma-separated names of list. */
static int listed(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p && *p;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);

		if (len == n && !memcmp(p, name, n))
			return 1;
		p = comma ? comma + 1 : NULL;
	}
	return 0;
}

/* Append text to out (cut at cap). */
static void append(char *out, size_t cap, const char *text)
{
	size_t used = strlen(out);

	if (used + 1 < cap)
		snprintf(out + used, cap - used, "%s", text);
}

/* Append "NAME=value" to out, after ", " unless first; the value printable
 * and cut. */
static void append_setting(char *out, size_t cap, int *first, const char *name, const char *value)
{
	char shown[SHOWN_VALUE_MAX + 4];
	size_t i = 0;

	for (; value[i] && i < SHOWN_VALUE_MAX; i++)
		shown[i] = value[i] >= 0x20 && value[i] < 0x7f ? value[i] : '?';
	snprintf(shown + i, sizeof shown - i, "%s", value[i] ? "..." : "");
	if (!*first)
		append(out, cap, ", ");
	*first = 0;
	append(out, cap, name);
	append(out, cap, "=");
	append(out, cap, shown);
}

/* Append the variables set whose being listed in set_by is `by_ktrace`;
 * how many. */
static int append_settings(char *out, size_t cap, const char *set_by, int by_ktrace, const char *const values[3])
{
	int first = 1, n = 0;

	for (int i = 0; i < 3; i++) {
		if (!set_and_not_empty(values[i]) || listed(set_by, var_names[i]) != by_ktrace)
			continue;
		append_setting(out, cap, &first, var_names[i], values[i]);
		n++;
	}
	return n;
}

void ktrace_allocator_startup(const char *set_by, const char *cuda_conf, const char *conf, const char *xla,
			      char *out, size_t cap)
{
	const char *const values[3] = { cuda_conf, conf, xla };
	char own[3 * (SHOWN_VALUE_MAX + 40)] = "";
	int keep = set_by && !strcmp(set_by, "keep");

	if (!cap)
		return;
	out[0] = '\0';
	if (append_settings(out, cap, set_by, 1, values)) {
		append(out, cap, " (set by ktrace; --keep-allocator keeps the program's)");
		if (append_settings(own, sizeof own, set_by, 0, values)) {
			append(out, cap, "; the program's own: ");
			append(out, cap, own);
		}
		return;
	}
	append(out, cap, keep ? "the program's own (--keep-allocator)" : "the program's own");
	if (append_settings(own, sizeof own, set_by, 0, values)) {
		append(out, cap, ": ");
		append(out, cap, own);
	}
}
