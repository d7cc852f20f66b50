/* test/unit/meta_extent_test.c: how far an Inductor kernel reaches from each
 * pointer argument (meta/inductor_extent.c): the real Triton 3.6 / Inductor
 * fixtures (test/fixtures/cuobjdump/triton-3.6) parsed as the library parses
 * them, with the Triton cache and through the Inductor module index, and
 * hand-written kernel bodies for each form the analysis bounds or refuses
 * (indirect indexing, dynamic sizes, other uses of the pointer, indexes
 * that may be negative, unknown element types).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "meta/kernel_meta.h"
#include "meta/meta_internal.h"
#include "test/unit/meta_testutil.h"

#define PER_CUBIN META_TRITON "/VE4TBTR2YOO3K2ZCOOEMA5K64277NE57VMZQLK66T63YFXF74LJA/triton_per_fused_add_gelu_sum_0.cubin"
#define POI_CUBIN                                                                 \
	META_TRITON "/62SX7WT4T7HZIHNUKS35NA22ATGBTOQEGVDEM75NDAKBXUWJXUUQ/"      \
		    "triton_poi_fused_add_expand_gelu_gelu_backward_unsqueeze_0.cubin"

static const char *const troot[] = { META_TRITON, NULL };
static const char *const iroot[] = { META_INDUCTOR, NULL };

/* Parse a fixture cubin; pad: 8 bytes more, so no Triton cache entry holds
 * it (the names then come from the Inductor module index). */
static struct ktrace_meta_image *parse(const char *cubin, const char *const *tdirs, int pad)
{
	struct ktrace_meta_opts o = { .triton_dirs = tdirs, .inductor_dirs = iroot, .source_path = "test image" };
	struct ktrace_meta_image *img = NULL;
	size_t len;
	uint8_t *b = meta_slurp(cubin, &len), *c = calloc(1, len + 8);
	char err[256];

	assert_non_null(c);
	memcpy(c, b, len);
	assert_int_equal(ktrace_meta_parse(c, len + (pad ? 8 : 0), &o, &img, err, sizeof err), 0);
	free(c);
	free(b);
	return img;
}

static void expect_extents(const struct ktrace_meta_kernel *k, const uint64_t *want, uint32_t n)
{
	assert_int_equal(k->nparams, n);
	for (uint32_t i = 0; i < n; i++)
		if (k->params[i].extent != want[i])
			fail_msg("%s param %u (%s): extent %llu, want %llu", k->name, i, k->params[i].name,
				 (unsigned long long)k->params[i].extent, (unsigned long long)want[i]);
}

/* gelu(a @ w + 1).sum(-1) on 256 x 256 floats: the reduction reads the
 * 256 x 256 matrix (r0_1 + 256*x0) and writes 256 sums (x0); the backward
 * pointwise kernel reads 256 values (xindex // 256) and updates the matrix
 * in place (xindex).  Scalars and Triton's scratch pointers: unknown. */
static void test_fixture_kernels(void **state)
{
	static const uint64_t per[6] = { 262144, 1024, 0, 0, 0, 0 };
	static const uint64_t poi[5] = { 262144, 1024, 0, 0, 0 };
	struct ktrace_meta_image *img;

	(void)state;
	for (int pad = 0; pad <= 1; pad++) {
		img = parse(PER_CUBIN, pad ? NULL : troot, pad);
		expect_extents(meta_kernel(img, "triton_per_fused_add_gelu_sum_0"), per, 6);
		ktrace_meta_free(img);
		img = parse(POI_CUBIN, pad ? NULL : troot, pad);
		expect_extents(meta_kernel(img, "triton_poi_fused_add_expand_gelu_gelu_backward_unsqueeze_0"), poi, 5);
		ktrace_meta_free(img);
	}
}

/* kt_inductor_extents on a module holding one kernel with the given body. */
static void extents_of(const char *sig, const char *body, uint64_t *out, int nargs)
{
	char text[4096];
	struct kt_sig_arg args[8];
	int n;

	snprintf(text, sizeof text,
		 "@triton.jit\n"
		 "    triton_meta={'signature': {%s}, 'device': 0},\n"
		 "@triton.jit\n"
		 "def triton_k(a, b, c, d, XBLOCK : tl.constexpr):\n%s''', device_str='cuda')\n",
		 sig, body);
	n = kt_inductor_signature(text, strlen(text), "triton_k", args, 8);
	assert_int_equal(n, nargs);
	kt_inductor_extents(text, strlen(text), "triton_k", args, n, out);
	kt_sig_args_free(args, n);
}

#define HEAD "    xnumel = 1000\n    xoffset = tl.program_id(0) * XBLOCK\n" \
	     "    xindex = xoffset + tl.arange(0, XBLOCK)[:]\n    xmask = xindex < xnumel\n"

static void test_forms(void **state)
{
	uint64_t e[4];

	(void)state;
	/* division and remainder of the index; 16-bit and 64-bit elements */
	extents_of("'in_ptr0': '*bf16', 'in_ptr1': '*i64', 'out_ptr0': '*fp32', 'xnumel': 'i32'",
		   HEAD "    x0 = (xindex % 10)\n    x1 = xindex // 10\n"
		   "    tmp0 = tl.load(in_ptr0 + (x0), xmask)\n    tmp1 = tl.load(in_ptr1 + (x1 + 100*x0), xmask)\n"
		   "    tl.store(out_ptr0 + (x0 + 10*x1), tmp0, xmask)\n",
		   e, 4);
	assert_true(e[0] == 10 * 2 && e[1] == (99 + 900 + 1) * 8 && e[2] == 1000 * 4 && e[3] == 0);
	/* a looped reduction: r0_index is bounded by r0_numel whatever its definition */
	extents_of("'in_ptr0': '*fp32', 'out_ptr0': '*fp16', 'xnumel': 'i32', 'r0_numel': 'i32'",
		   HEAD "    r0_numel = 300\n    rnumel = r0_numel\n"
		   "    for r0_offset in range(0, r0_numel, R0_BLOCK):\n        r0_index = r0_offset + r0_base\n"
		   "        r0_1 = r0_index\n        x0 = xindex\n"
		   "        tmp0 = tl.load(in_ptr0 + (r0_1 + 300*x0), r0_mask & xmask, other=0.0)\n"
		   "    tl.atomic_add(out_ptr0 + (x0), tmp0, xmask, sem='relaxed')\n",
		   e, 4);
	assert_true(e[0] == 300000 * 4 && e[1] == 1000 * 2);
	/* indirect indexing: the index a load gave is no bound; its table is */
	extents_of("'in_ptr0': '*fp32', 'in_ptr1': '*i64', 'xnumel': 'i32'",
		   HEAD "    x0 = xindex\n    tmp0 = tl.load(in_ptr1 + (x0), xmask)\n"
		   "    tmp1 = tl.load(in_ptr0 + (tmp0), xmask)\n",
		   e, 3);
	assert_true(e[0] == 0 && e[1] == 1000 * 8);
	/* dynamic shapes: the size is an argument, not fixed in the body */
	extents_of("'in_ptr0': '*fp32', 'xnumel': 'i32'",
		   "    xoffset = tl.program_id(0) * XBLOCK\n    xindex = xoffset + tl.arange(0, XBLOCK)[:]\n"
		   "    x0 = xindex\n    tmp0 = tl.load(in_ptr0 + (x0), xindex < xnumel)\n",
		   e, 2);
	assert_true(e[0] == 0);
	/* a use that is no load or store (a block pointer); an index that may be negative; a type of unknown size */
	extents_of("'in_ptr0': '*fp32', 'in_ptr1': '*fp32', 'in_ptr2': '*fp4', 'xnumel': 'i32'",
		   HEAD "    x0 = xindex\n    p = tl.make_block_ptr(base=in_ptr0, shape=[1000])\n"
		   "    tmp0 = tl.load(in_ptr0 + (x0), xmask)\n    tmp1 = tl.load(in_ptr1 + (x0 - 1), xmask)\n"
		   "    tmp2 = tl.load(in_ptr2 + (x0), xmask)\n",
		   e, 4);
	assert_true(e[0] == 0 && e[1] == 0 && e[2] == 0);
	/* a scalar load; a kernel that is not there */
	extents_of("'in_ptr0': '*fp32', 'xnumel': 'i32'", HEAD "    tmp0 = tl.load(in_ptr0 + (0))\n", e, 2);
	assert_true(e[0] == 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture_kernels),
		cmocka_unit_test(test_forms),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
