/* test/unit/ro_ptx.h: the PTX module of the read-only tests' programs
 * (carry_app.c, graph_merge_app.c).  The fake driver ignores it (its
 * kernels run whatever module is loaded); ktrace reads it and proves what
 * each kernel writes through its parameters (docs/format.md "Written
 * parameters"): fake_add_one writes x, fake_nondet_sum writes out and
 * reads in, fake_kernel_a (which does nothing) reads p.
 */
#ifndef KTRACE_TEST_RO_PTX_H
#define KTRACE_TEST_RO_PTX_H

/* The ro modes' module: fake_add_one x[0] += 1 (lie: only reads x),
 * fake_nondet_sum out[0] = in[0], fake_kernel_a reads p[0]. */
#define RO_PTX_HEAD ".version 8.0\n.target sm_90\n.address_size 64\n"
#define RO_PTX_ADD_ONE(store)                                                                        \
	".visible .entry fake_add_one(.param .u64 fake_add_one_param_0, .param .u32 fake_add_one_param_1)\n" \
	"{\n\t.reg .b64 %rd<3>;\n\t.reg .f32 %f<3>;\n\tld.param.u64 %rd1, [fake_add_one_param_0];\n"        \
	"\tld.global.f32 %f1, [%rd1];\n\tadd.f32 %f2, %f1, 0f3F800000;\n" store "\tret;\n}\n"
#define RO_PTX_REST                                                                                  \
	".visible .entry fake_nondet_sum(.param .u64 fake_nondet_sum_param_0, .param .u64 "              \
	"fake_nondet_sum_param_1, .param .u32 fake_nondet_sum_param_2)\n{\n\t.reg .b64 %rd<3>;\n"         \
	"\t.reg .f32 %f<2>;\n\tld.param.u64 %rd1, [fake_nondet_sum_param_0];\n"                          \
	"\tld.param.u64 %rd2, [fake_nondet_sum_param_1];\n\tld.global.f32 %f1, [%rd2];\n"                 \
	"\tst.global.f32 [%rd1], %f1;\n\tret;\n}\n"                                                      \
	".visible .entry fake_kernel_a(.param .u64 fake_kernel_a_param_0, .param .u32 "                   \
	"fake_kernel_a_param_1)\n{\n\t.reg .b64 %rd<2>;\n\t.reg .f32 %f<2>;\n"                           \
	"\tld.param.u64 %rd1, [fake_kernel_a_param_0];\n\tld.global.f32 %f1, [%rd1];\n\tret;\n}\n"
static const char ro_ptx[] = RO_PTX_HEAD RO_PTX_ADD_ONE("\tst.global.f32 [%rd1], %f2;\n") RO_PTX_REST;
static const char ro_lie_ptx[] = RO_PTX_HEAD RO_PTX_ADD_ONE("") RO_PTX_REST;

#endif
