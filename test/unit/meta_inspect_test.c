/* test/unit/meta_inspect_test.c: build/ktrace-inspect as a user runs it:
 * text, JSON (checked with python3's json module when present) and summary
 * output for the Triton fixtures, --help, and one-line errors with exit
 * status 2 for bad files and bad options. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test/scratch.h"
#include "test/unit/meta_testutil.h"

#define ADD_CUBIN META_TRITON "/3H6TEFVES2CIR7XPX32JHY4HEAGSY7SRJT2RIJ4V24D7PZYGOBYA/add_kernel.cubin"
#define PER_CUBIN META_TRITON "/VE4TBTR2YOO3K2ZCOOEMA5K64277NE57VMZQLK66T63YFXF74LJA/triton_per_fused_add_gelu_sum_0.cubin"

static char out_buf[1 << 20], err_buf[1 << 16];
static char scratch[1024], out_path[1100], err_path[1100]; /* the tool's stdout and stderr */

/* Run ktrace-inspect with args (shell words); returns the exit status. */
static int run(const char *args)
{
	const char *b = getenv("BUILD");
	char cmd[8192];
	snprintf(cmd, sizeof cmd, "%s/ktrace-inspect %s >'%s' 2>'%s'", b && *b ? b : "build", args, out_path, err_path);
	int st = system(cmd);
	assert_true(WIFEXITED(st));
	FILE *f = fopen(out_path, "r");
	size_t n = fread(out_buf, 1, sizeof out_buf - 1, f);
	out_buf[n] = 0;
	fclose(f);
	f = fopen(err_path, "r");
	n = fread(err_buf, 1, sizeof err_buf - 1, f);
	err_buf[n] = 0;
	fclose(f);
	return WEXITSTATUS(st);
}

static int lines(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void test_text(void **s)
{
	(void)s;
	assert_int_equal(run("--no-env-caches --triton-cache " META_TRITON " " ADD_CUBIN), 0);
	assert_non_null(strstr(out_buf, "add_kernel.cubin: cubin, 1 kernel\n"));
	assert_non_null(strstr(out_buf, "  sm_90, layout nvinfo, 6 parameters, 48 bytes, reqntid 128x1x1, CUDA API 12.8\n"));
	assert_non_null(strstr(out_buf, "     0      0      8  pointer  read_only(ttir)  x_ptr                triton_cache    *fp32\n"));
	assert_non_null(strstr(out_buf, "     2     16      8  pointer  written(ttir)    out_ptr              triton_cache    *fp32\n"));
	assert_non_null(strstr(out_buf, "     3     24      4  scalar   -                n_elements           triton_cache    i32\n"));
	assert_non_null(strstr(out_buf, "     5     40      8  pointer  read_only(ptx)   profile_scratch      triton_scratch  *i8  [scratch hidden]\n"));
	assert_string_equal(err_buf, "");
}

static void test_json(void **s)
{
	(void)s;
	assert_int_equal(run("--json --no-env-caches --triton-cache " META_TRITON " --inductor-cache " META_INDUCTOR
			     " " ADD_CUBIN " " PER_CUBIN),
			 0);
	assert_int_equal(out_buf[0], '[');
	assert_non_null(strstr(out_buf, "{\"ordinal\": 3, \"offset\": 20, \"size\": 4, \"kind\": \"scalar\", "
					"\"name\": \"r0_numel\", \"name_source\": \"triton_cache\", \"type\": \"i32\""));
	if (system("command -v python3 >/dev/null 2>&1") != 0) {
		print_message("SKIP: python3 not installed; JSON syntax not checked\n");
		return;
	}
	/* valid JSON with the right structure */
	char check[2048];
	snprintf(check, sizeof check, "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); "
				"assert len(d)==2; k=d[0][\"kernels\"][0]; assert k[\"name\"]==\"add_kernel\"; "
				"assert [p[\"name\"] for p in k[\"params\"]]==[\"x_ptr\",\"y_ptr\",\"out_ptr\",\"n_elements\","
				"\"global_scratch\",\"profile_scratch\"]; assert \"scratch\" in k[\"params\"][4][\"flags\"]' '%s'",
		 out_path);
	assert_int_equal(system(check), 0);
}

static void test_summary(void **s)
{
	(void)s;
	assert_int_equal(run("--summary --no-env-caches --triton-cache " META_TRITON " " ADD_CUBIN), 0);
	assert_non_null(strstr(out_buf, "cubin, 1 kernel (0 without layout), 6 parameters (pointer 5, scalar 1, struct 0); "
					"names: triton_cache 4 triton_scratch 2; pointers read_only 4, written 1, unknown 0; "
					"kernels by sm: sm_90 1; 0 warnings"));
	assert_int_equal(lines(out_buf), 1);
	/* two files: their totals after them */
	assert_int_equal(run("--summary --no-env-caches --triton-cache " META_TRITON " " ADD_CUBIN " " PER_CUBIN), 0);
	assert_non_null(strstr(out_buf, "\ntotal: 2 files, 2 kernels, 9 pointer parameters: read_only 7 (78%), written 2, "
					"unknown 0\n"));
	assert_int_equal(lines(out_buf), 3);
	assert_int_equal(run("--summary --json --no-env-caches --triton-cache " META_TRITON " " ADD_CUBIN " " PER_CUBIN), 0);
	assert_non_null(strstr(out_buf, "\"pointers_written\": {\"unknown\": 0, \"read_only\": 7, \"written\": 2}}\n"));
}

static void test_errors(void **s)
{
	(void)s;
	/* a bad file among good ones: one line, exit 2, the good file printed */
	assert_int_equal(run("--summary --no-env-caches /nonexistent.cubin test/cubins/kernels.cu " ADD_CUBIN), 2);
	assert_string_equal(err_buf, "ktrace-inspect: /nonexistent.cubin: cannot open: No such file or directory\n"
				     "ktrace-inspect: test/cubins/kernels.cu: not PTX (no .version directive)\n");
	assert_int_equal(lines(out_buf), 1);
	assert_int_equal(run("--sm nine " ADD_CUBIN), 2);
	assert_string_equal(err_buf, "ktrace-inspect: --sm 'nine': expected an architecture such as 90 or sm_90\n");
	assert_int_equal(run(""), 2);
	assert_string_equal(err_buf, "ktrace-inspect: no FILE given (try --help)\n");
	assert_int_equal(run("--bogus " ADD_CUBIN), 2);
	assert_string_equal(err_buf, "ktrace-inspect: unknown option '--bogus' (try --help)\n");
	assert_int_equal(run("--sm -- " ADD_CUBIN), 2); /* "--" is never an option's value */
	assert_string_equal(err_buf, "ktrace-inspect: option '--sm' needs an argument (try --help)\n");
	assert_int_equal(run("--json=1 " ADD_CUBIN), 2);
	assert_string_equal(err_buf, "ktrace-inspect: option '--json' takes no value (try --help)\n");
	assert_int_equal(run("--no " ADD_CUBIN), 2);
	assert_string_equal(err_buf,
			    "ktrace-inspect: option '--no' is ambiguous (--no-env-caches, --no-dwarf) (try --help)\n");
	assert_int_equal(run("--help"), 0);
	assert_non_null(strstr(out_buf, "usage: ktrace-inspect [options] FILE..."));
	assert_int_equal(run("--sm sm_90 --no-env-caches " ADD_CUBIN), 0);
}

static void test_built_images(void **s)
{
	(void)s;
	char buf[512], args[1024];
	const char *p = meta_cubin("libkernels.so", buf, sizeof buf);
	META_NEED(p, "libkernels.so");
	snprintf(args, sizeof args, "--sm 80 --no-env-caches %s", p);
	assert_int_equal(run(args), 0);
	assert_non_null(strstr(out_buf, ": host-elf, 13 kernels\n"));
	assert_non_null(strstr(out_buf, "\n_Z16second_tu_kernelPfPKfj\n  second_tu_kernel(float*, float const*, unsigned int)\n"
					"  sm_80, layout nvinfo, 3 parameters, 20 bytes, CUDA API 13.0\n"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_built_images),
	};
	if (!kt_scratch_dir(scratch, sizeof scratch, "inspect-test")) {
		perror("meta_inspect_test: scratch folder");
		return 1;
	}
	snprintf(out_path, sizeof out_path, "%s/out", scratch);
	snprintf(err_path, sizeof err_path, "%s/err", scratch);
	int rc = cmocka_run_group_tests_name("meta_inspect", tests, NULL, NULL);
	unlink(out_path);
	unlink(err_path);
	rmdir(scratch);
	return rc;
}
