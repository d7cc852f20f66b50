/* tools/model/alloc_intern.h: values a trace's records repeat, each kept
 * once per trace (alloc_intern.c): a region holds the number of its extent
 * (its pointer, the bytes hashed from it and its allocation's base and
 * size), a launch the number of its look (its kernel, where it ran and its
 * shape: context, stream, thread, device, result, grid, block, shared
 * memory), not the fields themselves.
 */
#ifndef KTRACE_TOOLS_MODEL_ALLOC_INTERN_H
#define KTRACE_TOOLS_MODEL_ALLOC_INTERN_H

#include <stddef.h>
#include <stdint.h>

/* A region's allocation: base 0 and size 0 when it is not known. */
struct tm_alloc {
	uint64_t base, size;
};

/* Where a region lies: its pointer, the bytes hashed from it (hash_len) and
 * its allocation.  The buffers of a program's launches repeat (the same
 * tensors launch after launch), so a trace holds few.  No padding: kept and
 * compared as bytes. */
struct tm_extent {
	uint64_t ptr, hash_len;
	struct tm_alloc alloc;
};

/* A region's extent when none was recorded (number 0): all zeros. */
extern const struct tm_extent ktrace_tm_no_extent;

/* A launch's shape: all zeros when none was recorded.  No padding: kept
 * and compared as bytes. */
struct tm_shape {
	uint32_t grid[3], block[3];
	uint32_t shared_mem;
};

struct tm_kernel;

/* What a launch's record shares with many others: its kernel, where it ran,
 * what the launch call returned, the API that made it, why it was not
 * hashed, its shape and how many regions and parameter bytes it has (a few
 * kernels on a few streams of a few threads make most of a trace's
 * launches, and a kernel's launches mostly have the same parameter buffer
 * and pointers).  No padding: kept and compared as bytes. */
struct tm_launch_look {
	union {
		const struct tm_kernel *kernel; /* never NULL after loading; its id is the record's kernel_id */
		uint64_t loading_kernel_id;     /* while loading only: the record's kernel_id */
	};
	uint64_t context, stream;
	uint32_t tid;
	int32_t device;
	int32_t result;
	uint32_t api;       /* enum ktrace_api */
	uint32_t hash_skip; /* enum ktrace_hash_skip (format 1.3; 0 before) */
	struct tm_shape shape;
	uint32_t nregions;        /* the launch's regions (tm_launch.regions) */
	uint32_t param_bytes_len; /* its parameter bytes (ktrace_tm_param_bytes) */
	uint32_t params_patched;  /* 1: its piece is another trace's, whose parameter bytes are
	                           * its own but for its pointers (ktrace_tm_params) */
	uint32_t unused;          /* 0 */
};

/* The table being filled while a trace loads: values of `size` bytes
 * (*items, *nitems of them, the trace's array: pass its address) and an
 * open-addressing index over them. */
struct tm_intern {
	void *items;     /* the address of the trace's array pointer (struct tm_extent **, ...) */
	size_t *nitems, cap_items, size;
	uint32_t *slots; /* 1 + the value's index; 0: empty */
	size_t nslots;   /* a power of two, or 0 */
	size_t nfilled;  /* slots not empty: one per value, and one per value replaced since the
	                  * index was last made (ktrace_intern_replace) */
};

/* The number of value v (`in->size` bytes: 1 + its index in the array; 0
 * for all zero bytes), adding it when it is new; 0 with *oom set when
 * memory runs out. */
uint32_t ktrace_intern(struct tm_intern *in, const void *v, int *oom);

/* The number of value v (not all zero bytes), or 0 when it is not in the table. */
uint32_t ktrace_intern_find(const struct tm_intern *in, const void *v);

/* Value `number` becomes v (not all zero bytes, not in the table): 0, or
 * -1 when memory runs out (the table unchanged). */
int ktrace_intern_replace(struct tm_intern *in, uint32_t number, const void *v);

/* Free the index (the values are the trace's). */
void ktrace_intern_free(struct tm_intern *in);

#endif
