/* tools/cli/check_job.c: `ktrace check` of a distributed job.
 *
 * Owns what changes when the checked command is a job's: knowing it is one
 * (a launcher's command line, or run 1's processes writing JOB records of a
 * job of several ranks; run 1's traces then move into its directory), one
 * job verdict per pair of runs (model/job_diff.h: run 1 against run k, the
 * ranks paired, the first divergence in causal order), and confirming the
 * culprit: its rank's two traces are compared again (the one pair loaded),
 * and its launch (then the last writers of its inputs, as for one process:
 * check_confirm.c) is replayed in further runs of the whole job, with
 * rank=R in KTRACE_REPLAY so that only the culprit's rank replays; the
 * replay's verdict and the size of the difference are reported as for one
 * process.  A collective cannot be replayed in isolation: its verdict rests
 * on every rank's digests.  Calls ktrace_check.c (check_internal.h),
 * check_confirm.c and model/.
 */
#include "tools/cli/check_internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- is it a job? ------------------------------------------------------------ */

int ktrace_check_is_launcher(char **cmd, int argc)
{
	static const char *const launchers[] = { "torchrun", "mpirun", "mpiexec", "orterun", "srun" };
	const char *base;

	if (argc < 1)
		return 0;
	base = strrchr(cmd[0], '/') ? strrchr(cmd[0], '/') + 1 : cmd[0];
	for (size_t i = 0; i < sizeof launchers / sizeof launchers[0]; i++)
		if (!strcmp(base, launchers[i]))
			return 1;
	if (strncmp(base, "python", 6))
		return 0;
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(cmd[i], "-m"))
			return !strcmp(cmd[i + 1], "torch.distributed.run") || !strcmp(cmd[i + 1], "torch.distributed.launch");
	return 0;
}

int ktrace_check_ranks_of_job(const struct run_info *ri)
{
	for (size_t i = 0; i < ri->n; i++)
		if (ri->t[i].world_size > 1)
			return 1;
	return 0;
}

int ktrace_check_job_report_options(const struct check_opts *co)
{
	const struct diff_cli *c = &co->diff;
	const char *opt = c->junit ? "--junit" : c->markdown ? "--markdown" : c->github ? "--github" :
			  c->perfetto ? "--perfetto" : NULL;

	if (!opt)
		return 0;
	ktrace_check_error("%s is for one process's comparison, and the command runs a distributed job: check "
			   "without it, then compare the culprit rank's traces with ktrace-diff %s", opt, opt);
	return -1;
}

int ktrace_check_job_adopt(const struct check_state *s, const char *prefix)
{
	char dir[PATH_MAX + 40], from[PATH_MAX + 300], to[PATH_MAX + 340];
	size_t plen = strlen(prefix);
	struct dirent *e;
	DIR *d;
	int rc = 0;

	snprintf(dir, sizeof dir, "%s/%s", s->dir, prefix);
	if ((mkdir(dir, 0700) != 0 && errno != EEXIST) || !(d = opendir(s->dir))) {
		ktrace_check_error("%s: %s", dir, strerror(errno));
		return -1;
	}
	while (rc == 0 && (e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (strncmp(e->d_name, prefix, plen) || e->d_name[plen] != '-' || len < plen + 8 ||
		    strcmp(e->d_name + len - 7, ".ktrace"))
			continue;
		snprintf(from, sizeof from, "%s/%s", s->dir, e->d_name);
		snprintf(to, sizeof to, "%s/%s", dir, e->d_name + plen + 1);
		if (rename(from, to) != 0) {
			ktrace_check_error("%s: %s", from, strerror(errno));
			rc = -1;
		}
	}
	closedir(d);
	return rc;
}

/* ---- comparing ------------------------------------------------------------------- */

/* The paths of run k's traces. */
static const char **run_paths(const struct check_state *s, int k)
{
	const struct run_info *ri = &s->runs[k];
	const char **v = malloc((ri->n ? ri->n : 1) * sizeof *v);

	for (size_t i = 0; v && i < ri->n; i++)
		v[i] = ri->t[i].path;
	return v;
}

int ktrace_check_job_compare(struct check_state *s)
{
	struct check_job *j = &s->jobs;
	const char **pa = run_paths(s, 1);
	char err[1024];
	int rc = 0;

	j->results = calloc((size_t)s->co->nruns, sizeof *j->results);
	if (!pa || !j->results) {
		free(pa);
		ktrace_check_error("out of memory");
		return -1;
	}
	for (int k = 2; k <= s->co->nruns && rc == 0; k++) {
		const char **pb = run_paths(s, k);
		struct job_diff_opts o = { .diff = s->co->diff.o, .label_a = "run 1", .label_b = j->labels[k] };
		snprintf(j->labels[k], sizeof j->labels[k], "run %d", k);
		if (!pb || ktrace_job_diff(pa, s->runs[1].n, pb, s->runs[k].n, &o, &j->results[j->nresults], err,
					   sizeof err)) {
			ktrace_check_error("%s", pb ? err : "out of memory");
			rc = -1;
		} else {
			j->nresults++;
		}
		free(pb);
	}
	free(pa);
	return rc;
}

/* ---- confirming the culprit by replay ------------------------------------------ */

/* The first comparison whose culprit is a launch of a rank (a collective
 * cannot be replayed in isolation), -1 none. */
static long replayable_culprit(const struct check_job *j)
{
	for (size_t k = 0; k < j->nresults; k++) {
		const struct job_result *r = &j->results[k];
		if (r->culprit >= 0 && r->verdict != JOB_VERDICT_COLLECTIVE_NONDET && r->ranks[r->culprit].has_div)
			return (long)k;
	}
	return -1;
}

/* The culprit rank's two traces of comparison k, loaded and compared again
 * (the first divergence and the writers of its inputs are replayed from it). */
static int compare_culprit(struct check_state *s, long k)
{
	struct check_job *j = &s->jobs;
	const struct job_rank *e = &j->results[k].ranks[j->results[k].culprit];
	struct diff_opts o = s->co->diff.o;
	char err[1024];

	snprintf(j->culprit_labels[0], sizeof j->culprit_labels[0], "run 1 rank %d", e->rank);
	snprintf(j->culprit_labels[1], sizeof j->culprit_labels[1], "%s rank %d", j->labels[k + 2], e->rank);
	o.label_a = j->culprit_labels[0];
	o.label_b = j->culprit_labels[1];
	o.allow_truncated = 1;
	if (ktrace_tm_load(&j->culprit_a, e->path_a, 1, err, sizeof err) ||
	    ktrace_tm_load_second(&j->culprit_b, e->path_b, &j->culprit_a, 1, err, sizeof err)) {
		ktrace_tm_free(&j->culprit_a);
		ktrace_check_error("%s", err);
		return -1;
	}
	j->loaded = 1;
	if (ktrace_diff_compare(&j->culprit_a, &j->culprit_b, &o, &j->culprit, err, sizeof err)) {
		ktrace_check_error("%s", err);
		return -1;
	}
	j->compared = 1;
	return 0;
}

/* Replay the culprit rank's candidates until one is confirmed or the runs are spent. */
static int replay_culprit(struct check_state *s, long k)
{
	struct check_job *j = &s->jobs;
	const struct job_rank *e = &j->results[k].ranks[j->results[k].culprit];
	struct diff_confirmation *c = &j->confirm;
	size_t left = (size_t)(s->co->max_replays - s->replay_runs), n;
	struct check_candidate *cands;
	const struct diff_result *rs[1] = { &j->culprit };

	cands = ktrace_check_confirm_start(c, s->co->replays, s->co->max_replays, left);
	if (!cands) {
		ktrace_check_error("out of memory");
		return -1;
	}
	n = ktrace_check_candidates(rs, 1, cands, left);
	for (size_t i = 0; i < n && c->confirmed < 0 && s->replay_runs < s->co->max_replays; i++) {
		ktrace_check_replay_one(s, &j->culprit_a, (uint32_t)e->rank, e->rank, &cands[i], &c->v[c->n]);
		if (c->v[c->n].outcome == KTRACE_REPLAY_CONFIRMED)
			c->confirmed = (long)c->n;
		c->n++;
	}
	free(cands);
	j->culprit.confirm = c;
	return 0;
}

int ktrace_check_job_confirm(struct check_state *s)
{
	struct check_job *j = &s->jobs;
	long k = replayable_culprit(j);

	if (!s->co->max_replays || k < 0)
		return 0;
	if (compare_culprit(s, k) || replay_culprit(s, k))
		return -1;
	j->confirmed_run = k;
	/* a launch confirmed non-deterministic fails the check; without, the digests are notes */
	for (size_t i = 0; i < j->nresults && j->confirm.confirmed < 0; i++)
		if (j->results[i].culprit >= 0 && j->results[i].verdict != JOB_VERDICT_COLLECTIVE_NONDET)
			j->results[i].status = ktrace_job_status_besides_divergences(&j->results[i]);
	return 0;
}

/* ---- reporting ----------------------------------------------------------------------- */

int ktrace_check_job_report(const struct check_state *s)
{
	const struct check_job *j = &s->jobs;
	const struct diff_result *cd = j->confirmed_run >= 0 ? &j->culprit : NULL;
	int status = 0, unconfirmed = cd && j->confirm.confirmed < 0;

	for (size_t k = 0; k < j->nresults; k++)
		status = j->results[k].status > status ? j->results[k].status : status;
	if (s->co->diff.json && !s->co->diff.quiet) {
		ktrace_job_check_json(stdout, s->co->nruns, status, j->results, j->nresults, cd, j->confirmed_run,
				      &s->co->diff.o);
	} else if (!s->co->diff.quiet) {
		for (size_t k = 0; k < j->nresults; k++) {
			if (k)
				fputc('\n', stdout);
			ktrace_job_report_text(stdout, &j->results[k], (long)k == j->confirmed_run ? cd : NULL);
		}
	}
	errno = 0;
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "ktrace check: stdout: write error%s%s\n", errno ? ": " : "", errno ? strerror(errno) : "");
		return 2;
	}
	for (size_t k = 0; k < j->nresults; k++)
		for (size_t i = 0; i < j->results[k].nfindings; i++)
			if (j->results[k].findings[i].exit_code == 2)
				fprintf(stderr, "ktrace check: %s\n", j->results[k].findings[i].text);
	if (unconfirmed && status == 0)
		fprintf(stderr, "ktrace check: note: digests differ, but no replay confirmed the culprit's kernel "
				"non-deterministic (see the report): exit status 0\n");
	return status;
}

int ktrace_check_job_diverged(const struct check_state *s)
{
	for (size_t k = 0; k < s->jobs.nresults; k++)
		if (s->jobs.results[k].culprit >= 0)
			return 1;
	return 0;
}

void ktrace_check_job_free(struct check_state *s)
{
	struct check_job *j = &s->jobs;

	for (size_t k = 0; k < j->nresults; k++)
		ktrace_job_result_free(&j->results[k]);
	free(j->results);
	if (j->compared)
		ktrace_diff_result_free(&j->culprit);
	if (j->loaded) {
		ktrace_tm_free(&j->culprit_a);
		ktrace_tm_free(&j->culprit_b);
	}
	ktrace_check_confirmation_free(&j->confirm);
	memset(j, 0, sizeof *j);
	j->confirmed_run = -1;
}
