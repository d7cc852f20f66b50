/* tools/dump.c: ktrace-dump, print trace files as text or JSON Lines.
 *
 * Owns the command line, the per-file record loop, the kernel table that
 * resolves launches to names and parameter layouts (a LAUNCH may come before
 * its KERNEL record when several threads wrote the file: it is held until
 * the kernel arrives, or printed at the end with its id), the filters and
 * the --summary tables.  Printing is in dump_text.c and dump_json.c.
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/value_parse.h"
#include "format/trace_reader.h"
#include "tools/cli_options.h"
#include "tools/dump_internal.h"

#define HELD_MAX_BYTES (512ull << 20) /* past this, launches are printed unresolved */
#define NOTES_KEPT 32

static const char usage_text[] =
	"usage: ktrace-dump [options] FILE...\n"
	"Print ktrace trace files (\"-\" reads standard input).\n"
	"\n"
	"options:\n"
	"  --json              JSON Lines: one object per record, every field\n"
	"  --kernel REGEX      only launches of kernels whose mangled or demangled name\n"
	"                      matches (POSIX extended regex), and those kernels' records\n"
	"  --range A:B         only launches, copies and memsets numbered A <= n < B\n"
	"                      (they share one numbering; A or B may be left out; a\n"
	"                      single N means N:N+1)\n"
	"                      --kernel and --range keep the ORDER records that order\n"
	"                      what they show: with --range those made from op A to\n"
	"                      op B, with every stream creation; with --kernel those\n"
	"                      of the printed launches' streams and of events recorded\n"
	"                      or waited on them, and context synchronisations,\n"
	"                      printed after the other records\n"
	"  --summary           launches and bytes hashed per kernel, counters and notes,\n"
	"                      instead of the records\n"
	"  -h, --help          this text\n"
	"  --version           print the version\n"
	"\n"
	"Exit status: 0 when every file was read to its end; 2 for a bad option, or a\n"
	"file that is empty, not a ktrace trace, of a newer format version, corrupt or\n"
	"truncated (everything decodable is printed first, then one line on stderr).\n";

/* What the command line asks for. */
struct opts {
	int json, summary;
	int have_re;
	regex_t re;
	const char *re_text, *range_text; /* as given, for messages */
	int have_range;
	uint64_t lo, hi;
};

/* A LAUNCH whose KERNEL record has not come yet: a copy, held until it does. */
struct held_launch {
	uint8_t *rec;
	size_t len;
	uint64_t kernel_id;
	size_t next; /* index + 1 of the next launch held for the same kernel */
};

/* One kernel of the file, by id: its KERNEL record once seen, its counts,
 * and the chain of its held launches. */
struct kernel_slot {
	struct dump_kernel k;
	int used, known;
	size_t held_first, held_last; /* index + 1 into held */
};

struct file_state {
	const struct opts *o;
	struct dump_ctx ctx;
	struct kernel_slot *tab;
	size_t tab_cap, tab_n;
	struct held_launch *held;
	size_t nheld, held_cap;
	uint64_t held_bytes;
	uint64_t records, launches, malformed;
	uint64_t ops_selected;	/* launches, copies and memsets that passed the filters */
	uint64_t notes[4], notes_other;
	char *note_text[NOTES_KEPT];
	size_t nnote_text;
	uint8_t *counters;	/* last COUNTERS record */
	size_t counters_len;
	uint8_t *end;		/* END record */
	size_t end_len;
	struct dump_orders orders; /* --kernel: ORDER records held to the end of the file */
};

static void usage(FILE *f)
{
	fputs(usage_text, f);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p) {
		fputs("ktrace-dump: out of memory\n", stderr);
		exit(2);
	}
	return p;
}

static uint8_t *dup_bytes(const void *p, size_t n)
{
	uint8_t *q = xmalloc(n);
	memcpy(q, p, n);
	return q;
}

/* ---- kernel table (open addressing on the kernel id) ------------------- */

static uint64_t hash_kernel_id(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

static struct kernel_slot *kernel_slot_get(struct file_state *s, uint64_t id, int create)
{
	if (create && (s->tab_n + 1) * 2 > s->tab_cap) {
		size_t cap = s->tab_cap ? s->tab_cap * 2 : 64;
		struct kernel_slot *t = calloc(cap, sizeof *t);
		if (!t) {
			fputs("ktrace-dump: out of memory\n", stderr);
			exit(2);
		}
		for (size_t i = 0; i < s->tab_cap; i++) {
			if (!s->tab[i].used)
				continue;
			size_t j = hash_kernel_id(s->tab[i].k.id) & (cap - 1);
			while (t[j].used)
				j = (j + 1) & (cap - 1);
			t[j] = s->tab[i];
		}
		free(s->tab);
		s->tab = t;
		s->tab_cap = cap;
	}
	if (!s->tab_cap)
		return NULL;
	size_t j = hash_kernel_id(id) & (s->tab_cap - 1);
	while (s->tab[j].used) {
		if (s->tab[j].k.id == id)
			return &s->tab[j];
		j = (j + 1) & (s->tab_cap - 1);
	}
	if (!create)
		return NULL;
	memset(&s->tab[j], 0, sizeof s->tab[j]);
	s->tab[j].used = 1;
	s->tab[j].k.id = id;
	s->tab[j].k.match = !s->o->have_re;
	s->tab_n++;
	return &s->tab[j];
}

static int name_matches(const regex_t *re, struct ktrace_str a, struct ktrace_str b)
{
	struct ktrace_str v[2] = { a, b };
	for (int i = 0; i < 2; i++) {
		if (!v[i].len)
			continue;
		char *z = xmalloc((size_t)v[i].len + 1);
		memcpy(z, v[i].ptr, v[i].len);
		z[v[i].len] = '\0';
		int m = regexec(re, z, 0, NULL, 0) == 0;
		free(z);
		if (m)
			return 1;
	}
	return 0;
}

/* ---- records ------------------------------------------------------------ */

static int print_record(struct file_state *s, const struct ktrace_record_prefix *p, const void *rec, size_t len,
			const struct dump_kernel *k)
{
	if (s->o->summary)
		return 0;
	if (s->o->json)
		return dump_json_record(&s->ctx, p, rec, len, k);
	return dump_text_record(&s->ctx, p, rec, len, k);
}

/* A launch of the kernel in slot, known or not (then printed with its id). */
static void emit_launch(struct file_state *s, const void *rec, size_t len, struct kernel_slot *slot)
{
	struct dump_kernel *k = slot && slot->known ? &slot->k : NULL;
	struct ktrace_record_prefix p;
	struct ktrace_rec_launch l;
	if (ktrace_decode_prefix(rec, len, &p) || ktrace_decode_launch(rec, len, &l)) {
		s->malformed++;
		print_record(s, &p, rec, len, k);
		return;
	}
	if (s->o->have_re && (!k || !k->match))
		return;
	if (s->o->have_re)
		dump_orders_add_stream(&s->orders, &l);
	s->launches++;
	s->ops_selected++;
	if (slot) {
		slot->k.launches++;
		for (uint32_t i = 0; i < l.nregions; i++) {
			struct ktrace_region g;
			ktrace_launch_region(&l, i, &g);
			if (g.flags & (KTRACE_REGIONF_PRE | KTRACE_REGIONF_POST))
				slot->k.hashed_bytes += g.hash_len;
			slot->k.out_regions += (uint64_t)dump_region_out(&g);
		}
	}
	if (print_record(s, &p, rec, len, k))
		s->malformed++;
}

static void hold_launch(struct file_state *s, struct kernel_slot *slot, const void *rec, size_t len)
{
	if (s->nheld == s->held_cap) {
		size_t cap = s->held_cap ? s->held_cap * 2 : 64;
		struct held_launch *grown = realloc(s->held, cap * sizeof *grown);
		if (!grown) {
			fputs("ktrace-dump: out of memory\n", stderr);
			exit(2);
		}
		s->held = grown;
		s->held_cap = cap;
	}
	struct held_launch *h = &s->held[s->nheld++];
	h->rec = dup_bytes(rec, len);
	h->len = len;
	h->kernel_id = slot->k.id;
	h->next = 0;
	s->held_bytes += len;
	if (slot->held_last)
		s->held[slot->held_last - 1].next = s->nheld;
	else
		slot->held_first = s->nheld;
	slot->held_last = s->nheld;
}

static void release_held(struct file_state *s, struct kernel_slot *slot)
{
	for (size_t i = slot->held_first; i; i = s->held[i - 1].next) {
		struct held_launch *h = &s->held[i - 1];
		emit_launch(s, h->rec, h->len, slot);
		s->held_bytes -= h->len;
		free(h->rec);
		h->rec = NULL;
	}
	slot->held_first = slot->held_last = 0;
}

static int in_range(const struct opts *o, uint64_t n)
{
	return !o->have_range || (n >= o->lo && n < o->hi);
}

static void on_kernel(struct file_state *s, const struct ktrace_record_prefix *p, const void *rec, size_t len)
{
	struct ktrace_rec_kernel k;
	if (ktrace_decode_kernel(rec, len, &k)) {
		s->malformed++;
		if (!s->o->have_re && !s->o->have_range)
			print_record(s, p, rec, len, NULL);
		return;
	}
	struct kernel_slot *slot = kernel_slot_get(s, k.kernel_id, 1);
	if (!slot->known) {
		slot->known = 1;
		slot->k.rec = dup_bytes(rec, len);
		ktrace_decode_kernel(slot->k.rec, len, &slot->k.k);
		if (s->o->have_re)
			slot->k.match = name_matches(&s->o->re, k.name, k.demangled);
	}
	int show = s->o->have_re ? name_matches(&s->o->re, k.name, k.demangled) : !s->o->have_range;
	if (show)
		print_record(s, p, rec, len, NULL);
	release_held(s, slot);
}

static void on_launch(struct file_state *s, const struct ktrace_record_prefix *p, const void *rec, size_t len)
{
	struct ktrace_rec_launch l;
	if (ktrace_decode_launch(rec, len, &l)) {
		s->malformed++;
		print_record(s, p, rec, len, NULL);
		return;
	}
	if (!in_range(s->o, l.launch_seq))
		return;
	struct kernel_slot *slot = kernel_slot_get(s, l.kernel_id, 1);
	if (slot->known || s->held_bytes + len > HELD_MAX_BYTES)
		emit_launch(s, rec, len, slot);
	else
		hold_launch(s, slot, rec, len);
}

/* An ORDER record of a filtered dump: with --range alone kept or not at
 * once, with --kernel held to the end of the file (tools/dump_order.c). */
static void on_order_filtered(struct file_state *s, const struct ktrace_record_prefix *p, const void *rec, size_t len)
{
	struct ktrace_rec_order o;

	if (ktrace_decode_order(rec, len, &o)) {
		s->malformed++;
		print_record(s, p, rec, len, NULL);
		return;
	}
	if (s->o->have_re)
		dump_orders_note_link(&s->orders, &o);
	if (s->o->have_range && !dump_order_in_range(&o, s->o->lo, s->o->hi))
		return;
	if (s->o->have_re)
		dump_orders_hold(&s->orders, p, rec, len, &o);
	else if (print_record(s, p, rec, len, NULL))
		s->malformed++;
}

static void print_held_order(void *ctx, const void *rec, size_t len)
{
	struct file_state *s = ctx;
	struct ktrace_record_prefix p;

	if (ktrace_decode_prefix(rec, len, &p) || print_record(s, &p, rec, len, NULL))
		s->malformed++;
}

static void keep_note(struct file_state *s, const void *rec, size_t len)
{
	struct ktrace_rec_note n;
	if (ktrace_decode_note(rec, len, &n))
		return;
	if (n.level < 4)
		s->notes[n.level]++;
	else
		s->notes_other++;
	if (s->nnote_text < NOTES_KEPT && n.level >= KTRACE_NOTE_WARN) {
		size_t cap = (size_t)n.text.len + 64;
		char *t = xmalloc(cap);
		snprintf(t, cap, "%s code %u: %.*s", dump_note_level_name(n.level), n.code, (int)n.text.len,
			 n.text.ptr);
		s->note_text[s->nnote_text++] = t;
	}
}

static void keep_copy(uint8_t **dst, size_t *dlen, const void *rec, size_t len)
{
	free(*dst);
	*dst = dup_bytes(rec, len);
	*dlen = len;
}

static void on_record(struct file_state *s, const void *rec, size_t len)
{
	struct ktrace_record_prefix p;
	s->records++;
	if (ktrace_decode_prefix(rec, len, &p)) { /* the reader checked the size already */
		s->malformed++;
		return;
	}
	int filtered = s->o->have_re || s->o->have_range;
	switch (p.type) {
	case KTRACE_REC_KERNEL:
		on_kernel(s, &p, rec, len);
		return;
	case KTRACE_REC_LAUNCH:
		on_launch(s, &p, rec, len);
		return;
	case KTRACE_REC_HEADER: {
		struct ktrace_rec_header h;
		if (!s->ctx.have_header && !ktrace_decode_header(rec, len, &h)) {
			s->ctx.have_header = 1;
			s->ctx.start_mono_ns = h.start_monotonic_ns;
			s->ctx.start_real_ns = h.start_realtime_ns;
		}
		break;
	}
	case KTRACE_REC_MEMCPY:
	case KTRACE_REC_MEMSET: {
		struct ktrace_rec_memcpy c;
		struct ktrace_rec_memset m;
		uint64_t op;
		if (p.type == KTRACE_REC_MEMCPY ? ktrace_decode_memcpy(rec, len, &c) : ktrace_decode_memset(rec, len, &m))
			break; /* printed as malformed below */
		op = p.type == KTRACE_REC_MEMCPY ? c.op_seq : m.op_seq;
		if (s->o->have_re || !in_range(s->o, op))
			return;
		s->ops_selected++;
		if (print_record(s, &p, rec, len, NULL))
			s->malformed++;
		return;
	}
	case KTRACE_REC_ORDER:
		if (!filtered)
			break;
		on_order_filtered(s, &p, rec, len);
		return;
	case KTRACE_REC_NOTE:
		keep_note(s, rec, len);
		break;
	case KTRACE_REC_COUNTERS:
		keep_copy(&s->counters, &s->counters_len, rec, len);
		break;
	case KTRACE_REC_END:
		keep_copy(&s->end, &s->end_len, rec, len);
		break;
	default:
		break;
	}
	if (filtered)
		return;
	if (print_record(s, &p, rec, len, NULL))
		s->malformed++;
}

/* Launches whose kernel never appeared: printed last, in file order. */
static void flush_unresolved(struct file_state *s)
{
	for (size_t i = 0; i < s->nheld; i++) {
		struct held_launch *h = &s->held[i];
		if (!h->rec)
			continue;
		emit_launch(s, h->rec, h->len, kernel_slot_get(s, h->kernel_id, 0));
		free(h->rec);
		h->rec = NULL;
	}
	s->nheld = 0;
	s->held_bytes = 0;
	for (size_t i = 0; i < s->tab_cap; i++)
		s->tab[i].held_first = s->tab[i].held_last = 0;
}

/* ---- summary ------------------------------------------------------------ */

static int cmp_kernel_slot(const void *a, const void *b)
{
	const struct kernel_slot *x = *(struct kernel_slot *const *)a, *y = *(struct kernel_slot *const *)b;
	return x->k.id < y->k.id ? -1 : x->k.id > y->k.id;
}


/* ktrace's own host cost per traced launch, from the self-timing counters. */
static void print_self_cost(FILE *f, const struct ktrace_rec_counters *c, int have_c)
{
	uint64_t samples = 0, ns = 0;

	for (uint32_t i = 0; have_c && i < c->ncounters; i++) {
		struct ktrace_counter k;

		ktrace_counters_get(c, i, &k);
		if (k.id == KTRACE_CTR_SELF_SAMPLES)
			samples = k.value;
		else if (k.id == KTRACE_CTR_SELF_NS)
			ns = k.value;
	}
	if (samples)
		fprintf(f, "  ktrace host time per traced launch: %.0f ns (mean of %llu sampled launches)\n",
			(double)ns / (double)samples, (unsigned long long)samples);
}

static void summary_kernels_json(FILE *f, struct kernel_slot *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct dump_kernel *k = &v[i]->k;
		fprintf(f, "{\"summary\":\"kernel\",\"kernel_id\":%llu,\"kernel\":", (unsigned long long)k->id);
		if (v[i]->known) {
			dump_put_json_string(f, k->k.name.ptr, k->k.name.len);
			fputs(",\"demangled\":", f);
			dump_put_json_string(f, k->k.demangled.ptr, k->k.demangled.len);
		} else {
			fputs("null,\"demangled\":null", f);
		}
		fprintf(f, ",\"launches\":%llu,\"hashed_bytes\":%llu,\"out_regions\":%llu}\n",
			(unsigned long long)k->launches, (unsigned long long)k->hashed_bytes,
			(unsigned long long)k->out_regions);
	}
}

static void summary_kernels_text(FILE *f, const struct file_state *s, const char *file, struct kernel_slot *const *v,
				 size_t n, uint64_t hashed)
{
	fprintf(f, "summary of %s: %llu records, %llu launches of %zu kernel%s, %llu bytes hashed\n", file,
		(unsigned long long)s->records, (unsigned long long)s->launches, n, n == 1 ? "" : "s",
		(unsigned long long)hashed);
	if (n)
		fprintf(f, "  %10s %14s %11s  %s\n", "launches", "hashed_bytes", "out_regions", "kernel");
	for (size_t i = 0; i < n; i++) {
		const struct dump_kernel *k = &v[i]->k;
		fprintf(f, "  %10llu %14llu %11llu  ", (unsigned long long)k->launches,
			(unsigned long long)k->hashed_bytes, (unsigned long long)k->out_regions);
		if (!v[i]->known)
			fprintf(f, "<unknown kernel %llu>", (unsigned long long)k->id);
		else if (k->k.demangled.len)
			dump_put_escaped(f, k->k.demangled.ptr, k->k.demangled.len);
		else
			dump_put_escaped(f, k->k.name.ptr, k->k.name.len);
		fputc('\n', f);
	}
}

/* The last COUNTERS record: " name=value" each (text), ",\"name\":value" each (JSON). */
static void summary_counters(FILE *f, const struct file_state *s, int json)
{
	struct ktrace_rec_counters c;
	int have_c = s->counters && !ktrace_decode_counters(s->counters, s->counters_len, &c);
	const char *fmt_named = json ? ",\"%s\":%llu" : " %s=%llu";
	const char *fmt_numbered = json ? ",\"counter%u\":%llu" : " counter%u=%llu";

	fputs(json ? "{\"summary\":\"counters\"" : "  counters:", f);
	if (!have_c && !json)
		fputs(" none recorded", f);
	for (uint32_t i = 0; have_c && i < c.ncounters; i++) {
		struct ktrace_counter k;
		ktrace_counters_get(&c, i, &k);
		const char *nm = ktrace_counter_name(k.id);
		if (strcmp(nm, "unknown"))
			fprintf(f, fmt_named, nm, (unsigned long long)k.value);
		else
			fprintf(f, fmt_numbered, k.id, (unsigned long long)k.value);
	}
	fputs(json ? "}\n" : "\n", f);
	if (!json)
		print_self_cost(f, &c, have_c);
}

static void summary_notes(FILE *f, const struct file_state *s, int json)
{
	unsigned long long nt[4] = { s->notes[0], s->notes[1], s->notes[2], s->notes[3] };
	if (json) {
		fprintf(f, "{\"summary\":\"notes\",\"info\":%llu,\"warn\":%llu,\"error\":%llu,\"disabled\":%llu,\"texts\":[",
			nt[0], nt[1], nt[2], nt[3]);
		for (size_t i = 0; i < s->nnote_text; i++) {
			fputs(i ? "," : "", f);
			dump_put_json_string(f, s->note_text[i], strlen(s->note_text[i]));
		}
		fputs("]}\n", f);
		return;
	}
	fprintf(f, "  notes: %llu info, %llu warn, %llu error, %llu disabled\n", nt[0], nt[1], nt[2], nt[3]);
	for (size_t i = 0; i < s->nnote_text; i++) {
		fputs("    ", f);
		dump_put_escaped(f, s->note_text[i], strlen(s->note_text[i]));
		fputc('\n', f);
	}
}

/* The END record (text), or the totals with it (JSON). */
static void summary_end(FILE *f, const struct file_state *s, size_t nkernels, uint64_t hashed, int json)
{
	struct ktrace_rec_end e;
	int have_e = s->end && !ktrace_decode_end(s->end, s->end_len, &e);
	if (json) {
		fprintf(f, "{\"summary\":\"totals\",\"records\":%llu,\"launches\":%llu,\"kernels\":%zu,"
			   "\"hashed_bytes\":%llu,\"malformed\":%llu,\"end\":",
			(unsigned long long)s->records, (unsigned long long)s->launches, nkernels,
			(unsigned long long)hashed, (unsigned long long)s->malformed);
		if (have_e)
			fprintf(f, "{\"reason\":\"%s\",\"status\":%d}}\n", dump_end_reason_name(e.reason), e.status);
		else
			fputs("null}\n", f);
	} else if (have_e) {
		fprintf(f, "  end: %s status %d\n", dump_end_reason_name(e.reason), e.status);
	} else {
		fputs("  end: no END record (the process did not finish tracing)\n", f);
	}
}

/* --summary: the kernels that launched (by id), counters, notes, the end. */
static void summary(struct file_state *s, const char *file)
{
	FILE *f = s->ctx.out;
	int json = s->o->json;
	struct kernel_slot **v = xmalloc((s->tab_n ? s->tab_n : 1) * sizeof *v);
	size_t n = 0;
	uint64_t hashed = 0;

	for (size_t i = 0; i < s->tab_cap; i++)
		if (s->tab[i].used && s->tab[i].k.launches)
			v[n++] = &s->tab[i];
	qsort(v, n, sizeof *v, cmp_kernel_slot);
	for (size_t i = 0; i < n; i++)
		hashed += v[i]->k.hashed_bytes;
	if (json)
		summary_kernels_json(f, v, n);
	else
		summary_kernels_text(f, s, file, v, n, hashed);
	free(v);
	summary_counters(f, s, json);
	summary_notes(f, s, json);
	summary_end(f, s, n, hashed, json);
}

static void state_free(struct file_state *s)
{
	for (size_t i = 0; i < s->tab_cap; i++)
		free(s->tab[i].k.rec);
	free(s->tab);
	for (size_t i = 0; i < s->nheld; i++)
		free(s->held[i].rec);
	free(s->held);
	for (size_t i = 0; i < s->nnote_text; i++)
		free(s->note_text[i]);
	free(s->counters);
	free(s->end);
	dump_orders_free(&s->orders);
}

/* A filter that selected nothing in path: one line on stderr. */
static void say_empty_selection(const struct file_state *s, const char *path)
{
	if (s->o->have_re && !s->launches)
		fprintf(stderr, "ktrace-dump: %s: no launch of a kernel matching '%s'%s\n", path, s->o->re_text,
			s->o->have_range ? " numbered in that range" : "");
	else if (s->o->have_range && !s->ops_selected)
		fprintf(stderr, "ktrace-dump: %s: no launch, copy or memset numbered in %s\n", path, s->o->range_text);
}

/* Dump one file; 0 when read to a clean end, 2 otherwise. */
static int dump_file(const struct opts *o, const char *path, int several)
{
	char err[512];
	struct ktrace_reader *r = ktrace_reader_open(path, err, sizeof err);
	if (!r) {
		fflush(stdout);
		fprintf(stderr, "ktrace-dump: %s\n", err);
		return 2;
	}
	struct file_state s;
	memset(&s, 0, sizeof s);
	s.o = o;
	s.ctx.out = stdout;
	s.ctx.exactness_known = ktrace_reader_major(r) > 1 || ktrace_reader_minor(r) >= 2;
	if (several) {
		if (o->json)
			s.ctx.file = path;
		else
			printf("== %s\n", path);
	}
	const void *rec;
	size_t len;
	enum ktrace_read_status st;
	while ((st = ktrace_reader_next(r, &rec, &len)) == KTRACE_READ_RECORD)
		on_record(&s, rec, len);
	flush_unresolved(&s);
	dump_orders_flush(&s.orders, print_held_order, &s);
	if (o->summary)
		summary(&s, path);
	fflush(stdout);
	int rc = 0;
	if (s.orders.dropped)
		fprintf(stderr, "ktrace-dump: %s: %llu ORDER records not shown (over %llu MiB held for --kernel)\n",
			path, (unsigned long long)s.orders.dropped, (unsigned long long)(DUMP_ORDERS_MAX_BYTES >> 20));
	if (s.malformed) {
		fprintf(stderr, "ktrace-dump: %s: %llu malformed records (shown as such)\n", path,
			(unsigned long long)s.malformed);
		rc = 2;
	}
	if (st != KTRACE_READ_EOF) {
		fprintf(stderr, "ktrace-dump: %s\n", ktrace_reader_error(r));
		rc = 2;
	} else {
		say_empty_selection(&s, path);
	}
	state_free(&s);
	ktrace_reader_close(r);
	return rc;
}

/* --kernel: compiled once, for every name of every file. */
static int set_kernel_filter(struct opts *o, const char *v, char *err, size_t errlen)
{
	char why[300];

	if (o->have_re)
		regfree(&o->re);
	o->have_re = 0;
	if (ktrace_regex_compile(&o->re, v, why, sizeof why))
		return ktrace_cli_bad_value(err, errlen, "--kernel", v, why);
	o->have_re = 1;
	o->re_text = v;
	return 0;
}

static int set_range(struct opts *o, const char *v, char *err, size_t errlen)
{
	char why[200];

	if (ktrace_parse_range(v, &o->lo, &o->hi, why, sizeof why))
		return ktrace_cli_bad_value(err, errlen, "--range", v, why);
	o->have_range = 1;
	o->range_text = v;
	return 0;
}

/* Read the options into *o; -1 to go on (the files are argv[optind..]), else the exit status. */
static int parse_options(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "kernel", required_argument, NULL, 'k' },
		{ "range", required_argument, NULL, 'r' },
		{ "summary", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	char err[512];
	int code, rc = 0;

	while ((code = ktrace_cli_next(argc, argv, ":h", longopts, err, sizeof err)) != -1) {
		switch (code) {
		case 'j': o->json = 1; break;
		case 's': o->summary = 1; break;
		case 'k': rc = set_kernel_filter(o, optarg, err, sizeof err); break;
		case 'r': rc = set_range(o, optarg, err, sizeof err); break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("ktrace-dump %s\n", KTRACE_VERSION); return 0;
		default: return ktrace_cli_usage_error("ktrace-dump", err);
		}
		if (rc)
			return ktrace_cli_fail("ktrace-dump", err);
	}
	if (optind >= argc)
		return ktrace_cli_usage_error("ktrace-dump", "no trace file given");
	return -1;
}

int main(int argc, char **argv)
{
	struct opts o;
	int rc;

	memset(&o, 0, sizeof o);
	ktrace_cli_begin();
	rc = parse_options(argc, argv, &o);
	if (rc < 0) {
		rc = 0;
		for (int i = optind; i < argc; i++)
			if (dump_file(&o, argv[i], argc - optind > 1))
				rc = 2;
	}
	if (o.have_re)
		regfree(&o.re);
	return rc;
}
