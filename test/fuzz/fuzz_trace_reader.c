/* test/fuzz/fuzz_trace_reader.c: libFuzzer target for the trace reader and every
 * record decoder (format/trace_reader.c, format/ktrace_format.c).
 *
 * Input modes, by the first byte:
 *   'Z'  the rest is a decompressed record stream: the harness compresses it
 *        into a valid file (preamble + one zstd frame) so the fuzzer reaches
 *        record reassembly and the decoders without having to forge zstd;
 *   'R'  the rest is one record handed straight to every decoder;
 *   else the input is a trace file as is (preamble, zstd frames).
 * Every decoded view is read to its last byte so ASan sees any overrun.
 *
 *   make fuzz-trace
 *   mkdir -p /tmp/ktfuzz && cp -r test/fuzz/corpus/trace/. /tmp/ktfuzz/
 *   build/fuzz/fuzz_trace_reader -max_total_time=600 /tmp/ktfuzz
 *
 * Seeds in test/fuzz/corpus/trace/ were made with build/ktgen (basic, many
 * with --frame-bytes 4096, basic with --cut-at-flush 2) and by
 * test/unit/format_cli.sh's seed step; see docs/format.md.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "format/ktrace_format.h"
#include "format/replay_report.h"
#include "format/trace_reader.h"

static volatile uint8_t sink;

static void touch(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint8_t x = 0;
	for (size_t i = 0; i < n; i++)
		x ^= b[i];
	sink ^= x;
}

static void touch_str(struct ktrace_str s)
{
	touch(s.ptr, s.len);
}

static void decode_graph(const uint8_t *rec, size_t len)
{
	struct ktrace_rec_graph g;
	struct ktrace_graph_node n;
	struct ktrace_graph_edge e;
	uint32_t off = 0;

	if (ktrace_decode_graph(rec, len, &g))
		return;
	for (int i = 0; i < 1000000 && !ktrace_graph_node_next(&g, &off, &n); i++)
		touch(n.param_bytes, n.param_bytes_len);
	for (uint32_t i = 0; i < g.nedges; i++) {
		ktrace_graph_edge_get(&g, i, &e);
		sink ^= (uint8_t)(e.from ^ e.to);
	}
}

static void decode_pystack(const uint8_t *rec, size_t len)
{
	struct ktrace_rec_pystack p;
	struct ktrace_py_frame f;
	uint32_t off = 0;

	if (ktrace_decode_pystack(rec, len, &p))
		return;
	for (int i = 0; i < 1000000 && !ktrace_pystack_frame_next(&p, &off, &f); i++) {
		touch_str(f.file);
		touch_str(f.function);
	}
}

static void decode_all(const uint8_t *rec, size_t len)
{
	struct ktrace_record_prefix p;
	if (ktrace_decode_prefix(rec, len, &p))
		return;
	touch(ktrace_record_type_name(p.type), 1);
	switch (p.type) {
	case KTRACE_REC_HEADER: {
		struct ktrace_rec_header h;
		if (!ktrace_decode_header(rec, len, &h)) {
			touch_str(h.host);
			touch_str(h.cmdline);
			touch_str(h.ktrace_version);
			touch_str(h.config);
		}
		break;
	}
	case KTRACE_REC_MODULE: {
		struct ktrace_rec_module m;
		if (!ktrace_decode_module(rec, len, &m))
			touch_str(m.path);
		break;
	}
	case KTRACE_REC_MODULE_IMAGE: {
		struct ktrace_rec_module_image m;
		if (!ktrace_decode_module_image(rec, len, &m))
			touch(m.bytes, m.chunk_len);
		break;
	}
	case KTRACE_REC_KERNEL: {
		struct ktrace_rec_kernel k;
		if (ktrace_decode_kernel(rec, len, &k))
			break;
		touch_str(k.name);
		touch_str(k.demangled);
		for (uint32_t i = 0; i < k.nparams && i < 100000; i++) {
			struct ktrace_param_desc d;
			if (!ktrace_kernel_param(&k, i, &d)) {
				touch_str(d.name);
				touch_str(d.type);
			}
		}
		break;
	}
	case KTRACE_REC_LAUNCH: {
		struct ktrace_rec_launch l;
		if (ktrace_decode_launch(rec, len, &l))
			break;
		touch(l.param_bytes, l.param_bytes_len);
		for (uint32_t i = 0; i < l.nregions; i++) {
			struct ktrace_region g;
			ktrace_launch_region(&l, i, &g);
			sink ^= (uint8_t)g.post_hash;
		}
		break;
	}
	case KTRACE_REC_COUNTERS: {
		struct ktrace_rec_counters c;
		if (ktrace_decode_counters(rec, len, &c))
			break;
		for (uint32_t i = 0; i < c.ncounters; i++) {
			struct ktrace_counter k;
			ktrace_counters_get(&c, i, &k);
			touch(ktrace_counter_name(k.id), 1);
		}
		break;
	}
	case KTRACE_REC_NOTE: {
		struct ktrace_rec_note n;
		if (!ktrace_decode_note(rec, len, &n))
			touch_str(n.text);
		break;
	}
	case KTRACE_REC_GRAPH:
		decode_graph(rec, len);
		break;
	case KTRACE_REC_RANGE: {
		struct ktrace_rec_range g;
		if (!ktrace_decode_range(rec, len, &g)) {
			touch_str(g.domain);
			touch_str(g.message);
			touch_str(g.source);
		}
		break;
	}
	case KTRACE_REC_PYSTACK:
		decode_pystack(rec, len);
		break;
	case KTRACE_REC_REPLAY: {
		struct ktrace_rec_replay r;
		struct ktrace_replay_report rep;
		if (ktrace_decode_replay(rec, len, &r))
			break;
		touch(r.blob, r.blob_len);
		if (!ktrace_replay_report_parse(r.blob, r.blob_len, &rep))
			ktrace_replay_report_free(&rep);
		break;
	}
	default: {
		union {
			struct ktrace_rec_order o;
			struct ktrace_rec_gputime g;
			struct ktrace_rec_launch l;
			struct ktrace_rec_alloc a;
			struct ktrace_rec_free f;
			struct ktrace_rec_memcpy c;
			struct ktrace_rec_memset s;
			struct ktrace_rec_end e;
			struct ktrace_rec_module_unload u;
		} v;
		ktrace_decode_order(rec, len, &v.o);
		ktrace_decode_gputime(rec, len, &v.g);
		if (!ktrace_decode_carried_launch(rec, len, &v.l))
			touch(v.l.param_bytes, v.l.param_bytes_len);
		ktrace_decode_alloc(rec, len, &v.a);
		ktrace_decode_free(rec, len, &v.f);
		ktrace_decode_memcpy(rec, len, &v.c);
		ktrace_decode_memset(rec, len, &v.s);
		ktrace_decode_end(rec, len, &v.e);
		ktrace_decode_module_unload(rec, len, &v.u);
		break;
	}
	}
}

static void read_file(const uint8_t *data, size_t size)
{
	char err[512];
	struct ktrace_reader *r = ktrace_reader_open_mem(data, size, "fuzz", err, sizeof err);
	if (!r)
		return;
	const void *rec;
	size_t len;
	for (int n = 0; n < 1000000 && ktrace_reader_next(r, &rec, &len) == KTRACE_READ_RECORD; n++) {
		touch(rec, len);
		decode_all(rec, len);
	}
	touch(ktrace_reader_error(r), 1);
	ktrace_reader_close(r);
}

/* The checked-in corpus (test/fuzz/corpus_replay.c runs it in make test). */
extern const char *const fuzz_corpus[];
const char *const fuzz_corpus[] = { "test/fuzz/corpus/trace", "test/fuzz/corpus/trace-min", NULL };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size >= 1 && data[0] == 'R') {
		/* an aligned private copy, as the reader hands out */
		uint8_t *rec = malloc(size - 1 ? size - 1 : 1);
		memcpy(rec, data + 1, size - 1);
		decode_all(rec, size - 1);
		free(rec);
		return 0;
	}
	if (size >= 1 && data[0] == 'Z') {
		size_t bound = ZSTD_compressBound(size - 1);
		uint8_t *file = malloc(KTRACE_PREAMBLE_SIZE + bound);
		memset(file, 0, KTRACE_PREAMBLE_SIZE);
		memcpy(file, KTRACE_MAGIC, KTRACE_MAGIC_LEN);
		file[8] = KTRACE_FORMAT_MAJOR;
		size_t z = ZSTD_compress(file + KTRACE_PREAMBLE_SIZE, bound, data + 1, size - 1, 1);
		if (!ZSTD_isError(z))
			read_file(file, KTRACE_PREAMBLE_SIZE + z);
		free(file);
		return 0;
	}
	read_file(data, size);
	return 0;
}
