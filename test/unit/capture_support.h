/* test/unit/capture_support.h: a scripted fake driver and trace round-trips
 * for the capture tests (registry, launch capture, memory events).
 *
 * Defines the real-driver table and the services table the capture objects
 * use (the tracer state is model/tracer.c's), fills ktrace_real with fake
 * functions whose answers each test sets,
 * and opens a real trace writer on a temporary file whose records the test
 * reads back with the real reader.
 */
#ifndef KTRACE_TEST_CAPTURE_SUPPORT_H
#define KTRACE_TEST_CAPTURE_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

#include "format/ktrace_format.h"

/* One function the fake driver knows. */
struct fake_func {
	uint64_t handle;
	int is_kernel;      /* answers cuKernelGet* (1) or cuFuncGet* (0) */
	const char *name;   /* NULL: GetName fails */
	uint32_t nparams;   /* (uint32_t)-1: GetParamInfo fails with INVALID_HANDLE */
	uint32_t offset[16], size[16];
};

void fake_driver_reset(void);
void fake_driver_add(const struct fake_func *f);
/* Calls made to the fake's name / param-info functions so far. */
unsigned long fake_driver_calls(void);
/* Calls made to the fake's cuCtxGetDevice so far. */
unsigned long fake_driver_device_calls(void);
/* Current context and its device (NULL: no context). */
void fake_driver_set_context(CUcontext c, int dev, int sm);

/* Start tracing to a new temporary file with the given settings. */
void trace_begin(int hash, int store_modules);
/* Stop (drain the worker, close the writer) and load every record. */
void trace_end(void);

/* Records loaded by trace_end(). */
struct loaded_rec {
	uint16_t type;
	const uint8_t *data;
	size_t len;
};
extern struct loaded_rec *trace_recs;
extern size_t trace_nrecs;
size_t trace_count(uint16_t type);
/* i-th record of a type (NULL if fewer). */
const struct loaded_rec *trace_nth(uint16_t type, size_t i);
/* The KERNEL record of a kernel id (decoded into *out), 0 if found. */
int trace_kernel(uint64_t kernel_id, struct ktrace_rec_kernel *out);
/* A counter's value in the last COUNTERS record (0 if absent). */
uint64_t trace_counter(uint32_t id);
/* "name" of a str view as a NUL-terminated static buffer. */
const char *kstr_c(struct ktrace_str s);

/* Path of a file built for the tests (under $BUILD, default "build"). */
const char *build_path(const char *rel);
/* Read a whole file (malloc'd); NULL if unreadable. */
void *read_whole(const char *path, size_t *len);

#endif
