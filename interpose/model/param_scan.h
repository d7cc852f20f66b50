/* interpose/model/param_scan.h: a launch's parameter buffer and the pointers in it.
 *
 * A kernel's parameter layout (offset and size of each parameter, from the
 * cubin or from the driver) becomes an immutable ktrace_param_layout with a
 * per-8-byte-word table, so the launch path can (1) rebuild the exact
 * parameter buffer the kernel receives from `kernelParams` or from the
 * `extra` buffer, and (2) find the pointer words in it (docs/format.md,
 * "Pointer words"): where the parameter's type told the registry which of
 * its words are pointers (ktrace_param_layout_type), exactly those, each a
 * region when not null (unhashed when it lands in no tracked allocation),
 * of multi-tensor-apply metadata only the slots the launch's grid and block
 * map say it uses (ktrace_slot_rule);
 * elsewhere every 8-byte aligned word that lies wholly inside one parameter
 * of at least 8 bytes and lands in a tracked allocation, marked
 * KTRACE_REGIONF_GUESSED.  Words inside by-value aggregates (ATen's
 * std::array<char*, N>, multi-tensor-apply metadata) are marked
 * KTRACE_REGIONF_IN_STRUCT.
 * Pure functions apart from the allocation-map queries (interpose/hash/
 * alloc_map.h); no locks, no malloc on the launch path.
 */
#ifndef KTRACE_PARAM_SCAN_H
#define KTRACE_PARAM_SCAN_H

#include <stdint.h>

#include "format/ktrace_format.h"
#include "interpose/model/alloc_map.h"

/* Largest parameter buffer a launch may carry (CUDA 12.1+: 32764 bytes). */
#define KTRACE_PARAM_MAX_BYTES 32768u
#define KTRACE_PARAM_MAX_WORDS (KTRACE_PARAM_MAX_BYTES / 8u)
#define KTRACE_PARAM_MAX_COUNT 8192u

#define KTRACE_WORD_NONE 0xffffu /* word_ordinal: not a pointer candidate */
#define KTRACE_WORDF_STRUCT 0x1u  /* word_flags: inside a by-value aggregate */
#define KTRACE_WORDF_TYPED  0x2u  /* word_flags: the parameter's type says it is a pointer */
#define KTRACE_WORDF_SLOT   0x4u  /* word_flags: a pointer only in a launch that uses its slot */
#define KTRACE_WORDF_READ_ONLY 0x8u /* word_flags: a typed pointer the kernel only reads through
                                     * (an input slot of ATen's elementwise data array;
                                     * interpose/model/read_only.h) */

/* Which tensor slots of a parameter a launch uses (multi_tensor_apply's
 * metadata, docs/hashing.md "Pointer words"): a launch of gridDim.x = g
 * blocks (1 <= g <= map_count, gridDim.y = gridDim.z = 1) uses slots 0 to
 * the unsigned integer of map_elem bytes (1 or 2, host order) at byte
 * map_offset + map_elem (g - 1) of the parameter buffer; a launch that
 * fits none of this uses every slot. */
struct ktrace_slot_rule {
	uint32_t slots;      /* tensor slots per row; 0: no rule */
	uint32_t map_offset; /* block_to_tensor, from the start of the buffer */
	uint32_t map_count;  /* its entries */
	uint32_t map_elem;   /* bytes per entry */
};

/* A parameter that is an ATen closure (interpose/model/offset_calc.h): in each
 * launch, the words of the OffsetCalculators found in its bytes are no
 * pointers, whatever their values. */
#define KTRACE_CALC_RULE_HINTS 4
struct ktrace_calc_rule {
	uint32_t offset, size; /* the parameter's bytes in the buffer; size 0: no rule */
	uint8_t nargs[KTRACE_CALC_RULE_HINTS]; /* NARGS of its k-th calculator, by the type's name; 0 unknown */
};

struct ktrace_param_layout {
	uint32_t nparams;
	uint32_t param_bytes;   /* end of the last parameter */
	uint32_t source;        /* enum ktrace_layout_source */
	uint32_t nwords;        /* ceil(param_bytes / 8) */
	uint32_t ncand;         /* words that may hold a pointer (word_ordinal != NONE) */
	const uint32_t *offset; /* [nparams] */
	const uint32_t *size;   /* [nparams] */
	const uint8_t *kind;    /* [nparams] enum ktrace_param_kind */
	const uint16_t *word_ordinal; /* [nwords]: parameter holding the word, or KTRACE_WORD_NONE */
	const uint8_t *word_flags;    /* [nwords]: KTRACE_WORDF_* */
	const uint64_t *extent; /* [nparams]: bytes a pointer parameter's kernel reaches from it, read
	                         * from its source (meta/inductor_extent.c), 0 unknown; NULL: none known */
	const uint8_t *written; /* [nparams]: enum ktrace_param_written, whether the kernel's code can
	                         * write through the parameter (meta/write_flow.h: READ_ONLY proven
	                         * from its PTX or TTIR; a READ_ONLY parameter's buffer may still be
	                         * written through another parameter pointing into it); NULL:
	                         * nothing known */
	const uint16_t *word_slot;    /* [nwords]: tensor slot of a KTRACE_WORDF_SLOT word */
	struct ktrace_slot_rule slot_rule; /* of the one parameter that has one */
	struct ktrace_calc_rule calc_rule; /* of the one parameter that has one */
	uint32_t read_only_words; /* words flagged KTRACE_WORDF_READ_ONLY */
};

/* Build a layout (one allocation, free with free()).  kinds may be NULL
 * (unknown: a parameter larger than 8 bytes counts as an aggregate).
 * Returns NULL on a parameter that ends past KTRACE_PARAM_MAX_BYTES, too many
 * parameters, or no memory. */
struct ktrace_param_layout *ktrace_param_layout_new(uint32_t nparams, const uint32_t *offsets,
						    const uint32_t *sizes, const uint8_t *kinds,
						    uint32_t source) __attribute__((visibility("hidden")));

/* What parameter i's type says, before the layout is used: its pointer
 * words are exactly `count` words from byte `offset` of the parameter for
 * each of the nruns runs (none: it holds no pointer); its other words are
 * no candidates any more.  used (NULL: none) says which of the runs' words
 * a launch uses: word k of a run is tensor slot k % used->slots, and
 * used->map_offset counts from the parameter's start.  Returns 0, or -1
 * (layout unchanged) when a run lies outside the parameter or off the
 * 8-byte grid of the buffer, or used is odd (its map outside the
 * parameter, another parameter has one). */
int ktrace_param_layout_type(struct ktrace_param_layout *l, uint32_t i, const uint32_t (*runs)[2], uint32_t nruns,
			     const struct ktrace_slot_rule *used) __attribute__((visibility("hidden")));

/* Parameter i is an ATen closure whose OffsetCalculators the scan skips
 * (struct ktrace_calc_rule), before the layout is used; nargs (NULL: none
 * known) gives KTRACE_CALC_RULE_HINTS calculators' NARGS, 0 where unknown.
 * 0, or -1 (nothing set) when i is out of range, too small to hold a
 * calculator, or another parameter has the rule. */
int ktrace_param_layout_calc(struct ktrace_param_layout *l, uint32_t i, const uint8_t *nargs)
	__attribute__((visibility("hidden")));

/* The typed pointer words of parameter i from its word `first` on are
 * pointers the kernel only reads through (KTRACE_WORDF_READ_ONLY), before
 * the layout is used.  Returns the words flagged, or -1 (nothing set) when
 * i is out of range or holds no typed word from there. */
int ktrace_param_layout_read_only_words(struct ktrace_param_layout *l, uint32_t i, uint32_t first)
	__attribute__((visibility("hidden")));

/* Parameter i, a pointer, is one from which the kernel reaches `bytes` bytes
 * (its source says so), before the layout is used.  0, or -1 (nothing set)
 * for another kind of parameter or 0 bytes. */
int ktrace_param_layout_extent(struct ktrace_param_layout *l, uint32_t i, uint64_t bytes)
	__attribute__((visibility("hidden")));

/* Parameter i's enum ktrace_param_written, from the kernel's metadata,
 * before the layout is used.  0, or -1 (nothing set) when i is out of range.
 * A READ_ONLY parameter's regions may skip their post-hash
 * (interpose/model/read_only.h). */
int ktrace_param_layout_written(struct ktrace_param_layout *l, uint32_t i, uint8_t written)
	__attribute__((visibility("hidden")));

/* Do two layouts describe the same offsets and sizes? */
int ktrace_param_layout_same(const struct ktrace_param_layout *a, const struct ktrace_param_layout *b)
	__attribute__((visibility("hidden")));

/* Copy the parameter buffer of one launch into buf (cap bytes, a multiple of
 * 8, >= 8).  kernel_params[i] is copied at offset_i with size_i; else the
 * `extra` array's CU_LAUNCH_PARAM_BUFFER_POINTER/SIZE buffer is copied
 * (layout may then be NULL).  Bytes between parameters are zero.  Returns the
 * buffer length; *flags gets KTRACE_LAUNCHF_EXTRA and/or
 * KTRACE_LAUNCHF_PARAMS_TRUNCATED (layout unknown with kernelParams, or a
 * buffer larger than cap). */
uint32_t ktrace_params_assemble(const struct ktrace_param_layout *l, void **kernel_params, void **extra,
				uint8_t *buf, uint32_t cap, uint32_t *flags) __attribute__((visibility("hidden")));

/* A per-thread cache of allocation-map answers: the slot of a 2 MiB block
 * (hashed block number) holds the last allocation found in that block, valid
 * while the map's generation is unchanged.  Multi-tensor launches carry hundreds of pointers
 * into the same few hundred allocations launch after launch; with the cache
 * they cost a compare each instead of a map search. */
#define KTRACE_ALLOC_CACHE_SLOTS 1024u /* power of two */
struct ktrace_alloc_cache_slot {
	uint64_t base, size, gen;
	uint32_t kind;
	int32_t device;
};
struct ktrace_alloc_cache {
	struct ktrace_alloc_cache_slot slot[KTRACE_ALLOC_CACHE_SLOTS];
};

/* Every change of the allocation map (insert, remove, reset) must be
 * followed by this (memory_events.c does it): cached answers become void. */
void ktrace_alloc_cache_invalidate(void) __attribute__((visibility("hidden")));

/* Find the pointer words of buf[0, len), the parameters of a launch of
 * grid[3] blocks (NULL: unknown).  With a layout only candidate words are
 * looked at (words beyond the layout are ignored), and of a slot rule's
 * words only those of the slots the launch uses: a typed word that is not
 * null is a region, unhashed (alloc 0, flag UNHASHED) when it lands in no
 * tracked allocation; any other candidate is a region, flagged GUESSED,
 * when it lands in a tracked allocation, unless it lies in an OffsetCalculator
 * of the layout's calc rule.  Without a layout, every aligned
 * word (ordinal 0xffff) is judged so.  Fills out[i] (param_offset, ordinal,
 * flags IN_STRUCT / GUESSED / UNHASHED, ptr, alloc_base, alloc_size; hash
 * fields 0) and allocs[i]; returns the count (at most max).  cache may be
 * NULL. */
uint32_t ktrace_params_scan(const struct ktrace_param_layout *l, const uint8_t *buf, uint32_t len,
			    const uint32_t *grid, struct ktrace_region *out, struct ktrace_alloc_info *allocs,
			    uint32_t max, struct ktrace_alloc_cache *cache) __attribute__((visibility("hidden")));

/* The same scan against a held allocation-map snapshot (alloc_map.h) instead
 * of the current map: the writer thread's scan of a launch that happened
 * earlier (interpose/capture/launch_expand.c).  Gives the regions ktrace_params_scan()
 * gave at the time the snapshot was current.  snap may be NULL (no
 * allocations); cache entries are keyed by the snapshot's generation. */
uint32_t ktrace_params_scan_snap(const struct ktrace_param_layout *l, const uint8_t *buf, uint32_t len,
				 const uint32_t *grid, struct ktrace_region *out, uint32_t max,
				 const struct ktrace_alloc_snap *snap, struct ktrace_alloc_cache *cache)
	__attribute__((visibility("hidden")));

/* A layout of at most KTRACE_SMALL_PARAMS parameters, copied into the
 * launching thread's kernel-cache line (kernel_cache.h) so that a launch of a
 * small kernel (most of them: fills, elementwise ops, Triton kernels)
 * assembles its parameters without touching the layout itself. */
#define KTRACE_SMALL_PARAMS 8
struct ktrace_small_layout {
	uint32_t param_bytes;
	uint8_t valid;          /* 1: off/size below describe every parameter */
	uint8_t n;
	uint16_t reserved;
	uint16_t off[KTRACE_SMALL_PARAMS], size[KTRACE_SMALL_PARAMS];
};
/* Fill s from l (valid only when l has at most KTRACE_SMALL_PARAMS parameters). */
void ktrace_small_layout_set(struct ktrace_small_layout *s, const struct ktrace_param_layout *l)
	__attribute__((visibility("hidden")));
/* ktrace_params_assemble() for kernelParams with a valid small layout: the
 * same bytes, s->param_bytes of them (at most KTRACE_PARAM_MAX_BYTES). */
uint32_t ktrace_params_assemble_small(const struct ktrace_small_layout *s, void **kernel_params, uint8_t *buf)
	__attribute__((visibility("hidden")));

/* The number of bytes ktrace_params_assemble() writes for these arguments
 * (at most cap), and in *flags the flags it gives them: what a record
 * needs before its parameters are assembled in place. */
uint32_t ktrace_params_length(const struct ktrace_param_layout *l, void **kernel_params, void **extra,
			      uint32_t cap, uint32_t *flags) __attribute__((visibility("hidden")));

#endif
