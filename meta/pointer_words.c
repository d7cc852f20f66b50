/* meta/pointer_words.c: which 8-byte words of a kernel parameter hold device
 * pointers, as the parameter's type says (docs/hashing.md, "Pointer words").
 *
 * The type is the one meta/ recovered: a demangled C++ type ("float const*",
 * "std::array<char*, 3ul>", "at::cuda::detail::TensorInfo<float, unsigned
 * int>"), a Triton signature type ("*fp32", "i32"), a DWARF type ("float *")
 * or a PTX declaration (".u64 .ptr .global .align 4").  Plain pointers,
 * scalars, and the by-value structs through which PyTorch hands tensors to
 * its kernels, whose layouts are taken from PyTorch's sources (the table in
 * docs/hashing.md names each source), are known; any other type is not, and
 * the caller then falls back to looking at the values.
 *
 * Owns ktrace_meta_pointer_words().  Calls libc and names.c's scalar list
 * (meta_internal.h).
 */
#include "meta/meta_internal.h"

#include <ctype.h>
#include <stdlib.h>

#define TYPE_MAX 4096 /* longer type strings are not looked at */

/* ---- the answer ------------------------------------------------------------ */

static int answer(struct ktrace_ptr_words *o, const char *rule)
{
	o->known = 1;
	o->rule = rule;
	return 1;
}

static int add_run(struct ktrace_ptr_words *o, uint32_t offset, uint32_t count)
{
	if (o->nruns == KTRACE_PTR_RUNS_MAX)
		return -1;
	o->run[o->nruns].offset = offset;
	o->run[o->nruns].count = count;
	o->nruns++;
	return 0;
}

/* ---- text helpers ---------------------------------------------------------- */

struct span {
	const char *s;
	size_t n;
};

static int span_is(struct span t, const char *w)
{
	return strlen(w) == t.n && !memcmp(t.s, w, t.n);
}

static int span_ends_with(struct span t, const char *w)
{
	size_t n = strlen(w);

	return t.n >= n && !memcmp(t.s + t.n - n, w, n);
}

static struct span trim(struct span t)
{
	while (t.n && isspace((unsigned char)t.s[0])) {
		t.s++;
		t.n--;
	}
	while (t.n && isspace((unsigned char)t.s[t.n - 1]))
		t.n--;
	return t;
}

/* Drop cv-qualifiers, restrict and elaborated-type keywords around the
 * type: "const float* __restrict__" -> "const float*" -> "float*"... */
static struct span strip_qualifiers(struct span t)
{
	static const char *const suffixes[] = { " const", " volatile", " __restrict__", " __restrict",
						"const", "__restrict__" };
	static const char *const prefixes[] = { "const ", "volatile ", "struct ", "class ", "union " };
	int again = 1;

	while (again) {
		again = 0;
		t = trim(t);
		for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
			size_t n = strlen(suffixes[i]);

			/* "const" alone only right after a '*' ("float*const") */
			if (span_ends_with(t, suffixes[i]) && t.n > n &&
			    (suffixes[i][0] == ' ' || t.s[t.n - n - 1] == '*')) {
				t.n -= n;
				again = 1;
			}
		}
		for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
			size_t n = strlen(prefixes[i]);

			if (t.n > n && !memcmp(t.s, prefixes[i], n)) {
				t.s += n;
				t.n -= n;
				again = 1;
			}
		}
	}
	return t;
}

/* A non-negative integer template argument: "3", "3ul", "(unsigned long)3",
 * "true"/"false".  -1 when it is none. */
static long number_arg(struct span t)
{
	char buf[32];
	char *end;
	long v;

	t = trim(t);
	if (t.n && t.s[0] == '(') {
		const char *close = memchr(t.s, ')', t.n);

		if (!close)
			return -1;
		t.n -= (size_t)(close + 1 - t.s);
		t.s = close + 1;
	}
	if (span_is(t, "true"))
		return 1;
	if (span_is(t, "false"))
		return 0;
	if (!t.n || t.n >= sizeof buf || !isdigit((unsigned char)t.s[0]))
		return -1;
	memcpy(buf, t.s, t.n);
	buf[t.n] = 0;
	v = strtol(buf, &end, 10);
	while (*end == 'u' || *end == 'U' || *end == 'l' || *end == 'L')
		end++;
	return *end || v < 0 ? -1 : v;
}

/* ---- what a type is -------------------------------------------------------- */

/* A pointer type: C++ "T*" (qualifiers stripped), Triton "*fp32", MLIR
 * "!tt.ptr<f32>". */
static int is_pointer_type(struct span t)
{
	if (t.n && t.s[0] == '*')
		return 1;
	if (t.n >= 7 && !memcmp(t.s, "!tt.ptr", 7))
		return 1;
	return t.n && t.s[t.n - 1] == '*';
}

/* PyTorch's scalar classes (c10/util/): a value, never an address. */
static int is_torch_scalar(struct span t)
{
	static const char *const names[] = {
		"c10::Half", "c10::BFloat16", "at::Half", "at::BFloat16", "c10::Float8_e4m3fn",
		"c10::Float8_e5m2", "c10::Float8_e4m3fnuz", "c10::Float8_e5m2fnuz", "c10::Float8_e8m0fnu",
		"c10::Float4_e2m1fn_x2", "c10::qint8", "c10::quint8", "c10::qint32", "c10::quint4x2",
		"c10::quint2x4", "c10::bits8", "c10::bits16", "c10::complex<float>", "c10::complex<double>",
		"c10::complex<c10::Half>", "c10::ScalarType", "at::ScalarType",
	};

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (span_is(t, names[i]))
			return 1;
	return 0;
}

static int is_scalar_type(struct span t)
{
	char buf[64];

	if (is_torch_scalar(t))
		return 1;
	if (t.n >= sizeof buf)
		return 0;
	memcpy(buf, t.s, t.n);
	buf[t.n] = 0;
	return kt_type_is_builtin_scalar(buf);
}

/* A PTX declaration (".u64", ".ptr .global .align 4 .u64", ".align 8 .b8
 * [24]"): .ptr says pointer (a global or generic one: shared and local
 * addresses are no device memory); a float or an integer narrower than a
 * word is a value; a 64-bit integer (nvcc declares pointers so) or an array
 * says nothing. */
static int ptx_type(struct span t, uint32_t size, struct ktrace_ptr_words *o)
{
	if (memchr(t.s, '[', t.n))
		return 0;
	for (size_t i = 0; i + 4 <= t.n; i++) {
		struct span w = { t.s + i, 4 };

		if (span_is(w, ".ptr")) {
			if (size != 8 || strstr(t.s, ".shared") || strstr(t.s, ".local") || strstr(t.s, ".const"))
				return 0;
			add_run(o, 0, 1);
			return answer(o, "PTX .ptr");
		}
	}
	if (span_ends_with(t, ".u64") || span_ends_with(t, ".s64") || span_ends_with(t, ".b64"))
		return 0;
	return answer(o, "PTX scalar");
}

/* ---- PyTorch's by-value structs --------------------------------------------- */

/* A template type split: "ns::Name<a, b>" -> qualifier "ns::", name "Name",
 * args "a", "b".  0, or -1 when t is no template-id ending the string. */
#define ARGS_MAX 8
struct template_id {
	struct span qual, name;
	struct span arg[ARGS_MAX];
	int nargs;
};

static int split_args(struct span inner, struct template_id *id)
{
	int depth = 0;
	size_t start = 0;

	id->nargs = 0;
	for (size_t i = 0; i <= inner.n; i++) {
		char c = i < inner.n ? inner.s[i] : ',';

		if (c == '<' || c == '(' || c == '[' || c == '{')
			depth++;
		else if (c == '>' || c == ')' || c == ']' || c == '}')
			depth--;
		else if (c == ',' && depth == 0) {
			if (id->nargs == ARGS_MAX)
				return -1;
			id->arg[id->nargs++] = trim((struct span){ inner.s + start, i - start });
			start = i + 1;
		}
		if (depth < 0)
			return -1;
	}
	return depth ? -1 : 0;
}

static int template_split(struct span t, struct template_id *id)
{
	size_t last_sep = 0, open = 0;
	int depth = 0, have_sep = 0;

	if (!t.n || t.s[t.n - 1] != '>')
		return -1;
	for (size_t i = 0; i < t.n; i++) {
		char c = t.s[i];

		if (c == '<' || c == '(' || c == '[' || c == '{') {
			if (c == '<' && depth == 0)
				open = i;
			depth++;
		} else if (c == '>' || c == ')' || c == ']' || c == '}') {
			if (--depth < 0)
				return -1;
			if (depth == 0 && c == '>' && i + 1 != t.n && t.s[i + 1] != ':')
				return -1; /* something follows the argument list */
		} else if (depth == 0 && c == ':' && i + 1 < t.n && t.s[i + 1] == ':') {
			last_sep = i + 2;
			have_sep = 1;
		}
	}
	if (depth || open < last_sep || (!have_sep && !open))
		return -1;
	id->qual = (struct span){ t.s, last_sep };
	id->name = (struct span){ t.s + last_sep, open - last_sep };
	return split_args((struct span){ t.s + open + 1, t.n - open - 2 }, id);
}

static uint32_t align8(uint64_t v)
{
	return (uint32_t)((v + 7) & ~7ull);
}

/* std::array<T, N>, at::detail::Array<T, N>: N pointer words when T is a
 * pointer, none when T is a scalar. */
static int array_type(const struct template_id *id, uint32_t size, struct ktrace_ptr_words *o)
{
	long n = id->nargs == 2 ? number_arg(id->arg[1]) : -1;
	struct span elem = id->nargs == 2 ? strip_qualifiers(id->arg[0]) : (struct span){ "", 0 };

	if (n < 0)
		return 0;
	if (is_pointer_type(elem)) {
		if ((uint64_t)n * 8 != size)
			return 0;
		if (n)
			add_run(o, 0, (uint32_t)n);
		return answer(o, "array of pointers");
	}
	return is_scalar_type(elem) ? answer(o, "array of scalars") : 0;
}

/* Descriptors whose first member is the data pointer, the rest sizes,
 * strides and a dimension count: TensorInfo<T, I> (ATen/cuda/detail/
 * TensorInfo.cuh), GenericPackedTensorAccessor and its aliases
 * (ATen/core/TensorAccessor.h, torch/headeronly/core/TensorAccessor.h). */
static int descriptor_type(uint32_t size, struct ktrace_ptr_words *o)
{
	if (size < 16 || size % 8)
		return 0;
	add_run(o, 0, 1);
	return answer(o, "tensor descriptor (data pointer first)");
}

/* multi_tensor_apply's metadata (ATen/native/cuda/MultiTensorApply.cuh,
 * DepthToMaxConfig): tensors and blocks per launch by depth n, for the 4 KB
 * (large = 0) and the 32 KB (large = 1) kernel argument limit. */
static const uint16_t mta_tensors[2][5] = { { 110, 64, 48, 36, 30 }, { 770, 448, 336, 252, 210 } };
static const uint16_t mta_tensors_scalarlist[2][5] = { { 96, 64, 48, 36, 30 }, { 672, 448, 336, 252, 210 } };
static const uint16_t mta_tensors_complex_double[2][2] = { { 72, 60 }, { 504, 420 } };
static const uint16_t mta_blocks[2] = { 320, 2240 };

/* The depth and the large-argument flag from "<n, large>" (or "<n>", before
 * PyTorch had the 32 KB variant), args from index `first`.  -1 when odd. */
static int mta_config(const struct template_id *id, int first, long *n, int *large)
{
	*n = id->nargs > first ? number_arg(id->arg[first]) : -1;
	*large = id->nargs > first + 1 ? (int)number_arg(id->arg[first + 1]) : 0;
	if (id->nargs > first + 2 || *n < 1 || *n > 5 || *large < 0 || *large > 1)
		return -1;
	return 0;
}

/* The launch uses tensor slots 0 to block_to_tensor[gridDim.x - 1] only:
 * multi_tensor_apply assigns blocks to tensors in increasing order from slot
 * 0 and leaves the slots after the last one as they were (uninitialised, or
 * the previous launch's tensors).  block_to_tensor, B entries of
 * DepthToMaxConfig's TensorIdxType (unsigned char, uint16_t when large),
 * starts at byte map_offset. */
static void used_slots(struct ktrace_ptr_words *o, uint64_t slots, uint64_t map_offset, int large, uint64_t b)
{
	o->used.slots = (uint32_t)slots;
	o->used.map_offset = (uint32_t)map_offset;
	o->used.map_count = (uint32_t)b;
	o->used.map_elem = large ? 2 : 1;
}

/* TensorListMetadata<n, large>: addresses[n][T] first, then numel[T], the
 * block maps and (since PyTorch 2.0) start_tensor_this_launch. */
static int tensor_list_type(const struct template_id *id, uint32_t size, struct ktrace_ptr_words *o)
{
	long n;
	int large;

	if (mta_config(id, 0, &n, &large))
		return 0;
	uint64_t t = mta_tensors[large][n - 1], b = mta_blocks[large];
	uint64_t body = 8 * (uint64_t)n * t + 8 * t + (uint64_t)(large ? 2 : 1) * b + 4 * b;

	if (size != align8(body + 4) && size != align8(body))
		return 0;
	add_run(o, 0, (uint32_t)(n * t));
	used_slots(o, t, 8 * (uint64_t)n * t + 8 * t, large, b);
	return answer(o, "TensorListMetadata");
}

/* FusedOptimizerTensorListMetadata<n, large>: as above with the state
 * steps' addresses after numel. */
static int fused_list_type(const struct template_id *id, uint32_t size, struct ktrace_ptr_words *o)
{
	long n;
	int large;

	if (mta_config(id, 0, &n, &large))
		return 0;
	uint64_t t = mta_tensors[large][n - 1], s = mta_tensors_scalarlist[large][n - 1], b = mta_blocks[large];
	uint64_t body = 8 * (uint64_t)n * t + 8 * t + 8 * s + (uint64_t)(large ? 2 : 1) * b + 4 * b + 4;

	if (size != align8(body))
		return 0;
	add_run(o, 0, (uint32_t)(n * t));
	add_run(o, (uint32_t)(8 * ((uint64_t)n * t + t)), (uint32_t)s);
	used_slots(o, t, 8 * (uint64_t)n * t + 8 * t + 8 * s, large, b); /* S <= T: slot k is word k */
	return answer(o, "FusedOptimizerTensorListMetadata");
}

/* Size and alignment of a scalar list's element (opmath types). */
static int scalar_size(struct span t, uint32_t *sz, uint32_t *al)
{
	static const struct { const char *name; uint8_t size, align; } v[] = {
		{ "float", 4, 4 }, { "double", 8, 8 }, { "int", 4, 4 }, { "long", 8, 8 }, { "bool", 1, 1 },
		{ "c10::complex<float>", 8, 8 }, { "c10::complex<double>", 16, 16 }, { "c10::Half", 2, 2 },
		{ "c10::BFloat16", 2, 2 }, { "unsigned char", 1, 1 }, { "signed char", 1, 1 },
		{ "short", 2, 2 }, { "long long", 8, 8 },
	};

	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
		if (span_is(t, v[i].name)) {
			*sz = v[i].size;
			*al = v[i].align;
			return 0;
		}
	return -1;
}

/* TensorListScalarListMetadata<scalar_t, n, large>: addresses[n][S], numel[S],
 * scalar_vals[S], the block maps (a complex<double> list of depth 1 or 2
 * holds fewer tensors). */
static int scalar_list_type(const struct template_id *id, uint32_t size, struct ktrace_ptr_words *o)
{
	uint32_t esz, eal;
	long n;
	int large;
	struct span elem = id->nargs ? strip_qualifiers(id->arg[0]) : (struct span){ "", 0 };

	if (mta_config(id, 1, &n, &large) || scalar_size(elem, &esz, &eal))
		return 0;
	uint64_t s = mta_tensors_scalarlist[large][n - 1], b = mta_blocks[large];
	if (span_is(elem, "c10::complex<double>") && n <= 2)
		s = mta_tensors_complex_double[large][n - 1];
	uint64_t off = 8 * (uint64_t)n * s + 8 * s;
	off = (off + eal - 1) / eal * eal + s * esz;
	uint64_t map = off;
	off += (uint64_t)(large ? 2 : 1) * b;
	off = (off + 3) / 4 * 4 + 4 * b;
	uint64_t al = eal > 8 ? eal : 8;

	if (size != (off + al - 1) / al * al)
		return 0;
	add_run(o, 0, (uint32_t)(n * s));
	used_slots(o, s, map, large, b);
	return answer(o, "TensorListScalarListMetadata");
}

/* Structs of PyTorch's elementwise and reduction kernels that hold no
 * pointer: offset calculators (ATen/cuda/detail/OffsetCalculator.cuh,
 * IntegerDivider.cuh) and the loaders and storers of MemoryAccess.cuh. */
static int pointer_free_struct(struct span name)
{
	static const char *const names[] = {
		"OffsetCalculator", "TrivialOffsetCalculator", "IntDivider", "LoadWithCast", "StoreWithCast",
		"LoadWithoutCast", "StoreWithoutCast",
	};

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (span_is(name, names[i]))
			return 1;
	return 0;
}

static int qual_has(struct span qual, const char *ns)
{
	size_t n = strlen(ns);

	for (size_t i = 0; i + n <= qual.n; i++)
		if (!memcmp(qual.s + i, ns, n) && (i == 0 || qual.s[i - 1] == ':'))
			return 1;
	return 0;
}

static int known_template(const struct template_id *id, uint32_t size, struct ktrace_ptr_words *o)
{
	static const char *const descriptors[] = {
		"TensorInfo", "GenericPackedTensorAccessor", "GenericPackedTensorAccessorBase",
		"PackedTensorAccessor", "PackedTensorAccessor32", "PackedTensorAccessor64",
	};
	struct span nm = id->name;

	if ((span_is(nm, "array") && qual_has(id->qual, "std::")) ||
	    (span_is(nm, "Array") && (qual_has(id->qual, "detail::") || qual_has(id->qual, "c10::"))))
		return array_type(id, size, o);
	for (size_t i = 0; i < sizeof descriptors / sizeof descriptors[0]; i++)
		if (span_is(nm, descriptors[i]))
			return descriptor_type(size, o);
	if (span_is(nm, "TensorListMetadata"))
		return tensor_list_type(id, size, o);
	if (span_is(nm, "FusedOptimizerTensorListMetadata"))
		return fused_list_type(id, size, o);
	if (span_is(nm, "TensorListScalarListMetadata"))
		return scalar_list_type(id, size, o);
	if (pointer_free_struct(nm))
		return answer(o, "no pointer member");
	return 0;
}

/* ---- the entry point ---------------------------------------------------------- */

/* The last component of a qualified name without template arguments. */
static struct span last_component(struct span t)
{
	for (size_t i = t.n; i >= 2; i--)
		if (t.s[i - 1] == ':' && t.s[i - 2] == ':')
			return (struct span){ t.s + i, t.n - i };
	return t;
}

static int typed(struct span t, uint32_t size, struct ktrace_ptr_words *o)
{
	struct template_id id;

	if (t.s[0] == '.')
		return ptx_type(t, size, o);
	if (memchr(t.s, '&', t.n) || t.s[t.n - 1] == ')')
		return 0; /* references, function types */
	if (is_pointer_type(t)) {
		if (size != 8)
			return 0;
		add_run(o, 0, 1);
		return answer(o, "pointer");
	}
	if (is_scalar_type(t))
		return answer(o, "scalar");
	if (template_split(t, &id) == 0)
		return known_template(&id, size, o);
	if (pointer_free_struct(last_component(t)))
		return answer(o, "no pointer member");
	return 0;
}

int ktrace_meta_pointer_words(const char *type, uint32_t size, uint8_t space, struct ktrace_ptr_words *out)
{
	struct span t;

	memset(out, 0, sizeof *out);
	t.s = type ? type : "";
	t.n = strnlen(t.s, TYPE_MAX + 1);
	if (t.n > TYPE_MAX)
		return 0;
	t = strip_qualifiers(t);
	if (t.n && typed(t, size, out))
		return 1;
	if (t.n) {
		out->aten_calculators = (uint8_t)ktrace_meta_aten_calculators(t.s, t.n, out->calc_nargs);
		return 0;
	}
	/* no type: a pointer state space in the cubin or PTX still tells */
	if (size == 8 && (space == 4 || space == 5)) {
		add_run(out, 0, 1);
		return answer(out, "pointer space");
	}
	return 0;
}
