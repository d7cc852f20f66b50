/* test/unit/job_fakeprog.c: a fake launcher of a distributed job, for the
 * `ktrace check` tests of jobs (test/unit/job_diff_test.c).
 *
 * Instead of starting ranks that run CUDA under libktrace.so, it forks
 * JOB_FAKE_RANKS processes (4 by default) with RANK and WORLD_SIZE set, and
 * each writes its rank's trace of a fake job (test/unit/job_sim.c) to the
 * path KTRACE_OUTPUT expands to in it, as the library would.
 *   JOB_FAKE_COUNTER  file holding the number of earlier traced runs (incremented)
 *   JOB_FAKE_MODE     same: every run alike; nondet: rank 1's k_norm differs in
 *                     even runs; coll: the all-reduce's result differs in even runs
 * A replay run (KTRACE_REPLAY set) must name the rank to replay on
 * (rank=N): that rank's trace then holds a REPLAY record confirming the
 * launch named non-deterministic; without rank=, the launcher exits 3.
 * Untraced (no KTRACE_OUTPUT: `ktrace check`'s warm-up) it does nothing;
 * traced without the preloaded library (diff_fakelib.so), it exits 99.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "format/ktrace_format.h"
#include "format/output_path.h"
#include "format/replay_report.h"
#include "test/unit/job_sim.h"

static int next_run(void)
{
	const char *counter = getenv("JOB_FAKE_COUNTER");
	int run = 0;
	FILE *f;

	if (!counter)
		return 0;
	if ((f = fopen(counter, "r"))) {
		if (fscanf(f, "%d", &run) != 1)
			run = 0;
		fclose(f);
	}
	if ((f = fopen(counter, "w"))) {
		fprintf(f, "%d\n", run + 1);
		fclose(f);
	}
	return run;
}

/* The REPLAY record confirming launch `occurrence` of `kernel` non-deterministic. */
static size_t replay_record(const char *spec, uint8_t *buf, size_t cap)
{
	static uint8_t blob[4096];
	static char kernel[256];
	const char *k = strstr(spec, "kernel="), *o = strstr(spec, "occurrence=");
	struct ktrace_replay_buffer_result out = { .base = 0x7f1200000000ull, .size = 4096, .elem = KTRACE_ELEM_F32,
						   .replays_differing = 5,
						   .diff = { .elements = 1024, .differing = 3, .max_abs = 1.5e-7,
							     .max_rel = 2e-8, .max_ulp = 2, .nfirst = 1, .first = { 7 } },
						   .name = "out", .type = "float*" };
	struct ktrace_replay_report rep = { .outcome = KTRACE_REPLAY_CONFIRMED, .runs_requested = 8, .runs_done = 8,
					    .distinct = 3, .kernel = kernel, .nbuffers = 1, .buffers = &out };

	snprintf(kernel, sizeof kernel, "%.*s", k ? (int)strcspn(k + 7, ",") : 0, k ? k + 7 : "");
	rep.occurrence = o ? strtoull(o + 11, NULL, 10) : 0;
	size_t n = ktrace_replay_report_serialize(&rep, blob, sizeof blob);
	struct ktrace_rec_replay r = { .launch_seq = 0, .kernel_id = 3, .blob_len = (uint32_t)n, .blob = blob };
	return ktrace_encode_replay(buf, cap, &r);
}

/* Rank `rank` of run `run`: its trace, where KTRACE_OUTPUT says. */
static int rank_main(int rank, int nranks, int run, const char *mode)
{
	char path[4096], err[512], env[16];
	struct jsim_program p;
	struct jsim_run o;
	static uint8_t rec[8192];
	const char *replay = getenv("KTRACE_REPLAY");
	const char *want = replay ? strstr(replay, "rank=") : NULL;

	snprintf(env, sizeof env, "%d", rank);
	setenv("RANK", env, 1);
	if (ktrace_output_path_expand(getenv("KTRACE_OUTPUT"), path, sizeof path, err, sizeof err)) {
		fprintf(stderr, "job_fakeprog: %s\n", err);
		return 98;
	}
	jsim_init(&p, nranks);
	jsim_host_copy(&p, 0, 0);
	jsim_compute(&p, 0, 0, 1, 0, 0);
	jsim_compute(&p, 0, 2, 2, 1, 0);
	jsim_coll(&p, KTRACE_COLL_ALL_REDUCE, 0, -1, 3, 2);
	jsim_compute(&p, 0, 1, 4, 3, 0);
	if (!strcmp(mode, "nondet"))
		p.nondet_step = 2, p.nondet_rank = 1;
	if (!strcmp(mode, "coll"))
		p.coll_nondet_step = 3;
	jsim_run_defaults(&o, run % 2);
	if (want && atoi(want + 5) == rank) {
		o.last_record = rec;
		o.last_record_len = replay_record(replay, rec, sizeof rec);
	}
	if (jsim_write_rank(path, &p, &o, rank, err, sizeof err)) {
		fprintf(stderr, "job_fakeprog: %s\n", err);
		return 97;
	}
	return 0;
}

int main(void)
{
	const char *mode = getenv("JOB_FAKE_MODE") ? getenv("JOB_FAKE_MODE") : "same";
	int nranks = getenv("JOB_FAKE_RANKS") ? atoi(getenv("JOB_FAKE_RANKS")) : 4, status = 0;

	if (!getenv("KTRACE_OUTPUT"))
		return 0; /* untraced: the warm-up */
	if (!getenv("DIFF_FAKELIB_LOADED")) {
		fprintf(stderr, "job_fakeprog: the preloaded library was not loaded\n");
		return 99;
	}
	if (getenv("KTRACE_REPLAY") && !strstr(getenv("KTRACE_REPLAY"), "rank=")) {
		fprintf(stderr, "job_fakeprog: KTRACE_REPLAY names no rank: every rank would replay\n");
		return 3;
	}
	int run = getenv("KTRACE_REPLAY") ? 0 : next_run();
	for (int k = 0; k < nranks; k++) {
		pid_t pid = fork();
		if (pid == 0) {
			char ws[16];
			snprintf(ws, sizeof ws, "%d", nranks);
			setenv("WORLD_SIZE", ws, 1);
			_exit(rank_main(k, nranks, run, mode));
		}
	}
	for (int k = 0; k < nranks; k++) {
		int st;
		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			status = 1;
	}
	return status;
}
