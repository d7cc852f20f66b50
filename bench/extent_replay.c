/* bench/extent_replay.c: replay a recorded trace through the hash extent
 * policy (interpose/model/alloc_map.c) without a GPU.
 *
 *   build/extent_replay [--max BYTES] TRACE > lens.jsonl
 *
 * Feeds the trace's ALLOC and FREE records to the allocation map and every
 * LAUNCH's pointer words, in record order, to ktrace_alloc_map_extents(), as
 * the launch path does.  Prints one JSON line per launch:
 *   {"launch_seq":N,"lens":[bytes per region, in record order],"capped":[0|1...]}
 * so that a policy change can be measured on real traces (for instance by
 * bench/gpu/jax_amplification.py --analyze ... --lens FILE) before it goes
 * to the GPU.  Exit 2 with one line on a bad trace.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/ktrace_format.h"
#include "format/trace_reader.h"
#include "interpose/model/alloc_map.h"

#define DEFAULT_MAX (256ull << 20)

static int replay_launch(const void *rec, size_t len, uint64_t max_bytes)
{
	struct ktrace_rec_launch l;
	uint64_t *ptrs, *lens;
	struct ktrace_alloc_info *allocs;
	uint8_t *capped, *in_struct;
	unsigned n, i;

	if (ktrace_decode_launch(rec, len, &l))
		return -1;
	n = l.nregions;
	ptrs = calloc(n + 1, sizeof(*ptrs));
	lens = calloc(n + 1, sizeof(*lens));
	allocs = calloc(n + 1, sizeof(*allocs));
	capped = calloc(n + 1, 1);
	in_struct = calloc(n + 1, 1);
	if (!ptrs || !lens || !allocs || !capped || !in_struct) {
		free(ptrs), free(lens), free(allocs), free(capped), free(in_struct);
		return -1;
	}
	for (i = 0; i < n; i++) {
		struct ktrace_region g;

		ktrace_launch_region(&l, i, &g);
		ptrs[i] = g.ptr;
		in_struct[i] = (g.flags & KTRACE_REGIONF_IN_STRUCT) != 0;
		allocs[i].base = g.alloc_base;
		allocs[i].size = g.alloc_size;
		if (!ktrace_alloc_map_lookup(g.alloc_base, &allocs[i]) || allocs[i].base != g.alloc_base) {
			/* not in the replayed map (allocated before tracing): learn it */
			ktrace_alloc_map_insert(g.alloc_base, g.alloc_size, KTRACE_ALLOC_DEVICE, 0);
			allocs[i].base = g.alloc_base;
			allocs[i].size = g.alloc_size;
			allocs[i].kind = KTRACE_ALLOC_DEVICE;
			allocs[i].device = 0;
		}
	}
	ktrace_alloc_map_extents(ptrs, allocs, in_struct, n, max_bytes, lens, capped, NULL);
	printf("{\"launch_seq\":%llu,\"lens\":[", (unsigned long long)l.launch_seq);
	for (i = 0; i < n; i++)
		printf("%s%llu", i ? "," : "", (unsigned long long)lens[i]);
	printf("],\"capped\":[");
	for (i = 0; i < n; i++)
		printf("%s%u", i ? "," : "", capped[i]);
	printf("]}\n");
	free(ptrs), free(lens), free(allocs), free(capped), free(in_struct);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t max_bytes = DEFAULT_MAX;
	struct ktrace_reader *r;
	const void *rec;
	size_t len;
	char err[512];
	enum ktrace_read_status st;
	int a = 1;

	if (argc > 3 && !strcmp(argv[1], "--max")) {
		max_bytes = strtoull(argv[2], NULL, 0);
		a = 3;
	}
	if (a != argc - 1) {
		fprintf(stderr, "usage: extent_replay [--max BYTES] TRACE\n");
		return 2;
	}
	r = ktrace_reader_open(argv[a], err, sizeof(err));
	if (!r) {
		fprintf(stderr, "extent_replay: %s\n", err);
		return 2;
	}
	while ((st = ktrace_reader_next(r, &rec, &len)) == KTRACE_READ_RECORD) {
		struct ktrace_record_prefix p;

		if (ktrace_decode_prefix(rec, len, &p))
			continue;
		if (p.type == KTRACE_REC_ALLOC) {
			struct ktrace_rec_alloc al;

			if (!ktrace_decode_alloc(rec, len, &al))
				ktrace_alloc_map_insert(al.base, al.size, al.kind, al.device);
		} else if (p.type == KTRACE_REC_FREE) {
			struct ktrace_rec_free f;
			struct ktrace_alloc_info old;

			if (!ktrace_decode_free(rec, len, &f))
				ktrace_alloc_map_remove(f.base, &old);
		} else if (p.type == KTRACE_REC_LAUNCH) {
			if (replay_launch(rec, len, max_bytes)) {
				fprintf(stderr, "extent_replay: %s: bad LAUNCH record\n", argv[a]);
				ktrace_reader_close(r);
				return 2;
			}
		}
	}
	if (st != KTRACE_READ_EOF) {
		fprintf(stderr, "extent_replay: %s\n", ktrace_reader_error(r));
		ktrace_reader_close(r);
		return 2;
	}
	ktrace_reader_close(r);
	return 0;
}
