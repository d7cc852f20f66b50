/* interpose/replay/replay_diff.c: element types and difference measures.
 *
 * Owns the mapping from a recovered parameter type ("*fp32", "const float*",
 * "__half*", "c10::BFloat16*", "i64") to an element type, and the element-wise
 * comparison of two versions of a buffer: how many elements differ, the first
 * few indexes, and the largest absolute, relative and ULP differences
 * (definitions in replay.h).  Pure CPU code, no driver.
 */
#include "interpose/replay/replay.h"

#include <ctype.h>
#include <math.h>
#include <string.h>

struct elem_alias {
	const char *name;
	enum ktrace_replay_elem elem;
};

/* Spellings from Triton signatures, PTX, DWARF and demangled C++ types;
 * CUDA vector types count as their component. */
static const struct elem_alias aliases[] = {
	{ "fp32", KTRACE_ELEM_F32 }, { "f32", KTRACE_ELEM_F32 }, { "float", KTRACE_ELEM_F32 },
	{ "tf32", KTRACE_ELEM_F32 }, { "float1", KTRACE_ELEM_F32 }, { "float2", KTRACE_ELEM_F32 },
	{ "float3", KTRACE_ELEM_F32 }, { "float4", KTRACE_ELEM_F32 },
	{ "fp64", KTRACE_ELEM_F64 }, { "f64", KTRACE_ELEM_F64 }, { "double", KTRACE_ELEM_F64 },
	{ "double2", KTRACE_ELEM_F64 }, { "double4", KTRACE_ELEM_F64 },
	{ "fp16", KTRACE_ELEM_F16 }, { "f16", KTRACE_ELEM_F16 }, { "half", KTRACE_ELEM_F16 },
	{ "__half", KTRACE_ELEM_F16 }, { "half2", KTRACE_ELEM_F16 }, { "__half2", KTRACE_ELEM_F16 },
	{ "c10::Half", KTRACE_ELEM_F16 }, { "at::Half", KTRACE_ELEM_F16 }, { "_Float16", KTRACE_ELEM_F16 },
	{ "bf16", KTRACE_ELEM_BF16 }, { "__nv_bfloat16", KTRACE_ELEM_BF16 }, { "nv_bfloat16", KTRACE_ELEM_BF16 },
	{ "__nv_bfloat162", KTRACE_ELEM_BF16 }, { "c10::BFloat16", KTRACE_ELEM_BF16 },
	{ "at::BFloat16", KTRACE_ELEM_BF16 }, { "bfloat16", KTRACE_ELEM_BF16 }, { "__bf16", KTRACE_ELEM_BF16 },
	{ "i8", KTRACE_ELEM_I8 }, { "int8_t", KTRACE_ELEM_I8 }, { "char", KTRACE_ELEM_I8 },
	{ "signed char", KTRACE_ELEM_I8 },
	{ "u8", KTRACE_ELEM_U8 }, { "uint8_t", KTRACE_ELEM_U8 }, { "unsigned char", KTRACE_ELEM_U8 },
	{ "bool", KTRACE_ELEM_U8 }, { "_Bool", KTRACE_ELEM_U8 }, { "i1", KTRACE_ELEM_U8 },
	{ "u1", KTRACE_ELEM_U8 }, { "uchar4", KTRACE_ELEM_U8 },
	{ "i16", KTRACE_ELEM_I16 }, { "int16_t", KTRACE_ELEM_I16 }, { "short", KTRACE_ELEM_I16 },
	{ "short int", KTRACE_ELEM_I16 }, { "signed short", KTRACE_ELEM_I16 },
	{ "u16", KTRACE_ELEM_U16 }, { "uint16_t", KTRACE_ELEM_U16 }, { "unsigned short", KTRACE_ELEM_U16 },
	{ "short unsigned int", KTRACE_ELEM_U16 }, { "unsigned short int", KTRACE_ELEM_U16 },
	{ "i32", KTRACE_ELEM_I32 }, { "int", KTRACE_ELEM_I32 }, { "int32_t", KTRACE_ELEM_I32 },
	{ "signed", KTRACE_ELEM_I32 }, { "signed int", KTRACE_ELEM_I32 }, { "int2", KTRACE_ELEM_I32 },
	{ "int4", KTRACE_ELEM_I32 },
	{ "u32", KTRACE_ELEM_U32 }, { "uint32_t", KTRACE_ELEM_U32 }, { "unsigned", KTRACE_ELEM_U32 },
	{ "unsigned int", KTRACE_ELEM_U32 },
	{ "i64", KTRACE_ELEM_I64 }, { "int64_t", KTRACE_ELEM_I64 }, { "long", KTRACE_ELEM_I64 },
	{ "long int", KTRACE_ELEM_I64 }, { "long long", KTRACE_ELEM_I64 }, { "long long int", KTRACE_ELEM_I64 },
	{ "ptrdiff_t", KTRACE_ELEM_I64 }, { "int64", KTRACE_ELEM_I64 },
	{ "u64", KTRACE_ELEM_U64 }, { "uint64_t", KTRACE_ELEM_U64 }, { "unsigned long", KTRACE_ELEM_U64 },
	{ "long unsigned int", KTRACE_ELEM_U64 }, { "unsigned long int", KTRACE_ELEM_U64 },
	{ "unsigned long long", KTRACE_ELEM_U64 }, { "long long unsigned int", KTRACE_ELEM_U64 },
	{ "unsigned long long int", KTRACE_ELEM_U64 }, { "size_t", KTRACE_ELEM_U64 },
};

static const char *const qualifiers[] = { "const", "volatile", "__restrict__", "__restrict", "restrict",
					   "struct" };

static int is_qualifier(const char *t, size_t n)
{
	for (size_t i = 0; i < sizeof(qualifiers) / sizeof(qualifiers[0]); i++)
		if (strlen(qualifiers[i]) == n && memcmp(qualifiers[i], t, n) == 0)
			return 1;
	return 0;
}

static int is_word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == ':';
}

/* The type's words without qualifiers, pointer marks and spaces, joined by
 * single spaces: "const float *__restrict__" -> "float".  -1 if too long. */
static int base_words(const char *type, char *out, size_t len)
{
	size_t o = 0;

	for (const char *p = type; *p;) {
		size_t n = 0;

		if (!is_word_char(*p)) {
			p++;
			continue;
		}
		while (is_word_char(p[n]))
			n++;
		if (!is_qualifier(p, n)) {
			if (o + n + 2 > len)
				return -1;
			if (o)
				out[o++] = ' ';
			memcpy(out + o, p, n);
			o += n;
		}
		p += n;
	}
	out[o] = '\0';
	return 0;
}

/* PyTorch's by-value tensor descriptors whose first member is a pointer to
 * their first template argument: TensorInfo<float, unsigned int> holds a
 * float*, PackedTensorAccessor64<c10::Half, 4, ...> a c10::Half*. */
static const char *const typed_holders[] = {
	"TensorInfo", "PackedTensorAccessor", "PackedTensorAccessor32", "PackedTensorAccessor64",
	"GenericPackedTensorAccessor", "TensorAccessor", "GenericTensorAccessor",
};

/* The first template argument of a known holder ("...::TensorInfo<long const,
 * unsigned int>" -> "long const") into out; -1 when the type is no such holder. */
static int holder_element(const char *type, char *out, size_t len)
{
	const char *lt = strchr(type, '<'), *name = lt, *end;
	size_t n;
	int known = 0;

	if (!lt)
		return -1;
	while (name > type && is_word_char(name[-1]) && name[-1] != ':')
		name--;
	for (size_t i = 0; i < sizeof(typed_holders) / sizeof(typed_holders[0]); i++)
		if (strlen(typed_holders[i]) == (size_t)(lt - name) &&
		    memcmp(typed_holders[i], name, (size_t)(lt - name)) == 0)
			known = 1;
	end = lt + 1 + strcspn(lt + 1, ",<>");
	if (!known || *end == '<' || *end == '\0')
		return -1;
	n = (size_t)(end - (lt + 1));
	if (n + 1 > len)
		return -1;
	memcpy(out, lt + 1, n);
	out[n] = '\0';
	return 0;
}

enum ktrace_replay_elem ktrace_replay_elem_parse(const char *type)
{
	char base[96];

	if (type && holder_element(type, base, sizeof(base)) == 0)
		return ktrace_replay_elem_parse(base);
	if (!type || base_words(type, base, sizeof(base)))
		return KTRACE_ELEM_UNKNOWN;
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (strcmp(base, aliases[i].name) == 0)
			return aliases[i].elem;
	return KTRACE_ELEM_UNKNOWN;
}

/* ---- element measures --------------------------------------------------- */

/* 2^k for a normal double exponent, built from its bits (no libm: libktrace.so
 * links without it). */
static double pow2(int k)
{
	uint64_t bits = (uint64_t)(k + 1023) << 52;
	double v;

	memcpy(&v, &bits, 8);
	return v;
}

static double max2(double a, double b)
{
	return a > b ? a : b;
}

static double half_to_double(uint16_t h)
{
	unsigned e = (h >> 10) & 0x1f, m = h & 0x3ff;
	double v;

	if (e == 0)
		v = (double)m * pow2(-24);
	else if (e == 31)
		v = m ? NAN : INFINITY;
	else
		v = (double)(m + 1024) * pow2((int)e - 25);
	return (h & 0x8000) ? -v : v;
}

static double bf16_to_double(uint16_t h)
{
	uint32_t bits = (uint32_t)h << 16;
	float f;

	memcpy(&f, &bits, 4);
	return f;
}

/* Bits and value of one float element. */
static void float_elem(enum ktrace_replay_elem e, const void *p, uint64_t *bits, double *v)
{
	uint16_t h;
	uint32_t w;
	float f;

	switch (e) {
	case KTRACE_ELEM_F32:
		memcpy(&w, p, 4);
		memcpy(&f, p, 4);
		*bits = w;
		*v = f;
		break;
	case KTRACE_ELEM_F64:
		memcpy(bits, p, 8);
		memcpy(v, p, 8);
		break;
	default:
		memcpy(&h, p, 2);
		*bits = h;
		*v = e == KTRACE_ELEM_F16 ? half_to_double(h) : bf16_to_double(h);
		break;
	}
}

/* Distance in representable values between two sign-magnitude encodings. */
static uint64_t ulp_distance(uint64_t a, uint64_t b, uint64_t sign)
{
	uint64_t ma = a & (sign - 1), mb = b & (sign - 1);

	if (!(a & sign) == !(b & sign))
		return ma > mb ? ma - mb : mb - ma;
	return ma + mb;
}

static void value_deltas(double a, double b, double *abs_diff, double *rel_diff)
{
	double big = max2(fabs(a), fabs(b));

	if (a == b) {
		*abs_diff = *rel_diff = 0;
	} else if (isinf(a) || isinf(b)) {
		*abs_diff = *rel_diff = INFINITY;
	} else {
		*abs_diff = fabs(a - b);
		*rel_diff = *abs_diff / big;
	}
}

static void float_delta(enum ktrace_replay_elem e, const void *a, const void *b, double *abs_diff,
			double *rel_diff, uint64_t *ulp)
{
	unsigned size = ktrace_replay_elem_size(e);
	uint64_t ba, bb, sign = 1ull << (size * 8 - 1);
	double va, vb;

	float_elem(e, a, &ba, &va);
	float_elem(e, b, &bb, &vb);
	if (isnan(va) || isnan(vb)) {
		int both = isnan(va) && isnan(vb);

		*abs_diff = *rel_diff = both ? 0 : INFINITY;
		*ulp = both ? 0 : UINT64_MAX;
		return;
	}
	value_deltas(va, vb, abs_diff, rel_diff);
	*ulp = ulp_distance(ba, bb, sign);
}

/* An integer element, sign-extended or zero-extended into *s / *u. */
static void int_elem(enum ktrace_replay_elem e, const void *p, int64_t *s, uint64_t *u, int *is_signed)
{
	int8_t i8; int16_t i16; int32_t i32; uint8_t u8; uint16_t u16; uint32_t u32;

	*is_signed = 1;
	switch (e) {
	case KTRACE_ELEM_I8: memcpy(&i8, p, 1); *s = i8; return;
	case KTRACE_ELEM_I16: memcpy(&i16, p, 2); *s = i16; return;
	case KTRACE_ELEM_I32: memcpy(&i32, p, 4); *s = i32; return;
	case KTRACE_ELEM_I64: memcpy(s, p, 8); return;
	default: break;
	}
	*is_signed = 0;
	switch (e) {
	case KTRACE_ELEM_U8: memcpy(&u8, p, 1); *u = u8; return;
	case KTRACE_ELEM_U16: memcpy(&u16, p, 2); *u = u16; return;
	case KTRACE_ELEM_U32: memcpy(&u32, p, 4); *u = u32; return;
	default: memcpy(u, p, 8); return;
	}
}

static void int_delta(enum ktrace_replay_elem e, const void *a, const void *b, double *abs_diff,
		      double *rel_diff)
{
	int64_t sa = 0, sb = 0;
	uint64_t ua = 0, ub = 0, d;
	double big;
	int is_signed;

	int_elem(e, a, &sa, &ua, &is_signed);
	int_elem(e, b, &sb, &ub, &is_signed);
	if (is_signed) {
		d = sa > sb ? (uint64_t)sa - (uint64_t)sb : (uint64_t)sb - (uint64_t)sa;
		big = max2(fabs((double)sa), fabs((double)sb));
	} else {
		d = ua > ub ? ua - ub : ub - ua;
		big = (double)(ua > ub ? ua : ub);
	}
	*abs_diff = (double)d;
	*rel_diff = d ? *abs_diff / big : 0;
}

int ktrace_replay_elem_delta(enum ktrace_replay_elem e, const void *a, const void *b, double *abs_diff,
			     double *rel_diff, uint64_t *ulp)
{
	unsigned size = ktrace_replay_elem_size(e);

	*abs_diff = *rel_diff = 0;
	*ulp = 0;
	if (memcmp(a, b, size) == 0)
		return 0;
	if (ktrace_replay_elem_is_float(e))
		float_delta(e, a, b, abs_diff, rel_diff, ulp);
	else if (e != KTRACE_ELEM_UNKNOWN)
		int_delta(e, a, b, abs_diff, rel_diff);
	return 1;
}

/* ---- buffer comparison ---------------------------------------------------- */

static void note_element(struct ktrace_replay_diff *d, uint64_t index, double abs_diff, double rel_diff,
			 uint64_t ulp, int nan_mismatch)
{
	d->differing++;
	if (d->nfirst < KTRACE_REPLAY_FIRST_MAX)
		d->first[d->nfirst++] = index;
	if (nan_mismatch)
		d->nan_mismatches++;
	if (abs_diff > d->max_abs)
		d->max_abs = abs_diff;
	if (rel_diff > d->max_rel)
		d->max_rel = rel_diff;
	if (ulp > d->max_ulp)
		d->max_ulp = ulp;
}

void ktrace_replay_diff_add(struct ktrace_replay_diff *d, enum ktrace_replay_elem e, const void *a,
			    const void *b, size_t n, uint64_t first_index)
{
	const unsigned char *pa = a, *pb = b;
	unsigned size = ktrace_replay_elem_size(e);
	size_t whole = n / size, i = 0;

	while (i < whole) {
		/* Skip equal stretches 64 bytes at a time (a multiple of every size). */
		if ((whole - i) * size >= 64 && memcmp(pa + i * size, pb + i * size, 64) == 0) {
			i += 64 / size;
			continue;
		}
		double abs_diff, rel_diff;
		uint64_t ulp;

		if (ktrace_replay_elem_delta(e, pa + i * size, pb + i * size, &abs_diff, &rel_diff, &ulp))
			note_element(d, first_index + i, abs_diff, rel_diff, ulp, ulp == UINT64_MAX);
		i++;
	}
	d->elements += whole;
	if (n % size) {
		d->elements++;
		if (memcmp(pa + whole * size, pb + whole * size, n % size) != 0)
			note_element(d, first_index + whole, 0, 0, 0, 0);
	}
}

void ktrace_replay_diff_merge(struct ktrace_replay_diff *into, const struct ktrace_replay_diff *d)
{
	uint64_t merged[KTRACE_REPLAY_FIRST_MAX];
	uint32_t n = 0, i = 0, j = 0;

	if (d->elements > into->elements)
		into->elements = d->elements;
	if (d->differing > into->differing)
		into->differing = d->differing;
	if (d->nan_mismatches > into->nan_mismatches)
		into->nan_mismatches = d->nan_mismatches;
	into->max_ulp = d->max_ulp > into->max_ulp ? d->max_ulp : into->max_ulp;
	into->max_abs = d->max_abs > into->max_abs ? d->max_abs : into->max_abs;
	into->max_rel = d->max_rel > into->max_rel ? d->max_rel : into->max_rel;
	/* Union of two ascending lists, the smallest KTRACE_REPLAY_FIRST_MAX kept. */
	while (n < KTRACE_REPLAY_FIRST_MAX && (i < into->nfirst || j < d->nfirst)) {
		uint64_t v;

		if (j >= d->nfirst || (i < into->nfirst && into->first[i] <= d->first[j]))
			v = into->first[i++];
		else
			v = d->first[j++];
		if (n == 0 || merged[n - 1] != v)
			merged[n++] = v;
	}
	memcpy(into->first, merged, n * sizeof(merged[0]));
	into->nfirst = n;
}
