/* test/tools/ktgen.c: test-only generator of synthetic ktrace traces (build/ktgen).
 *
 * Drives the real writer (format/trace_writer.c) with deterministic content:
 * fixed header, ids, pointers and digests, and explicit record timestamps, so
 * ktrace-dump output on these files can be compared with golden files.  The
 * writer's own COUNTERS and END records carry real timestamps (normalise
 * time_ns of those in JSON).  Not a substitute for traces of real programs.
 *
 *   ktgen [--scenario basic|many|order|order-filter|graph|threads|graph-threads|ranges|gputimes|sources]
 *         [--launches N] [--diverge-at K] [--shift-addresses N]
 *         [--frame-bytes N] [--cut-at-flush K] [--major N] OUT
 *   ktgen --job SCENARIO DIR
 *
 * basic  every record type once or more, a launch before its KERNEL record,
 *        a launch whose kernel never appears, a kernel without a layout, an
 *        unknown record type, [OUT] regions, an exact region (since 1.2),
 *        device-to-host copies with and without a digest of what they delivered.
 * many   a header, 3 kernels and 300 launches (several zstd frames with
 *        --frame-bytes 4096); --launches N makes N of them (bench/export_bench.sh);
 *        --diverge-at K flips a bit of launch K's output digest (a second run
 *        that diverges there, for bench/tools_bench.sh); --shift-addresses N
 *        puts every buffer N bytes higher (a run that shares no address).
 * order  ORDER records of every operation (format 1.2).
 * order-filter  launches of three kernels on three streams among ORDER
 *        records (ktrace-dump's filters keep the ones that order them).
 * graph  a GRAPH record (a child graph with a kernel node, a memcpy and a
 *        memset node, a conditional node) and one launch of it: a LAUNCH,
 *        a MEMCPY and a MEMSET with the graph reference (format 1.8).
 * threads  two threads' records as a writer interleaves them: each thread's
 *        records in one block, so seq does not increase in the file, and a
 *        launch before its kernel's record (in the file and in seq).
 * graph-threads  scenario graph's records, launched twice around an exec
 *        update, as two threads' writers interleave them: GRAPH records later
 *        in the file than launches after them in seq.
 * ranges NVTX range paths (format 1.9): RANGE records of PyTorch-like op
 *        ranges (forward, a backward node), XLA's module and kernel ranges in
 *        domain "TSL" with source locations, a launch of a graph node made
 *        in those, a start/end range; launches, a copy and a memset under
 *        them with their framework sequence numbers; an NVTX mark; the Python
 *        stack of a forward op (PYSTACK).
 * gputimes  launches on one stream, two of them measured (GPUTIME records,
 *        format 1.10) with two unmeasured ones that must fit between them,
 *        a measured graph launch of scenario graph's exec, one unmeasured
 *        launch after it.
 * --job SCENARIO DIR  two runs of a distributed job, per-rank traces in DIR/a
 *        and DIR/b (test/tools/ktgen_job.c lists the scenarios).
 * --cut-at-flush K  flush after every group of records, then cut the file at
 *        the end of flush K (>= 1): the file ends inside a zstd frame.
 * --major N  patch the preamble's version to N.0.
 */
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/ktrace_format.h"
#include "format/trace_writer.h"

#define START_MONO 1000000000ull
#define S(x) { x, (uint16_t)(sizeof(x) - 1) }

static struct ktrace_writer *w;
static uint64_t tick;
static int cut_at;
static off_t flush_sizes[64];
static int nflush;
static const char *out_path;

static void die(const char *msg)
{
	fprintf(stderr, "ktgen: %s\n", msg);
	exit(1);
}

/* Append an encoded record with the next deterministic timestamp. */
static void put(void *rec, size_t size)
{
	uint8_t *b = rec;
	uint64_t t = START_MONO + (++tick) * 1000ull;
	for (int i = 0; i < 8; i++)
		b[16 + i] = (uint8_t)(t >> (8 * i));
	if (ktrace_writer_append(w, rec, size))
		die("record dropped");
}

static void group_done(void)
{
	if (!cut_at)
		return;
	if (ktrace_writer_flush(w))
		die("flush failed");
	struct stat st;
	if (stat(out_path, &st) || nflush >= 64)
		die("cannot stat the output");
	flush_sizes[nflush++] = st.st_size;
}

static uint8_t buf[1 << 16];

static void module(uint64_t id, const char *path)
{
	struct ktrace_rec_module m = { .module_id = id, .handle = 0x5550000 + id, .image_digest = 0x1111000000000000ull + id,
				       .image_size = 4096 * id, .kind = KTRACE_MODULE_CUBIN,
				       .source = KTRACE_MODSRC_MODULE_LOAD_DATA };
	m.path.ptr = path;
	m.path.len = (uint16_t)strlen(path);
	put(buf, ktrace_encode_module(buf, sizeof buf, &m));
}

static void kernel(uint64_t id, const char *name, const char *dem, uint32_t layout,
		   const struct ktrace_param_desc *p, uint32_t n, uint32_t pbytes)
{
	struct ktrace_rec_kernel k = { .kernel_id = id, .module_id = 1, .handle = 0x7770000 + id,
				       .layout_source = layout, .param_bytes = pbytes, .nparams = n };
	k.name.ptr = name;
	k.name.len = (uint16_t)strlen(name);
	k.demangled.ptr = dem;
	k.demangled.len = (uint16_t)strlen(dem);
	put(buf, ktrace_encode_kernel(buf, sizeof buf, &k, p));
}

static void le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t launch_no;
static uint64_t launch_stream; /* 0: 0x5000 + kernel id % 2 */
static uint32_t launch_tid = 4243;
static _Atomic uint64_t record_seq; /* the writer's record numbers (scenario threads sets them) */

static void launch(uint64_t kid, const uint8_t *params, uint32_t np, const struct ktrace_region *r, uint32_t nr,
		   uint32_t flags)
{
	struct ktrace_rec_launch l = { .launch_seq = launch_no++, .kernel_id = kid, .context = 0xc0ffee00,
				       .stream = launch_stream ? launch_stream : 0x5000 + (kid % 2), .tid = launch_tid,
				       .device = 0,
				       .api = KTRACE_API_LAUNCH_KERNEL, .flags = flags,
				       .grid = { 4, 1, 1 }, .block = { 256, 1, 1 }, .cluster = { 0, 0, 0 },
				       .shared_mem = 0, .result = 0, .param_bytes_len = np, .nregions = nr,
				       .param_bytes = params };
	put(buf, ktrace_encode_launch(buf, sizeof buf, &l, r));
}

static struct ktrace_region region(uint32_t off, uint16_t ord, uint64_t ptr, uint64_t base, uint64_t len,
				   uint64_t pre, uint64_t post)
{
	struct ktrace_region g = { .param_offset = off, .ordinal = ord,
				   .flags = KTRACE_REGIONF_PRE | KTRACE_REGIONF_POST, .ptr = ptr,
				   .alloc_base = base, .alloc_size = 1 << 20, .hash_len = len,
				   .pre_hash = pre, .post_hash = post };
	return g;
}

static const struct ktrace_param_desc vecadd_params[] = {
	{ 0, KTRACE_PARAM_POINTER, KTRACE_NAME_DWARF, 0, 8, KTRACE_PARAMF_CONST, S("a"), S("const float*"),
	  KTRACE_WRITTEN_READ_ONLY, KTRACE_WRITTEN_SRC_PTX },
	{ 1, KTRACE_PARAM_POINTER, KTRACE_NAME_DWARF, 8, 8, KTRACE_PARAMF_CONST, S("b"), S("const float*"),
	  KTRACE_WRITTEN_READ_ONLY, KTRACE_WRITTEN_SRC_PTX },
	{ 2, KTRACE_PARAM_POINTER, KTRACE_NAME_DWARF, 16, 8, 0, S("c"), S("float*"), KTRACE_WRITTEN_WRITTEN, KTRACE_WRITTEN_SRC_PTX },
	{ 3, KTRACE_PARAM_SCALAR, KTRACE_NAME_DWARF, 24, 4, 0, S("n"), S("int"), 0, 0 },
};

static const struct ktrace_param_desc triton_params[] = {
	{ 0, KTRACE_PARAM_POINTER, KTRACE_NAME_INDUCTOR, 0, 8, 0, S("in_ptr0"), S("*fp32"),
	  KTRACE_WRITTEN_READ_ONLY, KTRACE_WRITTEN_SRC_TTIR },
	{ 1, KTRACE_PARAM_POINTER, KTRACE_NAME_INDUCTOR, 8, 8, 0, S("out_ptr0"), S("*fp32"),
	  KTRACE_WRITTEN_WRITTEN, KTRACE_WRITTEN_SRC_TTIR },
	{ 2, KTRACE_PARAM_SCALAR, KTRACE_NAME_INDUCTOR, 16, 4, 0, S("xnumel"), S("i32"), 0, 0 },
	{ 3, KTRACE_PARAM_SCALAR, KTRACE_NAME_TRITON_CACHE, 20, 4, 0, S("scale"), S("fp32"), 0, 0 },
	{ 4, KTRACE_PARAM_SCALAR, KTRACE_NAME_TRITON_CACHE, 24, 8, 0, S("eps"), S("fp64"), 0, 0 },
	{ 5, KTRACE_PARAM_SCALAR, KTRACE_NAME_TRITON_CACHE, 32, 2, 0, S("h"), S("fp16"), 0, 0 },
	{ 6, KTRACE_PARAM_STRUCT, KTRACE_NAME_DEMANGLED, 40, 16, 0, S("meta"), S("struct Meta"), 0, 0 },
	{ 7, KTRACE_PARAM_POINTER, KTRACE_NAME_TRITON_SCRATCH, 56, 8, KTRACE_PARAMF_SCRATCH | KTRACE_PARAMF_HIDDEN,
	  S("global_scratch"), S("*i8"), KTRACE_WRITTEN_READ_ONLY, KTRACE_WRITTEN_SRC_PTX },
	{ 8, KTRACE_PARAM_SCALAR, KTRACE_NAME_NONE, 64, 8, 0, S(""), S(""), 0, 0 },
};

/* A buffer of its own (cudaMallocAsync): its region ends at its allocation's
 * end (exact); the program reads it back synchronously (digested on the CPU)
 * and asynchronously (digested on the GPU). */
static void scenario_basic_results(void)
{
	struct ktrace_rec_alloc a = { .base = 0x7f0000200000ull, .size = 4096, .stream = 0x5001, .device = 0,
				      .kind = KTRACE_ALLOC_ASYNC };
	put(buf, ktrace_encode_alloc(buf, sizeof buf, &a));
	uint8_t p[28];
	memset(p, 0, sizeof p);
	le64(p, 0x7f0000200000ull);
	le64(p + 8, 0x7f0000200000ull);
	le64(p + 16, 0x7f0000200000ull);
	struct ktrace_region r = region(0, 0, 0x7f0000200000ull, 0x7f0000200000ull, 4096, 0x1234, 0x5678);
	r.alloc_size = 4096;
	r.flags |= KTRACE_REGIONF_EXACT;
	launch(1, p, 28, &r, 1, KTRACE_LAUNCHF_HASHED);
	struct ktrace_rec_memcpy mc = { .op_seq = launch_no++, .dst = 0x601000, .src = 0x7f0000200000ull,
					.bytes = 4096, .stream = 0, .context = 0xc0ffee00, .dir = KTRACE_COPY_DTOH,
					.tid = 4243, .dst_digest = 0x6b74726163650002ull,
					.dst_digest_state = KTRACE_DST_DIGEST_HOST };
	put(buf, ktrace_encode_memcpy(buf, sizeof buf, &mc));
	mc.op_seq = launch_no++;
	mc.stream = 0x5001;
	mc.flags = KTRACE_COPYF_ASYNC;
	mc.dst_digest = 0x6b74726163650003ull; /* asynchronous: its source hashed on the GPU */
	mc.dst_digest_state = KTRACE_DST_DIGEST_DEVICE;
	put(buf, ktrace_encode_memcpy(buf, sizeof buf, &mc));
	group_done();
}

static void scenario_basic(void)
{
	module(1, "/tmp/kernels.cubin");
	struct ktrace_rec_alloc a = { .base = 0x7f0000000000ull, .size = 1 << 20, .device = 0, .kind = KTRACE_ALLOC_DEVICE };
	put(buf, ktrace_encode_alloc(buf, sizeof buf, &a));
	a.base = 0x7f0000100000ull;
	a.kind = KTRACE_ALLOC_ASYNC;
	a.stream = 0x5001;
	put(buf, ktrace_encode_alloc(buf, sizeof buf, &a));
	kernel(1, "_Z6vecAddPKfS0_Pfi", "vecAdd(float const*, float const*, float*, int)", KTRACE_LAYOUT_NVINFO,
	       vecadd_params, 4, 28);
	group_done();

	/* launch 0: vecAdd, c written ([OUT]) */
	uint8_t p[72];
	memset(p, 0, sizeof p);
	le64(p, 0x7f0000000000ull);
	le64(p + 8, 0x7f0000001000ull);
	le64(p + 16, 0x7f0000100000ull);
	le32(p + 24, 1024);
	struct ktrace_region r[4] = {
		region(0, 0, 0x7f0000000000ull, 0x7f0000000000ull, 4096, 0x0123456789abcdefull, 0x0123456789abcdefull),
		region(8, 1, 0x7f0000001000ull, 0x7f0000000000ull, 4096, 0x1111222233334444ull, 0x1111222233334444ull),
		region(16, 2, 0x7f0000100000ull, 0x7f0000100000ull, 4096, 0xaaaabbbbccccddddull, 0x5555666677778888ull),
	};
	launch(1, p, 28, r, 3, KTRACE_LAUNCHF_HASHED);

	struct ktrace_rec_memcpy mc = { .op_seq = launch_no++, .dst = 0x7f0000000000ull, .src = 0x600000, .bytes = 4096,
					.stream = 0x5000, .context = 0xc0ffee00,
					.src_digest = 0x6b74726163650001ull, .dir = KTRACE_COPY_HTOD,
					.flags = KTRACE_COPYF_ASYNC | KTRACE_COPYF_SRC_DIGEST, .tid = 4243 };
	put(buf, ktrace_encode_memcpy(buf, sizeof buf, &mc));
	struct ktrace_rec_memset ms = { .op_seq = launch_no++, .dst = 0x7f0000100000ull, .count = 1024, .value = 0,
					.stream = 0x5001, .context = 0xc0ffee00, .elem_size = 4,
					.flags = KTRACE_COPYF_ASYNC, .tid = 4243 };
	put(buf, ktrace_encode_memset(buf, sizeof buf, &ms));
	group_done();

	/* launch 3 of kernel 2 arrives before kernel 2's record */
	memset(p, 0, sizeof p);
	le64(p, 0x7f0000100000ull);
	le64(p + 8, 0x7f0000000000ull);
	le32(p + 16, (uint32_t)-7);
	float scale = 0.5f;
	memcpy(p + 20, &scale, 4);
	double eps = 1e-5;
	memcpy(p + 24, &eps, 8);
	p[32] = 0x00;
	p[33] = 0x3c; /* 1.0 in fp16 */
	for (int i = 0; i < 16; i++)
		p[40 + i] = (uint8_t)(0xa0 + i);
	le64(p + 56, 0x7f00000f0000ull);
	le64(p + 64, 0xffffffffffffffffull);
	struct ktrace_region r2[3] = {
		region(0, 0, 0x7f0000100000ull, 0x7f0000100000ull, 4096, 0x5555666677778888ull, 0x5555666677778888ull),
		region(8, 1, 0x7f0000000000ull, 0x7f0000000000ull, 4096, 0x0123456789abcdefull, 0x0fedcba987654321ull),
		region(56, 7, 0x7f00000f0000ull, 0, 0, 0, 0),
	};
	r2[2].flags = KTRACE_REGIONF_UNHASHED;
	r2[2].alloc_size = 0;
	launch(2, p, 72, r2, 3, KTRACE_LAUNCHF_HASHED);
	kernel(2, "triton_poi_fused_add_0", "", KTRACE_LAYOUT_NVINFO, triton_params, 9, 72);
	group_done();

	/* launch 4: kernel 99 never appears */
	memset(p, 0, sizeof p);
	le64(p, 0x7f0000000000ull);
	struct ktrace_region r3 = region(0, 0, 0x7f0000000000ull, 0x7f0000000000ull, 64, 1, 2);
	launch(99, p, 8, &r3, 1, KTRACE_LAUNCHF_HASHED);

	/* launch 5: kernel without a layout, a pointer found by scanning */
	kernel(3, "opaque_kernel", "", KTRACE_LAYOUT_NONE, NULL, 0, 0);
	memset(p, 0, sizeof p);
	le64(p + 8, 0x7f0000000100ull);
	struct ktrace_region r4 = region(8, 0xffff, 0x7f0000000100ull, 0x7f0000000000ull, 256, 7, 7);
	r4.flags |= KTRACE_REGIONF_CAPPED;
	launch(3, p, 16, &r4, 1, KTRACE_LAUNCHF_HASHED | KTRACE_LAUNCHF_PTSZ);

	/* launch 6: vecAdd again, hashing skipped (capture) */
	memset(p, 0, sizeof p);
	le64(p, 0x7f0000000000ull);
	le64(p + 8, 0x7f0000001000ull);
	le64(p + 16, 0x7f0000100000ull);
	le32(p + 24, 1024);
	launch(1, p, 28, NULL, 0, KTRACE_LAUNCHF_CAPTURING | KTRACE_LAUNCHF_HASH_SKIPPED);

	struct ktrace_rec_note n = { .level = KTRACE_NOTE_WARN, .code = 3 };
	n.text.ptr = "hashing skipped during stream capture \"graph\"\tonce";
	n.text.len = (uint16_t)strlen(n.text.ptr);
	put(buf, ktrace_encode_note(buf, sizeof buf, &n));
	n.level = KTRACE_NOTE_INFO;
	n.code = 1;
	n.text.ptr = "r\xc3\xa9sum\xc3\xa9 \xff bytes";
	n.text.len = (uint16_t)strlen(n.text.ptr);
	put(buf, ktrace_encode_note(buf, sizeof buf, &n));

	/* a record type from the future: readers skip it by size */
	memset(buf, 0, 40);
	buf[0] = 200;
	buf[4] = 40;
	put(buf, 40);

	struct ktrace_rec_module_image mi = { .image_digest = 0x1111000000000001ull, .image_size = 8,
					      .chunk_offset = 0, .chunk_len = 8, .bytes = (const uint8_t *)"\x7f" "ELF\x02\x01\x01\x00" };
	put(buf, ktrace_encode_module_image(buf, sizeof buf, &mi));
	struct ktrace_rec_free f = { .base = 0x7f0000100000ull, .size = 1 << 20, .stream = 0x5001, .kind = KTRACE_ALLOC_ASYNC };
	put(buf, ktrace_encode_free(buf, sizeof buf, &f));
	struct ktrace_rec_module_unload mu = { .module_id = 1 };
	put(buf, ktrace_encode_module_unload(buf, sizeof buf, &mu));
	ktrace_writer_count(w, KTRACE_CTR_LAUNCHES_SEEN, 6);
	ktrace_writer_count(w, KTRACE_CTR_HASH_SKIPPED_CAPTURE, 1);
	group_done();
	scenario_basic_results();
}

static uint64_t mix(uint64_t x)
{
	x = (x + 1) * 0xbf58476d1ce4e5b9ull;
	return x ^ (x >> 31);
}

static unsigned long many_launches = 300;
static long diverge_at = -1; /* --diverge-at K: launch K's output digest differs */
static uint64_t addr_shift;  /* --shift-addresses N: every address N bytes higher */

static void scenario_many(void)
{
	module(1, "/tmp/many.cubin");
	kernel(1, "_Z6vecAddPKfS0_Pfi", "vecAdd(float const*, float const*, float*, int)", KTRACE_LAYOUT_NVINFO,
	       vecadd_params, 4, 28);
	kernel(2, "triton_poi_fused_add_0", "", KTRACE_LAYOUT_NVINFO, triton_params, 9, 72);
	kernel(3, "reduce_sum", "", KTRACE_LAYOUT_PTX, vecadd_params, 2, 16);
	uint8_t p[72];
	for (unsigned long i = 0; i < many_launches; i++) {
		uint64_t kid = 1 + (uint64_t)(i % 3);
		memset(p, 0, sizeof p);
		uint64_t in = 0x7f0000000000ull + addr_shift, out = 0x7f0000100000ull + addr_shift;
		le64(p, in + (uint64_t)(i % 7) * 4096);
		le64(p + 8, out);
		le32(p + 24, (uint32_t)i);
		struct ktrace_region r[2] = {
			region(0, 0, in + (uint64_t)(i % 7) * 4096, in, 4096, mix((uint64_t)i), mix((uint64_t)i)),
			region(8, 1, out, out, 8192, (uint64_t)i * 0x9e3779b97f4a7c15ull,
			       (uint64_t)(i + 1) * 0x9e3779b97f4a7c15ull),
		};
		if ((long)i == diverge_at)
			r[1].post_hash ^= 1;
		launch(kid, p, kid == 2 ? 72 : 28, r, i % 5 == 4 ? 1 : 2, KTRACE_LAUNCHF_HASHED);
		if (i % 50 == 49)
			group_done();
		if (i % 1000 == 999 && many_launches > 300 && ktrace_writer_flush(w))
			die("flush failed"); /* let the writer keep up: put() refuses to drop */
	}
	ktrace_writer_count(w, KTRACE_CTR_LAUNCHES_SEEN, many_launches);
}

/* One launch of a kernel taking a pointer and a closure, with a region of
 * each source --summary tells apart: the pointer parameter, a typed word of
 * the closure (IN_STRUCT) and a guessed one (IN_STRUCT | GUESSED) whose
 * post-digest was not measured (POST_CARRIED: a read-only input). */
static void scenario_sources(void)
{
	static const struct ktrace_param_desc params[] = {
		{ 0, KTRACE_PARAM_POINTER, KTRACE_NAME_DEMANGLED, 0, 8, 0, S(""), S("float*"), 0, 0 },
		{ 1, KTRACE_PARAM_STRUCT, KTRACE_NAME_DEMANGLED, 8, 32, 0, S(""), S("at::native::f()::{lambda(int)#1}"),
		  0, 0 },
	};
	uint8_t p[40];

	module(1, "/tmp/sources.cubin");
	kernel(1, "_Z6sourcesPfN2at6native1fEv", "sources(float*, at::native::f()::{lambda(int)#1})",
	       KTRACE_LAYOUT_NVINFO, params, 2, 40);
	memset(p, 0, sizeof p);
	le64(p, 0x7f0000000000ull);
	le64(p + 8, 0x7f0000010000ull);
	le64(p + 24, 0x7f0000020000ull);
	struct ktrace_region r[3] = {
		region(0, 0, 0x7f0000000000ull, 0x7f0000000000ull, 4096, 1, 2),
		region(8, 1, 0x7f0000010000ull, 0x7f0000000000ull, 8192, 3, 4),
		region(24, 1, 0x7f0000020000ull, 0x7f0000000000ull, 16384, 5, 5),
	};
	r[1].flags |= KTRACE_REGIONF_IN_STRUCT;
	r[2].flags |= KTRACE_REGIONF_IN_STRUCT | KTRACE_REGIONF_GUESSED | KTRACE_REGIONF_POST_CARRIED;
	launch(1, p, 40, r, 3, KTRACE_LAUNCHF_HASHED);
}

static void order(uint32_t op, uint64_t stream, uint64_t event, uint32_t flags, int32_t prio)
{
	struct ktrace_rec_order o = { .op = op, .tid = 4243, .stream = stream, .event = event, .context = 0xc0ffee00,
				      .launch_seq_before = launch_no, .device = 0, .stream_flags = flags,
				      .priority = prio };
	put(buf, ktrace_encode_order(buf, sizeof buf, &o));
}

/* ORDER records only (the launches and copies they order are left out, so
 * this output changes only with ORDER's): streams 0x5000 (created
 * non-blocking) and 0x5001 (created with a priority), an event, every
 * synchronisation and query, one order ktrace cannot model.  launch_no
 * advances as if launches and a copy were made in between. */
static void scenario_order(void)
{
	order(KTRACE_ORDER_STREAM_CREATE, 0x5000, 0, KTRACE_STREAM_NON_BLOCKING, 0);
	order(KTRACE_ORDER_STREAM_CREATE, 0x5001, 0, 0, -1);
	launch_no++;
	order(KTRACE_ORDER_EVENT_RECORD, 0x5001, 0xe1, 0, 0);
	order(KTRACE_ORDER_STREAM_WAIT_EVENT, 0x5000, 0xe1, 0, 0);
	order(KTRACE_ORDER_EVENT_QUERY_DONE, 0, 0xe1, 0, 0);
	order(KTRACE_ORDER_EVENT_SYNC, 0, 0xe1, 0, 0);
	launch_no++;
	order(KTRACE_ORDER_STREAM_SYNC, 2, 0, 0, 0);
	order(KTRACE_ORDER_STREAM_QUERY_DONE, 0x5001, 0, 0, 0);
	order(KTRACE_ORDER_UNKNOWN, 0x5000, 0, 0, 0);
	order(KTRACE_ORDER_CTX_SYNC, 0, 0, 0, 0);
	order(KTRACE_ORDER_STREAM_DESTROY, 0x5000, 0, 0, 0);
	order(KTRACE_ORDER_STREAM_DESTROY, 0x5001, 0, 0, 0);
}

/* A launch of kernel kid on `stream` (launch() picks the stream by the kernel id). */
static void launch_on(uint64_t kid, uint64_t stream)
{
	struct ktrace_rec_launch l = { .launch_seq = launch_no++, .kernel_id = kid, .context = 0xc0ffee00,
				       .stream = stream, .tid = 4243, .device = 0, .api = KTRACE_API_LAUNCH_KERNEL,
				       .grid = { 1, 1, 1 }, .block = { 32, 1, 1 } };
	put(buf, ktrace_encode_launch(buf, sizeof buf, &l, NULL));
}

/* Launches on three streams and the ORDER records between them, for the
 * filters of ktrace-dump: kern_a on 0x5001 (ops 0, 3), kern_b on 0x5000
 * (op 1, which waits for an event kern_a's stream recorded, e1, and for one
 * of 0x5002, e2), kern_c on 0x5002 (op 2); syncs of a stream, of e1, of the
 * context; a stream destroyed. */
static void scenario_order_filter(void)
{
	kernel(1, "kern_a", "", KTRACE_LAYOUT_NONE, NULL, 0, 0);
	kernel(2, "kern_b", "", KTRACE_LAYOUT_NONE, NULL, 0, 0);
	kernel(3, "kern_c", "", KTRACE_LAYOUT_NONE, NULL, 0, 0);
	order(KTRACE_ORDER_STREAM_CREATE, 0x5000, 0, KTRACE_STREAM_NON_BLOCKING, 0);
	order(KTRACE_ORDER_STREAM_CREATE, 0x5001, 0, 0, 0);
	order(KTRACE_ORDER_STREAM_CREATE, 0x5002, 0, 0, 0);
	launch_on(1, 0x5001);
	order(KTRACE_ORDER_EVENT_RECORD, 0x5001, 0xe1, 0, 0);
	order(KTRACE_ORDER_STREAM_WAIT_EVENT, 0x5000, 0xe1, 0, 0);
	launch_on(2, 0x5000);
	order(KTRACE_ORDER_EVENT_RECORD, 0x5002, 0xe2, 0, 0);
	order(KTRACE_ORDER_STREAM_WAIT_EVENT, 0x5000, 0xe2, 0, 0);
	launch_on(3, 0x5002);
	order(KTRACE_ORDER_STREAM_SYNC, 0x5002, 0, 0, 0);
	order(KTRACE_ORDER_EVENT_SYNC, 0, 0xe1, 0, 0);
	launch_on(1, 0x5001);
	order(KTRACE_ORDER_CTX_SYNC, 0, 0, 0, 0);
	order(KTRACE_ORDER_STREAM_DESTROY, 0x5001, 0, 0, 0);
}

static uint8_t graph_params[28];

/* The kernel node's parameters. */
static void graph_params_fill(void)
{
	memset(graph_params, 0, sizeof graph_params);
	le64(graph_params, 0x7f0000000000ull);
	le64(graph_params + 8, 0x7f0000001000ull);
	le64(graph_params + 16, 0x7f0000002000ull);
	le32(graph_params + 24, 1024);
}

static void graph_kernel(void)
{
	graph_params_fill();
	kernel(1, "_Z6vecAddPKfS0_Pfi", "vecAdd(float const*, float const*, float*, int)", KTRACE_LAYOUT_NVINFO,
	       vecadd_params, 4, 28);
}

/* Exec 3 of graph 2 at revision rev (0: instantiated, else an exec update). */
static void graph_record(uint32_t rev)
{
	struct ktrace_graph_node n[5] = {
		{ .kind = KTRACE_GNODE_CHILD, .handle = 0x9000, .parent = KTRACE_GRAPH_NO_PARENT, .child_graph_id = 12 },
		{ .kind = KTRACE_GNODE_KERNEL, .flags = KTRACE_GNODEF_RECORDED | KTRACE_GNODEF_HASHED, .handle = 0x9001,
		  .parent = 0, .kernel_id = 1, .grid = { 4, 1, 1 }, .block = { 256, 1, 1 }, .param_bytes_len = 28,
		  .param_bytes = graph_params },
		{ .kind = KTRACE_GNODE_MEMCPY, .flags = KTRACE_GNODEF_RECORDED, .handle = 0x9002,
		  .parent = KTRACE_GRAPH_NO_PARENT, .dst = 0x7f0000003000ull, .src = 0x7f0000002000ull, .bytes = 4096,
		  .dir = KTRACE_COPY_DTOD },
		{ .kind = KTRACE_GNODE_MEMSET, .flags = KTRACE_GNODEF_RECORDED, .handle = 0x9003,
		  .parent = KTRACE_GRAPH_NO_PARENT, .dst = 0x7f0000004000ull, .value = 0, .count = 1024, .elem_size = 4 },
		{ .kind = KTRACE_GNODE_CONDITIONAL, .handle = 0x9004, .parent = KTRACE_GRAPH_NO_PARENT },
	};
	struct ktrace_graph_edge e[3] = { { 1, 2 }, { 1, 3 }, { 3, 4 } };
	struct ktrace_rec_graph g = { .exec_id = 3, .graph_id = 2, .context = 0xc0ffee00, .revision = rev,
				      .cause = rev ? KTRACE_GRAPH_EXEC_UPDATE : KTRACE_GRAPH_INSTANTIATE, .nnodes = 5,
				      .nedges = 3, .untraced = KTRACE_GRAPH_UNTRACED_CONDITIONAL, .tid = launch_tid,
				      .device = 0,
				      .nodes = n, .edges = e };
	put(buf, ktrace_encode_graph(buf, sizeof buf, &g));
}

/* Graph launch number gl of exec 3 at revision rev on stream 0x5000: its
 * kernel node, then its memcpy and memset nodes, each with the graph reference. */
static void graph_launch(uint64_t gl, uint32_t rev)
{
	struct ktrace_graph_ref ref = { .exec_id = 3, .graph_id = 2, .launch = gl, .launch_seq = launch_no, .node = 1,
					.revision = rev };
	struct ktrace_region r = region(16, 2, 0x7f0000002000ull, 0x7f0000000000ull, 4096, 0x1234, 0x5678);
	struct ktrace_rec_launch l = { .launch_seq = launch_no++, .kernel_id = 1, .context = 0xc0ffee00,
				       .stream = 0x5000, .tid = 4243, .api = KTRACE_API_GRAPH,
				       .flags = KTRACE_LAUNCHF_HASHED | KTRACE_LAUNCHF_GRAPH, .grid = { 4, 1, 1 },
				       .block = { 256, 1, 1 }, .param_bytes_len = 28, .nregions = 1,
				       .param_bytes = graph_params, .graph = ref };
	put(buf, ktrace_encode_launch(buf, sizeof buf, &l, &r));
	ref.node = 2;
	struct ktrace_rec_memcpy mc = { .op_seq = launch_no++, .dst = 0x7f0000003000ull, .src = 0x7f0000002000ull,
					.bytes = 4096, .stream = 0x5000, .context = 0xc0ffee00, .dir = KTRACE_COPY_DTOD,
					.flags = KTRACE_COPYF_ASYNC | KTRACE_COPYF_GRAPH, .tid = 4243, .graph = ref };
	put(buf, ktrace_encode_memcpy(buf, sizeof buf, &mc));
	ref.node = 3;
	struct ktrace_rec_memset ms = { .op_seq = launch_no++, .dst = 0x7f0000004000ull, .count = 1024,
					.stream = 0x5000, .context = 0xc0ffee00, .elem_size = 4,
					.flags = KTRACE_COPYF_ASYNC | KTRACE_COPYF_GRAPH, .tid = 4243, .graph = ref };
	put(buf, ktrace_encode_memset(buf, sizeof buf, &ms));
}

/* One graph instantiated (exec 3 of graph 2) and launched once on stream
 * 0x5000: its kernel node (vecAdd, inside child graph 12), then its memcpy and
 * memset nodes, each with the graph reference. */
static void scenario_graph(void)
{
	graph_kernel();
	graph_record(0);
	graph_launch(0, 0);
}

/* A GPUTIME record of op (a graph launch's first op with KTRACE_GPUTIMEF_GRAPH)
 * on stream 0x5000: from start to end ns after the trace's start. */
static void gputime(uint64_t op, uint64_t start, uint64_t end, uint32_t flags)
{
	struct ktrace_rec_gputime g = { .op_seq = op, .context = 0xc0ffee00, .stream = 0x5000,
					.start_ns = START_MONO + start, .end_ns = START_MONO + end,
					.ref_ns = START_MONO + 500, .ref_err_ns = 300, .device = 0, .flags = flags,
					.tid = 4243 };
	put(buf, ktrace_encode_gputime(buf, sizeof buf, &g));
}

/* Ops 0-4 launched at 2-6 us, op 1 measured at 4-14 us, op 4 at 15.5-25.5 us
 * (ops 2 and 3, unmeasured, have 1.5 us between them); graph launch ops 5-7
 * measured at 26-30 us; op 8 launched at 11 us, unmeasured. */
static void scenario_gputimes(void)
{
	graph_kernel();
	launch_stream = 0x5000;
	for (int i = 0; i < 5; i++)
		launch(1, graph_params, 28, NULL, 0, 0);
	graph_record(0);
	graph_launch(0, 0);
	launch(1, graph_params, 28, NULL, 0, 0);
	gputime(1, 4000, 14000, 0);
	gputime(4, 15500, 25500, 0);
	gputime(5, 26000, 30000, KTRACE_GPUTIMEF_GRAPH);
	ktrace_writer_count(w, KTRACE_CTR_GPU_TIMES, 3);
	ktrace_writer_count(w, KTRACE_CTR_GPU_TIMES_LOST, 1);
}

/* The next record as record number seq, by a thread whose launches run on stream. */
static void as(uint64_t seq, uint32_t tid, uint64_t stream)
{
	atomic_store(&record_seq, seq);
	launch_tid = tid;
	launch_stream = stream;
}

static void scenario_threads(void)
{
	uint8_t p[28];
	struct ktrace_rec_memcpy mc = { .dst = 0x7f0000000000ull, .src = 0x600000, .bytes = 4096, .stream = 0x5000,
					.context = 0xc0ffee00, .dir = KTRACE_COPY_HTOD, .tid = 4243 };
	struct ktrace_rec_memset ms = { .dst = 0x7f0000100000ull, .count = 1024, .stream = 0x5001,
					.context = 0xc0ffee00, .elem_size = 4, .tid = 4244 };

	memset(p, 0, sizeof p);
	/* thread 4243, stream 0x5000: records 1, 3, 4, 6 */
	as(1, 4243, 0x5000);
	module(1, "/tmp/kernels.cubin");
	as(3, 4243, 0x5000);
	launch_no = 0;
	launch(1, p, 28, NULL, 0, 0);
	mc.op_seq = 1;
	put(buf, ktrace_encode_memcpy(buf, sizeof buf, &mc));
	as(6, 4243, 0x5000);
	launch_no = 3;
	launch(2, p, 28, NULL, 0, 0); /* kernel 2's record is record 8 */
	group_done();
	/* thread 4244, stream 0x5001: records 2, 5, 7, 8, 9 */
	as(2, 4244, 0x5001);
	kernel(1, "_Z6vecAddPKfS0_Pfi", "vecAdd(float const*, float const*, float*, int)", KTRACE_LAYOUT_NVINFO,
	       vecadd_params, 4, 28);
	as(5, 4244, 0x5001);
	launch_no = 2;
	launch(1, p, 28, NULL, 0, 0);
	ms.op_seq = 4;
	as(7, 4244, 0x5001);
	put(buf, ktrace_encode_memset(buf, sizeof buf, &ms));
	as(8, 4244, 0x5001);
	kernel(2, "triton_poi_fused_add_0", "", KTRACE_LAYOUT_NVINFO, triton_params, 2, 16);
	as(9, 4244, 0x5001);
	launch_no = 5;
	launch(1, p, 28, NULL, 0, 0);
	launch_no = 6;
	atomic_store(&record_seq, 10);
}

/* Scenario graph's records as two threads' writers interleave them: the
 * launching thread's block first (two graph launches, records 3-5 and 7-9),
 * then the instantiating thread's (the KERNEL record 1, the GRAPH record 2 and
 * the exec update's GRAPH record 6), so GRAPH records come after launches that
 * follow them in seq. */
static void scenario_graph_threads(void)
{
	graph_params_fill();
	as(3, 4243, 0x5000);
	launch_no = 0;
	graph_launch(0, 0);
	as(7, 4243, 0x5000);
	graph_launch(1, 1);
	group_done();
	as(1, 4244, 0x5000);
	graph_kernel();
	graph_record(0);
	as(6, 4244, 0x5000);
	graph_record(1);
	atomic_store(&record_seq, 10);
}

static void range_src(uint32_t id, uint32_t parent, uint32_t kind, uint32_t flags, const char *domain,
		      const char *msg, const char *src)
{
	struct ktrace_rec_range r = { .range_id = id, .parent = parent, .kind = kind, .flags = flags };

	r.domain = (struct ktrace_str){ domain, (uint16_t)strlen(domain) };
	r.message = (struct ktrace_str){ msg, (uint16_t)strlen(msg) };
	r.source = (struct ktrace_str){ src, (uint16_t)strlen(src) };
	put(buf, ktrace_encode_range(buf, sizeof buf, &r));
}

static void range_rec(uint32_t id, uint32_t parent, uint32_t kind, uint32_t flags, const char *domain,
		      const char *msg)
{
	range_src(id, parent, kind, flags, domain, msg, "");
}

static void launch_in(uint64_t kid, uint32_t range, uint16_t seq_kind, uint64_t seq, uint16_t ref_flags)
{
	uint8_t p[28] = { 0 };
	struct ktrace_rec_launch l = { .launch_seq = launch_no++, .kernel_id = kid, .context = 0xc0ffee00,
				       .stream = 0x5000, .tid = 4243, .api = KTRACE_API_LAUNCH_KERNEL,
				       .flags = KTRACE_LAUNCHF_RANGE, .grid = { 4, 1, 1 }, .block = { 256, 1, 1 },
				       .param_bytes_len = 28, .param_bytes = p,
				       .range = { range, seq_kind, ref_flags, seq } };
	put(buf, ktrace_encode_launch(buf, sizeof buf, &l, NULL));
}

static void scenario_ranges(void)
{
	static const struct ktrace_py_frame frames[] = {
		{ 42, S("/work/model.py"), S("Net.forward") },
		{ 7, S("/work/train.py"), S("<module>") },
	};
	struct ktrace_rec_pystack py = { .launch_seq = 0, .fw_seq = 12, .tid = 4243,
					 .kind = KTRACE_PYSTACK_FORWARD_OP, .nframes = 2, .frames = frames };
	struct ktrace_rec_note mark = { KTRACE_NOTE_INFO, KTRACE_NOTE_CODE_NVTX_MARK, S("dom: checkpoint") };
	struct ktrace_rec_memcpy mc = { .op_seq = 0, .dst = 0x7f0000000000ull, .src = 0x600000, .bytes = 4096,
					.stream = 0x5000, .context = 0xc0ffee00, .dir = KTRACE_COPY_HTOD,
					.flags = KTRACE_COPYF_RANGE, .tid = 4243, .range = { 1, 0, 0, 0 } };
	struct ktrace_rec_memset ms = { .dst = 0x7f0000100000ull, .count = 1024, .stream = 0x5000,
					.context = 0xc0ffee00, .elem_size = 4, .flags = KTRACE_COPYF_RANGE, .tid = 4243,
					.range = { 9, 0, 0, 0 } };

	kernel(1, "_Z6vecAddPKfS0_Pfi", "vecAdd(float const*, float const*, float*, int)", KTRACE_LAYOUT_NVINFO,
	       vecadd_params, 4, 28);
	range_rec(1, 0, KTRACE_RANGE_PUSH, 0, "", "train_step");
	launch_no = 0;
	mc.op_seq = launch_no++;
	put(buf, ktrace_encode_memcpy(buf, sizeof buf, &mc));
	range_rec(2, 1, KTRACE_RANGE_PUSH, KTRACE_RANGEF_FW_SEQ, "", "aten::linear");
	range_rec(3, 2, KTRACE_RANGE_PUSH, KTRACE_RANGEF_FW_SEQ, "", "aten::addmm");
	launch_in(1, 3, KTRACE_FWSEQ_FORWARD, 12, 0);
	put(buf, ktrace_encode_pystack(buf, sizeof buf, &py));
	range_rec(4, 1, KTRACE_RANGE_PUSH, KTRACE_RANGEF_BACKWARD, "",
		  "autograd::engine::evaluate_function: AddmmBackward0");
	range_rec(5, 4, KTRACE_RANGE_PUSH, KTRACE_RANGEF_FW_SEQ | KTRACE_RANGEF_BACKWARD, "", "AddmmBackward0");
	range_rec(6, 5, KTRACE_RANGE_PUSH, KTRACE_RANGEF_FW_SEQ, "", "aten::mm");
	launch_in(1, 6, KTRACE_FWSEQ_BACKWARD, 12, 0);
	put(buf, ktrace_encode_note(buf, sizeof buf, &mark));
	range_src(7, 0, KTRACE_RANGE_PUSH, 0, "TSL",
		  "XlaModule:#prefix=jit(step)/jit(main),hlo_module=jit_step,program_id=3#",
		  "\n/work/train.py:7[<module>]\n");
	range_src(8, 7, KTRACE_RANGE_PUSH, 0, "TSL", "Thunk:#name=model/scatter-add,hlo_op=scatter_add_fusion#",
		  "\n- /work/model.py:28[step]\n-- /work/model.py:30[loss] scatter-add\n");
	launch_in(1, 8, KTRACE_FWSEQ_NONE, 0, KTRACE_RANGEREF_GRAPH_NODE); /* a command buffer's node */
	range_rec(9, 0, KTRACE_RANGE_START, 0, "", "loading");
	ms.op_seq = launch_no++;
	put(buf, ktrace_encode_memset(buf, sizeof buf, &ms));
	launch(1, buf + 60000, 28, NULL, 0, 0); /* no range open */
}

int ktgen_job(const char *scenario, const char *dir); /* ktgen_job.c */

int main(int argc, char **argv)
{
	const char *scenario = "basic";
	uint32_t frame_bytes = 0;
	int major = -1;
	int i;
	if (argc == 4 && !strcmp(argv[1], "--job"))
		return ktgen_job(argv[2], argv[3]);
	for (i = 1; i < argc - 1; i++) {
		if (!strcmp(argv[i], "--scenario"))
			scenario = argv[++i];
		else if (!strcmp(argv[i], "--frame-bytes"))
			frame_bytes = (uint32_t)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--cut-at-flush"))
			cut_at = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--major"))
			major = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--launches"))
			many_launches = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--diverge-at"))
			diverge_at = strtol(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--shift-addresses"))
			addr_shift = strtoull(argv[++i], NULL, 0);
		else
			break;
	}
	if (i != argc - 1 || argv[argc - 1][0] == '-')
		die("usage: ktgen [--scenario basic|many|order|order-filter|graph|threads|graph-threads|ranges|gputimes] "
		    "[--launches N] [--diverge-at K] [--shift-addresses N] [--frame-bytes N] [--cut-at-flush K] [--major N] OUT");
	out_path = argv[argc - 1];

	struct ktrace_rec_header h = { .pid = 4242, .ppid = 1, .rank = 0, .digest_alg = 1,
				       .start_realtime_ns = 1700000000123456789ull, .start_monotonic_ns = START_MONO,
				       .host = S("testhost"), .cmdline = S("python train.py --lr 0.1"),
				       .ktrace_version = S("0.1.0"), .config = S("KTRACE_HASH=1 KTRACE_OUTPUT=t.ktrace") };
	struct ktrace_writer_opts o = { .path = out_path, .overwrite = 1, .frame_bytes = frame_bytes,
					.flush_ms = 10000, .header = &h, .seq = &record_seq };
	char err[512];
	if (!strcmp(scenario, "gputimes"))
		h.config = (struct ktrace_str)S("KTRACE_HASH=1 KTRACE_OUTPUT=t.ktrace KTRACE_GPU_TIMES=4");
	w = ktrace_writer_open(&o, err, sizeof err);
	if (!w)
		die(err);
	if (!strcmp(scenario, "basic"))
		scenario_basic();
	else if (!strcmp(scenario, "many"))
		scenario_many();
	else if (!strcmp(scenario, "order"))
		scenario_order();
	else if (!strcmp(scenario, "order-filter"))
		scenario_order_filter();
	else if (!strcmp(scenario, "graph"))
		scenario_graph();
	else if (!strcmp(scenario, "threads"))
		scenario_threads();
	else if (!strcmp(scenario, "graph-threads"))
		scenario_graph_threads();
	else if (!strcmp(scenario, "ranges"))
		scenario_ranges();
	else if (!strcmp(scenario, "gputimes"))
		scenario_gputimes();
	else if (!strcmp(scenario, "sources"))
		scenario_sources();
	else
		die("unknown scenario");
	struct ktrace_rec_end e = { .reason = KTRACE_END_EXIT, .status = 0, .launches = launch_no };
	ktrace_writer_close(w, &e);

	if (cut_at) {
		if (cut_at > nflush)
			die("--cut-at-flush: not that many flushes");
		if (truncate(out_path, flush_sizes[cut_at - 1]))
			die("cannot truncate the output");
	}
	if (major >= 0) {
		int fd = open(out_path, O_WRONLY);
		/* major N, minor 0 */
		uint8_t v[4] = { (uint8_t)major, (uint8_t)(major >> 8), 0, 0 };
		if (fd < 0 || pwrite(fd, v, 4, 8) != 4 || close(fd))
			die("cannot patch the version");
	}
	return 0;
}
