/* interpose/model/offset_calc.h: ATen's OffsetCalculator inside a by-value
 * closure, found by its values.
 *
 * PyTorch's generic elementwise kernel (`elementwise_kernel(int N, func_t f)`,
 * ATen/native/cuda/CUDALoops.cuh) receives one closure that captured an
 * `OffsetCalculator<NARGS, uint32_t>` (ATen/cuda/detail/OffsetCalculator.cuh),
 * the tensors' data pointers and the functor (a reduction's ReduceOp holds
 * two calculators):
 *
 *     int dims;                                    4 bytes
 *     IntDivider<uint32_t> sizes_[MAX_DIMS];       12 bytes each: divisor, m1, shift
 *     uint32_t strides_[MAX_DIMS][NARGS];          4 bytes each
 *
 * with MAX_DIMS 25.  The constructor sets the first `dims` entries only; the
 * others hold what the host stack held, old pointers among them, which a
 * scan by value takes for the closure's pointers (docs/hashing.md, "Pointer
 * words").  The closure's layout is the compiler's, so a calculator is found
 * at each launch by what its used entries must be: 1 <= dims <= 25, each of
 * the first `dims` dividers the IntDivider of a divisor of at least 2 (once
 * TensorIterator coalesced the dimensions none has size 1), its magic number
 * and shift exactly what IntDivider's constructor computes from it.  NARGS
 * comes from the type's name where it tells (meta/aten_closure.c) and the
 * bytes agree (below); else it is the largest count n for which the
 * closure's data array can be seen
 * beside the calculator: n pointer words in a row right after its end (nvcc
 * lays out captures in the order the body first uses them, and ATen's
 * closures use the calculator, then `data`) or right before its start, and
 * at least n pointer words outside it; 1 when no count > 1 fits, which
 * skips what every calculator spans.  A calculator holds no pointer, so
 * its whole span is skipped.  Pure functions; no allocation. */
#ifndef KTRACE_OFFSET_CALC_H
#define KTRACE_OFFSET_CALC_H

#include <stdint.h>

#define KTRACE_CALC_MAX_DIMS 25u
#define KTRACE_CALC_MAX_ARGS 16u
/* Bytes of an OffsetCalculator<nargs, uint32_t>. */
#define KTRACE_CALC_BYTES(nargs) (4u + 12u * KTRACE_CALC_MAX_DIMS + 4u * KTRACE_CALC_MAX_DIMS * (nargs))
/* Calculators looked for in one closure. */
#define KTRACE_CALC_MAX_FOUND 4u

/* Is (divisor, m1, shift) what IntDivider<uint32_t>(divisor) holds, for a
 * divisor of at least 2? */
int ktrace_calc_divider_valid(uint32_t divisor, uint32_t m1, uint32_t shift) __attribute__((visibility("hidden")));

/* The byte offsets in p[0, size) where a calculator starts (4-byte aligned,
 * at least KTRACE_CALC_BYTES(1) apart, first found first): at most max of
 * them, returns their count. */
uint32_t ktrace_calc_starts(const uint8_t *p, uint32_t size, uint32_t *starts, uint32_t max)
	__attribute__((visibility("hidden")));

/* Could the calculator at byte start of a closure of size bytes, whose
 * pointer words lie at the nptr byte offsets ptr_off (closure-relative,
 * sorted), be an OffsetCalculator<n>: it fits, and (n > 1) its data array
 * of n pointers shows beside it, with n pointer words outside it?  1 or 0. */
int ktrace_calc_nargs_fits(uint32_t start, uint32_t size, const uint32_t *ptr_off, uint32_t nptr, uint32_t n)
	__attribute__((visibility("hidden")));

/* NARGS of that calculator by its bytes alone: the largest n that fits, 1
 * when none larger does. */
uint32_t ktrace_calc_nargs(uint32_t start, uint32_t size, const uint32_t *ptr_off, uint32_t nptr)
	__attribute__((visibility("hidden")));

#endif
