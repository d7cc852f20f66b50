/* meta/aten_closure.c: which ATen parameter types hold OffsetCalculators
 * among words of no known layout, and for how many tensors each calculator
 * is (interpose/model/offset_calc.h finds them in a launch's bytes).
 *
 * - A closure declared in a function of namespace at:: ("at::native::
 *   gpu_kernel_impl_nocast<F>(...)::{lambda(int)#1}"): the elementwise and
 *   indexing kernels' closures.  Where the closure is gpu_kernel_impl's or
 *   gpu_kernel_impl_nocast's (ATen/native/cuda/CUDALoops.cuh), its one
 *   calculator is make_offset_calculator<arity(F) + 1>: the functor's
 *   arguments and its result, and F's arity shows in its name when F is a
 *   lambda ("{lambda(float, float)#1}") or one of ATen's functor templates
 *   of known arity (BinaryFunctor, AUnaryFunctor, BUnaryFunctor,
 *   CUDAFunctor_add, CUDAFunctorOnSelf_add, CUDAFunctorOnOther_add).
 * - at::native::ReduceOp<scalar_t, ops_t, unsigned int, ...>
 *   (ATen/native/cuda/Reduce.cuh): input_calc (OffsetCalculator<1>), then
 *   output_calc (OffsetCalculator<2>).
 * Owns ktrace_meta_aten_calculators(); calls libc only.
 */
#include "meta/meta_internal.h"

#include <string.h>

static int starts_with(const char *s, size_t n, const char *w)
{
	size_t k = strlen(w);

	return n >= k && !memcmp(s, w, k);
}

/* The index of the bracket that closes the one at s[open] ('<' or '('), or n. */
static size_t closing(const char *s, size_t n, size_t open)
{
	int depth = 0;

	for (size_t i = open; i < n; i++) {
		char c = s[i];

		if (c == '<' || c == '(' || c == '[' || c == '{')
			depth++;
		else if ((c == '>' || c == ')' || c == ']' || c == '}') && --depth == 0)
			return i;
	}
	return n;
}

/* Arguments of the parameter list s[0, n) (no brackets): commas at depth 0. */
static int count_args(const char *s, size_t n)
{
	int args = 0, depth = 0;

	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (c == '<' || c == '(' || c == '[' || c == '{')
			depth++;
		else if (c == '>' || c == ')' || c == ']' || c == '}')
			depth--;
		else if (c == ',' && depth == 0)
			args++;
		if (c != ' ' && !args)
			args = 1;
	}
	return args;
}

/* The arity of functor type f[0, n): 0..8, or -1 unknown. */
static int functor_arity(const char *f, size_t n)
{
	static const struct { const char *name; int arity; } known[] = {
		{ "at::native::BinaryFunctor<", 2 },	     { "at::native::AUnaryFunctor<", 1 },
		{ "at::native::BUnaryFunctor<", 1 },	     { "at::native::CUDAFunctor_add<", 2 },
		{ "at::native::CUDAFunctorOnSelf_add<", 1 }, { "at::native::CUDAFunctorOnOther_add<", 1 },
	};
	static const char lambda[] = "::{lambda(";
	size_t at = n, k = sizeof lambda - 1;

	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
		if (starts_with(f, n, known[i].name) && f[n - 1] == '>')
			return known[i].arity;
	if (!n || f[n - 1] != '}')
		return -1;
	for (size_t i = 0; i + k <= n; i++)
		if (!memcmp(f + i, lambda, k))
			at = i; /* the last one: F itself, the others enclose it */
	if (at == n)
		return -1;
	size_t open = at + k - 1, close = closing(f, n, open);
	/* "{lambda(...)#N}" must end F */
	if (close == n || close + 2 > n || f[close + 1] != '#')
		return -1;
	for (size_t i = close + 2; i + 1 < n; i++)
		if (f[i] < '0' || f[i] > '9')
			return -1;
	int a = count_args(f + open + 1, close - open - 1);
	return a <= 8 ? a : -1;
}

/* N of the calculator of gpu_kernel_impl[_nocast]<F>'s closure, 0 unknown. */
static uint8_t loops_nargs(const char *t, size_t n)
{
	static const char *const fns[] = { "at::native::gpu_kernel_impl_nocast<", "at::native::gpu_kernel_impl<" };

	for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
		size_t k = strlen(fns[i]);

		if (!starts_with(t, n, fns[i]))
			continue;
		size_t close = closing(t, n, k - 1), end = close;
		if (close == n)
			return 0;
		while (end > k && t[end - 1] == ' ')
			end--; /* "BinaryFunctor<...> >" */
		int a = functor_arity(t + k, end - k);
		return a < 0 ? 0 : (uint8_t)(a + 1);
	}
	return 0;
}

int ktrace_meta_aten_calculators(const char *t, size_t n, uint8_t nargs[KTRACE_ATEN_CALC_HINTS])
{
	static const char lambda[] = "::{lambda(", reduce[] = "at::native::ReduceOp<";

	memset(nargs, 0, KTRACE_ATEN_CALC_HINTS);
	if (!starts_with(t, n, "at::"))
		return 0;
	if (starts_with(t, n, reduce)) {
		/* ReduceOp<scalar_t, ops_t, index_t, ...>: 32-bit calculators only */
		size_t close = closing(t, n, sizeof reduce - 2);
		if (close != n - 1 || !memmem(t, n, ", unsigned int, ", 16))
			return 0;
		nargs[0] = 1;
		nargs[1] = 2;
		return 1;
	}
	if (t[n - 1] != '}' || !memmem(t, n, lambda, sizeof lambda - 1))
		return 0;
	nargs[0] = loops_nargs(t, n);
	return 1;
}
