/* test/unit/capture_registry_test.c: the module/kernel registry and the
 * metadata worker against a scripted fake driver, checked through the real
 * trace writer and reader: handle maps, CUkernel/CUfunction aliasing,
 * unknown handles, driver vs cubin layouts, KERNEL/MODULE/MODULE_IMAGE/
 * MODULE_UNLOAD records, images stored once per digest, unload, the kernel
 * filter, context destruction and fork; what a kernel writes through its
 * parameters, from a PTX module to the layout and the KERNEL record. */
#include <pthread.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "test/unit/capture_support.h"
#include "hashkern/ktrace_digest.h"
#include "interpose/driver/driver_real.h"
#include "interpose/registry/meta_worker.h"
#include "interpose/model/kernel_cache.h"
#include "interpose/registry/registry.h"
#include "interpose/model/tracer.h"
#include "meta/kernel_meta.h"

#define TMPL "_Z7kt_tmplIfEvPT_4PairS0_"

static uint8_t *cubin, *ptx;
static size_t cubin_len, ptx_len;

static int group_setup(void **state)
{
	(void)state;
	cubin = read_whole(build_path("test/capture/kernels.cubin"), &cubin_len);
	ptx = read_whole(build_path("test/capture/kernels.ptx"), &ptx_len);
	if (!cubin || !ptx) {
		print_error("test images missing under %s (make test builds them)\n", build_path(""));
		return -1;
	}
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	ktrace_meta_worker_stop();
	ktrace_registry_reset();
	free(cubin);
	free(ptx);
	free(trace_recs);
	return 0;
}

static int setup(void **state)
{
	(void)state;
	fake_driver_reset();
	trace_begin(0, 1);
	return 0;
}

/* The driver's view of kt_axpy / kt_tmpl<float> (what cuobjdump shows). */
static void fake_axpy(uint64_t h, int is_kernel)
{
	struct fake_func f = { h, is_kernel, "kt_axpy", 4, { 0, 8, 16, 20 }, { 8, 8, 4, 4 } };

	fake_driver_add(&f);
}

static void fake_tmpl(uint64_t h, int is_kernel)
{
	struct fake_func f = { h, is_kernel, TMPL, 3, { 0, 8, 24 }, { 8, 16, 4 } };

	fake_driver_add(&f);
}

/* A copy of an image that the hook's caller frees (and scribbles on) right away. */
static void load_and_free(uint64_t handle, int is_library, const uint8_t *img, size_t len, uint32_t src)
{
	uint8_t *copy = malloc(len);

	memcpy(copy, img, len);
	ktrace_on_module_loaded((void *)(uintptr_t)handle, is_library, copy, 0, NULL, src);
	memset(copy, 0xa5, len);
	free(copy);
}

static struct ktrace_kernel_entry *launch_once(uint64_t handle)
{
	struct ktrace_kernel_entry *k = ktrace_registry_lookup(handle);

	if (!k)
		k = ktrace_registry_add_unknown(handle);
	assert_non_null(k);
	if (!atomic_load(&k->ready))
		ktrace_registry_first_launch(k);
	assert_true(atomic_load(&k->ready));
	return k;
}

static void check_param(const struct ktrace_rec_kernel *k, uint32_t i, uint32_t off, uint32_t size, uint8_t kind,
			const char *name, uint8_t src, const char *type)
{
	struct ktrace_param_desc d;

	assert_int_equal(ktrace_kernel_param(k, i, &d), 0);
	assert_int_equal(d.ordinal, i);
	assert_int_equal(d.offset, off);
	assert_int_equal(d.size, size);
	assert_int_equal(d.kind, kind);
	assert_string_equal(kstr_c(d.name), name);
	assert_int_equal(d.name_source, src);
	if (type)
		assert_string_equal(kstr_c(d.type), type);
}

/* Reassemble the stored image of a digest from its chunks. */
static uint8_t *stored_image(uint64_t digest, size_t *size, unsigned *nchunks)
{
	uint8_t *img = NULL;
	size_t i, got = 0;

	*nchunks = 0;
	for (i = 0; i < trace_nrecs; i++) {
		struct ktrace_rec_module_image mi;

		if (trace_recs[i].type != KTRACE_REC_MODULE_IMAGE)
			continue;
		assert_int_equal(ktrace_decode_module_image(trace_recs[i].data, trace_recs[i].len, &mi), 0);
		if (mi.image_digest != digest)
			continue;
		if (!img) {
			img = calloc(1, mi.image_size);
			*size = mi.image_size;
		}
		assert_int_equal(mi.image_size, *size);
		assert_true(mi.chunk_offset + mi.chunk_len <= *size);
		memcpy(img + mi.chunk_offset, mi.bytes, mi.chunk_len);
		got += mi.chunk_len;
		(*nchunks)++;
	}
	if (img)
		assert_int_equal(got, *size);
	return img;
}

static void test_module_function_kernel_record(void **state)
{
	struct ktrace_kernel_entry *k;
	struct ktrace_rec_kernel kr;
	struct ktrace_rec_module mr;
	const struct loaded_rec *rec;
	uint8_t *img;
	size_t size;
	unsigned nchunks;
	uint64_t kid, mid;
	uint32_t lsrc;

	(void)state;
	fake_axpy(0xf1, 0);
	load_and_free(0xa1, 0, cubin, cubin_len, KTRACE_MODSRC_MODULE_LOAD_DATA);
	ktrace_on_function((CUfunction)(uintptr_t)0xf1, (CUmodule)(uintptr_t)0xa1, "kt_axpy");
	k = launch_once(0xf1);
	assert_non_null(k->layout);
	assert_int_equal(k->layout->nparams, 4);
	assert_int_equal(k->layout->param_bytes, 24);
	assert_int_equal(k->filter, KTRACE_FILTER_TRACE);
	assert_ptr_equal(ktrace_registry_lookup(0xf1), k);
	kid = k->id;
	/* A small module is parsed by the first launch at the latest: the
	 * KERNEL record is out before the launch's own record. */
	assert_int_equal(k->emitted, 1);
	lsrc = k->layout->source;
	assert_int_equal(lsrc, KTRACE_LAYOUT_NVINFO);
	mid = ktrace_registry_module(0xa1, 0)->id;
	trace_end();

	assert_int_equal(trace_count(KTRACE_REC_MODULE), 1);
	rec = trace_nth(KTRACE_REC_MODULE, 0);
	assert_int_equal(ktrace_decode_module(rec->data, rec->len, &mr), 0);
	assert_int_equal(mr.module_id, mid);
	assert_int_equal(mr.handle, 0xa1);
	assert_int_equal(mr.image_size, cubin_len);
	assert_int_equal(mr.image_digest, ktrace_digest(cubin, cubin_len));
	assert_int_equal(mr.kind, KTRACE_MODULE_CUBIN);
	assert_int_equal(mr.source, KTRACE_MODSRC_MODULE_LOAD_DATA);
	assert_int_equal(mr.path.len, 0);

	img = stored_image(mr.image_digest, &size, &nchunks);
	assert_non_null(img);
	assert_int_equal(size, cubin_len);
	assert_memory_equal(img, cubin, cubin_len);
	free(img);

	assert_int_equal(trace_count(KTRACE_REC_KERNEL), 1);
	assert_int_equal(trace_kernel(kid, &kr), 0);
	assert_int_equal(kr.module_id, mid);
	assert_int_equal(kr.handle, 0xf1);
	assert_string_equal(kstr_c(kr.name), "kt_axpy");
	assert_int_equal(kr.nparams, 4);
	assert_int_equal(kr.param_bytes, 24);
	assert_int_equal(kr.layout_source, lsrc);
	check_param(&kr, 0, 0, 8, KTRACE_PARAM_POINTER, "out", KTRACE_NAME_DWARF, "float*");
	check_param(&kr, 1, 8, 8, KTRACE_PARAM_POINTER, "x", KTRACE_NAME_DWARF, "float const*");
	check_param(&kr, 2, 16, 4, KTRACE_PARAM_SCALAR, "a", KTRACE_NAME_DWARF, "float");
	check_param(&kr, 3, 20, 4, KTRACE_PARAM_SCALAR, "n", KTRACE_NAME_DWARF, "int");
	assert_int_equal(trace_count(KTRACE_REC_MODULE_UNLOAD), 0);
}

/* A small module is parsed right after loading: the KERNEL record is then
 * written by the launching thread at the first launch, before any LAUNCH. */
static void test_eager_parse_then_launch(void **state)
{
	struct ktrace_kernel_entry *k;
	struct ktrace_rec_kernel kr;
	unsigned long jobs0 = ktrace_meta_worker_jobs_done();

	(void)state;
	fake_tmpl(0xf2, 0);
	load_and_free(0xa2, 0, cubin, cubin_len, KTRACE_MODSRC_MODULE_LOAD_DATA);
	ktrace_meta_worker_drain(10000);
	assert_int_equal(ktrace_meta_worker_jobs_done(), jobs0 + 1);
	assert_int_equal(ktrace_registry_module(0xa2, 0)->state, KTRACE_MOD_PARSED);
	ktrace_on_function((CUfunction)(uintptr_t)0xf2, (CUmodule)(uintptr_t)0xa2, TMPL);
	k = launch_once(0xf2);
	assert_int_equal(k->emitted, 1);
	assert_int_equal(k->layout->source, KTRACE_LAYOUT_NVINFO);
	assert_int_equal(k->layout->word_flags[1], KTRACE_WORDF_STRUCT); /* Pair: a struct per the cubin, its words guessed */
	trace_end();
	assert_int_equal(trace_kernel(k->id, &kr), 0);
	assert_string_equal(kstr_c(kr.name), TMPL);
	assert_string_equal(kstr_c(kr.demangled), "void kt_tmpl<float>(float*, Pair, float)");
	check_param(&kr, 0, 0, 8, KTRACE_PARAM_POINTER, "dst", KTRACE_NAME_DWARF, "float*");
	check_param(&kr, 1, 8, 16, KTRACE_PARAM_STRUCT, "pr", KTRACE_NAME_DWARF, "Pair");
	check_param(&kr, 2, 24, 4, KTRACE_PARAM_SCALAR, "v", KTRACE_NAME_DWARF, "float");
}

static void test_library_kernel_aliasing(void **state)
{
	struct ktrace_kernel_entry *k, *k2;
	struct ktrace_rec_kernel kr;
	unsigned long calls;

	(void)state;
	/* A library whose image we could not keep; kernel via cuLibraryGetKernel. */
	ktrace_on_module_loaded((void *)0xb1, 1, NULL, 0, NULL, KTRACE_MODSRC_LIBRARY_LOAD_DATA);
	fake_axpy(0x4b1, 1);
	ktrace_on_kernel((CUkernel)(uintptr_t)0x4b1, (CUlibrary)(uintptr_t)0xb1, "kt_axpy");
	ktrace_on_kernel_function((CUkernel)(uintptr_t)0x4b1, (CUfunction)(uintptr_t)0xf4b1);
	k = ktrace_registry_lookup(0x4b1);
	assert_non_null(k);
	assert_ptr_equal(ktrace_registry_lookup(0xf4b1), k);
	/* Launch through the CUfunction: the CUkernel's parameter info is asked. */
	calls = fake_driver_calls();
	assert_ptr_equal(launch_once(0xf4b1), k);
	assert_true(fake_driver_calls() > calls);
	assert_int_equal(k->layout->source, KTRACE_LAYOUT_DRIVER);
	assert_int_equal(k->layout->nparams, 4);
	/* The CUkernel cast to CUfunction is the same kernel, already resolved. */
	assert_ptr_equal(launch_once(0x4b1), k);

	/* cuKernelGetFunction before any cuLibraryGetKernel: the CUkernel is new. */
	fake_tmpl(0x4b2, 1);
	ktrace_on_kernel_function((CUkernel)(uintptr_t)0x4b2, (CUfunction)(uintptr_t)0xf4b2);
	k2 = ktrace_registry_lookup(0xf4b2);
	assert_non_null(k2);
	assert_ptr_equal(ktrace_registry_lookup(0x4b2), k2);
	assert_ptr_not_equal(k2, k);
	launch_once(0xf4b2);
	assert_string_equal(k2->name, TMPL);
	/* Enumerated library kernels: names resolved at the first launch. */
	{
		CUkernel ks[2] = { (CUkernel)(uintptr_t)0x4b3, (CUkernel)(uintptr_t)0x4b4 };
		struct fake_func f = { 0x4b3, 1, "enum_a", 1, { 0 }, { 8 } };

		fake_driver_add(&f);
		ktrace_on_library_kernels((CUlibrary)(uintptr_t)0xb1, ks, 2);
		assert_non_null(ktrace_registry_lookup(0x4b3));
		assert_null(ktrace_registry_lookup(0x4b3)->name);
		assert_string_equal(launch_once(0x4b3)->name, "enum_a");
		assert_ptr_equal(ktrace_registry_lookup(0x4b3)->mod, ktrace_registry_module(0xb1, 1));
	}
	trace_end();
	assert_int_equal(trace_counter(KTRACE_CTR_UNKNOWN_FUNCTIONS), 0);
	assert_int_equal(trace_kernel(k->id, &kr), 0);
	assert_int_equal(kr.handle, 0x4b1);
	assert_int_equal(kr.layout_source, KTRACE_LAYOUT_DRIVER);
	assert_string_equal(kstr_c(kr.name), "kt_axpy");
	/* extern "C", no image: generic names, kinds by size. */
	check_param(&kr, 0, 0, 8, KTRACE_PARAM_UNKNOWN, "arg0", KTRACE_NAME_NONE, "");
	check_param(&kr, 2, 16, 4, KTRACE_PARAM_SCALAR, "arg2", KTRACE_NAME_NONE, "");
	assert_int_equal(trace_kernel(k2->id, &kr), 0);
	/* C++: types from the mangled name. */
	check_param(&kr, 0, 0, 8, KTRACE_PARAM_POINTER, "arg0", KTRACE_NAME_DEMANGLED, "float*");
	check_param(&kr, 1, 8, 16, KTRACE_PARAM_STRUCT, "arg1", KTRACE_NAME_DEMANGLED, "Pair");
	check_param(&kr, 2, 24, 4, KTRACE_PARAM_SCALAR, "arg2", KTRACE_NAME_DEMANGLED, "float");
	assert_int_equal(trace_count(KTRACE_REC_KERNEL), 3);
}

static void test_unknown_handles(void **state)
{
	struct ktrace_kernel_entry *a, *b, *c, *d;
	struct ktrace_rec_kernel kr;
	struct ktrace_param_desc pd;
	struct fake_func fa = { 0x51, 1, "cudart_kernel", 1, { 0 }, { 8 } };
	struct fake_func fb = { 0x52, 0, "_Z6scale2PfPKfi", 3, { 0, 8, 16 }, { 8, 8, 4 } };

	(void)state;
	fake_driver_add(&fa);
	fake_driver_add(&fb);
	assert_null(ktrace_registry_lookup(0x51));
	a = launch_once(0x51);
	assert_string_equal(a->name, "cudart_kernel");
	assert_int_equal(a->kern, 0x51);
	b = launch_once(0x52);
	assert_int_equal(b->func, 0x52);
	assert_string_equal(b->demangled, "scale2(float*, float const*, int)");
	c = launch_once(0x53); /* the driver knows nothing of it */
	assert_null(c->name);
	assert_null(c->layout);
	assert_ptr_equal(launch_once(0x53), c); /* no second entry */
	d = ktrace_registry_add_unknown(0x53);
	assert_ptr_equal(d, c);
	trace_end();
	assert_int_equal(trace_counter(KTRACE_CTR_UNKNOWN_FUNCTIONS), 3);
	assert_int_equal(trace_kernel(a->id, &kr), 0);
	assert_int_equal(kr.module_id, 0);
	assert_string_equal(kstr_c(kr.name), "cudart_kernel");
	assert_int_equal(trace_kernel(b->id, &kr), 0);
	assert_string_equal(kstr_c(kr.demangled), "scale2(float*, float const*, int)");
	check_param(&kr, 0, 0, 8, KTRACE_PARAM_POINTER, "arg0", KTRACE_NAME_DEMANGLED, "float*");
	check_param(&kr, 1, 8, 8, KTRACE_PARAM_POINTER, "arg1", KTRACE_NAME_DEMANGLED, "float const*");
	assert_int_equal(ktrace_kernel_param(&kr, 1, &pd), 0);
	assert_int_equal(pd.flags & KTRACE_PARAMF_CONST, KTRACE_PARAMF_CONST);
	check_param(&kr, 2, 16, 4, KTRACE_PARAM_SCALAR, "arg2", KTRACE_NAME_DEMANGLED, "int");
	assert_int_equal(trace_kernel(c->id, &kr), 0);
	assert_int_equal(kr.name.len, 0);
	assert_int_equal(kr.nparams, 0);
	assert_int_equal(kr.layout_source, KTRACE_LAYOUT_NONE);
}

/* The driver's layout and the cubin's disagree: launches use the driver's,
 * and the KERNEL record describes what launches used. */
static void test_layout_mismatch_uses_driver(void **state)
{
	struct fake_func f = { 0xf6, 0, "kt_axpy", 3, { 0, 8, 16 }, { 8, 8, 8 } };
	struct ktrace_kernel_entry *k;
	struct ktrace_rec_kernel kr;

	(void)state;
	fake_driver_add(&f);
	load_and_free(0xa6, 0, cubin, cubin_len, KTRACE_MODSRC_MODULE_LOAD_DATA);
	ktrace_meta_worker_drain(10000);
	ktrace_on_function((CUfunction)(uintptr_t)0xf6, (CUmodule)(uintptr_t)0xa6, "kt_axpy");
	k = launch_once(0xf6);
	assert_int_equal(k->layout->source, KTRACE_LAYOUT_DRIVER);
	trace_end();
	assert_int_equal(trace_kernel(k->id, &kr), 0);
	assert_int_equal(kr.nparams, 3);
	assert_int_equal(kr.layout_source, KTRACE_LAYOUT_DRIVER);
	check_param(&kr, 2, 16, 8, KTRACE_PARAM_UNKNOWN, "arg2", KTRACE_NAME_NONE, "");
}

/* No cuFuncGetParamInfo (old driver): the module is parsed on the spot. */
static void test_no_driver_layout_parses_synchronously(void **state)
{
	struct fake_func f = { 0xf7, 0, "kt_axpy", (uint32_t)-1, { 0 }, { 0 } };
	struct ktrace_kernel_entry *k;

	(void)state;
	fake_driver_add(&f);
	ktrace_real.cuKernelGetParamInfo = NULL;
	/* A library is not parsed at load. */
	load_and_free(0xb7, 1, cubin, cubin_len, KTRACE_MODSRC_LIBRARY_LOAD_DATA);
	assert_int_equal(ktrace_registry_module(0xb7, 1)->state, KTRACE_MOD_NEW);
	ktrace_on_kernel((CUkernel)(uintptr_t)0xf7, (CUlibrary)(uintptr_t)0xb7, "kt_axpy");
	k = launch_once(0xf7);
	assert_non_null(k->layout);
	assert_int_equal(k->layout->source, KTRACE_LAYOUT_NVINFO);
	assert_int_equal(k->layout->param_bytes, 24);
	assert_int_equal(k->emitted, 1);
	trace_end();
	assert_int_equal(trace_count(KTRACE_REC_KERNEL), 1);
}

/* Large libraries are parsed when a kernel of theirs is first launched, on the worker. */
static void test_library_parsed_on_first_launch(void **state)
{
	struct ktrace_kernel_entry *k;
	struct ktrace_rec_kernel kr;
	unsigned long jobs0;

	(void)state;
	fake_axpy(0x4c1, 1);
	load_and_free(0xb8, 1, cubin, cubin_len, KTRACE_MODSRC_LIBRARY_LOAD_DATA);
	jobs0 = ktrace_meta_worker_jobs_done();
	ktrace_meta_worker_drain(1000);
	assert_int_equal(ktrace_meta_worker_jobs_done(), jobs0);
	assert_int_equal(ktrace_registry_module(0xb8, 1)->state, KTRACE_MOD_NEW);
	ktrace_on_kernel((CUkernel)(uintptr_t)0x4c1, (CUlibrary)(uintptr_t)0xb8, "kt_axpy");
	k = launch_once(0x4c1);
	assert_int_equal(k->layout->source, KTRACE_LAYOUT_DRIVER);
	ktrace_meta_worker_drain(10000);
	assert_int_equal(ktrace_registry_module(0xb8, 1)->state, KTRACE_MOD_PARSED);
	assert_int_equal(k->emitted, 1);
	trace_end();
	assert_int_equal(trace_kernel(k->id, &kr), 0);
	/* The layouts agree, so the cubin's names describe the driver's layout. */
	assert_int_equal(kr.layout_source, KTRACE_LAYOUT_DRIVER);
	check_param(&kr, 0, 0, 8, KTRACE_PARAM_POINTER, "out", KTRACE_NAME_DWARF, "float*");
	assert_int_equal(trace_count(KTRACE_REC_MODULE_IMAGE) > 0, 1);
}

/* A big PTX image, loaded twice: two MODULE records, one stored image in chunks. */
static void test_images_once_per_digest(void **state)
{
	size_t pad = 300000, size;
	char *big = malloc(ptx_len + pad + 1);
	struct ktrace_rec_module m0, m1;
	struct ktrace_rec_kernel kr;
	uint8_t *img;
	unsigned nchunks;
	size_t i;
	struct ktrace_kernel_entry *k1, *k2;

	(void)state;
	memcpy(big, ptx, ptx_len);
	static const char line[] = "// padding padding padding padding padding pad...\n";

	assert_int_equal(sizeof(line) - 1, 50);
	for (i = 0; i < pad; i += 50)
		memcpy(big + ptx_len + i, line, 50 < pad - i ? 50 : pad - i);
	big[ptx_len + pad] = 0;
	fake_axpy(0xf8, 0);
	fake_axpy(0xf9, 0);
	load_and_free(0xa8, 0, (uint8_t *)big, ptx_len + pad + 1, KTRACE_MODSRC_MODULE_LOAD_DATA);
	load_and_free(0xa9, 0, (uint8_t *)big, ptx_len + pad + 1, KTRACE_MODSRC_MODULE_LOAD_DATA);
	ktrace_on_function((CUfunction)(uintptr_t)0xf8, (CUmodule)(uintptr_t)0xa8, "kt_axpy");
	ktrace_on_function((CUfunction)(uintptr_t)0xf9, (CUmodule)(uintptr_t)0xa9, "kt_axpy");
	k1 = launch_once(0xf8);
	k2 = launch_once(0xf9);
	assert_ptr_not_equal(k1, k2);
	trace_end();
	assert_int_equal(trace_count(KTRACE_REC_MODULE), 2);
	assert_int_equal(ktrace_decode_module(trace_nth(KTRACE_REC_MODULE, 0)->data,
					      trace_nth(KTRACE_REC_MODULE, 0)->len, &m0), 0);
	assert_int_equal(ktrace_decode_module(trace_nth(KTRACE_REC_MODULE, 1)->data,
					      trace_nth(KTRACE_REC_MODULE, 1)->len, &m1), 0);
	assert_int_equal(m0.image_digest, m1.image_digest);
	assert_int_equal(m0.kind, KTRACE_MODULE_PTX);
	/* PTX: the size includes the terminating NUL. */
	assert_int_equal(m0.image_size, ptx_len + pad + 1);
	img = stored_image(m0.image_digest, &size, &nchunks);
	assert_non_null(img);
	assert_int_equal(nchunks, (ptx_len + pad + 1 + KTRACE_IMAGE_CHUNK - 1) / KTRACE_IMAGE_CHUNK);
	assert_int_equal(trace_count(KTRACE_REC_MODULE_IMAGE), nchunks);
	assert_memory_equal(img, big, ptx_len + pad + 1);
	free(img);
	/* PTX names of nvcc are <entry>_param_<i>; layout from the PTX agrees. */
	assert_int_equal(trace_kernel(k1->id, &kr), 0);
	assert_int_equal(kr.nparams, 4);
	free(big);
}

static void test_store_modules_off(void **state)
{
	(void)state;
	ktrace_tracer.cfg.store_modules = 0;
	fake_axpy(0xfa, 0);
	load_and_free(0xaa, 0, cubin, cubin_len, KTRACE_MODSRC_MODULE_LOAD_DATA);
	ktrace_on_function((CUfunction)(uintptr_t)0xfa, (CUmodule)(uintptr_t)0xaa, "kt_axpy");
	launch_once(0xfa);
	trace_end();
	assert_int_equal(trace_count(KTRACE_REC_MODULE), 1);
	assert_int_equal(trace_count(KTRACE_REC_MODULE_IMAGE), 0);
	assert_int_equal(trace_count(KTRACE_REC_KERNEL), 1);
}

static void test_unload(void **state)
{
	struct ktrace_kernel_entry *k, *k2;
	struct ktrace_rec_module_unload u;
	uint64_t mid;

	(void)state;
	fake_axpy(0xfb, 0);
	load_and_free(0xab, 0, cubin, cubin_len, KTRACE_MODSRC_MODULE_LOAD_DATA);
	ktrace_on_function((CUfunction)(uintptr_t)0xfb, (CUmodule)(uintptr_t)0xab, "kt_axpy");
	k = launch_once(0xfb);
	mid = ktrace_registry_module(0xab, 0)->id;
	assert_non_null(ktrace_kernel_cache_put(0xfb, k, ktrace_kernel_cache_gen()));
	assert_int_equal(ktrace_kernel_cache_lookup(0xfb)->id, k->id); /* cached */
	ktrace_on_module_unloaded((void *)0xab, 0);
	assert_null(ktrace_registry_module(0xab, 0));
	assert_null(ktrace_registry_lookup(0xfb));
	assert_null(ktrace_kernel_cache_lookup(0xfb)); /* the cache saw the unload */
	/* The handle comes back for another module: a new kernel entry. */
	load_and_free(0xab, 0, cubin, cubin_len, KTRACE_MODSRC_MODULE_LOAD_DATA);
	assert_int_not_equal(ktrace_registry_module(0xab, 0)->id, mid);
	ktrace_on_function((CUfunction)(uintptr_t)0xfb, (CUmodule)(uintptr_t)0xab, "kt_axpy");
	k2 = launch_once(0xfb);
	assert_ptr_not_equal(k2, k);
	assert_int_not_equal(k2->id, k->id);
	/* A module never used leaves no MODULE and no MODULE_UNLOAD. */
	load_and_free(0xac, 0, cubin, cubin_len, KTRACE_MODSRC_MODULE_LOAD_DATA);
	ktrace_on_module_unloaded((void *)0xac, 0);
	/* Unknown handles are ignored. */
	ktrace_on_module_unloaded((void *)0xdead, 0);
	ktrace_on_module_unloaded((void *)0xab, 1);
	trace_end();
	assert_int_equal(trace_count(KTRACE_REC_MODULE), 2);
	assert_int_equal(trace_count(KTRACE_REC_MODULE_UNLOAD), 1);
	assert_int_equal(ktrace_decode_module_unload(trace_nth(KTRACE_REC_MODULE_UNLOAD, 0)->data,
						     trace_nth(KTRACE_REC_MODULE_UNLOAD, 0)->len, &u), 0);
	assert_int_equal(u.module_id, mid);
	assert_int_equal(trace_count(KTRACE_REC_KERNEL), 2);
}

static void test_context_destroyed(void **state)
{
	(void)state;
	fake_axpy(0xfc, 0);
	fake_driver_set_context((CUcontext)(uintptr_t)0xc1, 0, 90);
	load_and_free(0xad, 0, cubin, cubin_len, KTRACE_MODSRC_MODULE_LOAD_DATA);
	fake_driver_set_context((CUcontext)(uintptr_t)0xc2, 1, 80);
	load_and_free(0xae, 0, cubin, cubin_len, KTRACE_MODSRC_MODULE_LOAD_DATA);
	assert_int_equal(ktrace_registry_module(0xad, 0)->device_sm, 90);
	assert_int_equal(ktrace_registry_module(0xae, 0)->device_sm, 80);
	ktrace_on_function((CUfunction)(uintptr_t)0xfc, (CUmodule)(uintptr_t)0xad, "kt_axpy");
	launch_once(0xfc);
	assert_non_null(ktrace_kernel_cache_put(0xfc, ktrace_registry_lookup(0xfc), ktrace_kernel_cache_gen()));
	ktrace_registry_context_destroyed(0xc1);
	assert_null(ktrace_registry_module(0xad, 0));
	assert_null(ktrace_registry_lookup(0xfc));
	assert_null(ktrace_kernel_cache_lookup(0xfc));
	assert_non_null(ktrace_registry_module(0xae, 0));
	trace_end();
	assert_int_equal(trace_count(KTRACE_REC_MODULE_UNLOAD), 1);
}

static void test_kernel_filter(void **state)
{
	struct fake_func f1 = { 0x61, 0, "_Z6scale2PfPKfi", 3, { 0, 8, 16 }, { 8, 8, 4 } };
	struct fake_func f2 = { 0x62, 0, "other_kernel", 0, { 0 }, { 0 } };
	struct fake_func f3 = { 0x63, 0, "kt_axpy", 0, { 0 }, { 0 } };

	(void)state;
	fake_driver_add(&f1);
	fake_driver_add(&f2);
	fake_driver_add(&f3);
	/* Matches the demangled name only, and a mangled name only. */
	assert_int_equal(regcomp(&ktrace_tracer.cfg.kernel_filter, "^scale2\\(|axpy", REG_EXTENDED | REG_NOSUB), 0);
	ktrace_tracer.cfg.have_kernel_filter = 1;
	assert_int_equal(launch_once(0x61)->filter, KTRACE_FILTER_TRACE);
	assert_int_equal(launch_once(0x62)->filter, KTRACE_FILTER_SKIP);
	assert_int_equal(launch_once(0x63)->filter, KTRACE_FILTER_TRACE);
	trace_end();
	/* Filtered kernels get no KERNEL record. */
	assert_int_equal(trace_count(KTRACE_REC_KERNEL), 2);
	regfree(&ktrace_tracer.cfg.kernel_filter);
	ktrace_tracer.cfg.have_kernel_filter = 0;
}

/* An image inside a read-only segment of a loaded ELF object (here: this
 * program's .rodata) is referenced, not copied, and named by its file. */
static const char ro_ptx[] = ".version 7.0\n.target sm_70\n.address_size 64\n"
			     ".visible .entry kt_ro(.param .u64 kt_ro_p)\n{\n\tret;\n}\n";

static void test_in_place_image(void **state)
{
	struct fake_func f = { 0xfe, 0, "kt_ro", 1, { 0 }, { 8 } };
	struct ktrace_module_entry *m;
	struct ktrace_rec_module mr;
	struct ktrace_rec_kernel kr;
	char exe[512];
	ssize_t n;

	(void)state;
	fake_driver_add(&f);
	ktrace_on_module_loaded((void *)0xaf, 0, ro_ptx, 0, NULL, KTRACE_MODSRC_MODULE_LOAD_DATA);
	m = ktrace_registry_module(0xaf, 0);
	assert_non_null(m);
	assert_int_equal(m->in_place, 1);
	assert_ptr_equal(m->image, ro_ptx);
	assert_int_equal(m->image_size, sizeof(ro_ptx));
	ktrace_on_function((CUfunction)(uintptr_t)0xfe, (CUmodule)(uintptr_t)0xaf, "kt_ro");
	launch_once(0xfe);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = 0;
	trace_end();
	assert_int_equal(trace_count(KTRACE_REC_MODULE), 1);
	assert_int_equal(ktrace_decode_module(trace_nth(KTRACE_REC_MODULE, 0)->data,
					      trace_nth(KTRACE_REC_MODULE, 0)->len, &mr), 0);
	assert_string_equal(kstr_c(mr.path), exe);
	assert_int_equal(mr.image_digest, ktrace_digest(ro_ptx, sizeof(ro_ptx)));
	assert_int_equal(mr.kind, KTRACE_MODULE_PTX);
	assert_int_equal(trace_count(KTRACE_REC_MODULE_IMAGE), 0);
	assert_int_equal(trace_count(KTRACE_REC_KERNEL), 1);
	assert_int_equal(ktrace_decode_kernel(trace_nth(KTRACE_REC_KERNEL, 0)->data,
					      trace_nth(KTRACE_REC_KERNEL, 0)->len, &kr), 0);
	assert_int_equal(kr.layout_source, KTRACE_LAYOUT_PTX);
}

/* A PTX module: what kt_axpy writes through its parameters, proven from its
 * PTX, reaches the layout the hash pipeline reads and the KERNEL record. */
static void test_ptx_written(void **state)
{
	struct ktrace_kernel_entry *k;
	struct ktrace_rec_kernel kr;
	struct ktrace_param_desc d;
	static const uint8_t want[4] = { KTRACE_WRITTEN_WRITTEN, KTRACE_WRITTEN_READ_ONLY, 0, 0 };
	uint8_t *text = calloc(1, ptx_len + 1); /* the driver reads PTX up to its NUL */

	(void)state;
	memcpy(text, ptx, ptx_len);
	fake_axpy(0xe1, 0);
	load_and_free(0xb1, 0, text, ptx_len + 1, KTRACE_MODSRC_MODULE_LOAD_DATA);
	free(text);
	ktrace_meta_worker_drain(10000);
	ktrace_on_function((CUfunction)(uintptr_t)0xe1, (CUmodule)(uintptr_t)0xb1, "kt_axpy");
	k = launch_once(0xe1);
	assert_non_null(k->layout);
	assert_non_null(k->layout->written);
	assert_memory_equal(k->layout->written, want, 4);
	trace_end();
	assert_int_equal(trace_kernel(k->id, &kr), 0);
	for (uint32_t i = 0; i < 4; i++) {
		assert_int_equal(ktrace_kernel_param(&kr, i, &d), 0);
		assert_int_equal(d.written, want[i]);
		assert_int_equal(d.written_source, want[i] ? KTRACE_WRITTEN_SRC_PTX : KTRACE_WRITTEN_SRC_NONE);
	}
}

/* In a fork child every record must be written again (its own trace). */
static void test_fork_child_forgets_emitted(void **state)
{
	struct ktrace_kernel_entry *k;
	pid_t pid;
	int st;

	(void)state;
	fake_axpy(0xfd, 0);
	ktrace_on_function((CUfunction)(uintptr_t)0xfd, NULL, "kt_axpy");
	k = launch_once(0xfd);
	assert_int_equal(k->emitted, 1);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int ok = !atomic_load(&k->ready) && !k->emitted && ktrace_registry_lookup(0xfd) == k;

		_exit(ok ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_true(atomic_load(&k->ready));
	trace_end();
}

/* The per-thread cache, used as the launch path uses it (lookup; on a miss
 * the registry, then put): for 600 handles (more than its 256 slots, so
 * slots are shared and evicted), from two threads, it answers each handle's
 * own id and layout; after a module unload and reload hands the same handles
 * to new kernels, neither a warm cache nor another thread's answers with the
 * old ones; a fork child's cache is emptied with the entries' ready state. */
struct cache_thread_arg {
	uint64_t base;
	unsigned n;
	struct ktrace_kernel_entry **want;
	int bad, misses;
};

static const struct ktrace_kernel_hot *cached_launch(uint64_t h, int *misses)
{
	const struct ktrace_kernel_hot *s = ktrace_kernel_cache_lookup(h);
	unsigned gen;
	struct ktrace_kernel_entry *k;

	if (s)
		return s;
	(*misses)++;
	gen = ktrace_kernel_cache_gen();
	k = ktrace_registry_lookup(h);
	if (!k)
		return NULL;
	if (!atomic_load(&k->ready))
		ktrace_registry_first_launch(k);
	return ktrace_kernel_cache_put(h, k, gen);
}

static int hot_matches(const struct ktrace_kernel_hot *s, uint64_t h, const struct ktrace_kernel_entry *k)
{
	return s && k && s->handle == h && s->id == k->id && s->layout == k->layout &&
	       !memcmp(&s->small, &k->small, sizeof(s->small));
}

static void *cache_thread(void *p)
{
	struct cache_thread_arg *a = p;

	for (int round = 0; round < 3; round++)
		for (unsigned i = 0; i < a->n; i++) {
			uint64_t h = a->base + 16 * i;

			if (!hot_matches(cached_launch(h, &a->misses), h, a->want[i]))
				a->bad++;
		}
	return NULL;
}

static void register_many(uint64_t mod, uint64_t base, unsigned n, struct ktrace_kernel_entry **out)
{
	load_and_free(mod, 0, cubin, cubin_len, KTRACE_MODSRC_MODULE_LOAD_DATA);
	for (unsigned i = 0; i < n; i++) {
		ktrace_on_function((CUfunction)(uintptr_t)(base + 16 * i), (CUmodule)(uintptr_t)mod, "kt_axpy");
		out[i] = ktrace_registry_lookup(base + 16 * i);
		assert_non_null(out[i]);
	}
}

static void test_kernel_cache(void **state)
{
	enum { N = 600 };
	static struct ktrace_kernel_entry *first[N], *second[N];
	struct cache_thread_arg a = { 0x700000, N, first, 0, 0 };
	const struct ktrace_kernel_hot *s;
	int misses = 0;
	pthread_t th;
	pid_t pid;
	unsigned i;

	(void)state;
	register_many(0xc0, 0x700000, N, first);
	assert_null(ktrace_kernel_cache_lookup(0x700000)); /* nothing cached yet */
	for (i = 0; i < N; i++)
		assert_true(hot_matches(cached_launch(0x700000 + 16 * i, &misses), 0x700000 + 16 * i, first[i]));
	assert_int_equal(misses, N);
	assert_non_null(first[0]->layout);
	assert_true(first[0]->small.valid);
	/* The last 20 handles were cached last; at most a few share a slot. */
	misses = 0;
	for (i = N - 20; i < N; i++)
		cached_launch(0x700000 + 16 * i, &misses);
	assert_true(misses < 5);
	assert_int_equal(pthread_create(&th, NULL, cache_thread, &a), 0);
	pthread_join(th, NULL);
	assert_int_equal(a.bad, 0);
	assert_true(a.misses >= N && a.misses < 3 * N); /* its own cache, filled in round 1 */
	assert_null(ktrace_kernel_cache_lookup(0x6ffff0)); /* never registered */
	assert_null(ktrace_kernel_cache_lookup(0));
	assert_null(ktrace_kernel_cache_put(0, first[0], ktrace_kernel_cache_gen()));
	/* Same handles, new kernels. */
	s = ktrace_kernel_cache_lookup(0x700000 + 16 * (N - 1));
	assert_non_null(s);
	ktrace_on_module_unloaded((void *)0xc0, 0);
	for (i = 0; i < N; i++)
		assert_null(ktrace_kernel_cache_lookup(0x700000 + 16 * i));
	register_many(0xc0, 0x700000, N, second);
	for (i = 0; i < N; i++) {
		assert_ptr_not_equal(second[i], first[i]);
		assert_int_not_equal(second[i]->id, first[i]->id);
		assert_true(hot_matches(cached_launch(0x700000 + 16 * i, &misses), 0x700000 + 16 * i, second[i]));
	}
	a.want = second;
	a.misses = 0;
	assert_int_equal(pthread_create(&th, NULL, cache_thread, &a), 0);
	pthread_join(th, NULL);
	assert_int_equal(a.bad, 0);
	/* A fork child must run each kernel's first launch again (its KERNEL
	 * records): its inherited cache answers nothing. */
	assert_non_null(ktrace_kernel_cache_lookup(0x700000 + 16 * (N - 1)));
	pid = fork();
	if (pid == 0) {
		int ok = ktrace_kernel_cache_lookup(0x700000 + 16 * (N - 1)) == NULL &&
			 !atomic_load(&second[N - 1]->ready);
		_exit(ok ? 0 : 1);
	}
	assert_true(pid > 0);
	{
		int st = 0;

		assert_int_equal(waitpid(pid, &st, 0), pid);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	trace_end();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_module_function_kernel_record, setup),
		cmocka_unit_test_setup(test_eager_parse_then_launch, setup),
		cmocka_unit_test_setup(test_library_kernel_aliasing, setup),
		cmocka_unit_test_setup(test_unknown_handles, setup),
		cmocka_unit_test_setup(test_layout_mismatch_uses_driver, setup),
		cmocka_unit_test_setup(test_no_driver_layout_parses_synchronously, setup),
		cmocka_unit_test_setup(test_library_parsed_on_first_launch, setup),
		cmocka_unit_test_setup(test_images_once_per_digest, setup),
		cmocka_unit_test_setup(test_store_modules_off, setup),
		cmocka_unit_test_setup(test_unload, setup),
		cmocka_unit_test_setup(test_context_destroyed, setup),
		cmocka_unit_test_setup(test_kernel_filter, setup),
		cmocka_unit_test_setup(test_in_place_image, setup),
		cmocka_unit_test_setup(test_ptx_written, setup),
		cmocka_unit_test_setup(test_fork_child_forgets_emitted, setup),
		cmocka_unit_test_setup(test_kernel_cache, setup),
	};

	return cmocka_run_group_tests_name("capture_registry", tests, group_setup, group_teardown);
}
