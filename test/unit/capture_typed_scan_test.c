/* test/unit/capture_typed_scan_test.c: the typed pointer scan end to end,
 * on kernels built here with nvcc whose parameters hand over their tensors
 * the way PyTorch's do (test/unit/capture_struct_kernels.cu): std::array<char*,
 * N>, offset calculators and loaders, TensorInfo, a packed accessor,
 * multi-tensor-apply metadata, and a closure whose type says nothing.
 *
 * Each kernel is launched through ktrace_on_launch with pointers in the
 * pointer fields and decoys elsewhere (strides, sizes, counts and padding
 * that hold values inside tracked allocations), and the LAUNCH records are
 * read back: typed parameters give exactly their pointer words (a null one
 * none, one outside every allocation an unhashed region), a closure gives
 * every word that looks like a pointer, flagged guessed.  Twice: with the
 * module's image parsed (an Inductor/Triton-like module), and with the
 * driver's layout and the mangled name alone (a library kernel, as
 * libtorch_cuda.so's are at their first launch).  Hashing is on: the fake
 * pipeline below keeps the regions it is handed, extents planned. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test/unit/capture_support.h"
#include "format/trace_writer.h"
#include "interpose/capture/capture.h"
#include "interpose/capture/memory_events.h"
#include "interpose/model/alloc_map.h"
#include "interpose/hash/hash_pipeline.h"
#include "interpose/model/param_scan.h"
#include "interpose/registry/meta_worker.h"
#include "interpose/registry/registry.h"
#include "interpose/model/services.h"
#include "interpose/model/tracer.h"
#include "meta/kernel_meta.h"

#define A_BASE 0x7f0000100000ull /* tracked: 1 MiB */
#define A_SIZE (1ull << 20)
#define B_BASE 0x7f0000400000ull /* tracked: 64 KiB */
#define B_SIZE (64ull << 10)
#define UNTRACKED 0x7f0000900000ull
#define CTX ((CUcontext)(uintptr_t)0xc0)
#define MODULE 0xa1

/* ---- fake hash pipeline: writes the record it is handed ------------------------- */

static struct ktrace_rec_launch pre_launch;
static struct ktrace_region pre_regions[4096];
static uint8_t pre_params[KTRACE_PARAM_MAX_BYTES];
static uint64_t pre_time;
static int job_token;

struct ktrace_hash_job *ktrace_hash_pre(CUcontext ctx, CUstream stream, const struct ktrace_rec_launch *r,
					const struct ktrace_region *regions, const struct ktrace_alloc_info *allocs,
					uint64_t time_ns, uint32_t *skip)
{
	(void)allocs;
	(void)ctx, (void)stream, (void)skip;
	assert_true(r->nregions <= 4096 && r->param_bytes_len <= sizeof(pre_params));
	pre_launch = *r;
	memcpy(pre_regions, regions, r->nregions * sizeof(*regions));
	memcpy(pre_params, r->param_bytes, r->param_bytes_len);
	pre_launch.param_bytes = pre_params;
	pre_time = time_ns;
	return (struct ktrace_hash_job *)&job_token;
}

/* What the pipeline does once the hashes landed: the record of the launch
 * it was given. */
void ktrace_hash_post(struct ktrace_hash_job *job, CUresult launch_result)
{
	size_t size = ktrace_encode_launch(NULL, 0, &pre_launch, pre_regions);
	void *p = ktrace_writer_reserve(ktrace_tracer.writer, size);

	(void)launch_result;
	assert_ptr_equal(job, &job_token);
	assert_non_null(p);
	ktrace_encode_launch(p, size, &pre_launch, pre_regions);
	ktrace_writer_commit_at(ktrace_tracer.writer, p, pre_time);
}

/* No copy here reaches the pipeline. */
uint32_t ktrace_hash_copy(CUcontext ctx, CUstream stream, const struct ktrace_rec_memcpy *r, uint64_t time_ns)
{
	(void)ctx, (void)stream, (void)r, (void)time_ns;
	return KTRACE_DST_DIGEST_SKIP_ASYNC;
}

static CUresult fake_real(const struct ktrace_launch_args *a, void *ctx)
{
	(void)a, (void)ctx;
	return CUDA_SUCCESS;
}

/* ---- the kernels ------------------------------------------------------------------- */

static uint8_t *cubin;
static size_t cubin_len;
static struct ktrace_meta_image *meta;

enum { K_VECTORIZED, K_UNROLLED, K_CLOSURE, K_NOCAST, K_MTA, K_MTA_LARGE, K_MTA_SCALARS, K_APPLY2, K_ACCESSOR, NKERNELS };
static const char *const kernel_prefix[NKERNELS] = {
	"_ZN2at6native29vectorized_elementwise_kernel", "_ZN2at6native27unrolled_elementwise_kernel",
	"_ZN2at6native18elementwise_kernel", "_ZN2at6native18elementwise_kernel", "_ZN2at6native25multi_tensor_apply_kernel",
	"_ZN2at6native25multi_tensor_apply_kernel", "_ZN2at6native25multi_tensor_apply_kernel", "_Z6apply2",
	"_Z14accessor_scale",
};
/* and what else the mangled name holds, where the prefix is not enough */
static const char *const kernel_infix[NKERNELS] = {
	[K_CLOSURE] = "ILi128ELi2E", [K_NOCAST] = "ILi128ELi4E",
	[K_MTA] = "18TensorListMetadataILi2ELb0E", [K_MTA_LARGE] = "18TensorListMetadataILi2ELb1E",
	[K_MTA_SCALARS] = "28TensorListScalarListMetadataIfLi2ELb0E",
};

static const struct ktrace_meta_kernel *kernel_meta(int k)
{
	for (uint32_t i = 0; i < meta->nkernels; i++)
		if (!strncmp(meta->kernels[i].name, kernel_prefix[k], strlen(kernel_prefix[k])) &&
		    (!kernel_infix[k] || strstr(meta->kernels[i].name, kernel_infix[k])))
			return &meta->kernels[i];
	fail_msg("no kernel %s in the test cubin", kernel_prefix[k]);
	return NULL;
}

static int group_setup(void **state)
{
	char err[256];

	(void)state;
	ktrace_services.hash_pre = ktrace_hash_pre; /* the stand-ins above */
	ktrace_services.hash_post = ktrace_hash_post;
	ktrace_services.hash_copy = ktrace_hash_copy;
	cubin = read_whole(build_path("test/capture/struct_kernels.cubin"), &cubin_len);
	if (!cubin) {
		print_error("test image missing under %s (make test builds it)\n", build_path(""));
		return -1;
	}
	if (ktrace_meta_parse(cubin, cubin_len, NULL, &meta, err, sizeof err)) {
		print_error("%s\n", err);
		return -1;
	}
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	ktrace_meta_worker_stop();
	ktrace_registry_reset();
	ktrace_meta_free(meta);
	free(cubin);
	free(trace_recs);
	return 0;
}

static int with_module; /* the kernels' module image is known (else: driver layout, mangled name) */

static int setup(void **state)
{
	(void)state;
	fake_driver_reset();
	fake_driver_set_context(CTX, 0, 90);
	ktrace_alloc_map_reset();
	trace_begin(1, 0);
	ktrace_on_alloc(A_BASE, A_SIZE, KTRACE_ALLOC_DEVICE, NULL);
	ktrace_on_alloc(B_BASE, B_SIZE, KTRACE_ALLOC_DEVICE, NULL);
	if (with_module)
		ktrace_on_module_loaded((void *)(uintptr_t)MODULE, 0, cubin, cubin_len, NULL,
					KTRACE_MODSRC_MODULE_LOAD_DATA);
	return 0;
}

static int setup_module(void **state)
{
	with_module = 1;
	return setup(state);
}

static int setup_library(void **state)
{
	with_module = 0;
	return setup(state);
}

/* The driver knows kernel k under handle 0xf0 + k with the cubin's layout. */
static void declare(int k)
{
	const struct ktrace_meta_kernel *mk = kernel_meta(k);
	struct fake_func f;

	memset(&f, 0, sizeof f);
	f.handle = 0xf0 + (uint64_t)k;
	f.name = mk->name;
	f.nparams = mk->nparams;
	assert_true(mk->nparams <= 16);
	for (uint32_t i = 0; i < mk->nparams; i++) {
		f.offset[i] = mk->params[i].offset;
		f.size[i] = mk->params[i].size;
	}
	fake_driver_add(&f);
	if (with_module)
		ktrace_on_function((CUfunction)(uintptr_t)f.handle, (CUmodule)(uintptr_t)MODULE, mk->name);
}

/* Launch kernel k on grid (gx, gy, 1) with the parameter buffer buf (laid
 * out as the cubin says). */
static void launch_grid(int k, uint8_t *buf, uint32_t gx, uint32_t gy)
{
	const struct ktrace_meta_kernel *mk = kernel_meta(k);
	void *kp[16];
	struct ktrace_launch_args a;

	for (uint32_t i = 0; i < mk->nparams; i++)
		kp[i] = buf + mk->params[i].offset;
	memset(&a, 0, sizeof a);
	a.api = KTRACE_API_LAUNCH_KERNEL;
	a.f = (CUfunction)(uintptr_t)(0xf0 + (uint64_t)k);
	a.grid[0] = gx;
	a.grid[1] = gy;
	a.grid[2] = 1;
	a.block[0] = a.block[1] = a.block[2] = 1;
	a.stream = (CUstream)(uintptr_t)0x5700;
	a.kernel_params = kp;
	assert_int_equal(ktrace_on_launch(&a, fake_real, NULL), CUDA_SUCCESS);
}

static void launch(int k, uint8_t *buf)
{
	launch_grid(k, buf, 1, 1);
}

static void put64(uint8_t *buf, uint32_t off, uint64_t v)
{
	memcpy(buf + off, &v, 8);
}

/* Fill [off, off+len) with decoys: words inside the tracked allocations. */
static void decoys(uint8_t *buf, uint32_t off, uint32_t len)
{
	for (uint32_t o = (off + 7) & ~7u; o + 8 <= off + len; o += 8)
		put64(buf, o, (o / 8) % 2 ? A_BASE + 8 * o : B_BASE + o);
}

/* The regions of the i-th LAUNCH record: their offsets and flags. */
#define GOT_MAX 1024
struct got {
	uint32_t n, off[GOT_MAX];
	uint16_t flags[GOT_MAX]; /* IN_STRUCT, GUESSED, UNHASHED */
	uint16_t all_flags[GOT_MAX];
	uint64_t ptr[GOT_MAX], alloc[GOT_MAX];
};

static void regions_of(size_t i, struct got *g)
{
	const struct loaded_rec *l = trace_nth(KTRACE_REC_LAUNCH, i);
	struct ktrace_rec_launch r;

	assert_non_null(l);
	assert_int_equal(ktrace_decode_launch(l->data, l->len, &r), 0);
	assert_true(r.nregions <= GOT_MAX);
	g->n = r.nregions;
	for (uint32_t j = 0; j < r.nregions; j++) {
		struct ktrace_region reg;

		ktrace_launch_region(&r, j, &reg);
		g->off[j] = reg.param_offset;
		g->flags[j] = reg.flags & (KTRACE_REGIONF_IN_STRUCT | KTRACE_REGIONF_GUESSED | KTRACE_REGIONF_UNHASHED);
		g->all_flags[j] = reg.flags;
		g->ptr[j] = reg.ptr;
		g->alloc[j] = reg.alloc_base;
	}
}

static void expect_typed(const struct got *g, uint32_t n, const uint32_t *offs)
{
	if (g->n != n)
		fail_msg("%u regions, expected %u (with_module %d)", g->n, n, with_module);
	for (uint32_t j = 0; j < n; j++) {
		assert_int_equal(g->off[j], offs[j]);
		assert_int_equal(g->flags[j] & KTRACE_REGIONF_GUESSED, 0);
	}
}

/* ---- the cases ------------------------------------------------------------------------ */

/* vectorized_elementwise_kernel(int, AddFunctor, std::array<char*, 3>) and
 * unrolled_elementwise_kernel(int, AddFunctor, std::array<char*, 2>,
 * OffsetCalculator<1>, OffsetCalculator<1>, LoadWithCast<1>, StoreWithCast<1>):
 * the array's slots, nothing of the calculators and loaders. */
static void test_elementwise(void **state)
{
	static const uint32_t vec[] = { 8, 16, 24 }, unr[] = { 8, 16 };
	uint8_t buf[1024];
	struct got g;

	(void)state;
	declare(K_VECTORIZED);
	declare(K_UNROLLED);
	memset(buf, 0, sizeof buf);
	put64(buf, 8, A_BASE);
	put64(buf, 16, A_BASE + 4096);
	put64(buf, 24, B_BASE);
	launch(K_VECTORIZED, buf);
	memset(buf, 0, sizeof buf);
	decoys(buf, 24, 848 - 24); /* both calculators, the loader and the storer */
	put64(buf, 8, B_BASE + 512);
	put64(buf, 16, A_BASE);
	launch(K_UNROLLED, buf);
	trace_end();
	regions_of(0, &g);
	expect_typed(&g, 3, vec);
	for (uint32_t j = 0; j < 3; j++)
		assert_int_equal(g.flags[j], KTRACE_REGIONF_IN_STRUCT);
	regions_of(1, &g);
	expect_typed(&g, 2, unr);
}

/* The i-th LAUNCH record has n regions, region j read-only (POST_CARRIED)
 * exactly when ro[j]. */
static void expect_read_only(size_t i, uint32_t n, const int *ro)
{
	struct got g;

	regions_of(i, &g);
	assert_int_equal(g.n, n);
	for (uint32_t j = 0; j < n; j++)
		assert_int_equal((g.all_flags[j] & KTRACE_REGIONF_POST_CARRIED) != 0, ro[j]);
}

/* ATen's vectorized and unrolled kernels write data[0] only: data[1] and
 * data[2] are read-only inputs, also in the allocation of the output (a
 * caching allocator's segment) as long as their bytes are not the
 * output's; an in-place launch (data[1] == data[0]) writes its input. */
static void test_elementwise_inputs_read_only(void **state)
{
	uint8_t buf[1024];

	(void)state;
	ktrace_tracer.cfg.hash_readonly = 1;
	declare(K_VECTORIZED);
	declare(K_UNROLLED);
	memset(buf, 0, sizeof buf);
	put64(buf, 8, A_BASE);
	put64(buf, 16, A_BASE + 4096);
	put64(buf, 24, B_BASE);
	launch(K_VECTORIZED, buf);
	put64(buf, 16, A_BASE); /* in place */
	launch(K_VECTORIZED, buf);
	memset(buf, 0, sizeof buf);
	put64(buf, 8, B_BASE + 512);
	put64(buf, 16, A_BASE);
	launch(K_UNROLLED, buf);
	trace_end();
	expect_read_only(0, 3, (const int[]){ 0, 1, 1 });
	expect_read_only(1, 3, (const int[]){ 0, 0, 1 });
	expect_read_only(2, 2, (const int[]){ 0, 1 });
	ktrace_tracer.cfg.hash_readonly = 0;
}

/* elementwise_kernel(int, gpu_kernel_impl's closure): the closure's type
 * says nothing, so every word that looks like a pointer is one, guessed
 * (the real ones and the decoys alike). */
static void test_closure_is_guessed(void **state)
{
	const struct ktrace_meta_kernel *mk = kernel_meta(K_CLOSURE);
	uint8_t buf[1024];
	struct got g;
	uint32_t size = mk->params[1].size, words = 0;

	(void)state;
	declare(K_CLOSURE);
	memset(buf, 0, sizeof buf);
	decoys(buf, 8, size);
	for (uint32_t o = 8; o + 8 <= 8 + size; o += 8)
		words++;
	launch(K_CLOSURE, buf);
	trace_end();
	regions_of(0, &g);
	assert_int_equal(g.n, words);
	for (uint32_t j = 0; j < g.n; j++)
		assert_int_equal(g.flags[j], KTRACE_REGIONF_IN_STRUCT | KTRACE_REGIONF_GUESSED);
}

/* An IntDivider<uint32_t>(d) as ATen's constructor fills it, at buf + off. */
static void put_divider(uint8_t *buf, uint32_t off, uint32_t d)
{
	uint32_t shift = 0, v[3];

	while ((1u << shift) < d)
		shift++;
	v[0] = d;
	v[1] = (uint32_t)(((1ull << 32) * ((1ull << shift) - d)) / d + 1);
	v[2] = shift;
	memcpy(buf + off, v, sizeof v);
}

/* An OffsetCalculator<nargs> of dims dimensions (sizes 7, 12, 5, ...) at
 * buf + off, the entries past dims left as they were. */
static void put_calculator(uint8_t *buf, uint32_t off, uint32_t dims, uint32_t nargs)
{
	static const uint32_t size[] = { 7, 12, 5, 3 };

	memcpy(buf + off, &dims, 4);
	for (uint32_t i = 0; i < dims; i++) {
		put_divider(buf, off + 4 + 12 * i, size[i % 4]);
		for (uint32_t j = 0; j < nargs; j++) {
			uint32_t stride = 4 * (i + 1) * (j + 1);

			memcpy(buf + off + 304 + 4 * (i * nargs + j), &stride, 4);
		}
	}
}

/* The first LAUNCH record's regions are the closure's three data words from
 * byte `first` of the buffer, guessed (the closure's type names none). */
static void expect_data_words(uint32_t first)
{
	struct got g;

	regions_of(0, &g);
	assert_int_equal(g.n, 3);
	for (uint32_t j = 0; j < 3; j++) {
		assert_int_equal(g.off[j], first + 8 * j);
		assert_int_equal(g.flags[j], KTRACE_REGIONF_IN_STRUCT | KTRACE_REGIONF_GUESSED);
	}
}

/* The same closure holding a real OffsetCalculator<3> of 2 dimensions: the
 * calculator's unset entries (decoys: old pointers) are no pointers, and
 * neither is a stale copy of another calculator among them; the data
 * array's words still are, guessed.  nvcc lays the closure out as its
 * captures are first used: data (24 bytes), the calculator (604), the
 * functor (4). */
static void test_closure_calculator(void **state)
{
	const struct ktrace_meta_kernel *mk = kernel_meta(K_CLOSURE);
	uint8_t buf[1024];
	uint32_t base = mk->params[1].offset, calc = base + 24;

	(void)state;
	assert_int_equal(mk->params[1].size, 632); /* else the compiler laid the closure out otherwise */
	declare(K_CLOSURE);
	memset(buf, 0, sizeof buf);
	decoys(buf, base, 632);
	put_calculator(buf, calc, 2, 3);
	put_calculator(buf, calc + 404, 1, 1); /* a stale copy in the unset strides */
	launch(K_CLOSURE, buf);
	trace_end();
	expect_data_words(base);
}

/* gpu_kernel_impl_nocast's closure as PyTorch lays it out (the calculator
 * first, then data[3], then the functor, a lambda of two arguments): the
 * name says NARGS 3, and with decoys in the calculator's unset entries only
 * the data words are regions. */
static void test_nocast_closure(void **state)
{
	const struct ktrace_meta_kernel *mk = kernel_meta(K_NOCAST);
	uint8_t buf[1024];
	uint32_t base = mk->params[1].offset, data = base + 608;

	(void)state;
	assert_true(mk->params[1].size >= 632 && mk->params[1].size <= 640); /* else laid out otherwise */
	declare(K_NOCAST);
	memset(buf, 0, sizeof buf);
	decoys(buf, base, 604);
	put_calculator(buf, base, 3, 3);
	put64(buf, data, A_BASE);
	put64(buf, data + 8, A_BASE + 4096);
	put64(buf, data + 16, B_BASE);
	launch(K_NOCAST, buf);
	trace_end();
	expect_data_words(data);
}

/* The same closure whose third data word lands in no tracked allocation:
 * the bytes do not show the three pointers the name says, so the name's
 * count is not taken; by the bytes alone (two pointers in a row after the
 * span of two tensors) only that span is skipped, and the decoys after it
 * stay regions beside the two data words. */
static void test_nocast_name_unconfirmed(void **state)
{
	const struct ktrace_meta_kernel *mk = kernel_meta(K_NOCAST);
	uint8_t buf[1024];
	struct got g;
	uint32_t base = mk->params[1].offset, data = base + 608, kept = 0;

	(void)state;
	declare(K_NOCAST);
	memset(buf, 0, sizeof buf);
	decoys(buf, base, 604);
	put_calculator(buf, base, 3, 3);
	put64(buf, data, A_BASE);
	put64(buf, data + 8, A_BASE + 4096);
	put64(buf, data + 16, 0x1000); /* in no allocation */
	launch(K_NOCAST, buf);
	trace_end();
	regions_of(0, &g);
	for (uint32_t j = 0; j < g.n; j++) {
		assert_true(g.off[j] >= base + 504); /* nothing of the span of two tensors */
		kept += g.off[j] < data;
	}
	assert_int_equal(kept, 12); /* the decoys in bytes 504..600 */
	assert_int_equal(g.n, 14);
	assert_int_equal(g.off[12], data);
	assert_int_equal(g.off[13], data + 8);
}

/* ---- multi_tensor_apply_kernel ---------------------------------------------------- */

/* A multi-tensor-apply metadata parameter as PyTorch fills it for one
 * launch: `rows` address rows of `slots` slots at offset 0, the block map
 * (`map_elem`-byte entries) at map_offset.  The launch's blocks go to
 * tensors 0 .. last in increasing order; its used slots hold pointers into
 * A (row 0) and B (row 1); every unused slot holds junk as a stack left it:
 * in turn a value inside A, one outside every allocation, and one inside B.
 * numel, scalars and the chunk map hold decoys; the map's entries after the
 * launch's blocks hold junk too. */
struct mta_param {
	int kernel;
	uint32_t rows, slots, map_offset, map_elem, map_count;
};

static const struct mta_param mta_small = { K_MTA, 2, 64, 1536, 1, 320 };
static const struct mta_param mta_large = { K_MTA_LARGE, 2, 448, 10752, 2, 2240 };
static const struct mta_param mta_scalars = { K_MTA_SCALARS, 2, 64, 1792, 1, 320 };

static void mta_fill(const struct mta_param *p, uint8_t *buf, uint32_t blocks, uint32_t last)
{
	uint32_t size = kernel_meta(p->kernel)->params[0].size;
	static const uint64_t junk[3] = { A_BASE + 0x8000, UNTRACKED, B_BASE + 0x100 };

	memset(buf, 0, size);
	decoys(buf, 8 * p->rows * p->slots, size - 8 * p->rows * p->slots);
	for (uint32_t d = 0; d < p->rows; d++)
		for (uint32_t j = 0; j < p->slots; j++) {
			uint64_t used = (d ? B_BASE : A_BASE) + 64 * j;

			put64(buf, 8 * (d * p->slots + j), j <= last ? used : junk[(d + j) % 3] + 8 * j);
		}
	for (uint32_t b = 0; b < p->map_count; b++) {
		/* block b of the launch: tensor b * (last + 1) / blocks, the last one `last` */
		uint16_t t = b < blocks ? (uint16_t)((uint64_t)b * (last + 1) / blocks) : (uint16_t)(0xfff0 + b % 7);

		memcpy(buf + p->map_offset + p->map_elem * b, &t, p->map_elem);
	}
}

/* The regions of the launch: exactly the used slots of every row, typed. */
static void expect_used_slots(const struct mta_param *p, size_t rec, uint32_t last)
{
	static uint32_t offs[GOT_MAX];
	static struct got g;
	uint32_t n = 0;

	for (uint32_t d = 0; d < p->rows; d++)
		for (uint32_t j = 0; j <= last; j++)
			offs[n++] = 8 * (d * p->slots + j);
	regions_of(rec, &g);
	expect_typed(&g, n, offs);
	for (uint32_t i = 0; i < n; i++) {
		assert_int_equal(g.flags[i], KTRACE_REGIONF_IN_STRUCT);
		assert_int_equal(g.alloc[i], offs[i] < 8 * p->slots ? A_BASE : B_BASE);
	}
}

/* One launch per (blocks, last) of kernel p, then the regions of each. */
static void mta_launches(const struct mta_param *p, const uint32_t (*cases)[2], uint32_t ncases)
{
	static uint8_t buf[KTRACE_PARAM_MAX_BYTES];

	declare(p->kernel);
	for (uint32_t c = 0; c < ncases; c++) {
		mta_fill(p, buf, cases[c][0], cases[c][1]);
		launch_grid(p->kernel, buf, cases[c][0], 1);
	}
	trace_end();
	for (uint32_t c = 0; c < ncases; c++)
		expect_used_slots(p, c, cases[c][1]);
}

/* multi_tensor_apply_kernel(TensorListMetadata<2, false>, ScaleFunctor,
 * float): the launch uses address slots 0 .. block_to_tensor[gridDim.x - 1]
 * of both lists; the other slots, numel_for_tensor and the block maps are
 * not looked at.  One block; three tensors; a full launch of 320 blocks
 * whose last block is a chunk of tensor 7 (its other chunks go to the next
 * launch); every slot. */
static void test_tensor_list(void **state)
{
	static const uint32_t cases[][2] = { { 1, 0 }, { 5, 2 }, { 320, 7 }, { 64, 63 } };

	(void)state;
	mta_launches(&mta_small, cases, 4);
}

/* TensorListMetadata<2, true> (32 KB of parameters): block_to_tensor holds
 * 16-bit entries; tensor 300 is past what a byte could name. */
static void test_tensor_list_large(void **state)
{
	static const uint32_t cases[][2] = { { 3, 1 }, { 2240, 300 }, { 900, 447 } };

	(void)state;
	mta_launches(&mta_large, cases, 3);
}

/* TensorListScalarListMetadata<float, 2, false>: the map after the scalars. */
static void test_scalar_list(void **state)
{
	static const uint32_t cases[][2] = { { 1, 0 }, { 100, 40 } };

	(void)state;
	mta_launches(&mta_scalars, cases, 2);
}

/* A launch that fits no rule (a grid with more blocks than the map holds, a
 * 2-D grid, a map entry past the slots) uses every slot: each slot is then
 * a typed pointer, the junk outside every allocation an unhashed region. */
static void test_tensor_list_unmapped(void **state)
{
	static uint8_t buf[4096];
	static struct got g;
	uint32_t outside = 0;

	(void)state;
	declare(K_MTA);
	mta_fill(&mta_small, buf, 3, 2);
	launch_grid(K_MTA, buf, 321, 1);
	launch_grid(K_MTA, buf, 3, 2);
	buf[mta_small.map_offset + 2] = 64; /* block 2 -> tensor 64 of 64 */
	launch_grid(K_MTA, buf, 3, 1);
	trace_end();
	for (uint32_t d = 0; d < 2; d++)
		for (uint32_t j = 3; j < 64; j++)
			outside += (d + j) % 3 == 1; /* mta_fill's junk outside every allocation */
	for (size_t rec = 0; rec < 3; rec++) {
		uint32_t unhashed = 0;

		regions_of(rec, &g);
		assert_int_equal(g.n, 2 * 64);
		for (uint32_t i = 0; i < g.n; i++) {
			assert_int_equal(g.off[i], 8 * i);
			assert_int_equal(g.flags[i] & KTRACE_REGIONF_GUESSED, 0);
			unhashed += (g.flags[i] & KTRACE_REGIONF_UNHASHED) != 0;
		}
		assert_int_equal(unhashed, outside);
	}
}

/* apply2(TensorInfo<float, unsigned>, TensorInfo<float const, unsigned>,
 * unsigned): each descriptor's data pointer; its sizes and strides past
 * `dims` are left uninitialised by PyTorch and may hold anything. */
static void test_tensor_info(void **state)
{
	static const uint32_t offs[] = { 0, 216 };
	uint8_t buf[440];
	struct got g;

	(void)state;
	declare(K_APPLY2);
	memset(buf, 0, sizeof buf);
	decoys(buf, 8, 208);
	decoys(buf, 224, 208);
	put64(buf, 0, A_BASE + 256);
	put64(buf, 216, B_BASE + 256);
	launch(K_APPLY2, buf);
	trace_end();
	regions_of(0, &g);
	expect_typed(&g, 2, offs);
	assert_int_equal(g.alloc[0], A_BASE);
	assert_int_equal(g.alloc[1], B_BASE);
}

/* accessor_scale(GenericPackedTensorAccessor<float, 2, ...>, float, long):
 * the data pointer; a long that holds an address-like value is a long.  A
 * data pointer outside every tracked allocation is still a region,
 * unhashed; a null one is none. */
static void test_accessor(void **state)
{
	static const uint32_t offs[] = { 0 };
	uint8_t buf[40];
	struct got g;

	(void)state;
	declare(K_ACCESSOR);
	memset(buf, 0, sizeof buf);
	decoys(buf, 8, 16);
	put64(buf, 0, A_BASE);
	put64(buf, 32, B_BASE); /* the long */
	launch(K_ACCESSOR, buf);
	put64(buf, 0, UNTRACKED);
	launch(K_ACCESSOR, buf);
	put64(buf, 0, 0);
	launch(K_ACCESSOR, buf);
	trace_end();
	regions_of(0, &g);
	expect_typed(&g, 1, offs);
	assert_int_equal(g.flags[0], KTRACE_REGIONF_IN_STRUCT);
	regions_of(1, &g);
	expect_typed(&g, 1, offs);
	assert_int_equal(g.flags[0], KTRACE_REGIONF_IN_STRUCT | KTRACE_REGIONF_UNHASHED);
	assert_int_equal(g.ptr[0], UNTRACKED);
	assert_int_equal(g.alloc[0], 0);
	regions_of(2, &g);
	assert_int_equal(g.n, 0);
}

#define BOTH(t) cmocka_unit_test_setup(t, setup_module), cmocka_unit_test_setup(t, setup_library)

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH(test_elementwise), BOTH(test_elementwise_inputs_read_only), BOTH(test_closure_is_guessed), BOTH(test_closure_calculator), BOTH(test_nocast_closure), BOTH(test_nocast_name_unconfirmed), BOTH(test_tensor_list),
		BOTH(test_tensor_list_large), BOTH(test_scalar_list), BOTH(test_tensor_list_unmapped),
		BOTH(test_tensor_info), BOTH(test_accessor),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
