/* test/fakecuda/fakecuda_internal.h: what fakegraph.c uses of fakecuda.c
 * (both are built into the same fake libcuda.so.1; hidden from its users).
 */
#ifndef KTRACE_FAKECUDA_INTERNAL_H
#define KTRACE_FAKECUDA_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

#define FK_HIDDEN __attribute__((visibility("hidden")))

/* Count one call of the entry point `fn` (fake_count). */
void fk_note(const char *fn) FK_HIDDEN;
/* 1 in the real-memory build. */
int fk_real_memory(void) FK_HIDDEN;
/* A launch's checks and, for the known kernels, its host behaviour. */
CUresult fk_launch_run(CUfunction f, unsigned gx, void **params) FK_HIDDEN;
/* The parameter layout of a fake kernel: its count, offsets and sizes;
 * -1 when f is no fake kernel. */
int fk_func_layout(CUfunction f, unsigned *n, size_t *off, size_t *size) FK_HIDDEN;
/* A copy of n bytes (dev_*: that side must lie in device memory; real memory). */
CUresult fk_copy(void *dst, const void *src, size_t n, int dev_dst, int dev_src) FK_HIDDEN;
/* 1 when [p, p + n) lies in one live device allocation (real memory). */
int fk_device_range(uintptr_t p, size_t n) FK_HIDDEN;
/* Device memory of n bytes, as cuMemAlloc_v2 gives, without its entry point. */
CUresult fk_alloc(CUdeviceptr *p, size_t n) FK_HIDDEN;
/* 1 when f is one of ktrace's checksum kernels. */
int fk_is_hash_func(CUfunction f) FK_HIDDEN;
/* A FAKECUDA_* setting: its numeric value, 0 when unset. */
unsigned long long fk_env_num(const char *name) FK_HIDDEN;
/* cuEventRecord's effect. */
CUresult fk_event_record(CUevent e) FK_HIDDEN;

/* fakegraph.c, for fakecuda.c's launches, memsets and capture queries:
 * when stream s is being captured, add the operation to its graph instead
 * of running it (1, *res set). */
int fg_capture_kernel(CUstream s, CUfunction f, const unsigned *grid, const unsigned *block, unsigned shm,
		      void **params, CUresult *res) FK_HIDDEN;
int fg_capture_memset(CUstream s, CUdeviceptr d, unsigned value, unsigned elem, size_t n, CUresult *res) FK_HIDDEN;
CUstreamCaptureStatus fg_capture_status(CUstream s) FK_HIDDEN;
/* cudaGraphSetConditional(handle, value) of a fake kernel. */
void fg_cond_set(uint64_t handle, unsigned value) FK_HIDDEN;

#endif
