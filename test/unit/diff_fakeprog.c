/* test/unit/diff_fakeprog.c: a fake traced program for the `ktrace check` tests.
 *
 * Instead of running CUDA under libktrace.so it writes a synthetic trace
 * (diff_sim.c) to the path KTRACE_OUTPUT expands to, as the library would.
 *   DIFF_FAKE_COUNTER  file holding the number of earlier runs (incremented)
 *   DIFF_FAKE_MODE     same: every run identical; nondet: reduce_sum goes wrong
 *                      in even runs; hostdata: even runs read other input data;
 *                      notrace: write no trace; exit3: exit 3 after tracing;
 *                      asyncfails: exit 4 (traced: after tracing) whenever
 *                      PYTORCH_CUDA_ALLOC_CONF names cudaMallocAsync
 * Exits 99 if the preloaded library (diff_fakelib.so) is not loaded; run
 * untraced (no KTRACE_OUTPUT: `ktrace check`'s warm-up), it does nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test/unit/diff_sim.h"
#include "format/output_path.h"

int main(void)
{
	const char *conf = getenv("PYTORCH_CUDA_ALLOC_CONF");
	int async_fails = getenv("DIFF_FAKE_MODE") && !strcmp(getenv("DIFF_FAKE_MODE"), "asyncfails") && conf &&
			  strstr(conf, "cudaMallocAsync");

	if (getenv("DIFF_FAKE_MODE") && !strcmp(getenv("DIFF_FAKE_MODE"), "jaxcache"))
		fprintf(stderr, "JAXCACHE=%s min_time=%s\n", getenv("JAX_COMPILATION_CACHE_DIR") ?: "(unset)",
			getenv("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS") ?: "(unset)");
	if (!getenv("DIFF_FAKELIB_LOADED") && !getenv("KTRACE_OUTPUT"))
		return async_fails ? 4 : 0; /* an untraced run: no trace to write, not counted */
	if (!getenv("DIFF_FAKELIB_LOADED")) {
		fprintf(stderr, "diff_fakeprog: the preloaded library was not loaded\n");
		return 99;
	}
	const char *mode = getenv("DIFF_FAKE_MODE");
	const char *counter = getenv("DIFF_FAKE_COUNTER");
	const char *pattern = getenv("KTRACE_OUTPUT");
	mode = mode ? mode : "same";
	int run = 0;
	if (counter) {
		FILE *f = fopen(counter, "r");
		if (f) {
			if (fscanf(f, "%d", &run) != 1)
				run = 0;
			fclose(f);
		}
		f = fopen(counter, "w");
		if (f) {
			fprintf(f, "%d\n", run + 1);
			fclose(f);
		}
	}
	if (!strcmp(mode, "notrace"))
		return 0;
	char path[4096], err[512];
	if (ktrace_output_path_expand(pattern ? pattern : KTRACE_DEFAULT_OUTPUT, path, sizeof path, err, sizeof err)) {
		fprintf(stderr, "diff_fakeprog: %s\n", err);
		return 98;
	}
	struct sim_opts o;
	sim_defaults(&o, run % 2);
	if (!strcmp(mode, "nondet") && run % 2)
		o.nondet_iter = 1;
	if (!strcmp(mode, "hostdata") && run % 2)
		o.host_seed = 7;
	if (sim_write(path, &o, err, sizeof err)) {
		fprintf(stderr, "diff_fakeprog: %s\n", err);
		return 97;
	}
	return !strcmp(mode, "exit3") ? 3 : async_fails ? 4 : 0;
}
