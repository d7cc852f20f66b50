/* test/unit/meta_writes_test.c: which pointer parameters a kernel can write
 * through (meta/write_flow.h): from PTX built here with nvcc
 * (test/cubins/writes.cu: read-only input, output, in place, atomic,
 * pointer chasing, an index read from memory, by-value structs, a device
 * function call (read for what it writes), shared memory, a global variable, an escaping pointer, a
 * C++ template), from PTX written here for single instructions, from the
 * fatbin's PTX entry of the ELF's architecture only, none from SASS alone;
 * from Triton TTIR: every fixture kernel against its Inductor names, and
 * TTIR written here for loops, branches, atomics, calls, loaded pointers;
 * cut and corrupted TTIR and PTX never crash and never prove more. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "meta/meta_internal.h"
#include "test/unit/meta_testutil.h"

#define RO KTRACE_WRITTEN_READ_ONLY
#define WR KTRACE_WRITTEN_WRITTEN
#define UN KTRACE_WRITTEN_UNKNOWN

struct expect {
	const char *kernel;
	int n;
	uint8_t w[4];
};

/* nvcc's classification of test/cubins/writes.cu (4-byte scalars: unknown). */
static const struct expect writes_cu[] = {
	{"w_copy", 3, {RO, WR, UN}},
	{"w_inplace", 3, {WR, UN, UN}},
	{"w_atomic", 3, {RO, WR, UN}},
	{"w_chase", 3, {UN, UN, UN}},
	{"w_scatter", 4, {UN, UN, WR, UN}},
	{"w_struct_pair", 2, {WR, UN}},
	{"w_struct_inputs", 3, {RO, WR, UN}},
	{"w_call", 2, {RO, WR}}, /* through a noinline device function */
	{"w_shared", 2, {RO, WR}},
	{"w_global", 1, {UN}},
	{"w_escape", 2, {UN, WR}},
	{"_Z6w_tmplIdEvPKT_PS0_i", 3, {RO, WR, UN}},
};

static void check_expect(const struct ktrace_meta_image *img, const struct expect *e, uint8_t source)
{
	const struct ktrace_meta_kernel *k = meta_kernel(img, e->kernel);
	assert_int_equal(k->nparams, e->n);
	for (int i = 0; i < e->n; i++) {
		if (k->params[i].written != e->w[i])
			print_error("%s param %d: %u, expected %u\n", e->kernel, i, k->params[i].written, e->w[i]);
		assert_int_equal(k->params[i].written, e->w[i]);
		assert_int_equal(k->params[i].written_source, e->w[i] == UN ? KTRACE_WRITTEN_SRC_NONE : source);
	}
}

/* Every kernel of writes.cu as expected, proven from PTX. */
static void check_writes_cu(const struct ktrace_meta_image *img)
{
	for (size_t i = 0; i < sizeof writes_cu / sizeof writes_cu[0]; i++)
		check_expect(img, &writes_cu[i], KTRACE_WRITTEN_SRC_PTX);
}

static void test_ptx_kernels(void **state)
{
	(void)state;
	char buf[4096];
	const char *path = meta_cubin("writes_sm90.ptx", buf, sizeof buf);
	META_NEED(path, "writes_sm90.ptx");
	struct ktrace_meta_image *img = meta_parse_path(path, 0, 0);
	check_writes_cu(img);
	/* the type says const; the code, not the type, proved it */
	const struct ktrace_meta_kernel *k = meta_kernel(img, "_Z6w_tmplIdEvPKT_PS0_i");
	assert_true(k->params[0].flags & KTRACE_PARAMF_CONST);
	ktrace_meta_free(img);
}

/* The fatbin's sm_90 ELF has its compute_90 PTX beside it; its sm_80 ELF
 * has none: no proof there, nor from a cubin alone. */
static void test_fatbin_and_sass(void **state)
{
	(void)state;
	char buf[4096];
	const char *path = meta_cubin("writes.fatbin", buf, sizeof buf);
	META_NEED(path, "writes.fatbin");
	struct ktrace_meta_image *img = meta_parse_path(path, 90, 0);
	check_writes_cu(img);
	ktrace_meta_free(img);
	static const struct expect none = {"w_copy", 3, {UN, UN, UN}};
	img = meta_parse_path(path, 80, 0);
	check_expect(img, &none, 0);
	ktrace_meta_free(img);
	path = meta_cubin("writes_sm90.cubin", buf, sizeof buf);
	META_NEED(path, "writes_sm90.cubin");
	img = meta_parse_path(path, 0, 0);
	for (uint32_t i = 0; i < img->nkernels; i++)
		for (uint32_t j = 0; j < img->kernels[i].nparams; j++)
			assert_int_equal(img->kernels[i].params[j].written, UN);
	ktrace_meta_free(img);
}

/* One hand-written entry k(a, b) around `body`, after `funcs` (the .func it
 * calls); the classification of a and b. */
static void ptx_entry_funcs(const char *funcs, const char *body, uint8_t *a, uint8_t *b)
{
	char text[8192];
	snprintf(text, sizeof text,
		 ".version 8.0\n.target sm_90\n.address_size 64\n.global .align 4 .f32 gvar;\n%s"
		 ".visible .entry k(.param .u64 k_param_0, .param .u64 k_param_1)\n{\n"
		 "\t.reg .b64 %%rd<9>;\n\t.reg .b32 %%r<9>;\n\t.reg .f32 %%f<9>;\n"
		 "\tld.param.u64 %%rd1, [k_param_0];\n\tld.param.u64 %%rd2, [k_param_1];\n%s\n\tret;\n}\n", funcs,
		 body);
	struct ktrace_meta_image *img = NULL;
	char err[256];
	assert_int_equal(ktrace_meta_parse(text, strlen(text) + 1, NULL, &img, err, sizeof err), 0);
	assert_int_equal(img->nkernels, 1);
	*a = img->kernels[0].params[0].written;
	*b = img->kernels[0].params[1].written;
	ktrace_meta_free(img);
}

static void ptx_entry(const char *body, uint8_t *a, uint8_t *b)
{
	ptx_entry_funcs("", body, a, b);
}

/* The call sequence nvcc writes: a and b as f's two arguments. */
#define CALL_F_A_B                                                                                          \
	"\t{\n\t.param .b64 param0;\n\tst.param.b64 [param0+0], %rd1;\n\t.param .b64 param1;\n"          \
	"\tst.param.b64 [param1+0], %rd2;\n\tcall.uni \n\tf, \n\t(\n\tparam0, \n\tparam1\n\t);\n\t}"

#define F_RETURNS_A                                                                                         \
	".func (.param .b64 func_retval0) f(.param .b64 f_param_0, .param .b64 f_param_1)\n{\n"              \
	"\t.reg .b64 %rd<4>;\n\tld.param.u64 %rd1, [f_param_0];\n\tst.param.b64 [func_retval0+0], %rd1;\n" \
	"\tret;\n}\n"

/* Device functions: what f does through its parameters is what the call
 * does through its arguments. */
static void test_ptx_calls(void **state)
{
	(void)state;
	static const struct {
		const char *f;
		uint8_t a, b;
		const char *body; /* NULL: CALL_F_A_B */
	} cases[] = {
		/* f stores through its second parameter, reads its first */
		{".func f(.param .b64 f_param_0, .param .b64 f_param_1)\n{\n\t.reg .b64 %rd<4>;\n\t.reg .f32 %f<2>;\n"
		 "\tld.param.u64 %rd1, [f_param_0];\n\tld.param.u64 %rd2, [f_param_1];\n"
		 "\tld.global.f32 %f1, [%rd1];\n\tst.global.f32 [%rd2], %f1;\n\tret;\n}\n", RO, WR, NULL},
		/* f returns its first parameter, which the caller drops */
		{F_RETURNS_A, RO, RO, NULL},
		/* ... or stores through: a pointer from a call may point anywhere */
		{F_RETURNS_A, UN, UN, CALL_F_A_B "\n\tld.param.b64 %rd3, [retval0+0];\n\tst.global.f32 [%rd3], %f1;"},
		/* f stores to a global variable: anywhere */
		{".func f(.param .b64 f_param_0, .param .b64 f_param_1)\n{\n\t.reg .f32 %f<2>;\n"
		 "\tst.global.f32 [gvar], %f1;\n\tret;\n}\n", UN, UN, NULL},
		/* f calls itself */
		{".func f(.param .b64 f_param_0, .param .b64 f_param_1)\n{\n"
		 "\t{\n\t.param .b64 param0;\n\tcall.uni f, (param0, param0);\n\t}\n\tret;\n}\n", UN, UN, NULL},
		/* f is only declared */
		{".extern .func f(.param .b64 f_param_0, .param .b64 f_param_1);\n", UN, UN, NULL},
		/* f's parameters are registers, an older ABI this reader does not follow */
		{".func f(.reg .b64 a, .reg .b64 b)\n{\n\tret;\n}\n", UN, UN, NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint8_t a, b;
		ptx_entry_funcs(cases[i].f, cases[i].body ? cases[i].body : CALL_F_A_B, &a, &b);
		if (a != cases[i].a || b != cases[i].b)
			print_error("case %zu: %u %u, expected %u %u\n", i, a, b, cases[i].a, cases[i].b);
		assert_int_equal(a, cases[i].a);
		assert_int_equal(b, cases[i].b);
	}
}

static void test_ptx_instructions(void **state)
{
	(void)state;
	static const struct {
		const char *body;
		uint8_t a, b;
	} cases[] = {
		/* a generic store after cvta.to.global; a read through the other */
		{"\tcvta.to.global.u64 %rd3, %rd1;\n\tld.global.nc.f32 %f1, [%rd2+4];\n\tst.f32 [%rd3], %f1;", WR, RO},
		{"\tred.global.add.f32 [%rd2], %f1;", RO, WR},
		{"\tatom.global.cas.b32 %r1, [%rd1+8], %r2, %r3;", WR, RO},
		/* an async copy into shared memory reads global memory */
		{"\tcp.async.ca.shared.global [%r1], [%rd1], 16;\n\tst.shared.f32 [%r2], %f1;", RO, RO},
		/* a bulk copy out to global memory writes its first address */
		{"\tcp.async.bulk.global.shared::cta.bulk_group [%rd2], [%r1], 64;", RO, WR},
		/* TMA: the address is a descriptor's */
		{"\tcp.async.bulk.tensor.1d.global.shared::cta.bulk_group [%rd2, {%r1}], [%r2];", UN, UN},
		/* a surface and a multicast object: other addresses of the bytes written */
		{"\tsust.b.1d.b32.trap [%rd2, {%r1}], {%r2};", UN, UN},
		{"\tmultimem.st.global.f32 [%rd2], %f1;", UN, UN},
		/* a local array through a generic address writes no buffer of the program's */
		{"\tmov.u64 %rd5, __local_depot0;\n\tcvta.local.u64 %rd6, %rd5;\n\tst.f32 [%rd6+4], %f1;\n"
		 "\tst.global.f32 [%rd2], %f1;", RO, WR},
		/* ... a global variable's generic address may be any buffer's */
		{"\tmov.u64 %rd5, gvar;\n\tcvta.global.u64 %rd6, %rd5;\n\tst.f32 [%rd6], %f1;", UN, UN},
		/* a store to a global variable may be any buffer */
		{"\tst.global.f32 [gvar], %f1;", UN, UN},
		/* a pointer read from memory */
		{"\tld.global.u64 %rd4, [%rd1];\n\tst.global.f32 [%rd4], %f1;", UN, UN},
		/* the parameter stored as data escapes */
		{"\tst.global.u64 [%rd2], %rd1;", UN, WR},
		/* comments and .loc lines are no code */
		{"\t.loc 1 2 3\n\t// st.global.f32 [%rd1], %f1;\n\t/* st.global.f32 [%rd1], %f1; */\n"
		 "\tst.global.f32 [%rd2], %f1;", RO, WR},
		/* printf and assert write no buffer of the program */
		{"\t{\n\t.param .b64 param0;\n\tst.param.b64 [param0], %rd3;\n"
		 "\tcall.uni (retval0), vprintf, (param0);\n\t}", RO, RO},
		{"\tcall.uni foo, (param0);", UN, UN},
		/* a predicate, a label, and a moved, offset pointer */
		{"$L__BB0_1:\n\tadd.s64 %rd5, %rd2, 16;\n\tmov.b64 %rd6, %rd5;\n\t@%p1 st.global.v2.f32 [%rd6+8], {%f1, %f2};",
		 RO, WR},
		/* a loop-carried register: flow-insensitive, still the same pointer */
		{"\tmov.u64 %rd7, %rd1;\n$L__BB0_2:\n\tst.global.f32 [%rd7], %f1;\n\tadd.s64 %rd7, %rd7, 4;\n"
		 "\tbra.uni $L__BB0_2;", WR, RO},
		{"\tfoo.bar [%rd1], %r1;", UN, UN},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint8_t a, b;
		ptx_entry(cases[i].body, &a, &b);
		if (a != cases[i].a || b != cases[i].b)
			print_error("case %zu: %u %u, expected %u %u\n", i, a, b, cases[i].a, cases[i].b);
		assert_int_equal(a, cases[i].a);
		assert_int_equal(b, cases[i].b);
	}
}

/* What an Inductor or fixture name says the kernel does with the pointer. */
static int expected_by_name(const char *name)
{
	if (!strncmp(name, "in_out_ptr", 10) || !strncmp(name, "out_ptr", 7) || !strcmp(name, "dst"))
		return WR;
	if (!strncmp(name, "in_ptr", 6) || !strcmp(name, "x_ptr") || !strcmp(name, "y_ptr") ||
	    !strcmp(name, "src") || !strcmp(name, "bias"))
		return RO;
	return -1;
}

/* Every fixture cubin: the TTIR's classification agrees with the names. */
static void test_triton_fixtures(void **state)
{
	(void)state;
	const char *const tdirs[] = {META_TRITON, NULL};
	const char *const idirs[] = {META_INDUCTOR, NULL};
	struct ktrace_meta_opts o = {.triton_dirs = tdirs, .inductor_dirs = idirs};
	DIR *d = opendir(META_TRITON);
	assert_non_null(d);
	int checked = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		char dir[1024];
		snprintf(dir, sizeof dir, "%s/%s", META_TRITON, de->d_name);
		DIR *sub = de->d_name[0] != '.' ? opendir(dir) : NULL;
		struct dirent *fe;
		while (sub && (fe = readdir(sub)) != NULL) {
			size_t n = strlen(fe->d_name);
			if (n < 6 || strcmp(fe->d_name + n - 6, ".cubin"))
				continue;
			char path[2100];
			snprintf(path, sizeof path, "%s/%s", dir, fe->d_name);
			struct ktrace_meta_image *img = NULL;
			char err[256];
			assert_int_equal(ktrace_meta_parse_file(path, &o, &img, err, sizeof err), 0);
			const struct ktrace_meta_kernel *k = &img->kernels[0];
			for (uint32_t j = 0; j < k->nparams; j++) {
				int want = expected_by_name(k->params[j].name);
				if (want < 0)
					continue;
				assert_int_equal(k->params[j].written, want);
				assert_int_equal(k->params[j].written_source, KTRACE_WRITTEN_SRC_TTIR);
				checked++;
			}
			ktrace_meta_free(img);
		}
		if (sub)
			closedir(sub);
	}
	closedir(d);
	assert_int_equal(checked, 12); /* add_kernel 3, scaled_rowsum 3, three Inductor kernels 2 each */
}

/* kt_ttir_writes on @k(%a, %b, %c: !tt.ptr<f32>, %n: i32) around `body`. */
static int ttir_case(const char *body, uint8_t *out)
{
	char text[8192];
	snprintf(text, sizeof text,
		 "#loc = loc(\"/tmp/k.py\":1:0)\nmodule {\n"
		 "  tt.func public @k(%%a: !tt.ptr<f32> {tt.divisibility = 16 : i32} loc(\"a\"(#loc)), "
		 "%%b: !tt.ptr<f32> loc(\"b\"(#loc)), %%c: !tt.ptr<f32> loc(\"c\"(#loc)), %%n: i32 loc(\"n\"(#loc))) "
		 "attributes {noinline = false} {\n"
		 "    %%c0_i32 = arith.constant 0 : i32 loc(#loc)\n"
		 "    %%f = arith.constant 1.000000e+00 : f32 loc(#loc)\n"
		 "%s"
		 "    tt.return loc(#loc)\n  } loc(#loc)\n} loc(#loc)\n", body);
	return kt_ttir_writes(text, strlen(text), "k", 4, out);
}

static const struct {
	const char *body;
	uint8_t a, b, c;
} ttir_cases[] = {
	/* pointers carried by a loop, advanced, read; the result stored through c */
	{"    %r:3 = scf.for %i = %c0_i32 to %n step %n iter_args(%acc = %f, %pa = %a, %pb = %b) -> (f32, !tt.ptr<f32>, !tt.ptr<f32>)  : i32 {\n"
	 "      %x = tt.load %pa : !tt.ptr<f32> loc(#loc)\n"
	 "      %y = tt.load %pb : !tt.ptr<f32> loc(#loc)\n"
	 "      %s = arith.addf %x, %y : f32 loc(#loc)\n"
	 "      %s2 = arith.addf %acc, %s : f32 loc(#loc)\n"
	 "      %na = tt.addptr %pa, %n : !tt.ptr<f32>, i32 loc(#loc)\n"
	 "      %nb = tt.addptr %pb, %n : !tt.ptr<f32>, i32 loc(#loc)\n"
	 "      scf.yield %s2, %na, %nb : f32, !tt.ptr<f32>, !tt.ptr<f32> loc(#loc)\n"
	 "    } loc(#loc)\n"
	 "    tt.store %c, %r#0 : !tt.ptr<f32> loc(#loc)\n", RO, RO, WR},
	/* the same loop storing through the carried pointer it yields second */
	{"    %r:2 = scf.for %i = %c0_i32 to %n step %n iter_args(%pa = %a, %pb = %b) -> (!tt.ptr<f32>, !tt.ptr<f32>)  : i32 {\n"
	 "      tt.store %pb, %f : !tt.ptr<f32> loc(#loc)\n"
	 "      scf.yield %pa, %pb : !tt.ptr<f32>, !tt.ptr<f32> loc(#loc)\n"
	 "    } loc(#loc)\n", RO, WR, RO},
	/* a branch yielding one of two pointers */
	{"    %cond = arith.cmpi slt, %n, %c0_i32 : i32 loc(#loc)\n"
	 "    %p = scf.if %cond -> (!tt.ptr<f32>) {\n"
	 "      scf.yield %a : !tt.ptr<f32> loc(#loc)\n"
	 "    } else {\n"
	 "      scf.yield %b : !tt.ptr<f32> loc(#loc)\n"
	 "    } loc(#loc)\n"
	 "    tt.store %p, %f : !tt.ptr<f32> loc(#loc)\n", WR, WR, RO},
	{"    %o = tt.atomic_rmw fadd, acq_rel, gpu, %b, %f : (!tt.ptr<f32>, f32) -> f32 loc(#loc)\n", RO, WR, RO},
	{"    %o = tt.atomic_cas acq_rel, gpu, %c, %f, %f : (!tt.ptr<f32>, f32, f32) -> f32 loc(#loc)\n", RO, RO, WR},
	/* a reduction region pools its values; data only */
	{"    %x = tt.load %a : !tt.ptr<f32> loc(#loc)\n"
	 "    %s = \"tt.reduce\"(%x) <{axis = 0 : i32}> ({\n"
	 "    ^bb0(%l: f32 loc(#loc), %m: f32 loc(#loc)):\n"
	 "      %t = arith.addf %l, %m : f32 loc(#loc)\n"
	 "      tt.reduce.return %t : f32 loc(#loc)\n"
	 "    }) : (f32) -> f32 loc(#loc)\n"
	 "    tt.store %b, %s : !tt.ptr<f32> loc(#loc)\n", RO, WR, RO},
	/* a pointer read from memory may point anywhere */
	{"    %pp = tt.bitcast %a : !tt.ptr<f32> -> !tt.ptr<!tt.ptr<f32>> loc(#loc)\n"
	 "    %q = tt.load %pp : !tt.ptr<!tt.ptr<f32>> loc(#loc)\n"
	 "    tt.store %q, %f : !tt.ptr<f32> loc(#loc)\n", UN, UN, UN},
	/* a pointer made from an integer */
	{"    %i = tt.ptr_to_int %b : !tt.ptr<f32> -> i64 loc(#loc)\n"
	 "    %q = tt.int_to_ptr %i : i64 -> !tt.ptr<f32> loc(#loc)\n"
	 "    tt.store %q, %f : !tt.ptr<f32> loc(#loc)\n", UN, WR, UN},
	/* a pointer stored as data escapes */
	{"    %i = tt.ptr_to_int %a : !tt.ptr<f32> -> i64 loc(#loc)\n"
	 "    %pc = tt.bitcast %c : !tt.ptr<f32> -> !tt.ptr<i64> loc(#loc)\n"
	 "    tt.store %pc, %i : !tt.ptr<i64> loc(#loc)\n", UN, RO, WR},
	/* an index read from memory keeps the store's base */
	{"    %pi = tt.bitcast %a : !tt.ptr<f32> -> !tt.ptr<i32> loc(#loc)\n"
	 "    %idx = tt.load %pi : !tt.ptr<i32> loc(#loc)\n"
	 "    %q = tt.addptr %c, %idx : !tt.ptr<f32>, i32 loc(#loc)\n"
	 "    tt.store %q, %f : !tt.ptr<f32> loc(#loc)\n", RO, RO, WR},
	{"    tt.call @g(%a) : (!tt.ptr<f32>) -> () loc(#loc)\n", UN, UN, UN},
	{"    %z = tt.frobnicate %a : !tt.ptr<f32> loc(#loc)\n", UN, UN, UN},
	{"    %x = tt.elementwise_inline_asm \"st.global.b32 [$1], $2;\" {constraints = \"=r,l,r\", packed_element = 1 : i32, pure = false} %a, %n : !tt.ptr<f32>, i32 -> i32 loc(#loc)\n",
	 UN, UN, UN},
	{"    tt.print \" x: \" {hex = false, isSigned = array<i32: 0>} : %a : !tt.ptr<f32> loc(#loc)\n", RO, RO, RO},
	/* asm said pure: arithmetic is, a memory operand is not */
	{"    %x = tt.elementwise_inline_asm \"mov.b32 $0, $1;\" {constraints = \"=r,r\", packed_element = 1 : i32, pure = true} %n : i32 -> i32 loc(#loc)\n",
	 RO, RO, RO},
	{"    %x = tt.elementwise_inline_asm \"st.global.b32 [$1], $2;\" {constraints = \"=r,l,r\", packed_element = 1 : i32, pure = true} %a, %n : !tt.ptr<f32>, i32 -> i32 loc(#loc)\n",
	 UN, UN, UN},
};

static void test_ttir_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof ttir_cases / sizeof ttir_cases[0]; i++) {
		uint8_t out[4];
		assert_int_equal(ttir_case(ttir_cases[i].body, out), 0);
		if (out[0] != ttir_cases[i].a || out[1] != ttir_cases[i].b || out[2] != ttir_cases[i].c)
			print_error("case %zu: %u %u %u\n", i, out[0], out[1], out[2]);
		assert_int_equal(out[0], ttir_cases[i].a);
		assert_int_equal(out[1], ttir_cases[i].b);
		assert_int_equal(out[2], ttir_cases[i].c);
	}
	/* a tensor descriptor argument changes the cubin's layout: nothing */
	const char *desc = "tt.func public @k(%d: !tt.tensordesc<tensor<16xf32>>, %a: !tt.ptr<f32>) {\n  tt.return\n}\n";
	uint8_t out[2];
	assert_int_equal(kt_ttir_writes(desc, strlen(desc), "k", 2, out), -1);
	assert_int_equal(out[1], UN);
	/* another kernel's name, another argument count */
	assert_int_equal(kt_ttir_writes(desc, strlen(desc), "nope", 2, out), -1);
	uint8_t four[4];
	assert_int_equal(ttir_case("", four), 0);
	assert_memory_equal(four, ((uint8_t[4]){RO, RO, RO, RO}), 4);
}

/* Every prefix of a fixture's TTIR and of nvcc's PTX: no crash, and nothing
 * written in the whole text is ever proven read-only. */
static void test_cut_text(void **state)
{
	(void)state;
	size_t len;
	uint8_t *ttir = meta_slurp(META_TRITON "/3H6TEFVES2CIR7XPX32JHY4HEAGSY7SRJT2RIJ4V24D7PZYGOBYA/add_kernel.ttir", &len);
	uint8_t out[4];
	for (size_t n = 0; n < len; n++) {
		char *cut = malloc(n + 1);
		memcpy(cut, ttir, n);
		kt_ttir_writes(cut, n, "add_kernel", 4, out);
		assert_int_not_equal(out[2], RO);
		/* one corrupted byte */
		if (n < len) {
			char *bad = malloc(len);
			memcpy(bad, ttir, len);
			bad[n] = (char)(bad[n] ^ 0x5a);
			kt_ttir_writes(bad, len, "add_kernel", 4, out);
			free(bad);
		}
		free(cut);
	}
	free(ttir);
	char buf[4096];
	const char *path = meta_cubin("writes_sm90.ptx", buf, sizeof buf);
	META_NEED(path, "writes_sm90.ptx");
	uint8_t *ptx = meta_slurp(path, &len);
	const char *start = strstr((const char *)ptx, ".visible .entry w_copy(");
	assert_non_null(start);
	size_t from = (size_t)(start - (const char *)ptx);
	for (size_t n = from; n < len; n += 7) {
		struct ktrace_meta_image *img = NULL;
		char err[256];
		char *cut = malloc(n + 1);
		memcpy(cut, ptx, n);
		cut[n] = 0;
		if (ktrace_meta_parse(cut, n + 1, NULL, &img, err, sizeof err) == 0) {
			const struct ktrace_meta_kernel *k = ktrace_meta_find(img, "w_copy");
			if (k && k->nparams > 1)
				assert_int_not_equal(k->params[1].written, RO);
			ktrace_meta_free(img);
		}
		free(cut);
	}
	free(ptx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ptx_kernels),
		cmocka_unit_test(test_fatbin_and_sass),
		cmocka_unit_test(test_ptx_instructions),
		cmocka_unit_test(test_ptx_calls),
		cmocka_unit_test(test_triton_fixtures),
		cmocka_unit_test(test_ttir_cases),
		cmocka_unit_test(test_cut_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
