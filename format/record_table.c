/* format/record_table.c: the record table (format/record_table.def) as data,
 * and the generic codec of records that hold only fixed fields and strings.
 *
 * Owns the expansion of the X-macro table into one ktrace_record_desc per
 * record type, the lookups on it, and the field-by-field encoder and decoder
 * that ktrace_format.c's generic records use.  Every field is written and read
 * little-endian (format/codec.h); the decoder checks every length first.
 * Calls libc only.
 */
#include "format/record_table.h"

#include <string.h>

#include "format/codec.h"
#include "format/le_bytes.h"

#define MEMBER_OF(rec, member) ((uint16_t)offsetof(struct ktrace_rec_##rec, member))

/* VALID column of the table: whether a DIGEST or NUM field holds a value. */
#define ALWAYS NULL, KT_ABSENT_NEVER
#define NULL_UNLESS(fn) fn, KT_ABSENT_NULL
#define OMIT_UNLESS(fn) fn, KT_ABSENT_OMIT

#define FIELD(rec_, member_, name_, off_, wire_, show_, names_, valid_, since_, doc_) \
	{ .name = name_, .member_name = #member_, .offset = off_, .wire = KT_WIRE_##wire_, .show = KT_SHOW_##show_, .since = since_, \
	  .member = MEMBER_OF(rec_, member_), .names = names_, FIELD_VALID(valid_), .doc = doc_ },
#define FIELD_VALID(...) FIELD_VALID_(__VA_ARGS__)
#define FIELD_VALID_(fn_, absent_) .valid = fn_, .absent = absent_
#define STRING(rec_, member_, name_, since_, doc_) \
	{ .name = name_, .member_name = #member_, .wire = KT_WIRE_STR, .show = KT_SHOW_STR, .since = since_, \
	  .member = MEMBER_OF(rec_, member_), .doc = doc_ },
#define HOOK(rec_, name_, hook_, doc_) \
	{ .name = name_, .wire = KT_WIRE_NONE, .show = KT_SHOW_HOOK, .hook = KT_HOOK_##hook_, .doc = doc_ },

/* ---- whether a field holds a value (the table's VALID column) ------------ */

static int ktrace_launch_hash_skipped(const void *s)
{
	return (((const struct ktrace_rec_launch *)s)->flags & KTRACE_LAUNCHF_HASH_SKIPPED) != 0;
}

static int ktrace_memcpy_src_digest_valid(const void *s)
{
	return (((const struct ktrace_rec_memcpy *)s)->flags & KTRACE_COPYF_SRC_DIGEST) != 0;
}

static int ktrace_memcpy_dst_digest_valid(const void *s)
{
	return ktrace_dst_digest_valid(((const struct ktrace_rec_memcpy *)s)->dst_digest_state);
}

static int ktrace_pystack_has_op(const void *s)
{
	return ((const struct ktrace_rec_pystack *)s)->kind != KTRACE_PYSTACK_FORWARD_OP;
}

static int ktrace_pystack_has_fw_seq(const void *s)
{
	return !ktrace_pystack_has_op(s);
}

static int ktrace_coll_has_launches(const void *s)
{
	return ((const struct ktrace_rec_coll *)s)->launch_count != 0;
}

#define FIELD_ARRAY(UPPER_, lower_, ...) \
	static const struct ktrace_field lower_##_fields[] = { KTRACE_FIELDS_##lower_(FIELD, STRING, HOOK, FIELD) };
KTRACE_RECORDS(FIELD_ARRAY)

#define DECODER(UPPER_, lower_, ...) \
	static int decode_##lower_(const void *rec, size_t len, union ktrace_any_record *out) \
	{ \
		return ktrace_decode_##lower_(rec, len, &out->lower_); \
	}
KTRACE_RECORDS(DECODER)

#define DESC(UPPER_, lower_, number_, since_, generic_, fixed_, oldest_, doc_) \
	{ .type = KTRACE_REC_##UPPER_, .since = since_, .generic = generic_, .name = #lower_, .upper = #UPPER_, \
	  .fixed = fixed_, .oldest = oldest_, .nfields = sizeof lower_##_fields / sizeof lower_##_fields[0], \
	  .fields = lower_##_fields, .doc = doc_, .decode = decode_##lower_ },
static const struct ktrace_record_desc descs[] = { KTRACE_RECORDS(DESC) };
#define NDESCS (sizeof descs / sizeof descs[0])

const struct ktrace_record_desc *ktrace_record_descs(size_t *n)
{
	*n = NDESCS;
	return descs;
}

const struct ktrace_record_desc *ktrace_record_desc(uint16_t type)
{
	if (type >= 1 && type <= NDESCS && descs[type - 1].type == type) /* the types are 1..N in order */
		return &descs[type - 1];
	for (size_t i = 0; i < NDESCS; i++)
		if (descs[i].type == type)
			return &descs[i];
	return NULL;
}

const char *ktrace_record_type_name(uint16_t type)
{
	const struct ktrace_record_desc *d = ktrace_record_desc(type);

	return d ? d->name : "unknown";
}

const struct ktrace_field *ktrace_record_field(const struct ktrace_record_desc *d, const char *name)
{
	for (uint16_t i = 0; d && i < d->nfields; i++)
		if (!strcmp(d->fields[i].name, name))
			return &d->fields[i];
	return NULL;
}

unsigned ktrace_wire_size(uint8_t wire)
{
	switch (wire) {
	case KT_WIRE_U8: return 1;
	case KT_WIRE_U16: return 2;
	case KT_WIRE_U32:
	case KT_WIRE_I32: return 4;
	case KT_WIRE_U64: return 8;
	case KT_WIRE_U32X3: return 12;
	default: return 0;
	}
}

/* ---- a field in its decoded struct ---------------------------------------- */

uint64_t ktrace_field_value(const struct ktrace_field *f, const void *s, unsigned i)
{
	const uint8_t *m = (const uint8_t *)s + f->member;
	uint64_t v64;
	uint32_t v32;
	uint16_t v16;
	int32_t i32;

	switch (f->wire) {
	case KT_WIRE_U8: return *m;
	case KT_WIRE_U16: memcpy(&v16, m, 2); return v16;
	case KT_WIRE_U32: memcpy(&v32, m, 4); return v32;
	case KT_WIRE_I32: memcpy(&i32, m, 4); return (uint64_t)(int64_t)i32;
	case KT_WIRE_U64: memcpy(&v64, m, 8); return v64;
	case KT_WIRE_U32X3: memcpy(&v32, m + 4 * (i < 3 ? i : 0), 4); return v32;
	default: return 0;
	}
}

struct ktrace_str ktrace_field_str(const struct ktrace_field *f, const void *s)
{
	struct ktrace_str v = { "", 0 };

	if (f->wire == KT_WIRE_STR)
		memcpy(&v, (const uint8_t *)s + f->member, sizeof v);
	return v;
}

static void set_member(const struct ktrace_field *f, void *s, const uint8_t *b, int present)
{
	uint8_t *m = (uint8_t *)s + f->member;
	uint64_t v64 = 0;
	uint32_t v32[3] = { 0, 0, 0 };
	uint16_t v16 = 0;

	switch (f->wire) {
	case KT_WIRE_U8: *m = present ? b[f->offset] : 0; break;
	case KT_WIRE_U16: v16 = present ? rd16(b + f->offset) : 0; memcpy(m, &v16, 2); break;
	case KT_WIRE_U32:
	case KT_WIRE_I32: v32[0] = present ? rd32(b + f->offset) : 0; memcpy(m, v32, 4); break;
	case KT_WIRE_U64: v64 = present ? rd64(b + f->offset) : 0; memcpy(m, &v64, 8); break;
	case KT_WIRE_U32X3:
		for (int i = 0; i < 3 && present; i++)
			v32[i] = rd32(b + f->offset + 4 * i);
		memcpy(m, v32, 12);
		break;
	default: break;
	}
}

static void put_member(const struct ktrace_field *f, uint8_t *b, const void *s)
{
	switch (f->wire) {
	case KT_WIRE_U8: b[f->offset] = (uint8_t)ktrace_field_value(f, s, 0); break;
	case KT_WIRE_U16: le16(b + f->offset, (uint16_t)ktrace_field_value(f, s, 0)); break;
	case KT_WIRE_U32:
	case KT_WIRE_I32: le32(b + f->offset, (uint32_t)ktrace_field_value(f, s, 0)); break;
	case KT_WIRE_U64: le64(b + f->offset, ktrace_field_value(f, s, 0)); break;
	case KT_WIRE_U32X3:
		for (unsigned i = 0; i < 3; i++)
			le32(b + f->offset + 4 * i, (uint32_t)ktrace_field_value(f, s, i));
		break;
	default: break;
	}
}

/* ---- the generic codec ----------------------------------------------------- */

static int has_strings(const struct ktrace_record_desc *d)
{
	for (uint16_t i = 0; i < d->nfields; i++)
		if (d->fields[i].wire == KT_WIRE_STR)
			return 1;
	return 0;
}

/* The smallest record of d: its oldest fixed part and an empty string each, padded. */
static size_t min_size(const struct ktrace_record_desc *d)
{
	size_t n = d->oldest;

	for (uint16_t i = 0; i < d->nfields; i++)
		n += d->fields[i].wire == KT_WIRE_STR ? 2u : 0u;
	return pad8(n);
}

void ktrace_table_put_fixed(const struct ktrace_record_desc *d, void *buf, size_t size, const void *s)
{
	uint8_t *b = buf;

	put_prefix(b, d->type, size);
	for (uint16_t i = 0; i < d->nfields; i++)
		if (ktrace_wire_size(d->fields[i].wire))
			put_member(&d->fields[i], b, s);
}

size_t ktrace_table_get_fixed(const struct ktrace_record_desc *d, const void *rec, size_t len, size_t min, void *s)
{
	const uint8_t *b = check(rec, len, d->type, min > min_size(d) ? min : min_size(d));
	size_t fixed = d->fixed;

	if (!b)
		return 0;
	if (len < d->fixed) { /* an older record: exactly its minor's fixed part */
		if (len != d->oldest || has_strings(d))
			return 0;
		fixed = d->oldest;
	}
	for (uint16_t i = 0; i < d->nfields; i++) {
		const struct ktrace_field *f = &d->fields[i];
		if (ktrace_wire_size(f->wire))
			set_member(f, s, b, f->offset + ktrace_wire_size(f->wire) <= fixed);
	}
	return fixed;
}

size_t ktrace_table_encode(const struct ktrace_record_desc *d, void *buf, size_t cap, const void *s)
{
	size_t size = d->fixed, o = d->fixed;
	uint8_t *b = buf;

	for (uint16_t i = 0; i < d->nfields; i++)
		if (d->fields[i].wire == KT_WIRE_STR) {
			struct ktrace_str v = ktrace_field_str(&d->fields[i], s);
			size += 2u + str_len(&v);
		}
	size = pad8(size);
	if (size > cap)
		return size;
	ktrace_table_put_fixed(d, b, size, s);
	for (uint16_t i = 0; i < d->nfields; i++)
		if (d->fields[i].wire == KT_WIRE_STR) {
			struct ktrace_str v = ktrace_field_str(&d->fields[i], s);
			o += put_str(b + o, &v);
		}
	return size;
}

int ktrace_table_decode(const struct ktrace_record_desc *d, const void *rec, size_t len, void *s)
{
	size_t fixed = ktrace_table_get_fixed(d, rec, len, 0, s);
	struct cur c = { rec, fixed, len, 0 };

	if (!fixed)
		return -1;
	for (uint16_t i = 0; i < d->nfields; i++)
		if (d->fields[i].wire == KT_WIRE_STR) {
			struct ktrace_str v = cur_str(&c);
			memcpy((uint8_t *)s + d->fields[i].member, &v, sizeof v);
		}
	return c.bad ? -1 : 0;
}
