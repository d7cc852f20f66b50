/* interpose/model/offset_calc.c: find ATen OffsetCalculators in a closure's
 * bytes by their IntDivider entries, and how many tensors they serve (see
 * offset_calc.h). */
#include "interpose/model/offset_calc.h"

#include <string.h>

static uint32_t u32_at(const uint8_t *p, uint32_t off)
{
	uint32_t v;

	memcpy(&v, p + off, 4);
	return v;
}

int ktrace_calc_divider_valid(uint32_t divisor, uint32_t m1, uint32_t shift)
{
	uint64_t magic;

	if (divisor < 2 || divisor > INT32_MAX)
		return 0;
	/* the least s with 2^s >= divisor; compared before the division, which
	 * most words that are no divider never reach (this runs on the launch path) */
	if (shift != 32u - (uint32_t)__builtin_clz(divisor - 1))
		return 0;
	magic = ((1ull << 32) * ((1ull << shift) - divisor)) / divisor + 1;
	return magic <= UINT32_MAX && m1 == (uint32_t)magic;
}

/* Does a calculator start at byte o of p: dims in range, each used divider valid? */
static int calc_at(const uint8_t *p, uint32_t o)
{
	uint32_t dims = u32_at(p, o);

	if (dims < 1 || dims > KTRACE_CALC_MAX_DIMS)
		return 0;
	for (uint32_t i = 0; i < dims; i++) {
		uint32_t at = o + 4 + 12 * i;

		if (!ktrace_calc_divider_valid(u32_at(p, at), u32_at(p, at + 4), u32_at(p, at + 8)))
			return 0;
	}
	return 1;
}

uint32_t ktrace_calc_starts(const uint8_t *p, uint32_t size, uint32_t *starts, uint32_t max)
{
	const uint32_t least = KTRACE_CALC_BYTES(1);
	uint32_t n = 0;

	for (uint32_t o = 0; n < max && size >= least && o <= size - least; o += 4)
		if (calc_at(p, o)) {
			starts[n++] = o;
			o += least - 4;
		}
	return n;
}

/* Do the pointer words at ptr_off (sorted) hold n in a row from byte at? */
static int run_at(const uint32_t *ptr_off, uint32_t nptr, uint32_t at, uint32_t n)
{
	uint32_t k = 0, got = 0;

	while (k < nptr && ptr_off[k] < at)
		k++;
	while (k < nptr && got < n && ptr_off[k] == at + 8 * got) {
		k++;
		got++;
	}
	return got == n;
}

int ktrace_calc_nargs_fits(uint32_t start, uint32_t size, const uint32_t *ptr_off, uint32_t nptr, uint32_t n)
{
	uint32_t end, outside = 0, before = start & ~7u;

	if (n < 1 || n > KTRACE_CALC_MAX_ARGS || KTRACE_CALC_BYTES(n) > size - start)
		return 0;
	if (n == 1)
		return 1; /* what every calculator spans */
	end = start + KTRACE_CALC_BYTES(n);
	for (uint32_t k = 0; k < nptr; k++)
		outside += ptr_off[k] + 8 <= start || ptr_off[k] >= end;
	if (outside < n)
		return 0;
	return run_at(ptr_off, nptr, (end + 7) & ~7u, n) || (before >= 8 * n && run_at(ptr_off, nptr, before - 8 * n, n));
}

uint32_t ktrace_calc_nargs(uint32_t start, uint32_t size, const uint32_t *ptr_off, uint32_t nptr)
{
	for (uint32_t n = KTRACE_CALC_MAX_ARGS; n > 1; n--)
		if (ktrace_calc_nargs_fits(start, size, ptr_off, nptr, n))
			return n;
	return 1;
}
