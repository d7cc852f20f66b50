/* tools/dump/dump.c: ktrace-dump, print trace files as text or JSON Lines.
 *
 * Owns the command line, the per-file record loop, the kernel table that
 * resolves launches to names and parameter layouts (a KERNEL record is
 * taken into the table as soon as it is read, so a launch printed before
 * it in seq order has its name), the table of NVTX range paths that resolves
 * their ranges (tools/model/ranges.h; RANGE records likewise), the filters and
 * the --summary tables.
 * Records are printed in seq order (dump_reorder.c), or group by group with
 * --group.  Printing is in dump_text.c and tools/model/record_json.c.
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/value_parse.h"
#include "format/trace_reader.h"
#include "tools/cli/cli_options.h"
#include "tools/dump/dump_internal.h"
#include "tools/model/array.h"
#include "tools/model/json_writer.h"
#include "tools/model/ranges.h"

#define NOTES_KEPT 32

enum dump_grouping { GROUP_NONE = 0, GROUP_STREAM, GROUP_KERNEL };

static const char usage_text[] =
	"usage: ktrace-dump [options] FILE...\n"
	"Print ktrace trace files (\"-\" reads standard input), records in the order\n"
	"they were committed (their seq).\n"
	"\n"
	"options:\n"
	"  --json              JSON Lines: one object per record, every field\n"
	"  --kernel REGEX      only launches of kernels whose mangled or demangled name\n"
	"                      matches (POSIX extended regex), and those kernels' records\n"
	"  --range A:B         only launches, copies and memsets numbered A <= n < B\n"
	"                      (they share one numbering; A or B may be left out; a\n"
	"                      single N means N:N+1)\n"
	"  --nvtx REGEX        only launches, copies and memsets issued inside NVTX\n"
	"                      ranges whose path (\"outer > inner\", as printed)\n"
	"                      matches (POSIX extended regex)\n"
	"                      --kernel, --range and --nvtx keep the ORDER\n"
	"                      records that order what they show (none when they\n"
	"                      select nothing): with --range those made from op A\n"
	"                      to op B, with every stream creation; with the others\n"
	"                      those of the printed operations' streams and of\n"
	"                      events recorded or waited on them, and their\n"
	"                      contexts' synchronisations, printed after the other\n"
	"                      records\n"
	"  --summary           launches and bytes hashed per kernel, counters and notes,\n"
	"                      instead of the records\n"
	"  --group WHAT        records in groups instead of one seq order: 'stream'\n"
	"                      (each stream's launches, copies, memsets and order\n"
	"                      records) or 'kernel' (each kernel's record and its\n"
	"                      launches); the other records first\n"
	"  --record-table      the record table: every record type and field, with\n"
	"                      its offset, type and name (JSON), instead of a file\n"
	"  -h, --help          this text\n"
	"  --version           print the version\n"
	"\n"
	"Exit status: 0 when every file was read to its end; 2 for a bad option, output\n"
	"that could not be written, or a file that is empty, not a ktrace trace, of a\n"
	"newer format version, corrupt or truncated (everything decodable is printed\n"
	"first, then one line on stderr).\n";

/* What the command line asks for. */
struct opts {
	int json, summary;
	int record_table;	/* --record-table */
	int group;		/* enum dump_grouping */
	int have_re;
	regex_t re;
	const char *re_text, *range_text; /* as given, for messages */
	int have_path_re;	/* --nvtx */
	regex_t path_re;
	const char *path_re_text;
	int have_range;
	uint64_t lo, hi;
};

/* One kernel of the file, by id: its KERNEL record once read, its counts. */
struct kernel_slot {
	struct dump_kernel k;
	int used, known;
};

struct file_state {
	const struct opts *o;
	struct record_ctx ctx;
	struct kernel_slot *tab;
	size_t tab_cap, tab_n;
	struct dump_reorder reorder;
	struct dump_groups groups;
	uint64_t records, launches, malformed;
	uint64_t ops_selected;	/* launches, copies and memsets that passed the filters */
	uint64_t ops_read, op_min, op_max; /* all of them, and their numbers (for messages) */
	uint64_t notes[4], notes_other;
	char *note_text[NOTES_KEPT];
	size_t nnote_text;
	uint8_t *counters;	/* last COUNTERS record */
	size_t counters_len;
	uint8_t *end;		/* END record */
	size_t end_len;
	struct dump_orders orders; /* --kernel, --nvtx: ORDER records held to the end of the file */
	struct dump_orders pending; /* --range alone: ORDER records held until an operation is selected */
	struct ktrace_ranges ranges; /* RANGE records, taken as they are read (ctx.ranges) */
	struct dump_sources sources; /* --summary: hashed bytes by pointer source */
};

static void usage(FILE *f)
{
	fputs(usage_text, f);
}

static void out_of_memory(void)
{
	fputs("ktrace-dump: out of memory\n", stderr);
	exit(2);
}

void *ktrace_dump_alloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		out_of_memory();
	return p;
}

void *ktrace_dump_copy(const void *p, size_t n)
{
	return memcpy(ktrace_dump_alloc(n), p, n);
}

void ktrace_dump_grow(void *arrp, size_t *cap, size_t need, size_t elem)
{
	if (ktrace_grow(arrp, cap, need, elem))
		out_of_memory();
}

/* ---- kernel table (open addressing on the kernel id) ------------------- */

/* 1 when a digest (flag `digest`) was measured by the checksum kernel: present
 * and not carried (flag `carried`); a carried flag without its digest counts 0. */
static unsigned digest_measured(uint32_t flags, uint32_t digest, uint32_t carried)
{
	return (flags & digest) && !(flags & carried);
}

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
		if (!t)
			out_of_memory();
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
		char *z = ktrace_dump_alloc((size_t)v[i].len + 1);
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

/* The group of a record under --group: 1 with its key, or 0 (printed before the groups). */
static int group_key(const struct file_state *s, const struct ktrace_record_prefix *p, const void *rec, size_t len,
		     uint64_t *a, uint64_t *b)
{
	struct ktrace_rec_launch l;
	struct ktrace_rec_memcpy c;
	struct ktrace_rec_memset m;
	struct ktrace_rec_order o;
	struct ktrace_rec_gputime g;
	int stream = s->o->group == GROUP_STREAM;

	*b = 0;
	if (p->type == KTRACE_REC_LAUNCH && !ktrace_decode_launch(rec, len, &l)) {
		*a = stream ? l.context : l.kernel_id;
		*b = stream ? l.stream : 0;
		return 1;
	}
	if (s->o->group == GROUP_KERNEL) {
		struct ktrace_rec_kernel k;

		if (p->type != KTRACE_REC_KERNEL || ktrace_decode_kernel(rec, len, &k))
			return 0;
		*a = k.kernel_id;
		return 1;
	}
	if (p->type == KTRACE_REC_MEMCPY && !ktrace_decode_memcpy(rec, len, &c)) {
		*a = c.context;
		*b = c.stream;
		return 1;
	}
	if (p->type == KTRACE_REC_MEMSET && !ktrace_decode_memset(rec, len, &m)) {
		*a = m.context;
		*b = m.stream;
		return 1;
	}
	if (p->type == KTRACE_REC_ORDER && !ktrace_decode_order(rec, len, &o)) {
		*a = o.context;
		*b = o.stream;
		return 1;
	}
	if (p->type == KTRACE_REC_GPUTIME && !ktrace_decode_gputime(rec, len, &g)) {
		*a = g.context;
		*b = g.stream;
		return 1;
	}
	return 0;
}

static int print_now(struct file_state *s, const struct ktrace_record_prefix *p, const void *rec, size_t len,
		     const struct dump_kernel *k)
{
	if (s->o->json)
		return ktrace_record_json(&s->ctx, p, rec, len, k ? &k->k : NULL);
	return ktrace_dump_text_record(&s->ctx, p, rec, len, k ? &k->k : NULL);
}

/* Print a record that passed the filters, or keep it for its group (--group). */
static int print_record(struct file_state *s, const struct ktrace_record_prefix *p, const void *rec, size_t len,
			const struct dump_kernel *k)
{
	uint64_t a, b;

	if (s->o->summary)
		return 0;
	if (s->o->group && group_key(s, p, rec, len, &a, &b)) {
		/* a kernel's record heads its group */
		ktrace_dump_groups_add(&s->groups, rec, len, p->type == KTRACE_REC_KERNEL ? 0 : p->seq, a, b);
		return 0;
	}
	return print_now(s, p, rec, len, k);
}

static int in_range(const struct opts *o, uint64_t n)
{
	return !o->have_range || (n >= o->lo && n < o->hi);
}

/* --nvtx: the NVTX path of a launch, copy or memset (has: its record carries one). */
static int in_path(const struct file_state *s, int has, uint32_t range)
{
	return !s->o->have_path_re || (has && ktrace_ranges_match(&s->ranges, range, &s->o->path_re));
}

/* A filter that holds ORDER records to the end of the file (--kernel, --nvtx). */
static int holds_orders(const struct opts *o)
{
	return o->have_re || o->have_path_re;
}

static void print_held_order(void *ctx, const void *rec, size_t len);

/* A launch, copy or memset numbered op was read (selected or not). */
static void op_read(struct file_state *s, uint64_t op)
{
	if (!s->ops_read++ || op < s->op_min)
		s->op_min = op;
	if (op > s->op_max)
		s->op_max = op;
}

/* A launch, copy or memset passed the filters, and is printed next: the ORDER
 * records held until one did (--range alone) come first, in seq order. */
static void op_selected(struct file_state *s)
{
	if (!s->ops_selected++)
		ktrace_dump_orders_release(&s->pending, print_held_order, s);
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
	if (holds_orders(s->o))
		ktrace_dump_orders_add_launch(&s->orders, &l);
	s->launches++;
	op_selected(s);
	if (slot) {
		slot->k.launches++;
		for (uint32_t i = 0; i < l.nregions; i++) {
			struct ktrace_region g;
			ktrace_launch_region(&l, i, &g);
			/* bytes the checksum kernel read: each digest counts (as the hash_bytes counter),
			 * not a carried digest (KTRACE_HASH_VERIFY's measuring of it is only counted there) */
			unsigned measured = digest_measured(g.flags, KTRACE_REGIONF_PRE, KTRACE_REGIONF_PRE_CARRIED) +
					    digest_measured(g.flags, KTRACE_REGIONF_POST, KTRACE_REGIONF_POST_CARRIED);

			slot->k.hashed_bytes += g.hash_len * (uint64_t)measured;
			ktrace_dump_sources_add(&s->sources, &g, measured);
			slot->k.out_regions += (uint64_t)ktrace_region_out(&g);
		}
	}
	if (print_record(s, &p, rec, len, k))
		s->malformed++;
}

/* A KERNEL record as it is read from the file: into the table (the first
 * of an id counts), so that launches before it in seq order have its name. */
static void take_kernel(struct file_state *s, const void *rec, size_t len)
{
	struct ktrace_rec_kernel k;
	struct kernel_slot *slot;

	if (ktrace_decode_kernel(rec, len, &k))
		return;
	slot = kernel_slot_get(s, k.kernel_id, 1);
	if (slot->known)
		return;
	slot->known = 1;
	slot->k.rec = ktrace_dump_copy(rec, len);
	ktrace_decode_kernel(slot->k.rec, len, &slot->k.k);
	if (s->o->have_re)
		slot->k.match = name_matches(&s->o->re, k.name, k.demangled);
}

/* A KERNEL record in its turn: printed when the filters show it. */
static void on_kernel(struct file_state *s, const struct ktrace_record_prefix *p, const void *rec, size_t len)
{
	struct ktrace_rec_kernel k;
	if (ktrace_decode_kernel(rec, len, &k)) {
		s->malformed++;
		if (!s->o->have_re && !s->o->have_range && !s->o->have_path_re)
			print_record(s, p, rec, len, NULL);
		return;
	}
	int show = s->o->have_re ? name_matches(&s->o->re, k.name, k.demangled)
				 : !s->o->have_range && !s->o->have_path_re;
	if (show)
		print_record(s, p, rec, len, NULL);
}

/* rc, what a record's decoder returned: nonzero when the record is
 * malformed, which is then counted and printed as it is. */
static int malformed(struct file_state *s, const struct ktrace_record_prefix *p, const void *rec, size_t len, int rc)
{
	if (rc) {
		s->malformed++;
		print_record(s, p, rec, len, NULL);
	}
	return rc;
}

static void on_launch(struct file_state *s, const struct ktrace_record_prefix *p, const void *rec, size_t len)
{
	struct ktrace_rec_launch l;
	if (malformed(s, p, rec, len, ktrace_decode_launch(rec, len, &l)))
		return;
	op_read(s, l.launch_seq);
	if (!in_range(s->o, l.launch_seq) || !in_path(s, !!(l.flags & KTRACE_LAUNCHF_RANGE), l.range.range))
		return;
	emit_launch(s, rec, len, kernel_slot_get(s, l.kernel_id, 1));
}

/* An ORDER record of a filtered dump: with --range alone kept or not at once
 * (held until an operation is selected), with --kernel or --nvtx held to the
 * end of the file (tools/dump_order.c). */
static void on_order_filtered(struct file_state *s, const struct ktrace_record_prefix *p, const void *rec, size_t len)
{
	struct ktrace_rec_order o;

	if (malformed(s, p, rec, len, ktrace_decode_order(rec, len, &o)))
		return;
	if (holds_orders(s->o))
		ktrace_dump_orders_note_link(&s->orders, &o);
	if (s->o->have_range && !ktrace_dump_order_in_range(&o, s->o->lo, s->o->hi))
		return;
	if (holds_orders(s->o))
		ktrace_dump_orders_hold(&s->orders, p, rec, len, &o);
	else if (!s->ops_selected)
		ktrace_dump_orders_hold(&s->pending, p, rec, len, &o);
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
		char *t = ktrace_dump_alloc(cap);
		snprintf(t, cap, "%s code %u: %.*s", ktrace_note_level_name(n.level), n.code, (int)n.text.len,
			 n.text.ptr);
		s->note_text[s->nnote_text++] = t;
	}
}

static void keep_copy(uint8_t **dst, size_t *dlen, const void *rec, size_t len)
{
	free(*dst);
	*dst = ktrace_dump_copy(rec, len);
	*dlen = len;
}

/* A GPUTIME record under --range or --kernel: kept when its operation is
 * in the range, left out with --kernel (as copies are). */
static void on_gputime_filtered(struct file_state *s, const struct ktrace_record_prefix *p, const void *rec,
				size_t len)
{
	struct ktrace_rec_gputime g;

	if (malformed(s, p, rec, len, ktrace_decode_gputime(rec, len, &g)))
		return;
	if (!s->o->have_re && in_range(s->o, g.op_seq) && print_record(s, p, rec, len, NULL))
		s->malformed++;
}

/* A copy or memset: printed when the filters select it; -1 when it cannot
 * be decoded. */
static int on_copy(struct file_state *s, const struct ktrace_record_prefix *p, const void *rec, size_t len)
{
	struct ktrace_rec_memcpy c;
	struct ktrace_rec_memset m;
	int copy = p->type == KTRACE_REC_MEMCPY;

	if (copy ? ktrace_decode_memcpy(rec, len, &c) : ktrace_decode_memset(rec, len, &m))
		return -1;
	uint64_t op = copy ? c.op_seq : m.op_seq;
	uint32_t flags = copy ? c.flags : m.flags;
	op_read(s, op);
	if (s->o->have_re || !in_range(s->o, op) ||
	    !in_path(s, !!(flags & KTRACE_COPYF_RANGE), copy ? c.range.range : m.range.range))
		return 0;
	if (holds_orders(s->o))
		ktrace_dump_orders_add_op(&s->orders, copy ? c.stream : m.stream, copy ? c.context : m.context);
	op_selected(s);
	if (print_record(s, p, rec, len, NULL))
		s->malformed++;
	return 0;
}

static void on_record(struct file_state *s, const void *rec, size_t len)
{
	struct ktrace_record_prefix p;
	s->records++;
	if (ktrace_decode_prefix(rec, len, &p)) { /* the reader checked the size already */
		s->malformed++;
		return;
	}
	int filtered = s->o->have_re || s->o->have_range || s->o->have_path_re;
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
	case KTRACE_REC_MEMSET:
		if (on_copy(s, &p, rec, len))
			break; /* printed as malformed below */
		return;
	case KTRACE_REC_ORDER:
	case KTRACE_REC_GPUTIME: /* as they are, unless a filter is on */
		if (!filtered)
			break;
		if (p.type == KTRACE_REC_ORDER)
			on_order_filtered(s, &p, rec, len);
		else
			on_gputime_filtered(s, &p, rec, len);
		return;
	case KTRACE_REC_REPLAY: {
		/* printed with its kernel's names, as a launch is */
		struct ktrace_rec_replay r;
		const struct kernel_slot *slot = NULL;
		if (filtered)
			return;
		if (!ktrace_decode_replay(rec, len, &r))
			slot = kernel_slot_get(s, r.kernel_id, 0);
		if (print_record(s, &p, rec, len, slot && slot->known ? &slot->k : NULL))
			s->malformed++;
		return;
	}
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

/* ---- reading in seq order -------------------------------------------------------------- */

static int kernel_known(void *ctx, uint64_t id)
{
	const struct kernel_slot *slot = kernel_slot_get(ctx, id, 0);

	return slot && slot->known;
}

/* A RANGE record as it is read: into the file's table (a record of a later
 * seq names it, and its parents come before it in seq order). */
static void take_range(struct file_state *s, const void *rec, size_t len)
{
	struct ktrace_rec_range r;

	if (!ktrace_decode_range(rec, len, &r) && ktrace_ranges_add(&s->ranges, &r))
		out_of_memory();
}

/* A record read from the file: a KERNEL or RANGE goes into its table at
 * once; every record waits in the reorder buffer for its turn. */
static void take_record(struct file_state *s, const void *rec, size_t len)
{
	struct ktrace_record_prefix p;
	struct ktrace_rec_launch l;
	uint64_t wait = DUMP_NO_KERNEL;

	if (ktrace_decode_prefix(rec, len, &p)) { /* the reader checked the size already */
		p.type = 0;
		p.seq = s->reorder.next_seq;
	}
	if (p.type == KTRACE_REC_KERNEL)
		take_kernel(s, rec, len);
	else if (p.type == KTRACE_REC_RANGE)
		take_range(s, rec, len);
	else if (p.type == KTRACE_REC_LAUNCH && !ktrace_decode_launch(rec, len, &l))
		wait = l.kernel_id;
	ktrace_dump_reorder_push(&s->reorder, rec, len, p.seq, wait);
}

/* Print the records whose turn has come (final: all of them). */
static void release_records(struct file_state *s, int final)
{
	struct dump_held h;

	while (ktrace_dump_reorder_next(&s->reorder, final, kernel_known, s, &h)) {
		on_record(s, h.rec, h.len);
		free(h.rec);
	}
}

/* The heading of a group (text). */
static void group_heading(struct file_state *s, const void *rec, size_t len)
{
	struct ktrace_record_prefix p;
	uint64_t a, b;

	if (s->o->json || ktrace_decode_prefix(rec, len, &p) || !group_key(s, &p, rec, len, &a, &b))
		return;
	if (s->o->group == GROUP_STREAM)
		fprintf(s->ctx.out, "== stream 0x%llx ctx 0x%llx\n", ktrace_ull(b), ktrace_ull(a));
	else
		fprintf(s->ctx.out, "== kernel %llu\n", ktrace_ull(a));
}

/* --group: the records kept, group by group. */
static void print_groups(struct file_state *s)
{
	struct dump_groups *g = &s->groups;

	ktrace_dump_groups_sort(g);
	for (size_t i = 0; i < g->n; i++) {
		const struct dump_held *h = &g->v[i].held;
		struct ktrace_record_prefix p;
		struct ktrace_rec_launch l;
		const struct kernel_slot *slot = NULL;

		if (!i || g->v[i].group != g->v[i - 1].group)
			group_heading(s, h->rec, h->len);
		if (ktrace_decode_prefix(h->rec, h->len, &p))
			continue;
		if (p.type == KTRACE_REC_LAUNCH && !ktrace_decode_launch(h->rec, h->len, &l))
			slot = kernel_slot_get(s, l.kernel_id, 0);
		if (print_now(s, &p, h->rec, h->len, slot && slot->known ? &slot->k : NULL))
			s->malformed++;
	}
}

/* ---- summary ------------------------------------------------------------ */

static int cmp_kernel_slot(const void *a, const void *b)
{
	const struct kernel_slot *x = *(struct kernel_slot *const *)a, *y = *(struct kernel_slot *const *)b;
	return x->k.id < y->k.id ? -1 : x->k.id > y->k.id;
}


/* ktrace's own host cost per traced launch, from the self-timing counters. */
static void print_self_cost(FILE *f, const struct record_ctx *ctx, const struct ktrace_rec_counters *c, int have_c)
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
		fprintf(f, "  ktrace host time per traced launch: %.0f ns (mean of %llu sampled launch%s)\n",
			(double)ns / (double)samples, (unsigned long long)samples, samples == 1 ? "" : "es");
	else if (ctx->format_major == 1 && ctx->format_minor < 1)
		fprintf(f, "  ktrace host time per traced launch: not recorded (format %u.%u; self-timing came with "
			   "1.1)\n", ctx->format_major, ctx->format_minor);
	else
		fputs("  ktrace host time per traced launch: not measured (no launch was sampled)\n", f);
}

/* The start of a --summary --json line: {"summary":"<kind>","file":"<file>" */
static void summary_json_open(struct json_writer *w, FILE *f, const char *kind, const char *file)
{
	ktrace_json_init(w, f, JSON_COMPACT);
	ktrace_json_object(w, NULL);
	ktrace_json_str(w, "summary", kind);
	ktrace_json_str(w, "file", file);
}

/* The end of the line. */
static void summary_json_close(struct json_writer *w)
{
	ktrace_json_end(w);
	fputc('\n', w->f);
}

static void summary_kernels_json(FILE *f, const char *file, struct kernel_slot *const *v, size_t n)
{
	struct json_writer w;

	for (size_t i = 0; i < n; i++) {
		const struct dump_kernel *k = &v[i]->k;

		summary_json_open(&w, f, "kernel", file);
		ktrace_json_u64(&w, "kernel_id", k->id);
		if (v[i]->known) {
			const struct ktrace_str *shown = k->k.demangled.len ? &k->k.demangled : &k->k.name;

			ktrace_json_strn(&w, "kernel", shown->ptr, shown->len);
			ktrace_json_strn(&w, "mangled", k->k.name.ptr, k->k.name.len);
		} else {
			ktrace_json_null(&w, "kernel");
			ktrace_json_null(&w, "mangled");
		}
		ktrace_json_u64(&w, "launches", k->launches);
		ktrace_json_u64(&w, "hashed_bytes", k->hashed_bytes);
		ktrace_json_u64(&w, "out_regions", k->out_regions);
		summary_json_close(&w);
	}
}

static void summary_kernels_text(FILE *f, const struct file_state *s, const char *file, struct kernel_slot *const *v,
				 size_t n, uint64_t hashed)
{
	fprintf(f, "summary of %s (format %u.%u): %llu record%s, %llu launch%s of %zu kernel%s, %llu bytes hashed (each digest, "
		   "before and after a launch, counts)\n", file, s->ctx.format_major, s->ctx.format_minor, (unsigned long long)s->records, s->records == 1 ? "" : "s",
		(unsigned long long)s->launches, s->launches == 1 ? "" : "es", n, n == 1 ? "" : "s",
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
			ktrace_put_escaped(f, k->k.demangled.ptr, k->k.demangled.len);
		else
			ktrace_put_escaped(f, k->k.name.ptr, k->k.name.len);
		fputc('\n', f);
	}
}

/* A counter's name (counter<N> for an id this build has no name for). */
static const char *counter_key(uint32_t id, char *buf, size_t cap)
{
	const char *nm = ktrace_counter_name(id);

	if (strcmp(nm, "unknown"))
		return nm;
	snprintf(buf, cap, "counter%u", id);
	return buf;
}

/* The last COUNTERS record: " name=value" each (text), "name":value members (JSON). */
static void summary_counters(FILE *f, const struct file_state *s, int json)
{
	struct ktrace_rec_counters c;
	int have_c = s->counters && !ktrace_decode_counters(s->counters, s->counters_len, &c);
	struct json_writer w;
	char key[32];

	if (json)
		summary_json_open(&w, f, "counters", s->ctx.file);
	else
		fputs("  counters:", f);
	if (!have_c && !json)
		fputs(" none recorded", f);
	else if (!c.ncounters && !json)
		fputs(" all zero", f); /* the writer lists the non-zero ones only */
	for (uint32_t i = 0; have_c && i < c.ncounters; i++) {
		struct ktrace_counter k;

		ktrace_counters_get(&c, i, &k);
		if (json)
			ktrace_json_u64(&w, counter_key(k.id, key, sizeof key), k.value);
		else
			fprintf(f, " %s=%llu", counter_key(k.id, key, sizeof key), (unsigned long long)k.value);
	}
	if (json) {
		summary_json_close(&w);
		return;
	}
	fputc('\n', f);
	print_self_cost(f, &s->ctx, &c, have_c);
}

static void summary_notes(FILE *f, const struct file_state *s, int json)
{
	unsigned long long nt[4] = { s->notes[0], s->notes[1], s->notes[2], s->notes[3] };
	struct json_writer w;

	if (json) {
		summary_json_open(&w, f, "notes", s->ctx.file);
		ktrace_json_u64(&w, "info", nt[0]);
		ktrace_json_u64(&w, "warn", nt[1]);
		ktrace_json_u64(&w, "error", nt[2]);
		ktrace_json_u64(&w, "disabled", nt[3]);
		ktrace_json_array(&w, "texts");
		for (size_t i = 0; i < s->nnote_text; i++)
			ktrace_json_str(&w, NULL, s->note_text[i]);
		ktrace_json_end(&w);
		summary_json_close(&w);
		return;
	}
	fprintf(f, "  notes: %llu info, %llu warn, %llu error, %llu disabled\n", nt[0], nt[1], nt[2], nt[3]);
	for (size_t i = 0; i < s->nnote_text; i++) {
		fputs("    ", f);
		ktrace_put_escaped(f, s->note_text[i], strlen(s->note_text[i]));
		fputc('\n', f);
	}
}

/* The END record (text), or the totals with it (JSON). */
static void summary_end(FILE *f, const struct file_state *s, size_t nkernels, uint64_t hashed, int json)
{
	struct ktrace_rec_end e;
	int have_e = s->end && !ktrace_decode_end(s->end, s->end_len, &e);
	struct json_writer w;
	char format[32];

	if (!json) {
		if (have_e)
			fprintf(f, "  end: %s status %d\n", ktrace_end_reason_name(e.reason), e.status);
		else
			fputs("  end: no END record (the process did not finish tracing)\n", f);
		return;
	}
	summary_json_open(&w, f, "totals", s->ctx.file);
	snprintf(format, sizeof format, "%u.%u", s->ctx.format_major, s->ctx.format_minor);
	ktrace_json_str(&w, "format", format);
	ktrace_json_u64(&w, "records", s->records);
	ktrace_json_u64(&w, "launches", s->launches);
	ktrace_json_u64(&w, "kernels", nkernels);
	ktrace_json_u64(&w, "hashed_bytes", hashed);
	ktrace_json_u64(&w, "malformed", s->malformed);
	if (have_e) {
		ktrace_json_object(&w, "end");
		ktrace_json_str(&w, "reason", ktrace_end_reason_name(e.reason));
		ktrace_json_i64(&w, "status", e.status);
		ktrace_json_end(&w);
	} else {
		ktrace_json_null(&w, "end");
	}
	summary_json_close(&w);
}

/* --summary: the kernels that launched (by id), counters, notes, the end. */
static void summary(struct file_state *s, const char *file)
{
	FILE *f = s->ctx.out;
	int json = s->o->json;
	struct kernel_slot **v = ktrace_dump_alloc((s->tab_n ? s->tab_n : 1) * sizeof *v);
	size_t n = 0;
	uint64_t hashed = 0;

	for (size_t i = 0; i < s->tab_cap; i++)
		if (s->tab[i].used && s->tab[i].k.launches)
			v[n++] = &s->tab[i];
	qsort(v, n, sizeof *v, cmp_kernel_slot);
	for (size_t i = 0; i < n; i++)
		hashed += v[i]->k.hashed_bytes;
	if (json)
		summary_kernels_json(f, s->ctx.file, v, n);
	else
		summary_kernels_text(f, s, file, v, n, hashed);
	if (s->ctx.format_major == 1 && s->ctx.format_minor >= 14) { /* `written` came with 1.14 */
		struct dump_written w = { 0 };

		for (size_t i = 0; i < n; i++)
			if (v[i]->known)
				ktrace_dump_written_count(&v[i]->k, &w);
		ktrace_dump_written_print(f, s->ctx.file, &w, json);
	}
	ktrace_dump_sources_print(f, s->ctx.file, &s->sources, json);
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
	ktrace_dump_reorder_free(&s->reorder);
	ktrace_dump_groups_free(&s->groups);
	for (size_t i = 0; i < s->nnote_text; i++)
		free(s->note_text[i]);
	free(s->counters);
	free(s->end);
	ktrace_dump_orders_free(&s->orders);
	ktrace_dump_orders_free(&s->pending);
	ktrace_ranges_free(&s->ranges);
}

/* --range selected nothing in path: which numbers it asked for and which
 * the trace has, in words. */
static void say_empty_range(const struct file_state *s, const char *path)
{
	const struct opts *o = s->o;
	char want[160], have[160];

	if (o->hi == o->lo + 1)
		snprintf(want, sizeof want, "is op %llu", ktrace_ull(o->lo));
	else if (o->hi == UINT64_MAX)
		snprintf(want, sizeof want, "has an op number from %llu on", ktrace_ull(o->lo));
	else
		snprintf(want, sizeof want, "has an op number from %llu to %llu", ktrace_ull(o->lo), ktrace_ull(o->hi - 1));
	if (!s->ops_read)
		snprintf(have, sizeof have, "the trace has no launch, copy or memset");
	else if (s->op_min == s->op_max)
		snprintf(have, sizeof have, "the trace has op %llu only", ktrace_ull(s->op_min));
	else
		snprintf(have, sizeof have, "the trace has ops %llu to %llu", ktrace_ull(s->op_min), ktrace_ull(s->op_max));
	fprintf(stderr, "ktrace-dump: %s: no launch, copy or memset %s (--range %s): %s\n", path, want, o->range_text,
		have);
}

/* A filter that selected nothing in path: one line on stderr. */
static void say_empty_selection(const struct file_state *s, const char *path)
{
	if (s->o->have_re && !s->launches)
		fprintf(stderr, "ktrace-dump: %s: no launch of a kernel matching '%s'%s%s\n", path, s->o->re_text,
			s->o->have_range ? " in --range " : "", s->o->have_range ? s->o->range_text : "");
	else if (s->o->have_range && !s->ops_selected)
		say_empty_range(s, path);
	else if (s->o->have_path_re && !s->ops_selected)
		fprintf(stderr, "ktrace-dump: %s: no launch, copy or memset inside NVTX ranges matching '%s'\n", path,
			s->o->path_re_text);
}

/* Dump one file; 0 when read to a clean end, 2 otherwise. */
static int dump_file(const struct opts *o, const char *path, int several)
{
	char err[512];
	struct ktrace_reader *r = ktrace_reader_open(path, err, sizeof err);
	if (!r) {
		ktrace_cli_flush_stdout();
		fprintf(stderr, "ktrace-dump: %s\n", err);
		return 2;
	}
	struct file_state s;
	memset(&s, 0, sizeof s);
	s.o = o;
	s.ctx.out = stdout;
	s.ctx.exactness_known = ktrace_reader_major(r) > 1 || ktrace_reader_minor(r) >= 2;
	s.ctx.format_major = ktrace_reader_major(r);
	s.ctx.format_minor = ktrace_reader_minor(r);
	s.ctx.file = path;
	s.ctx.ranges = &s.ranges;
	if (several && !o->json)
		printf("== %s\n", path);
	const void *rec;
	size_t len;
	enum ktrace_read_status st;
	while ((st = ktrace_reader_next(r, &rec, &len)) == KTRACE_READ_RECORD) {
		take_record(&s, rec, len);
		release_records(&s, 0);
	}
	release_records(&s, 1);
	ktrace_dump_orders_flush(&s.orders, print_held_order, &s);
	print_groups(&s);
	if (o->summary)
		summary(&s, path);
	ktrace_cli_flush_stdout();
	int rc = 0;
	if (s.orders.dropped || s.pending.dropped)
		fprintf(stderr, "ktrace-dump: %s: %llu ORDER records not shown (over %llu MiB held for the filters)\n",
			path, (unsigned long long)(s.orders.dropped + s.pending.dropped),
			(unsigned long long)(DUMP_ORDERS_MAX_BYTES >> 20));
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
/* --kernel, --nvtx: compiled once (a later one replaces an earlier one). */
static int set_regex(regex_t *re, int *have, const char **text, const char *option, const char *v, char *err,
		     size_t errlen)
{
	char why[300];

	if (*have)
		regfree(re);
	*have = 0;
	if (ktrace_regex_compile(re, v, why, sizeof why))
		return ktrace_cli_bad_value(err, errlen, option, v, why);
	*have = 1;
	*text = v;
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

static int set_group(struct opts *o, const char *v, char *err, size_t errlen)
{
	if (!strcmp(v, "stream"))
		o->group = GROUP_STREAM;
	else if (!strcmp(v, "kernel"))
		o->group = GROUP_KERNEL;
	else
		return ktrace_cli_bad_value(err, errlen, "--group", v, "expected 'stream' or 'kernel'");
	return 0;
}

static const struct option dump_options[] = {
	KTRACE_CLI_FLAG("json", 'j'), KTRACE_CLI_ARG("kernel", 'k'), KTRACE_CLI_ARG("range", 'r'),
	KTRACE_CLI_ARG("nvtx", 'R'), KTRACE_CLI_FLAG("summary", 's'), KTRACE_CLI_ARG("group", 'g'),
	KTRACE_CLI_FLAG("record-table", 't'), KTRACE_CLI_END,
};

static int dump_option(void *ctx, int code, const char *value, char *err, size_t errlen)
{
	struct opts *o = ctx;

	switch (code) {
	case 'j': o->json = 1; return 0;
	case 's': o->summary = 1; return 0;
	case 't': o->record_table = 1; return 0;
	case 'k': return set_regex(&o->re, &o->have_re, &o->re_text, "--kernel", value, err, errlen);
	case 'r': return set_range(o, value, err, errlen);
	case 'R': return set_regex(&o->path_re, &o->have_path_re, &o->path_re_text, "--nvtx", value, err, errlen);
	case 'g': return set_group(o, value, err, errlen);
	default: return 0;
	}
}

/* The files, argv[0..argc) (or the record table): the exit status. */
static int dump_files(void *ctx, int argc, char **argv)
{
	const struct opts *o = ctx;
	int rc = 0;

	static char out_buffer[1 << 20];

	if (o->record_table)
		return ktrace_record_table_json(stdout);
	if (!argc)
		return ktrace_cli_usage_error("ktrace-dump", "no trace file given");
	if (!isatty(STDOUT_FILENO)) /* a file or a pipe: written in large blocks */
		setvbuf(stdout, out_buffer, _IOFBF, sizeof out_buffer);
	for (int i = 0; i < argc; i++)
		if (dump_file(o, argv[i], argc > 1))
			rc = 2;
	return rc;
}

static const struct option *const dump_option_tables[] = { dump_options, ktrace_cli_help_options, NULL };
static const struct ktrace_cli_tool dump_tool = {
	.name = "ktrace-dump", .version = "ktrace-dump " KTRACE_VERSION, .usage = usage, .shortopts = ":h",
	.options = dump_option_tables, .option = dump_option, .run = dump_files,
};

int main(int argc, char **argv)
{
	struct opts o;
	int rc;

	memset(&o, 0, sizeof o);
	rc = ktrace_cli_main(&dump_tool, &o, argc, argv);
	if (o.have_re)
		regfree(&o.re);
	if (o.have_path_re)
		regfree(&o.path_re);
	return rc;
}
