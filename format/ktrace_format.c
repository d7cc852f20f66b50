/* format/ktrace_format.c: encode and decode every record type of the trace format.
 *
 * Owns the byte layout of the records with variable parts, as documented in
 * docs/format.md (format_range.c: RANGE and PYSTACK); the generic records'
 * layout is the record table's (format/record_table.def), and their codec
 * (ktrace_encode_/ktrace_decode_<type>) is generated here from it.  Every field is written and read explicitly
 * little-endian through the le / rd helpers (one move on a little-endian
 * host, bytes elsewhere), so the layout does not depend on the host or on
 * struct padding.  Decoders check every length against the record size
 * before touching a byte.  Calls libc only (format/le_bytes.h, format/hot.h).
 */
#include "format/ktrace_format.h"

#include <string.h>

#include "format/record_table.h"

#include "format/codec.h"
#include "format/hot.h"
#include "format/le_bytes.h"

/* ---- the generic records: the record table's codec ------------------------ */

#define GENERIC_CODEC_1(UPPER, lower) \
	size_t ktrace_encode_##lower(void *buf, size_t cap, const struct ktrace_rec_##lower *r) \
	{ \
		return ktrace_table_encode(ktrace_record_desc(KTRACE_REC_##UPPER), buf, cap, r); \
	} \
	int ktrace_decode_##lower(const void *rec, size_t len, struct ktrace_rec_##lower *r) \
	{ \
		return ktrace_table_decode(ktrace_record_desc(KTRACE_REC_##UPPER), rec, len, r); \
	}
#define GENERIC_CODEC_0(UPPER, lower)
#define GENERIC_CODEC(UPPER, lower, number, since, generic, ...) GENERIC_CODEC_##generic(UPPER, lower)
KTRACE_RECORDS(GENERIC_CODEC)

/* ---- prefix ------------------------------------------------------------ */

int ktrace_decode_prefix(const void *rec, size_t len, struct ktrace_record_prefix *p)
{
	const uint8_t *b = rec;
	if (!rec || len < KTRACE_RECORD_PREFIX_SIZE)
		return -1;
	p->type = rd16(b);
	p->flags = rd16(b + 2);
	p->size = rd32(b + 4);
	p->seq = rd64(b + 8);
	p->time_ns = rd64(b + 16);
	if (p->size < KTRACE_RECORD_PREFIX_SIZE || p->size % KTRACE_RECORD_ALIGN ||
	    p->size > KTRACE_RECORD_MAX_SIZE || p->size > len)
		return -1;
	return 0;
}

/* ---- the record table's fixed part, then bytes -------------------------- */

/* A record of d: s's fixed fields, then n bytes from bytes, padded; returns
 * its size, written only when it fits cap (MODULE_IMAGE, REPLAY). */
static size_t encode_with_bytes(const struct ktrace_record_desc *d, void *buf, size_t cap, const void *s,
				const void *bytes, size_t n)
{
	size_t size = pad8(d->fixed + n);

	if (size > cap)
		return size;
	ktrace_table_put_fixed(d, buf, size, s);
	if (n)
		memcpy((uint8_t *)buf + d->fixed, bytes, n);
	return size;
}

/* rec's fixed fields into s (a record of d); returns where the bytes after
 * them start, and in *rest how many there are, or NULL when rec is not a
 * record of d (MODULE_IMAGE, COUNTERS, REPLAY). */
static const uint8_t *decode_with_bytes(const struct ktrace_record_desc *d, const void *rec, size_t len, void *s,
					size_t *rest)
{
	size_t fixed = ktrace_table_get_fixed(d, rec, len, 0, s);

	if (!fixed)
		return NULL;
	*rest = len - fixed;
	return (const uint8_t *)rec + fixed;
}

/* ---- MODULE_IMAGE ------------------------------------------------------ */

size_t ktrace_encode_module_image(void *buf, size_t cap, const struct ktrace_rec_module_image *r)
{
	return encode_with_bytes(ktrace_record_desc(KTRACE_REC_MODULE_IMAGE), buf, cap, r, r->bytes, r->chunk_len);
}

int ktrace_decode_module_image(const void *rec, size_t len, struct ktrace_rec_module_image *r)
{
	size_t rest;

	r->bytes = decode_with_bytes(ktrace_record_desc(KTRACE_REC_MODULE_IMAGE), rec, len, r, &rest);
	if (!r->bytes || r->chunk_len > rest || r->chunk_offset > r->image_size ||
	    r->chunk_len > r->image_size - r->chunk_offset)
		return -1;
	return 0;
}

/* ---- KERNEL ------------------------------------------------------------ */

#define KERNEL_FIXED 64 /* the record table's fixed part; the parameter table follows */
#define PARAM_ENTRY 24

size_t ktrace_encode_kernel(void *buf, size_t cap, const struct ktrace_rec_kernel *r,
			    const struct ktrace_param_desc *params)
{
	uint32_t n = params ? r->nparams : 0;
	size_t strs = 4u + str_len(&r->name) + str_len(&r->demangled);
	for (uint32_t i = 0; i < n; i++)
		strs += 4u + str_len(&params[i].name) + str_len(&params[i].type);
	size_t table = (size_t)n * PARAM_ENTRY;
	size_t size = pad8(KERNEL_FIXED + table + strs);
	if (size > cap)
		return size;
	uint8_t *b = buf;
	struct ktrace_rec_kernel v = *r;
	v.nparams = n;
	ktrace_table_put_fixed(ktrace_record_desc(KTRACE_REC_KERNEL), b, size, &v);
	uint8_t *t = b + KERNEL_FIXED;	/* parameter table; string offsets relative to it */
	size_t o = table;
	o += put_str(t + o, &r->name);
	o += put_str(t + o, &r->demangled);
	for (uint32_t i = 0; i < n; i++) {
		const struct ktrace_param_desc *d = &params[i];
		uint8_t *e = t + (size_t)i * PARAM_ENTRY;
		le16(e + 0, d->ordinal);
		e[2] = d->kind;
		e[3] = d->name_source;
		le32(e + 4, d->offset);
		le32(e + 8, d->size);
		le32(e + 12, d->flags);
		le32(e + 16, (uint32_t)o);
		e[20] = d->written;
		e[21] = d->written_source;
		e[22] = 0;
		e[23] = 0;
		o += put_str(t + o, &d->name);
		o += put_str(t + o, &d->type);
	}
	return size;
}

int ktrace_decode_kernel(const void *rec, size_t len, struct ktrace_rec_kernel *r)
{
	const uint8_t *b = rec;
	if (!ktrace_table_get_fixed(ktrace_record_desc(KTRACE_REC_KERNEL), rec, len, KERNEL_FIXED + 8, r))
		return -1;
	r->params_raw = b + KERNEL_FIXED;
	r->params_raw_len = (uint32_t)(len - KERNEL_FIXED);
	uint64_t table = (uint64_t)r->nparams * PARAM_ENTRY;
	if (table > r->params_raw_len)
		return -1;
	struct cur c = { r->params_raw, (size_t)table, r->params_raw_len, 0 };
	r->name = cur_str(&c);
	r->demangled = cur_str(&c);
	if (c.bad)
		return -1;
	struct ktrace_param_desc d;
	for (uint32_t i = 0; i < r->nparams; i++)
		if (ktrace_kernel_param(r, i, &d))
			return -1;
	return 0;
}

int ktrace_kernel_param(const struct ktrace_rec_kernel *r, uint32_t i, struct ktrace_param_desc *out)
{
	if (i >= r->nparams || (uint64_t)(i + 1ull) * PARAM_ENTRY > r->params_raw_len)
		return -1;
	const uint8_t *e = r->params_raw + (size_t)i * PARAM_ENTRY;
	out->ordinal = rd16(e);
	out->kind = e[2];
	out->name_source = e[3];
	out->offset = rd32(e + 4);
	out->size = rd32(e + 8);
	out->flags = rd32(e + 12);
	uint32_t so = rd32(e + 16);
	out->written = e[20];
	out->written_source = e[21];
	if (so > r->params_raw_len)
		return -1;
	struct cur c = { r->params_raw, so, r->params_raw_len, 0 };
	out->name = cur_str(&c);
	out->type = cur_str(&c);
	return c.bad ? -1 : 0;
}

/* ---- graph and range references, launch regions ----------------------- */

/* Each of these small fixed layouts is listed once, as F(bits, offset,
 * member) for each field, little-endian; its put_ function writes *g at e
 * and its get_ function reads it back, through these. */
#define PUT_FIELD(bits, off, member) le##bits(e + (off), g->member);
#define GET_FIELD(bits, off, member) g->member = rd##bits(e + (off));

/* The graph reference (since 1.8). */
#define GRAPH_REF_FIELDS(F) \
	F(64, 0, exec_id) F(64, 8, graph_id) F(64, 16, launch) F(64, 24, launch_seq) F(32, 32, node) \
	F(32, 36, revision)

static void put_graph_ref(uint8_t *e, const struct ktrace_graph_ref *g)
{
	GRAPH_REF_FIELDS(PUT_FIELD)
}

static void get_graph_ref(const uint8_t *e, struct ktrace_graph_ref *g)
{
	GRAPH_REF_FIELDS(GET_FIELD)
}

/* The iteration reference (since 1.14), after the range reference. */
#define GRAPH_ITER_REF_FIELDS(F) \
	F(32, 0, iteration) F(32, 4, cond_node) F(32, 8, body) F(32, 12, outer_iteration) F(32, 16, iterations) \
	F(32, 20, dropped)

static void put_graph_iter_ref(uint8_t *e, const struct ktrace_graph_ref *g)
{
	GRAPH_ITER_REF_FIELDS(PUT_FIELD)
}

static void get_graph_iter_ref(const uint8_t *e, struct ktrace_graph_ref *g)
{
	GRAPH_ITER_REF_FIELDS(GET_FIELD)
}

/* The range reference (since 1.9). */
#define RANGE_REF_FIELDS(F) F(32, 0, range) F(16, 4, fw_seq_kind) F(16, 6, flags) F(64, 8, fw_seq)

static void put_range_ref(uint8_t *e, const struct ktrace_range_ref *g)
{
	RANGE_REF_FIELDS(PUT_FIELD)
}

static void get_range_ref(const uint8_t *e, struct ktrace_range_ref *g)
{
	RANGE_REF_FIELDS(GET_FIELD)
}

#define KTRACE_REGION_DISK_SIZE 56
#define KTRACE_REGION_FLAGS_OFF 6 /* offsets inside a region */
#define KTRACE_REGION_PRE_HASH_OFF 40
#define KTRACE_REGION_POST_HASH_OFF 48

/* A LAUNCH record's region. */
#define REGION_FIELDS(F) \
	F(32, 0, param_offset) F(16, 4, ordinal) F(16, KTRACE_REGION_FLAGS_OFF, flags) F(64, 8, ptr) \
	F(64, 16, alloc_base) F(64, 24, alloc_size) F(64, 32, hash_len) \
	F(64, KTRACE_REGION_PRE_HASH_OFF, pre_hash) F(64, KTRACE_REGION_POST_HASH_OFF, post_hash)

static void put_region(uint8_t *e, const struct ktrace_region *g)
{
	REGION_FIELDS(PUT_FIELD)
}

static void get_region(const uint8_t *e, struct ktrace_region *g)
{
	REGION_FIELDS(GET_FIELD)
}

/* A kernel's shape as LAUNCH records and graph kernel nodes hold it at e:
 * grid, block and cluster, three u32 each.  Inlined: the LAUNCH encoder is on
 * the launch path. */
static inline __attribute__((always_inline)) void put_shape(uint8_t *e, const uint32_t grid[3],
							     const uint32_t block[3], const uint32_t cluster[3])
{
	for (int i = 0; i < 3; i++) {
		le32(e + 4 * i, grid[i]);
		le32(e + 12 + 4 * i, block[i]);
		le32(e + 24 + 4 * i, cluster[i]);
	}
}

static void get_shape(const uint8_t *e, uint32_t grid[3], uint32_t block[3], uint32_t cluster[3])
{
	for (int i = 0; i < 3; i++) {
		grid[i] = rd32(e + 4 * i);
		block[i] = rd32(e + 12 + 4 * i);
		cluster[i] = rd32(e + 24 + 4 * i);
	}
}

/* ---- LAUNCH ------------------------------------------------------------ */

#define KTRACE_LAUNCH_REGIONS_OFF 128 /* regions start at this fixed record offset */

KT_HOT
size_t ktrace_launch_size(uint32_t nregions, uint32_t param_bytes_len)
{
	return pad8(KTRACE_LAUNCH_REGIONS_OFF + (size_t)nregions * KTRACE_REGION_DISK_SIZE + param_bytes_len);
}

/* The fixed fields and the regions of a LAUNCH record of `size` bytes in
 * all, typed `type`, with np parameter bytes (not written); returns where
 * they go. */
static inline __attribute__((always_inline)) uint8_t *
put_launch(uint8_t *b, size_t size, uint16_t type, const struct ktrace_rec_launch *r,
	   const struct ktrace_region *regions, uint32_t nreg, uint32_t np)
{
	put_prefix(b, type, size);
	le64(b + 24, r->launch_seq);
	le64(b + 32, r->kernel_id);
	le64(b + 40, r->context);
	le64(b + 48, r->stream);
	le32(b + 56, r->tid);
	le32(b + 60, (uint32_t)r->device);
	le32(b + 64, r->api);
	le32(b + 68, r->flags);
	put_shape(b + 72, r->grid, r->block, r->cluster);
	le32(b + 108, r->shared_mem);
	le32(b + 112, (uint32_t)r->result);
	le32(b + 116, np);
	le32(b + 120, nreg);
	le32(b + 124, r->hash_skip);
	for (uint32_t i = 0; i < nreg; i++)
		put_region(b + KTRACE_LAUNCH_REGIONS_OFF + (size_t)i * KTRACE_REGION_DISK_SIZE, &regions[i]);
	return b + KTRACE_LAUNCH_REGIONS_OFF + (size_t)nreg * KTRACE_REGION_DISK_SIZE;
}

KT_HOT
size_t ktrace_encode_launch(void *buf, size_t cap, const struct ktrace_rec_launch *r,
			    const struct ktrace_region *regions)
{
	uint32_t nreg = regions ? r->nregions : 0;
	uint32_t np = r->param_bytes ? r->param_bytes_len : 0;
	size_t base = ktrace_launch_size(nreg, np);
	size_t carry = ktrace_launch_carry_size(r->flags, nreg);
	size_t size = base + ktrace_launch_tail_size(r->flags) + carry;

	if (size > cap)
		return size;
	uint8_t *params = put_launch(buf, size, KTRACE_REC_LAUNCH, r, regions, nreg, np);
	if (np)
		memcpy(params, r->param_bytes, np);
	if (r->flags & KTRACE_LAUNCHF_GRAPH)
		put_graph_ref((uint8_t *)buf + base, &r->graph);
	if (r->flags & KTRACE_LAUNCHF_RANGE)
		put_range_ref((uint8_t *)buf + base + (r->flags & KTRACE_LAUNCHF_GRAPH ? KTRACE_GRAPH_REF_DISK_SIZE : 0),
			      &r->range);
	if (r->flags & KTRACE_LAUNCHF_GRAPH_ITER)
		put_graph_iter_ref((uint8_t *)buf + size - carry - KTRACE_GRAPH_ITER_REF_DISK_SIZE, &r->graph);
	for (uint32_t i = 0; carry && i < nreg; i++) /* the carry table ends the record */
		le64((uint8_t *)buf + size - carry + (size_t)i * 8,
		     regions[i].flags & KTRACE_REGIONF_PRE_CARRIED ? regions[i].pre_from : 0);
	return size;
}

KT_HOT
void *ktrace_encode_launch_head(void *buf, size_t size, uint16_t type, const struct ktrace_rec_launch *r,
				const struct ktrace_region *regions)
{
	uint32_t nreg = regions ? r->nregions : 0;
	size_t base = ktrace_launch_size(nreg, r->param_bytes_len);
	size_t need = base + ktrace_launch_tail_size(r->flags);
	uint8_t *params;

	if (r->flags & (KTRACE_LAUNCHF_GRAPH | KTRACE_LAUNCHF_CARRIED)) /* ktrace_encode_launch's */
		return NULL;
	if (size < need || size % KTRACE_RECORD_ALIGN ||
	    (type == KTRACE_REC_LAUNCH ? size != need : type < KTRACE_REC_INTERNAL_MIN))
		return NULL;
	params = put_launch(buf, size, type, r, regions, nreg, r->param_bytes_len);
	if (r->flags & KTRACE_LAUNCHF_RANGE)
		put_range_ref((uint8_t *)buf + base, &r->range);
	return params;
}

/* The fields of a LAUNCH record of len bytes at b (prefix already checked). */
static int get_launch(const uint8_t *b, size_t len, struct ktrace_rec_launch *r)
{
	r->launch_seq = rd64(b + 24);
	r->kernel_id = rd64(b + 32);
	r->context = rd64(b + 40);
	r->stream = rd64(b + 48);
	r->tid = rd32(b + 56);
	r->device = (int32_t)rd32(b + 60);
	r->api = rd32(b + 64);
	r->flags = rd32(b + 68);
	get_shape(b + 72, r->grid, r->block, r->cluster);
	r->shared_mem = rd32(b + 108);
	r->result = (int32_t)rd32(b + 112);
	r->param_bytes_len = rd32(b + 116);
	r->nregions = rd32(b + 120);
	r->hash_skip = rd32(b + 124);
	uint64_t need = KTRACE_LAUNCH_REGIONS_OFF + (uint64_t)r->nregions * KTRACE_REGION_DISK_SIZE +
			r->param_bytes_len;
	if (need > len)
		return -1;
	r->regions_raw = b + KTRACE_LAUNCH_REGIONS_OFF;
	r->param_bytes = r->regions_raw + (size_t)r->nregions * KTRACE_REGION_DISK_SIZE;
	memset(&r->graph, 0, sizeof r->graph);
	memset(&r->range, 0, sizeof r->range);
	need = pad8(need);
	if (r->flags & KTRACE_LAUNCHF_GRAPH) {
		need += KTRACE_GRAPH_REF_DISK_SIZE;
		if (need > len)
			return -1;
		get_graph_ref(b + need - KTRACE_GRAPH_REF_DISK_SIZE, &r->graph);
	}
	if (r->flags & KTRACE_LAUNCHF_RANGE) {
		need += KTRACE_RANGE_REF_DISK_SIZE;
		if (need > len)
			return -1;
		get_range_ref(b + need - KTRACE_RANGE_REF_DISK_SIZE, &r->range);
	}
	if (r->flags & KTRACE_LAUNCHF_GRAPH_ITER) {
		need += KTRACE_GRAPH_ITER_REF_DISK_SIZE;
		if (need > len)
			return -1;
		get_graph_iter_ref(b + need - KTRACE_GRAPH_ITER_REF_DISK_SIZE, &r->graph);
	}
	r->carry_raw = NULL;
	if (r->flags & KTRACE_LAUNCHF_CARRIED) {
		if (need + ktrace_launch_carry_size(r->flags, r->nregions) > len)
			return -1;
		r->carry_raw = b + need;
	}
	return 0;
}

int ktrace_decode_launch(const void *rec, size_t len, struct ktrace_rec_launch *r)
{
	const uint8_t *b = check(rec, len, KTRACE_REC_LAUNCH, KTRACE_LAUNCH_REGIONS_OFF);

	return b ? get_launch(b, len, r) : -1;
}

int ktrace_decode_carried_launch(const void *rec, size_t len, struct ktrace_rec_launch *r)
{
	const uint8_t *b = rec;

	/* the carrier's size covers the LAUNCH and the producer's bytes after it */
	if (!b || len < KTRACE_LAUNCH_REGIONS_OFF || len % KTRACE_RECORD_ALIGN ||
	    rd16(b) < KTRACE_REC_INTERNAL_MIN || rd32(b + 4) < len)
		return -1;
	return get_launch(b, len, r);
}

/* Only valid for i < r->nregions of a successfully decoded record. */
void ktrace_launch_region(const struct ktrace_rec_launch *r, uint32_t i, struct ktrace_region *out)
{
	memset(out, 0, sizeof *out);
	if (i >= r->nregions)
		return;
	get_region(r->regions_raw + (size_t)i * KTRACE_REGION_DISK_SIZE, out);
	if (r->carry_raw && (out->flags & KTRACE_REGIONF_PRE_CARRIED))
		out->pre_from = rd64(r->carry_raw + (size_t)i * 8);
}

/* ---- MEMCPY / MEMSET --------------------------------------------------- */

/* What follows a MEMCPY's or MEMSET's fixed fields: the graph reference
 * (flag GRAPH, since 1.8), the range reference (flag RANGE, since 1.9),
 * then the iteration reference (flag GRAPH_ITER, since 1.14). */
static size_t copy_tail_size(uint32_t flags)
{
	return (flags & KTRACE_COPYF_GRAPH ? KTRACE_GRAPH_REF_DISK_SIZE : 0) +
	       (flags & KTRACE_COPYF_RANGE ? KTRACE_RANGE_REF_DISK_SIZE : 0) +
	       (flags & KTRACE_COPYF_GRAPH_ITER ? KTRACE_GRAPH_ITER_REF_DISK_SIZE : 0);
}

static void put_copy_tail(uint8_t *b, size_t off, uint32_t flags, const struct ktrace_graph_ref *g,
			  const struct ktrace_range_ref *rg)
{
	if (flags & KTRACE_COPYF_GRAPH) {
		put_graph_ref(b + off, g);
		off += KTRACE_GRAPH_REF_DISK_SIZE;
	}
	if (flags & KTRACE_COPYF_RANGE) {
		put_range_ref(b + off, rg);
		off += KTRACE_RANGE_REF_DISK_SIZE;
	}
	if (flags & KTRACE_COPYF_GRAPH_ITER)
		put_graph_iter_ref(b + off, g);
}

static int get_copy_tail(const uint8_t *b, size_t len, size_t off, uint32_t flags, struct ktrace_graph_ref *g,
			 struct ktrace_range_ref *rg)
{
	memset(g, 0, sizeof *g);
	memset(rg, 0, sizeof *rg);
	if (len < off + copy_tail_size(flags))
		return -1;
	if (flags & KTRACE_COPYF_GRAPH) {
		get_graph_ref(b + off, g);
		off += KTRACE_GRAPH_REF_DISK_SIZE;
	}
	if (flags & KTRACE_COPYF_RANGE) {
		get_range_ref(b + off, rg);
		off += KTRACE_RANGE_REF_DISK_SIZE;
	}
	if (flags & KTRACE_COPYF_GRAPH_ITER)
		get_graph_iter_ref(b + off, g);
	return 0;
}

/* MEMCPY and MEMSET: the record table's fixed part, then the references. */
static size_t copy_encode(uint16_t type, void *buf, size_t cap, const void *r, uint32_t flags,
			  const struct ktrace_graph_ref *g, const struct ktrace_range_ref *rg)
{
	const struct ktrace_record_desc *d = ktrace_record_desc(type);
	size_t size = d->fixed + copy_tail_size(flags);

	if (size > cap)
		return size;
	ktrace_table_put_fixed(d, buf, size, r);
	put_copy_tail(buf, d->fixed, flags, g, rg);
	return size;
}

size_t ktrace_encode_memcpy(void *buf, size_t cap, const struct ktrace_rec_memcpy *r)
{
	return copy_encode(KTRACE_REC_MEMCPY, buf, cap, r, r->flags, &r->graph, &r->range);
}

size_t ktrace_encode_memset(void *buf, size_t cap, const struct ktrace_rec_memset *r)
{
	return copy_encode(KTRACE_REC_MEMSET, buf, cap, r, r->flags, &r->graph, &r->range);
}

/* A 1.1 MEMCPY (96 bytes: no dst_digest) reads with dst_digest_state NONE. */
int ktrace_decode_memcpy(const void *rec, size_t len, struct ktrace_rec_memcpy *r)
{
	size_t fixed = ktrace_table_get_fixed(ktrace_record_desc(KTRACE_REC_MEMCPY), rec, len, 0, r);

	return fixed ? get_copy_tail(rec, len, fixed, r->flags, &r->graph, &r->range) : -1;
}

int ktrace_decode_memset(const void *rec, size_t len, struct ktrace_rec_memset *r)
{
	size_t fixed = ktrace_table_get_fixed(ktrace_record_desc(KTRACE_REC_MEMSET), rec, len, 0, r);

	return fixed ? get_copy_tail(rec, len, fixed, r->flags, &r->graph, &r->range) : -1;
}

/* ---- COUNTERS ---------------------------------------------------------- */

#define COUNTER_ENTRY 16

size_t ktrace_encode_counters(void *buf, size_t cap, const struct ktrace_counter *c, uint32_t n)
{
	const struct ktrace_record_desc *d = ktrace_record_desc(KTRACE_REC_COUNTERS);
	struct ktrace_rec_counters r = { .ncounters = c ? n : 0 };
	size_t size = d->fixed + (size_t)r.ncounters * COUNTER_ENTRY;

	if (size > cap)
		return size;
	ktrace_table_put_fixed(d, buf, size, &r);
	for (uint32_t i = 0; i < r.ncounters; i++) {
		uint8_t *e = (uint8_t *)buf + d->fixed + (size_t)i * COUNTER_ENTRY;
		le32(e, c[i].id);
		le64(e + 8, c[i].value);
	}
	return size;
}

int ktrace_decode_counters(const void *rec, size_t len, struct ktrace_rec_counters *r)
{
	size_t rest;

	r->raw = decode_with_bytes(ktrace_record_desc(KTRACE_REC_COUNTERS), rec, len, r, &rest);
	if (!r->raw || (uint64_t)r->ncounters * COUNTER_ENTRY > rest)
		return -1;
	return 0;
}

/* Only valid for i < r->ncounters of a successfully decoded record. */
void ktrace_counters_get(const struct ktrace_rec_counters *r, uint32_t i, struct ktrace_counter *out)
{
	memset(out, 0, sizeof *out);
	if (i >= r->ncounters)
		return;
	const uint8_t *e = r->raw + (size_t)i * COUNTER_ENTRY;
	out->id = rd32(e);
	out->reserved = rd32(e + 4);
	out->value = rd64(e + 8);
}

/* ---- REPLAY ------------------------------------------------------------ */

size_t ktrace_encode_replay(void *buf, size_t cap, const struct ktrace_rec_replay *r)
{
	struct ktrace_rec_replay v = *r;

	v.blob_len = r->blob ? r->blob_len : 0;
	return encode_with_bytes(ktrace_record_desc(KTRACE_REC_REPLAY), buf, cap, &v, r->blob, v.blob_len);
}

int ktrace_decode_replay(const void *rec, size_t len, struct ktrace_rec_replay *r)
{
	size_t rest;

	r->blob = decode_with_bytes(ktrace_record_desc(KTRACE_REC_REPLAY), rec, len, r, &rest);
	if (!r->blob || r->blob_len > rest)
		return -1;
	return 0;
}

/* ---- GRAPH (since 1.8) --------------------------------------------------- */

#define GRAPH_FIXED 112 /* the record table's fixed part; the nodes follow */
#define GNODE_HEAD 24
#define GNODE_KERNEL_FIXED 80
#define GNODE_COPY_SIZE 56
#define GNODE_CHILD_SIZE 32
#define GNODE_COND_SIZE 48
#define GEDGE_SIZE 8

static size_t gnode_size(const struct ktrace_graph_node *n)
{
	switch (n->kind) {
	case KTRACE_GNODE_KERNEL:
		return pad8(GNODE_KERNEL_FIXED + (size_t)(n->param_bytes ? n->param_bytes_len : 0));
	case KTRACE_GNODE_MEMCPY:
	case KTRACE_GNODE_MEMSET:
		return GNODE_COPY_SIZE;
	case KTRACE_GNODE_CHILD:
		return GNODE_CHILD_SIZE;
	case KTRACE_GNODE_CONDITIONAL:
		return GNODE_COND_SIZE;
	default:
		return GNODE_HEAD;
	}
}

static void put_gnode_kernel(uint8_t *e, const struct ktrace_graph_node *n)
{
	uint32_t np = n->param_bytes ? n->param_bytes_len : 0;

	le64(e + 24, n->kernel_id);
	put_shape(e + 32, n->grid, n->block, n->cluster);
	le32(e + 68, n->shared_mem);
	le32(e + 72, np);
	if (np)
		memcpy(e + GNODE_KERNEL_FIXED, n->param_bytes, np);
}

/* One node entry of `size` bytes at e (zeroed by the record's prefix). */
static void put_gnode(uint8_t *e, size_t size, const struct ktrace_graph_node *n)
{
	le32(e + 0, (uint32_t)size);
	le16(e + 4, n->kind);
	le16(e + 6, n->flags);
	le64(e + 8, n->handle);
	le32(e + 16, n->parent);
	le32(e + 20, n->body);
	if (n->kind == KTRACE_GNODE_KERNEL) {
		put_gnode_kernel(e, n);
	} else if (n->kind == KTRACE_GNODE_MEMCPY || n->kind == KTRACE_GNODE_MEMSET) {
		int cp = n->kind == KTRACE_GNODE_MEMCPY;
		le64(e + 24, n->dst);
		le64(e + 32, cp ? n->src : n->value);
		le64(e + 40, cp ? n->bytes : n->count);
		le32(e + 48, cp ? n->dir : n->elem_size);
		le32(e + 52, n->copy_flags);
	} else if (n->kind == KTRACE_GNODE_CHILD) {
		le64(e + 24, n->child_graph_id);
	} else if (n->kind == KTRACE_GNODE_CONDITIONAL) {
		le64(e + 24, n->cond_handle);
		le32(e + 32, n->cond_type);
		le32(e + 36, n->cond_size);
		le32(e + 40, n->cond_default);
		le32(e + 44, n->cond_flags);
	}
}

size_t ktrace_encode_graph(void *buf, size_t cap, const struct ktrace_rec_graph *r)
{
	uint32_t nn = r->nodes ? r->nnodes : 0, ne = r->edges ? r->nedges : 0;
	size_t nodes_bytes = 0;

	for (uint32_t i = 0; i < nn; i++)
		nodes_bytes += gnode_size(&r->nodes[i]);
	size_t size = GRAPH_FIXED + nodes_bytes + (size_t)ne * GEDGE_SIZE;
	if (size > cap)
		return size;
	uint8_t *b = buf;
	struct ktrace_rec_graph v = *r; /* the counts as written */
	v.nnodes = nn;
	v.nedges = ne;
	v.nodes_raw_len = (uint32_t)nodes_bytes;
	v.nodes_total = r->nodes_total ? r->nodes_total : nn;
	v.edges_total = r->edges_total ? r->edges_total : ne;
	ktrace_table_put_fixed(ktrace_record_desc(KTRACE_REC_GRAPH), b, size, &v);
	uint8_t *e = b + GRAPH_FIXED;
	for (uint32_t i = 0; i < nn; i++) {
		size_t es = gnode_size(&r->nodes[i]);
		put_gnode(e, es, &r->nodes[i]);
		e += es;
	}
	for (uint32_t i = 0; i < ne; i++) {
		le32(e + (size_t)i * GEDGE_SIZE, r->edges[i].from);
		le32(e + (size_t)i * GEDGE_SIZE + 4, r->edges[i].to);
	}
	return size;
}

int ktrace_decode_graph(const void *rec, size_t len, struct ktrace_rec_graph *r)
{
	const uint8_t *b = rec;
	memset(r, 0, sizeof *r);
	if (!ktrace_table_get_fixed(ktrace_record_desc(KTRACE_REC_GRAPH), rec, len, 0, r))
		return -1;
	r->nodes_raw = b + GRAPH_FIXED;
	if (r->nodes_raw_len > len - GRAPH_FIXED ||
	    (uint64_t)r->nedges * GEDGE_SIZE > len - GRAPH_FIXED - r->nodes_raw_len ||
	    (uint64_t)r->nnodes * GNODE_HEAD > r->nodes_raw_len)
		return -1;
	r->edges_raw = r->nodes_raw + r->nodes_raw_len;
	return 0;
}

static void get_gnode_body(const uint8_t *e, uint32_t size, struct ktrace_graph_node *out)
{
	if (out->kind == KTRACE_GNODE_KERNEL && size >= GNODE_KERNEL_FIXED) {
		out->kernel_id = rd64(e + 24);
		get_shape(e + 32, out->grid, out->block, out->cluster);
		out->shared_mem = rd32(e + 68);
		out->param_bytes_len = rd32(e + 72);
		out->param_bytes = e + GNODE_KERNEL_FIXED;
	} else if ((out->kind == KTRACE_GNODE_MEMCPY || out->kind == KTRACE_GNODE_MEMSET) &&
		   size >= GNODE_COPY_SIZE) {
		int cp = out->kind == KTRACE_GNODE_MEMCPY;
		out->dst = rd64(e + 24);
		*(cp ? &out->src : &out->value) = rd64(e + 32);
		*(cp ? &out->bytes : &out->count) = rd64(e + 40);
		*(cp ? &out->dir : &out->elem_size) = rd32(e + 48);
		out->copy_flags = rd32(e + 52);
	} else if (out->kind == KTRACE_GNODE_CHILD && size >= GNODE_CHILD_SIZE) {
		out->child_graph_id = rd64(e + 24);
	} else if (out->kind == KTRACE_GNODE_CONDITIONAL && size >= GNODE_COND_SIZE) {
		out->cond_handle = rd64(e + 24);
		out->cond_type = rd32(e + 32);
		out->cond_size = rd32(e + 36);
		out->cond_default = rd32(e + 40);
		out->cond_flags = rd32(e + 44);
	}
}

int ktrace_graph_node_next(const struct ktrace_rec_graph *r, uint32_t *off, struct ktrace_graph_node *out)
{
	uint32_t o = *off, size;

	memset(out, 0, sizeof *out);
	if (o >= r->nodes_raw_len || r->nodes_raw_len - o < GNODE_HEAD)
		return -1;
	const uint8_t *e = r->nodes_raw + o;
	size = rd32(e);
	if (size < GNODE_HEAD || size % KTRACE_RECORD_ALIGN || size > r->nodes_raw_len - o)
		return -1;
	out->kind = rd16(e + 4);
	out->flags = rd16(e + 6);
	out->handle = rd64(e + 8);
	out->parent = rd32(e + 16);
	out->body = rd32(e + 20);
	get_gnode_body(e, size, out);
	if (out->param_bytes && out->param_bytes_len > size - GNODE_KERNEL_FIXED)
		return -1;
	*off = o + size;
	return 0;
}

void ktrace_graph_edge_get(const struct ktrace_rec_graph *r, uint32_t i, struct ktrace_graph_edge *out)
{
	out->from = out->to = 0;
	if (i >= r->nedges)
		return;
	out->from = rd32(r->edges_raw + (size_t)i * GEDGE_SIZE);
	out->to = rd32(r->edges_raw + (size_t)i * GEDGE_SIZE + 4);
}
