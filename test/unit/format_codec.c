/* test/unit/format_codec.c: record encode/decode (format/ktrace_format.c).
 *
 * Round trip of every record type, the documented byte offsets, LAUNCH
 * records assembled in place and carried under an internal type, size
 * queries, every truncated prefix rejected (exact-size heap copies so ASan
 * sees any overread), type confusion, hostile counts and random records.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "format/ktrace_format.h"

#define S(x) { x, (uint16_t)(sizeof(x) - 1) }

static uint64_t rd(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static void assert_str(struct ktrace_str got, const char *want)
{
	assert_int_equal(got.len, strlen(want));
	assert_memory_equal(got.ptr, want, got.len);
}

/* Every encoding in the suite, made on demand. */
enum { N_KINDS = 22 };
static const struct ktrace_param_desc params[] = {
	{ 0, KTRACE_PARAM_POINTER, KTRACE_NAME_DWARF, 0, 8, KTRACE_PARAMF_CONST, S("in"), S("const float*"),
	  KTRACE_WRITTEN_READ_ONLY, KTRACE_WRITTEN_SRC_PTX },
	{ 1, KTRACE_PARAM_SCALAR, KTRACE_NAME_PTX, 8, 4, 0, S("n"), S("i32"), 0, 0 },
	{ 2, KTRACE_PARAM_STRUCT, KTRACE_NAME_NONE, 16, 24, KTRACE_PARAMF_HIDDEN, S(""), S(""),
	  KTRACE_WRITTEN_WRITTEN, KTRACE_WRITTEN_SRC_TTIR },
};
static const uint8_t pbytes[40] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 };
static const struct ktrace_region regions[2] = {
	{ 0, 0, KTRACE_REGIONF_PRE | KTRACE_REGIONF_POST, 0x7f00aa, 0x7f0000, 1 << 20, 4096, 0x1122334455667788ull,
	  0x8877665544332211ull, 0 },
	{ 16, 2, KTRACE_REGIONF_IN_STRUCT | KTRACE_REGIONF_UNHASHED | KTRACE_REGIONF_GUESSED, 0x7f10, 0, 0, 0, 0, 0, 0 },
};
static const struct ktrace_counter ctrs[3] = { { KTRACE_CTR_RECORDS_DROPPED, 0, 5 },
					      { KTRACE_CTR_BYTES_DROPPED, 0, 1 << 20 },
					      { 63, 0, UINT64_MAX } };
static const uint8_t image[13] = { 0x7f, 'E', 'L', 'F', 1, 2, 3, 4, 5, 6, 7, 8, 9 };

/* A graph of a kernel node (in a child graph), a memcpy and a memset node,
 * and a conditional node. */
static const struct ktrace_graph_node gnodes[] = {
	{ .kind = KTRACE_GNODE_CHILD, .handle = 0xc0, .parent = KTRACE_GRAPH_NO_PARENT, .child_graph_id = 12 },
	{ .kind = KTRACE_GNODE_KERNEL, .flags = KTRACE_GNODEF_RECORDED | KTRACE_GNODEF_HASHED, .handle = 0xc1,
	  .parent = 0, .kernel_id = 9, .grid = { 1, 2, 3 }, .block = { 4, 5, 6 }, .cluster = { 0, 0, 0 },
	  .shared_mem = 64, .param_bytes_len = 13, .param_bytes = pbytes },
	{ .kind = KTRACE_GNODE_MEMCPY, .flags = KTRACE_GNODEF_RECORDED, .handle = 0xc2,
	  .parent = KTRACE_GRAPH_NO_PARENT, .dst = 0xd0, .src = 0x50, .bytes = 4096, .dir = KTRACE_COPY_DTOD },
	{ .kind = KTRACE_GNODE_MEMSET, .flags = KTRACE_GNODEF_RECORDED, .handle = 0xc3,
	  .parent = KTRACE_GRAPH_NO_PARENT, .dst = 0xd8, .value = 0x7f, .count = 100, .elem_size = 4,
	  .copy_flags = KTRACE_COPYF_2D },
	{ .kind = KTRACE_GNODE_CONDITIONAL, .handle = 0xc4, .parent = KTRACE_GRAPH_NO_PARENT, .cond_handle = 0xc0de01,
	  .cond_type = KTRACE_COND_WHILE, .cond_size = 1, .cond_default = 1,
	  .cond_flags = KTRACE_CONDF_ASSIGN_DEFAULT | KTRACE_CONDF_DEFAULT_KNOWN },
};
static const struct ktrace_graph_edge gedges[] = { { 1, 2 }, { 2, 3 }, { 1, 4 } };
static const struct ktrace_graph_ref gref = { .exec_id = 3, .graph_id = 2, .launch = 17, .launch_seq = 400, .node = 1,
					      .revision = 5 };

static size_t encode_graph_kind(int kind, void *buf, size_t cap)
{
	switch (kind) {
	case 13: {
		struct ktrace_rec_graph g = { .exec_id = 3, .graph_id = 2, .context = 0xc7, .revision = 5,
					      .cause = KTRACE_GRAPH_NODE_UPDATE, .nnodes = 5, .nedges = 3,
					      .flags = KTRACE_GRAPHF_HASHED, .untraced = KTRACE_GRAPH_UNTRACED_CONDITIONAL,
					      .instantiate_flags = 8, .tid = 99, .device = 1, .nodes = gnodes,
					      .edges = gedges };
		return ktrace_encode_graph(buf, cap, &g);
	}
	case 14: {
		struct ktrace_rec_launch l = { 401, 9, 0xc7, 0x57, 1234, 0, KTRACE_API_GRAPH,
					       KTRACE_LAUNCHF_HASHED | KTRACE_LAUNCHF_GRAPH, { 1, 2, 3 }, { 4, 5, 6 },
					       { 0, 0, 0 }, 64, 0, 13, 2, pbytes, NULL, 0, gref, { 0 }, NULL };
		return ktrace_encode_launch(buf, cap, &l, regions);
	}
	case 15: {
		struct ktrace_rec_memcpy m = { 402, 0xd0, 0x50, 4096, 0x57, 0xc7, 0, KTRACE_COPY_DTOD,
					       KTRACE_COPYF_ASYNC | KTRACE_COPYF_GRAPH, 99, 0, 0, 0, gref, { 0 } };
		return ktrace_encode_memcpy(buf, cap, &m);
	}
	default: {
		struct ktrace_rec_memset m = { 403, 0xd8, 100, 0x7f, 0x57, 0xc7, 4,
					       KTRACE_COPYF_ASYNC | KTRACE_COPYF_2D | KTRACE_COPYF_GRAPH, 99, 0, gref, { 0 } };
		return ktrace_encode_memset(buf, cap, &m);
	}
	}
}

/* Format 1.9: RANGE, PYSTACK and the range reference on launches, copies
 * and memsets (kinds 17 to 21). */
static const struct ktrace_range_ref rref = { 7, KTRACE_FWSEQ_BACKWARD, KTRACE_RANGEREF_GRAPH_NODE, 0x123456789ull };
static const struct ktrace_py_frame pyframes[] = {
	{ 42, S("model.py"), S("Net.forward") },
	{ 7, S("train.py"), S("<module>") },
};

static size_t encode_range_kind(int kind, void *buf, size_t cap)
{
	switch (kind) {
	case 17: {
		struct ktrace_rec_range r = { 7, 3, KTRACE_RANGE_PUSH, KTRACE_RANGEF_FW_SEQ, 2, S("TSL"),
					      S("aten::upsample_bilinear2d"),
					      S("\n- train.py:42[forward] add\n") };
		return ktrace_encode_range(buf, cap, &r);
	}
	case 18: {
		struct ktrace_rec_pystack r = { 501, 0x123456789ull, 4242, KTRACE_PYSTACK_FORWARD_OP, 2, pyframes,
						NULL, 0 };
		return ktrace_encode_pystack(buf, cap, &r);
	}
	case 19: {
		struct ktrace_rec_launch l = { 42, 9, 0xc7, 0x57, 1234, -1, KTRACE_API_LAUNCH_KERNEL,
					       KTRACE_LAUNCHF_RANGE, { 1, 2, 3 }, { 4, 5, 6 }, { 0, 0, 0 }, 0, 0, 37, 2,
					       pbytes, NULL, 0, { 0 }, rref, NULL };
		return ktrace_encode_launch(buf, cap, &l, regions);
	}
	case 20: {
		struct ktrace_rec_launch l = { 401, 9, 0xc7, 0x57, 1234, 0, KTRACE_API_GRAPH,
					       KTRACE_LAUNCHF_GRAPH | KTRACE_LAUNCHF_RANGE, { 1, 2, 3 }, { 4, 5, 6 },
					       { 0, 0, 0 }, 64, 0, 13, 2, pbytes, NULL, 0, gref, rref, NULL };
		return ktrace_encode_launch(buf, cap, &l, regions);
	}
	default: {
		struct ktrace_rec_memset m = { 403, 0xd8, 100, 0x7f, 0x57, 0xc7, 4,
					       KTRACE_COPYF_ASYNC | KTRACE_COPYF_GRAPH | KTRACE_COPYF_RANGE, 99, 0, gref,
					       rref };
		return ktrace_encode_memset(buf, cap, &m);
	}
	}
}

static size_t encode_kind(int kind, void *buf, size_t cap)
{
	if (kind >= 17)
		return encode_range_kind(kind, buf, cap);
	switch (kind) {
	case 0: {
		struct ktrace_rec_header h = { 11, 22, 3, 1, 1700000000000000001ull, 99, S("host-a"), S("a b c"),
					       S("0.1.0"), S("K=V") };
		return ktrace_encode_header(buf, cap, &h);
	}
	case 1: {
		struct ktrace_rec_module m = { 7, 0xdead, 0xfeedfacecafebeefull, 12345, KTRACE_MODULE_FATBIN,
					       KTRACE_MODSRC_LIBRARY_LOAD_FILE, S("/lib/x.so") };
		return ktrace_encode_module(buf, cap, &m);
	}
	case 2: {
		struct ktrace_rec_module_image m = { 0xabc, 100, 50, sizeof image, image };
		return ktrace_encode_module_image(buf, cap, &m);
	}
	case 3: {
		struct ktrace_rec_kernel k = { .kernel_id = 9, .module_id = 7, .handle = 0xf00, .layout_source = 1,
					       .param_bytes = 40, .nparams = 3, .name = S("_Z1kPKfi"),
					       .demangled = S("k(float const*, int)") };
		return ktrace_encode_kernel(buf, cap, &k, params);
	}
	case 4: {
		struct ktrace_rec_launch l = { 42, 9, 0xc7, 0x57, 1234, -1, KTRACE_API_LAUNCH_KERNEL_EX,
					       KTRACE_LAUNCHF_HASHED | KTRACE_LAUNCHF_PTSZ, { 1, 2, 3 }, { 4, 5, 6 },
					       { 7, 8, 9 }, 4096, -3, 37, 2, pbytes, NULL, KTRACE_HASH_SKIP_NOSLOT, { 0 }, { 0 },
					       NULL };
		return ktrace_encode_launch(buf, cap, &l, regions);
	}
	case 5: {
		struct ktrace_rec_alloc a = { 0x7f0000, 1 << 20, 0x57, 2, KTRACE_ALLOC_MANAGED };
		return ktrace_encode_alloc(buf, cap, &a);
	}
	case 6: {
		struct ktrace_rec_free f = { 0x7f0000, 1 << 20, 0x57, KTRACE_ALLOC_VMM, 0 };
		return ktrace_encode_free(buf, cap, &f);
	}
	case 7: {
		struct ktrace_rec_memcpy m = { 5, 0xd, 0x5, 77, 0x57, 0xc7, 0x1234, KTRACE_COPY_PEER, 3, 99, -2,
					       0xfeedf00d, KTRACE_DST_DIGEST_HOST, { 0 }, { 0 } };
		return ktrace_encode_memcpy(buf, cap, &m);
	}
	case 8: {
		struct ktrace_rec_memset m = { 6, 0xd, 1000, 0xabcd, 0x57, 0xc7, 2, 1, 99, 0, { 0 }, { 0 } };
		return ktrace_encode_memset(buf, cap, &m);
	}
	case 9: {
		struct ktrace_rec_note n = { KTRACE_NOTE_DISABLED, 17, S("hashing disabled: no kernel image") };
		return ktrace_encode_note(buf, cap, &n);
	}
	case 10:
		return ktrace_encode_counters(buf, cap, ctrs, 3);
	case 11: {
		struct ktrace_rec_end e = { KTRACE_END_SIGNAL, 11, 1000, 500 };
		return ktrace_encode_end(buf, cap, &e);
	}
	case 12: {
		struct ktrace_rec_module_unload u = { 7 };
		return ktrace_encode_module_unload(buf, cap, &u);
	}
	default:
		return encode_graph_kind(kind, buf, cap);
	}
}

static uint8_t *make(int kind, size_t *len)
{
	size_t n = encode_kind(kind, NULL, 0);
	assert_true(n >= KTRACE_RECORD_PREFIX_SIZE);
	assert_int_equal(n % 8, 0);
	uint8_t *b = malloc(n);
	assert_non_null(b);
	assert_int_equal(encode_kind(kind, b, n), n);
	*len = n;
	return b;
}

/* A GRAPH record and every node of it; 0 on success. */
static int decode_graph_nodes(const uint8_t *rec, size_t len, struct ktrace_rec_graph *g)
{
	struct ktrace_graph_node n;
	uint32_t off = 0;

	if (ktrace_decode_graph(rec, len, g))
		return -1;
	for (uint32_t i = 0; i < g->nnodes; i++)
		if (ktrace_graph_node_next(g, &off, &n))
			return -1;
	return 0;
}

/* Decode with the decoder for its type; 0 on success. */
static int decode_any(const uint8_t *rec, size_t len)
{
	struct ktrace_record_prefix p;
	if (ktrace_decode_prefix(rec, len, &p))
		return -1;
	union {
		struct ktrace_rec_header h;
		struct ktrace_rec_module m;
		struct ktrace_rec_module_image mi;
		struct ktrace_rec_kernel k;
		struct ktrace_rec_launch l;
		struct ktrace_rec_alloc a;
		struct ktrace_rec_free f;
		struct ktrace_rec_memcpy mc;
		struct ktrace_rec_memset ms;
		struct ktrace_rec_note n;
		struct ktrace_rec_counters c;
		struct ktrace_rec_end e;
		struct ktrace_rec_module_unload u;
		struct ktrace_rec_graph g;
		struct ktrace_rec_range r;
		struct ktrace_rec_pystack py;
	} v;
	switch (p.type) {
	case KTRACE_REC_HEADER: return ktrace_decode_header(rec, len, &v.h);
	case KTRACE_REC_MODULE: return ktrace_decode_module(rec, len, &v.m);
	case KTRACE_REC_MODULE_IMAGE: return ktrace_decode_module_image(rec, len, &v.mi);
	case KTRACE_REC_KERNEL: return ktrace_decode_kernel(rec, len, &v.k);
	case KTRACE_REC_LAUNCH: return ktrace_decode_launch(rec, len, &v.l);
	case KTRACE_REC_ALLOC: return ktrace_decode_alloc(rec, len, &v.a);
	case KTRACE_REC_FREE: return ktrace_decode_free(rec, len, &v.f);
	case KTRACE_REC_MEMCPY: return ktrace_decode_memcpy(rec, len, &v.mc);
	case KTRACE_REC_MEMSET: return ktrace_decode_memset(rec, len, &v.ms);
	case KTRACE_REC_NOTE: return ktrace_decode_note(rec, len, &v.n);
	case KTRACE_REC_COUNTERS: return ktrace_decode_counters(rec, len, &v.c);
	case KTRACE_REC_END: return ktrace_decode_end(rec, len, &v.e);
	case KTRACE_REC_MODULE_UNLOAD: return ktrace_decode_module_unload(rec, len, &v.u);
	case KTRACE_REC_GRAPH: return decode_graph_nodes(rec, len, &v.g);
	case KTRACE_REC_RANGE: return ktrace_decode_range(rec, len, &v.r);
	case KTRACE_REC_PYSTACK: return ktrace_decode_pystack(rec, len, &v.py);
	default: return -1;
	}
}

/* Round trip: HEADER, MODULE, MODULE_IMAGE. */
static void test_round_trip_process(void **state)
{
	(void)state;
	size_t n;
	uint8_t *b;

	b = make(0, &n);
	struct ktrace_rec_header h;
	assert_int_equal(ktrace_decode_header(b, n, &h), 0);
	assert_int_equal(h.pid, 11);
	assert_int_equal(h.ppid, 22);
	assert_int_equal(h.rank, 3);
	assert_int_equal(h.digest_alg, 1);
	assert_true(h.start_realtime_ns == 1700000000000000001ull);
	assert_int_equal(h.start_monotonic_ns, 99);
	assert_str(h.host, "host-a");
	assert_str(h.cmdline, "a b c");
	assert_str(h.ktrace_version, "0.1.0");
	assert_str(h.config, "K=V");
	free(b);

	b = make(1, &n);
	struct ktrace_rec_module m;
	assert_int_equal(ktrace_decode_module(b, n, &m), 0);
	assert_int_equal(m.module_id, 7);
	assert_int_equal(m.handle, 0xdead);
	assert_true(m.image_digest == 0xfeedfacecafebeefull);
	assert_int_equal(m.image_size, 12345);
	assert_int_equal(m.kind, KTRACE_MODULE_FATBIN);
	assert_int_equal(m.source, KTRACE_MODSRC_LIBRARY_LOAD_FILE);
	assert_str(m.path, "/lib/x.so");
	free(b);

	b = make(2, &n);
	struct ktrace_rec_module_image mi;
	assert_int_equal(ktrace_decode_module_image(b, n, &mi), 0);
	assert_int_equal(mi.image_digest, 0xabc);
	assert_int_equal(mi.image_size, 100);
	assert_int_equal(mi.chunk_offset, 50);
	assert_int_equal(mi.chunk_len, sizeof image);
	assert_memory_equal(mi.bytes, image, sizeof image);
	free(b);
}

/* Round trip: KERNEL and its parameter table. */
static void test_round_trip_kernel(void **state)
{
	(void)state;
	size_t n;
	uint8_t *b;

	b = make(3, &n);
	struct ktrace_rec_kernel k;
	assert_int_equal(ktrace_decode_kernel(b, n, &k), 0);
	assert_int_equal(k.kernel_id, 9);
	assert_int_equal(k.module_id, 7);
	assert_int_equal(k.handle, 0xf00);
	assert_int_equal(k.layout_source, 1);
	assert_int_equal(k.param_bytes, 40);
	assert_int_equal(k.nparams, 3);
	assert_str(k.name, "_Z1kPKfi");
	assert_str(k.demangled, "k(float const*, int)");
	for (uint32_t i = 0; i < 3; i++) {
		struct ktrace_param_desc d;
		assert_int_equal(ktrace_kernel_param(&k, i, &d), 0);
		assert_int_equal(d.ordinal, params[i].ordinal);
		assert_int_equal(d.kind, params[i].kind);
		assert_int_equal(d.name_source, params[i].name_source);
		assert_int_equal(d.offset, params[i].offset);
		assert_int_equal(d.size, params[i].size);
		assert_int_equal(d.flags, params[i].flags);
		assert_int_equal(d.written, params[i].written);
		assert_int_equal(d.written_source, params[i].written_source);
		assert_int_equal(d.name.len, params[i].name.len);
		assert_memory_equal(d.name.ptr, params[i].name.ptr, d.name.len);
		assert_int_equal(d.type.len, params[i].type.len);
		assert_memory_equal(d.type.ptr, params[i].type.ptr, d.type.len);
	}
	struct ktrace_param_desc d;
	assert_int_equal(ktrace_kernel_param(&k, 3, &d), -1);
	free(b);
}

/* Round trip: LAUNCH, its regions and parameter bytes. */
static void test_round_trip_launch(void **state)
{
	(void)state;
	size_t n;
	uint8_t *b;

	b = make(4, &n);
	struct ktrace_rec_launch l;
	assert_int_equal(ktrace_decode_launch(b, n, &l), 0);
	assert_int_equal(l.launch_seq, 42);
	assert_int_equal(l.kernel_id, 9);
	assert_int_equal(l.context, 0xc7);
	assert_int_equal(l.stream, 0x57);
	assert_int_equal(l.tid, 1234);
	assert_int_equal(l.device, -1);
	assert_int_equal(l.api, KTRACE_API_LAUNCH_KERNEL_EX);
	assert_int_equal(l.flags, KTRACE_LAUNCHF_HASHED | KTRACE_LAUNCHF_PTSZ);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(l.grid[i], 1 + i);
		assert_int_equal(l.block[i], 4 + i);
		assert_int_equal(l.cluster[i], 7 + i);
	}
	assert_int_equal(l.shared_mem, 4096);
	assert_int_equal(l.result, -3);
	assert_int_equal(l.param_bytes_len, 37);
	assert_memory_equal(l.param_bytes, pbytes, 37);
	assert_int_equal(l.nregions, 2);
	assert_int_equal(l.hash_skip, KTRACE_HASH_SKIP_NOSLOT); /* since 1.3, at offset 124 */
	assert_int_equal(b[124], KTRACE_HASH_SKIP_NOSLOT);
	for (uint32_t i = 0; i < 2; i++) {
		struct ktrace_region g;
		ktrace_launch_region(&l, i, &g);
		assert_memory_equal(&g, &regions[i], sizeof g);
	}
	free(b);
}

/* Since 1.14: a LAUNCH with carried pre-digests ends with the carry table,
 * after the range reference; a region's pre_from comes back with flag
 * PRE_CARRIED only; a record cut inside the table is refused. */
static void test_round_trip_carried(void **state)
{
	struct ktrace_region g[2] = { regions[0], regions[1] }, out;
	struct ktrace_rec_launch l = { 0 }, d;
	uint8_t buf[512];
	size_t n;

	(void)state;
	g[0].flags |= KTRACE_REGIONF_PRE_CARRIED;
	g[0].pre_from = 41;
	g[1].pre_from = 99; /* no flag: not written */
	l.launch_seq = 42;
	l.flags = KTRACE_LAUNCHF_HASHED | KTRACE_LAUNCHF_CARRIED | KTRACE_LAUNCHF_RANGE;
	l.nregions = 2;
	l.param_bytes = pbytes;
	l.param_bytes_len = 37;
	l.range = rref;
	l.range.range = 7;
	n = ktrace_encode_launch(buf, sizeof buf, &l, g);
	assert_int_equal(n, ktrace_launch_size(2, 37) + KTRACE_RANGE_REF_DISK_SIZE + 16);
	assert_int_equal(ktrace_decode_launch(buf, n, &d), 0);
	assert_non_null(d.carry_raw);
	assert_int_equal(d.range.range, 7);
	ktrace_launch_region(&d, 0, &out);
	assert_int_equal(out.pre_from, 41);
	ktrace_launch_region(&d, 1, &out);
	assert_int_equal(out.pre_from, 0);
	assert_int_equal(buf[n - 8], 0); /* the second region's entry: 0 */
	assert_int_equal(buf[n - 16], 41);
	/* the size says the table is cut: corrupt */
	memset(buf + 4, 0, 4);
	buf[4] = (uint8_t)(n - 8);
	assert_int_not_equal(ktrace_decode_launch(buf, n - 8, &d), 0);
	/* the deferred head cannot carry it */
	assert_null(ktrace_encode_launch_head(buf, n, KTRACE_REC_LAUNCH, &l, g));
}

/* Round trip: ALLOC, FREE, MEMCPY, MEMSET. */
static void test_round_trip_memory(void **state)
{
	(void)state;
	size_t n;
	uint8_t *b;

	b = make(5, &n);
	struct ktrace_rec_alloc a;
	assert_int_equal(ktrace_decode_alloc(b, n, &a), 0);
	assert_int_equal(a.base, 0x7f0000);
	assert_int_equal(a.size, 1 << 20);
	assert_int_equal(a.stream, 0x57);
	assert_int_equal(a.device, 2);
	assert_int_equal(a.kind, KTRACE_ALLOC_MANAGED);
	free(b);

	b = make(6, &n);
	struct ktrace_rec_free f;
	assert_int_equal(ktrace_decode_free(b, n, &f), 0);
	assert_int_equal(f.base, 0x7f0000);
	assert_int_equal(f.size, 1 << 20);
	assert_int_equal(f.stream, 0x57);
	assert_int_equal(f.kind, KTRACE_ALLOC_VMM);
	free(b);

	b = make(7, &n);
	struct ktrace_rec_memcpy mc;
	assert_int_equal(ktrace_decode_memcpy(b, n, &mc), 0);
	assert_int_equal(mc.op_seq, 5);
	assert_int_equal(mc.dst, 0xd);
	assert_int_equal(mc.src, 0x5);
	assert_int_equal(mc.bytes, 77);
	assert_int_equal(mc.stream, 0x57);
	assert_int_equal(mc.context, 0xc7);
	assert_int_equal(mc.src_digest, 0x1234);
	assert_int_equal(mc.dir, KTRACE_COPY_PEER);
	assert_int_equal(mc.flags, 3);
	assert_int_equal(mc.tid, 99);
	assert_int_equal(mc.result, -2);
	assert_true(mc.dst_digest == 0xfeedf00d);
	assert_int_equal(mc.dst_digest_state, KTRACE_DST_DIGEST_HOST);
	/* a 1.1 record (96 bytes, no digest of what the copy delivered) reads as "none" */
	assert_int_equal(n, 112);
	b[4] = 96;
	assert_int_equal(ktrace_decode_memcpy(b, 96, &mc), 0);
	assert_int_equal(mc.result, -2);
	assert_true(mc.dst_digest == 0);
	assert_int_equal(mc.dst_digest_state, KTRACE_DST_DIGEST_NONE);
	free(b);

	b = make(8, &n);
	struct ktrace_rec_memset ms;
	assert_int_equal(ktrace_decode_memset(b, n, &ms), 0);
	assert_int_equal(ms.op_seq, 6);
	assert_int_equal(ms.dst, 0xd);
	assert_int_equal(ms.count, 1000);
	assert_int_equal(ms.value, 0xabcd);
	assert_int_equal(ms.stream, 0x57);
	assert_int_equal(ms.context, 0xc7);
	assert_int_equal(ms.elem_size, 2);
	assert_int_equal(ms.flags, 1);
	assert_int_equal(ms.tid, 99);
	assert_int_equal(ms.result, 0);
	free(b);
}

/* Round trip: NOTE, COUNTERS, END, MODULE_UNLOAD. */
static void test_round_trip_bookkeeping(void **state)
{
	(void)state;
	size_t n;
	uint8_t *b;

	b = make(9, &n);
	struct ktrace_rec_note no;
	assert_int_equal(ktrace_decode_note(b, n, &no), 0);
	assert_int_equal(no.level, KTRACE_NOTE_DISABLED);
	assert_int_equal(no.code, 17);
	assert_str(no.text, "hashing disabled: no kernel image");
	free(b);

	b = make(10, &n);
	struct ktrace_rec_counters c;
	assert_int_equal(ktrace_decode_counters(b, n, &c), 0);
	assert_int_equal(c.ncounters, 3);
	for (uint32_t i = 0; i < 3; i++) {
		struct ktrace_counter kc;
		ktrace_counters_get(&c, i, &kc);
		assert_int_equal(kc.id, ctrs[i].id);
		assert_true(kc.value == ctrs[i].value);
	}
	free(b);

	b = make(11, &n);
	struct ktrace_rec_end e;
	assert_int_equal(ktrace_decode_end(b, n, &e), 0);
	assert_int_equal(e.reason, KTRACE_END_SIGNAL);
	assert_int_equal(e.status, 11);
	assert_int_equal(e.records_written, 1000);
	assert_int_equal(e.launches, 500);
	free(b);

	b = make(12, &n);
	struct ktrace_rec_module_unload u;
	assert_int_equal(ktrace_decode_module_unload(b, n, &u), 0);
	assert_int_equal(u.module_id, 7);
	free(b);
}

/* The prefix and a few fields sit where docs/format.md says, little-endian. */
static void test_documented_offsets(void **state)
{
	(void)state;
	size_t n;
	uint8_t *b = make(4, &n);
	assert_int_equal(rd(b, 2), KTRACE_REC_LAUNCH);
	assert_int_equal(rd(b + 2, 2), 0);
	assert_int_equal(rd(b + 4, 4), n);
	assert_int_equal(rd(b + 8, 8), 0);  /* seq: filled by the writer */
	assert_int_equal(rd(b + 16, 8), 0); /* time */
	assert_int_equal(rd(b + 24, 8), 42);
	assert_int_equal(rd(b + 72, 4), 1);
	assert_int_equal(rd(b + 84, 4), 4);
	assert_int_equal(rd(b + 120, 4), 2);
	assert_int_equal(rd(b + 124, 4), KTRACE_HASH_SKIP_NOSLOT); /* hash_skip, since 1.3 */
	/* regions from offset 128, 56 bytes each (flags at 6, pre_hash at 40,
	 * post_hash at 48), then the parameter bytes, padded to 8 */
	assert_int_equal(n, 128 + 2 * 56 + 40);
	assert_int_equal(ktrace_launch_size(2, 37), n);
	assert_int_equal(rd(b + 116, 4), 37);
	const uint8_t *r0 = b + 128, *r1 = b + 128 + 56;
	assert_int_equal(rd(r0 + 6, 2), KTRACE_REGIONF_PRE | KTRACE_REGIONF_POST);
	assert_true(rd(r0 + 8, 8) == 0x7f00aa);
	assert_true(rd(r0 + 32, 8) == 4096);
	assert_true(rd(r0 + 40, 8) == 0x1122334455667788ull);
	assert_true(rd(r0 + 48, 8) == 0x8877665544332211ull);
	assert_int_equal(rd(r1 + 0, 4), 16);
	assert_int_equal(rd(r1 + 4, 2), 2);
	assert_int_equal(rd(r1 + 6, 2), 0x01 | 0x10 | 0x40); /* IN_STRUCT, UNHASHED, GUESSED (1.3) */
	assert_memory_equal(b + 128 + 2 * 56, pbytes, 37);
	for (size_t i = 128 + 2 * 56 + 37; i < n; i++)
		assert_int_equal(b[i], 0);
	free(b);

	/* memcpy: dst_digest at 96, its state at 104 (since 1.2) */
	b = make(7, &n);
	assert_int_equal(n, 112);
	assert_true(rd(b + 72, 8) == 0x1234);
	assert_int_equal(rd(b + 92, 4), (uint32_t)-2);
	assert_true(rd(b + 96, 8) == 0xfeedf00d);
	assert_int_equal(rd(b + 104, 4), KTRACE_DST_DIGEST_HOST);
	assert_int_equal(rd(b + 108, 4), 0);
	free(b);

	/* counters: u32 id, u32 0, u64 value, 16 bytes each from offset 32 */
	b = make(10, &n);
	assert_int_equal(n, 32 + 3 * 16);
	assert_int_equal(rd(b + 24, 4), 3);
	assert_int_equal(rd(b + 32 + 16, 4), KTRACE_CTR_BYTES_DROPPED);
	assert_int_equal(rd(b + 32 + 16 + 8, 8), 1 << 20);
	free(b);
}

static void assert_gref(const struct ktrace_graph_ref *g)
{
	assert_int_equal(g->exec_id, 3);
	assert_int_equal(g->graph_id, 2);
	assert_int_equal(g->launch, 17);
	assert_int_equal(g->launch_seq, 400);
	assert_int_equal(g->node, 1);
	assert_int_equal(g->revision, 5);
}

/* GRAPH records (nodes of each kind, edges) and the graph reference that
 * launches, copies and memsets of a graph launch carry (since 1.8). */
static void test_round_trip_graph(void **state)
{
	struct ktrace_rec_graph g;
	struct ktrace_graph_node n;
	struct ktrace_graph_edge e;
	uint32_t off = 0;
	size_t len;
	uint8_t *b = make(13, &len);

	(void)state;
	assert_int_equal(ktrace_decode_graph(b, len, &g), 0);
	assert_int_equal(g.exec_id, 3);
	assert_int_equal(g.graph_id, 2);
	assert_int_equal(g.revision, 5);
	assert_int_equal(g.cause, KTRACE_GRAPH_NODE_UPDATE);
	assert_int_equal(g.untraced, KTRACE_GRAPH_UNTRACED_CONDITIONAL);
	assert_int_equal(g.nnodes, 5);
	assert_int_equal(g.device, 1);
	/* fixed part 112 bytes; child 32, kernel 80 + 13 -> 96, memcpy and memset 56, conditional 48 (since
	 * 1.14; 24 before); 3 edges */
	assert_int_equal(len, 112 + 32 + 96 + 56 + 56 + 48 + 3 * 8);
	assert_int_equal(g.node_first, 0);
	assert_int_equal(g.nodes_total, 5);
	assert_int_equal(g.edges_total, 3);
	assert_int_equal(rd(b + 88, 4), 32 + 96 + 56 + 56 + 48);
	for (uint32_t i = 0; i < 5; i++) {
		assert_int_equal(ktrace_graph_node_next(&g, &off, &n), 0);
		assert_int_equal(n.kind, gnodes[i].kind);
		assert_int_equal(n.flags, gnodes[i].flags);
		assert_int_equal(n.parent, gnodes[i].parent);
		assert_true(n.handle == gnodes[i].handle);
	}
	assert_int_equal(ktrace_graph_node_next(&g, &off, &n), -1);
	off = 0;
	ktrace_graph_node_next(&g, &off, &n);
	assert_int_equal(n.child_graph_id, 12);
	ktrace_graph_node_next(&g, &off, &n);
	assert_int_equal(n.kernel_id, 9);
	assert_int_equal(n.grid[2], 3);
	assert_int_equal(n.block[0], 4);
	assert_int_equal(n.shared_mem, 64);
	assert_int_equal(n.param_bytes_len, 13);
	assert_memory_equal(n.param_bytes, pbytes, 13);
	ktrace_graph_node_next(&g, &off, &n);
	assert_true(n.dst == 0xd0 && n.src == 0x50 && n.bytes == 4096 && n.dir == KTRACE_COPY_DTOD);
	ktrace_graph_node_next(&g, &off, &n);
	assert_true(n.dst == 0xd8 && n.value == 0x7f && n.count == 100 && n.elem_size == 4);
	assert_int_equal(n.copy_flags, KTRACE_COPYF_2D);
	ktrace_graph_node_next(&g, &off, &n);
	assert_true(n.cond_handle == 0xc0de01 && n.cond_type == KTRACE_COND_WHILE && n.cond_size == 1 &&
		    n.cond_default == 1);
	assert_int_equal(n.cond_flags, KTRACE_CONDF_ASSIGN_DEFAULT | KTRACE_CONDF_DEFAULT_KNOWN);
	ktrace_graph_edge_get(&g, 2, &e);
	assert_int_equal(e.from, 1);
	assert_int_equal(e.to, 4);
	free(b);

	struct ktrace_rec_launch l;
	b = make(14, &len);
	assert_int_equal(len, ktrace_launch_size(2, 13) + 40);
	assert_int_equal(ktrace_decode_launch(b, len, &l), 0);
	assert_int_equal(l.api, KTRACE_API_GRAPH);
	assert_gref(&l.graph);
	assert_true(rd(b + ktrace_launch_size(2, 13) + 24, 8) == 400); /* the reference after the parameters */
	free(b);

	struct ktrace_rec_memcpy mc;
	b = make(15, &len);
	assert_int_equal(len, 112 + 40);
	assert_int_equal(ktrace_decode_memcpy(b, len, &mc), 0);
	assert_gref(&mc.graph);
	free(b);

	struct ktrace_rec_memset ms;
	b = make(16, &len);
	assert_int_equal(len, 88 + 40);
	assert_int_equal(ktrace_decode_memset(b, len, &ms), 0);
	assert_gref(&ms.graph);
	assert_int_equal(rd(b + 88 + 32, 4), 1);
	free(b);
}

/* Since 1.14: a kernel node inside a conditional body carries the iteration
 * reference after its graph and range references, and a node entry its body. */
static void test_round_trip_graph_iteration(void **state)
{
	struct ktrace_graph_ref ref = gref;
	struct ktrace_range_ref rr = { .range = 7 };
	struct ktrace_rec_launch l = { .launch_seq = 401, .kernel_id = 9, .api = KTRACE_API_GRAPH,
				       .flags = KTRACE_LAUNCHF_GRAPH | KTRACE_LAUNCHF_RANGE | KTRACE_LAUNCHF_GRAPH_ITER,
				       .param_bytes_len = 13, .param_bytes = pbytes, .range = rr };
	struct ktrace_graph_node body = { .kind = KTRACE_GNODE_KERNEL, .flags = KTRACE_GNODEF_IN_CONDITIONAL,
					  .parent = 4, .body = 1 }, n;
	struct ktrace_rec_graph g = { .exec_id = 3, .nnodes = 1, .nodes = &body }, gd;
	struct ktrace_rec_launch d;
	uint8_t buf[1024];
	uint32_t off = 0;
	size_t len;

	(void)state;
	ref.iteration = 70, ref.cond_node = 4, ref.body = 1, ref.outer_iteration = KTRACE_GRAPH_NO_ITERATION;
	ref.iterations = 100, ref.dropped = 36;
	l.graph = ref;
	len = ktrace_encode_launch(buf, sizeof buf, &l, NULL);
	assert_int_equal(len, ktrace_launch_size(0, 13) + 40 + 16 + 24);
	assert_int_equal(ktrace_decode_launch(buf, len, &d), 0);
	assert_gref(&d.graph);
	assert_int_equal(d.range.range, 7);
	assert_int_equal(d.graph.iteration, 70);
	assert_int_equal(d.graph.cond_node, 4);
	assert_int_equal(d.graph.body, 1);
	assert_int_equal(d.graph.outer_iteration, KTRACE_GRAPH_NO_ITERATION);
	assert_int_equal(d.graph.iterations, 100);
	assert_int_equal(d.graph.dropped, 36);
	assert_int_equal(ktrace_decode_launch(buf, len - 8, &d), -1); /* cut inside the iteration reference */
	assert_string_equal(ktrace_launch_flag_name(KTRACE_LAUNCHF_GRAPH_ITER), "graph_iter");
	assert_string_equal(ktrace_cond_type_name(KTRACE_COND_SWITCH), "switch");
	len = ktrace_encode_graph(buf, sizeof buf, &g);
	assert_int_equal(ktrace_decode_graph(buf, len, &gd), 0);
	assert_int_equal(ktrace_graph_node_next(&gd, &off, &n), 0);
	assert_int_equal(n.body, 1);
	assert_int_equal(n.parent, 4);
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void assert_rref(const struct ktrace_range_ref *g)
{
	assert_int_equal(g->range, 7);
	assert_int_equal(g->fw_seq_kind, KTRACE_FWSEQ_BACKWARD);
	assert_int_equal(g->flags, KTRACE_RANGEREF_GRAPH_NODE);
	assert_true(g->fw_seq == 0x123456789ull);
}

/* Format 1.9: RANGE and PYSTACK records; the range reference after a
 * launch's parameters (and after the graph reference), a copy's or a
 * memset's fixed fields; an older reader's view ignores it. */
static void test_round_trip_ranges(void **state)
{
	struct ktrace_rec_range r;
	struct ktrace_rec_pystack py;
	struct ktrace_py_frame f;
	struct ktrace_rec_launch l;
	struct ktrace_rec_memset ms;
	uint32_t off = 0;
	size_t len;
	uint8_t *b = make(17, &len);

	(void)state;
	assert_int_equal(len, 112); /* 48 fixed, "TSL", the message and the source as strings: 110, padded */
	assert_int_equal(ktrace_decode_range(b, len, &r), 0);
	assert_true(r.range_id == 7 && r.parent == 3 && r.kind == KTRACE_RANGE_PUSH &&
		    r.flags == (KTRACE_RANGEF_FW_SEQ | KTRACE_RANGEF_SOURCE) && r.category == 2);
	assert_int_equal(r.domain.len, 3);
	assert_memory_equal(r.domain.ptr, "TSL", 3);
	assert_int_equal(r.message.len, 25);
	assert_memory_equal(r.message.ptr, "aten::upsample_bilinear2d", 25);
	assert_int_equal(r.source.len, 28);
	assert_memory_equal(r.source.ptr, "\n- train.py:42[forward] add\n", 28);
	assert_int_equal(rd(b + 28, 4), 3); /* parent */
	b[24] = b[25] = b[26] = b[27] = 0;  /* range id 0 is "none": no such record */
	assert_int_equal(ktrace_decode_range(b, len, &r), -1);
	free(b);
	{ /* without source locations: no third string, no flag (as written before 1.11) */
		struct ktrace_rec_range n = { 9, 0, KTRACE_RANGE_START, KTRACE_RANGEF_SOURCE, 0, S(""), S("load"), S("") };
		uint8_t nb[128];

		assert_int_equal(ktrace_encode_range(nb, sizeof nb, &n), 56);
		assert_int_equal(ktrace_decode_range(nb, 56, &r), 0);
		assert_int_equal(r.flags, 0);
		assert_int_equal(r.source.len, 0);
		assert_memory_equal(r.message.ptr, "load", 4);
	}

	b = make(18, &len);
	assert_int_equal(ktrace_decode_pystack(b, len, &py), 0);
	assert_true(py.launch_seq == 501 && py.fw_seq == 0x123456789ull && py.tid == 4242 &&
		    py.kind == KTRACE_PYSTACK_FORWARD_OP && py.nframes == 2);
	assert_int_equal(ktrace_pystack_frame_next(&py, &off, &f), 0);
	assert_int_equal(f.line, 42);
	assert_memory_equal(f.function.ptr, "Net.forward", 11);
	assert_int_equal(ktrace_pystack_frame_next(&py, &off, &f), 0);
	assert_int_equal(f.line, 7);
	assert_memory_equal(f.file.ptr, "train.py", 8);
	assert_int_equal(ktrace_pystack_frame_next(&py, &off, &f), -1);
	put32(b + 48, 3); /* a frame more than the record holds */
	assert_int_equal(ktrace_decode_pystack(b, len, &py), -1);
	free(b);

	b = make(19, &len);
	assert_int_equal(len, ktrace_launch_size(2, 37) + 16);
	assert_int_equal(ktrace_decode_launch(b, len, &l), 0);
	assert_rref(&l.range);
	assert_int_equal(rd(b + ktrace_launch_size(2, 37), 4), 7);
	assert_int_equal(rd(b + ktrace_launch_size(2, 37) + 4, 2), KTRACE_FWSEQ_BACKWARD); /* u16 kind */
	assert_int_equal(rd(b + ktrace_launch_size(2, 37) + 6, 2), KTRACE_RANGEREF_GRAPH_NODE); /* u16 flags */
	free(b);

	b = make(20, &len);
	assert_int_equal(len, ktrace_launch_size(2, 13) + 40 + 16);
	assert_int_equal(ktrace_decode_launch(b, len, &l), 0);
	assert_gref(&l.graph);
	assert_rref(&l.range);
	assert_true(rd(b + ktrace_launch_size(2, 13) + 24, 8) == 400); /* graph reference first */
	assert_int_equal(rd(b + ktrace_launch_size(2, 13) + 40, 4), 7);
	free(b);

	b = make(21, &len);
	assert_int_equal(len, 88 + 40 + 16);
	assert_int_equal(ktrace_decode_memset(b, len, &ms), 0);
	assert_gref(&ms.graph);
	assert_rref(&ms.range);
	assert_true(rd(b + 88 + 40 + 8, 8) == 0x123456789ull);
	free(b);

	struct ktrace_rec_memcpy mc = { .op_seq = 5, .flags = KTRACE_COPYF_RANGE, .range = rref }, mo;
	uint8_t buf[256];
	len = ktrace_encode_memcpy(buf, sizeof buf, &mc);
	assert_int_equal(len, 112 + 16);
	assert_int_equal(ktrace_decode_memcpy(buf, len, &mo), 0);
	assert_rref(&mo.range);
	assert_int_equal(rd(buf + 112, 4), 7);
}

/* The LAUNCH of record kind 4 without its parameter bytes, at the start of
 * a record of `size` bytes of `type`, the bytes around it 0xaa first. */
static uint8_t *launch_head(size_t size, uint16_t type, uint8_t **at)
{
	struct ktrace_rec_launch l = { 42, 9, 0xc7, 0x57, 1234, -1, KTRACE_API_LAUNCH_KERNEL_EX,
				       KTRACE_LAUNCHF_HASHED | KTRACE_LAUNCHF_PTSZ, { 1, 2, 3 }, { 4, 5, 6 },
				       { 7, 8, 9 }, 4096, -3, 37, 2, NULL, NULL, KTRACE_HASH_SKIP_NOSLOT, { 0 }, { 0 },
				       NULL };
	uint8_t *b = malloc(size + 64);

	assert_non_null(b);
	memset(b, 0xaa, size + 64);
	*at = ktrace_encode_launch_head(b, size, type, &l, regions);
	return b;
}

/* A producer that assembles the parameters in place gets the same bytes as
 * ktrace_encode_launch; under an internal type the LAUNCH is carried with
 * the producer's own bytes after it, and decodes again as it was. */
static void test_launch_head_and_carrier(void **state)
{
	(void)state;
	size_t n, size = ktrace_launch_size(2, 37);
	uint8_t *want = make(4, &n), *at;
	assert_int_equal(size, n);

	uint8_t *b = launch_head(size, KTRACE_REC_LAUNCH, &at);
	assert_non_null(at);
	memcpy(at, pbytes, 37);
	assert_memory_equal(b, want, n);
	assert_int_equal(b[n], 0xaa); /* nothing written past the record */
	free(b);
	/* refused: too small, not a multiple of 8, a LAUNCH with bytes after
	 * it, a public type other than LAUNCH */
	const struct { size_t size; uint16_t type; } bad[] = {
		{ n - 8, KTRACE_REC_LAUNCH }, { n + 4, 0xff42 }, { n + 8, KTRACE_REC_LAUNCH }, { n + 8, KTRACE_REC_NOTE },
		{ n - 8, 0xff42 },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		b = launch_head(bad[i].size, bad[i].type, &at);
		assert_null(at);
		for (size_t k = 0; k < bad[i].size + 64; k++)
			assert_int_equal(b[k], 0xaa);
		free(b);
	}

	b = launch_head(n + 24, 0xff42, &at);
	assert_non_null(at);
	memcpy(at, pbytes, 37);
	memset(b + n, 0x5a, 24); /* the producer's own bytes */
	assert_memory_equal(b + 8, want + 8, n - 8); /* the LAUNCH as encoded */
	struct ktrace_record_prefix p;
	struct ktrace_rec_launch l, w;
	assert_int_equal(ktrace_decode_prefix(b, n + 24, &p), 0);
	assert_int_equal(p.type, 0xff42);
	assert_int_equal(p.size, n + 24);
	assert_int_equal(ktrace_decode_launch(b, n + 24, &l), -1); /* not a LAUNCH record */
	assert_int_equal(ktrace_decode_carried_launch(b, n, &l), 0);
	assert_int_equal(ktrace_decode_launch(want, n, &w), 0);
	assert_true(l.launch_seq == w.launch_seq && l.kernel_id == w.kernel_id && l.flags == w.flags &&
		    l.result == w.result && l.nregions == 2 && l.param_bytes_len == 37);
	assert_memory_equal(l.regions_raw, w.regions_raw, 2 * 56);
	assert_memory_equal(l.param_bytes, pbytes, 37);
	/* a carried length past the carrier's size, or a public record */
	assert_int_equal(ktrace_decode_carried_launch(b, n + 32, &l), -1);
	assert_int_equal(ktrace_decode_carried_launch(b, n - 4, &l), -1);
	assert_int_equal(ktrace_decode_carried_launch(want, n, &l), -1);
	free(b);
	free(want);
}

/* A short buffer gets nothing written and the needed size back. */
static void test_size_query(void **state)
{
	(void)state;
	for (int kind = 0; kind < N_KINDS; kind++) {
		size_t need = encode_kind(kind, NULL, 0);
		uint8_t *b = malloc(need);
		memset(b, 0xaa, need);
		assert_int_equal(encode_kind(kind, b, need - 8), need);
		for (size_t i = 0; i < need; i++)
			assert_int_equal(b[i], 0xaa);
		free(b);
	}
}

/* A prefix that is a whole record of an older minor version: a 1.1 MEMCPY
 * (96 bytes) is the 1.2 one without its trailing fields. */
static int older_record(int kind, size_t k)
{
	return kind == 7 && k == 96;
}

/* Every truncated prefix is rejected, with the record's size field left as is
 * and with it rewritten to the truncated length (unless that length is a
 * whole record of an older minor version). */
static void test_truncated_prefixes(void **state)
{
	(void)state;
	for (int kind = 0; kind < N_KINDS; kind++) {
		size_t n;
		uint8_t *full = make(kind, &n);
		assert_int_equal(decode_any(full, n), 0);
		for (size_t k = 0; k < n; k++) {
			uint8_t *cut = malloc(k ? k : 1);
			memcpy(cut, full, k);
			assert_int_not_equal(decode_any(cut, k), 0);
			if (k >= 8) {
				cut[4] = (uint8_t)k;
				cut[5] = (uint8_t)(k >> 8);
				cut[6] = cut[7] = 0;
				if (decode_any(cut, k) == 0 && !older_record(kind, k))
					fail_msg("kind %d: a %zu-byte prefix of a %zu-byte record decoded", kind, k, n);
			}
			free(cut);
		}
		free(full);
	}
}

/* A decoder refuses a record of another type; size fields are checked. */
static void test_type_and_size_checks(void **state)
{
	(void)state;
	size_t n;
	uint8_t *b = make(5, &n); /* ALLOC */
	struct ktrace_rec_free f;
	struct ktrace_rec_alloc a;
	assert_int_equal(ktrace_decode_free(b, n, &f), -1);
	/* longer than the fields: accepted (fields added by a minor version) */
	uint8_t *big = calloc(1, n + 16);
	memcpy(big, b, n);
	big[4] = (uint8_t)(n + 16);
	assert_int_equal(ktrace_decode_alloc(big, n + 16, &a), 0);
	/* size field disagreeing with the length */
	assert_int_equal(ktrace_decode_alloc(big, n + 8, &a), -1);
	/* size not a multiple of 8, or below the prefix */
	b[4] = (uint8_t)(n - 4);
	assert_int_equal(ktrace_decode_alloc(b, n - 4, &a), -1);
	struct ktrace_record_prefix p;
	b[4] = 16;
	assert_int_equal(ktrace_decode_prefix(b, n, &p), -1);
	free(big);
	free(b);
}

/* Hostile counts and offsets inside otherwise well-sized records. */
static void test_hostile_counts(void **state)
{
	(void)state;
	size_t n;
	uint8_t *b = make(3, &n); /* KERNEL */
	struct ktrace_rec_kernel k;
	put32(b + 56, 0xffffffffu); /* nparams */
	assert_int_equal(ktrace_decode_kernel(b, n, &k), -1);
	put32(b + 56, 3);
	put32(b + 64 + 24 + 16, 0xfffffff0u); /* param 1 string offset */
	assert_int_equal(ktrace_decode_kernel(b, n, &k), -1);
	put32(b + 64 + 24 + 16, (uint32_t)(n - 64 - 1)); /* string length past the end */
	assert_int_equal(ktrace_decode_kernel(b, n, &k), -1);
	free(b);

	b = make(4, &n); /* LAUNCH */
	struct ktrace_rec_launch l;
	put32(b + 120, 0x7fffffffu); /* nregions */
	assert_int_equal(ktrace_decode_launch(b, n, &l), -1);
	put32(b + 120, 2);
	put32(b + 116, 0xffffffffu); /* param bytes */
	assert_int_equal(ktrace_decode_launch(b, n, &l), -1);
	free(b);

	b = make(10, &n); /* COUNTERS */
	struct ktrace_rec_counters c;
	put32(b + 24, 0x10000000u);
	assert_int_equal(ktrace_decode_counters(b, n, &c), -1);
	free(b);

	b = make(2, &n); /* MODULE_IMAGE: chunk beyond the image */
	struct ktrace_rec_module_image mi;
	put32(b + 32, 10); /* image_size 10 < offset 50 */
	assert_int_equal(ktrace_decode_module_image(b, n, &mi), -1);
	free(b);
}

/* Random records of every type id: decoding never reads outside them. */
static void test_random_records(void **state)
{
	(void)state;
	uint64_t x = 0x123456789abcdefull;
	for (int it = 0; it < 200000; it++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		size_t len = 24 + 8 * (size_t)(x % 40);
		uint8_t *b = malloc(len);
		uint64_t y = x;
		for (size_t i = 0; i < len; i++) {
			y = y * 6364136223846793005ull + 1442695040888963407ull;
			/* mostly small bytes so counts and lengths are often plausible */
			b[i] = (uint8_t)((y >> 56) % ((it & 1) ? 256 : 8));
		}
		b[0] = (uint8_t)(1 + x % 18);
		b[1] = 0;
		put32(b + 4, (uint32_t)len);
		(void)decode_any(b, len);
		free(b);
	}
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(ktrace_record_type_name(KTRACE_REC_LAUNCH), "launch");
	assert_string_equal(ktrace_record_type_name(KTRACE_REC_MODULE_UNLOAD), "module_unload");
	assert_string_equal(ktrace_record_type_name(0), "unknown");
	assert_string_equal(ktrace_record_type_name(999), "unknown");
	assert_string_equal(ktrace_param_kind_name(KTRACE_PARAM_STRUCT), "struct");
	assert_string_equal(ktrace_param_kind_name(200), "unknown");
	assert_string_equal(ktrace_name_source_name(KTRACE_NAME_INDUCTOR), "inductor");
	assert_string_equal(ktrace_counter_name(KTRACE_CTR_RECORDS_DROPPED), "records_dropped");
	assert_string_equal(ktrace_counter_name(KTRACE_CTR_HASH_SKIPPED_ERROR), "hash_skipped_error");
	assert_string_equal(ktrace_counter_name(0), "unknown");
	assert_string_equal(ktrace_record_type_name(KTRACE_REC_GRAPH), "graph");
	assert_string_equal(ktrace_counter_name(KTRACE_CTR_LAUNCHES_CAPTURED), "launches_captured");
	assert_string_equal(ktrace_graph_node_kind_name(KTRACE_GNODE_CONDITIONAL), "conditional");
	assert_string_equal(ktrace_graph_untraced_name(KTRACE_GRAPH_UNTRACED_DEVICE_LAUNCH), "device_launch");
	assert_string_equal(ktrace_graph_cause_name(KTRACE_GRAPH_EXEC_UPDATE), "exec_update");
	assert_string_equal(ktrace_record_type_name(KTRACE_REC_RANGE), "range");
	assert_string_equal(ktrace_record_type_name(KTRACE_REC_PYSTACK), "pystack");
	assert_string_equal(ktrace_counter_name(KTRACE_CTR_RANGES_UNRECORDED), "ranges_unrecorded");
	assert_string_equal(ktrace_counter_name(KTRACE_CTR_GRAPH_HASH_NODES), "graph_hash_nodes");
	assert_string_equal(ktrace_counter_name(KTRACE_CTR_GRAPH_KERNEL_NODES_HASHED), "graph_kernel_nodes_hashed");
	assert_string_equal(ktrace_counter_name(KTRACE_CTR_HASH_FLUSH_STREAM), "hash_flush_stream");
	assert_string_equal(ktrace_counter_name(KTRACE_CTR_HASH_FLUSH_OTHER), "hash_flush_other");
	assert_string_equal(ktrace_range_kind_name(KTRACE_RANGE_START), "start");
	assert_string_equal(ktrace_fw_seq_kind_name(KTRACE_FWSEQ_FORWARD), "forward");
	assert_string_equal(ktrace_pystack_kind_name(KTRACE_PYSTACK_AFTER_LAUNCH), "after_launch");
	assert_string_equal(ktrace_pystack_kind_name(0), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_process),
		cmocka_unit_test(test_round_trip_kernel),
		cmocka_unit_test(test_round_trip_launch),
		cmocka_unit_test(test_round_trip_carried),
		cmocka_unit_test(test_round_trip_memory),
		cmocka_unit_test(test_round_trip_bookkeeping),
		cmocka_unit_test(test_round_trip_graph),
		cmocka_unit_test(test_round_trip_graph_iteration),
		cmocka_unit_test(test_round_trip_ranges),
		cmocka_unit_test(test_documented_offsets),
		cmocka_unit_test(test_launch_head_and_carrier),
		cmocka_unit_test(test_size_query),
		cmocka_unit_test(test_truncated_prefixes),
		cmocka_unit_test(test_type_and_size_checks),
		cmocka_unit_test(test_hostile_counts),
		cmocka_unit_test(test_random_records),
		cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
