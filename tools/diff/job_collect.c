/* tools/diff/job_collect.c: the traces of two runs of a job, paired by rank.
 *
 * Owns finding the trace files of a run directory (and its subdirectories:
 * traces gathered from several hosts), reading each trace's rank and job
 * size without loading it (model/trace_model.h's scan), leaving out the
 * traces of helper processes (no launch, no JOB record: compile workers,
 * the launcher itself), pairing rank k of run A with rank k of run B, and
 * the findings that pairing makes: job sizes that differ, a rank in one run
 * only, two traces claiming one rank, a trace that cannot be read or ends
 * early.  Calls model/ and libc.
 */
#include "tools/diff/job_internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tools/model/array.h"

#define JOB_DIR_DEPTH 4 /* subdirectories followed below a run directory */

/* ---- findings and warnings ----------------------------------------------- */

int ktrace_job_finding(struct job_result *r, int kind, int32_t rank, int exit_code, const char *fmt, ...)
{
	size_t cap = r->nfindings;
	struct job_finding *f;
	va_list ap;

	if (ktrace_grow(&r->findings, &cap, r->nfindings + 1, sizeof *r->findings))
		return -1;
	f = &r->findings[r->nfindings++];
	f->kind = kind;
	f->rank = rank;
	f->exit_code = exit_code;
	va_start(ap, fmt);
	vsnprintf(f->text, sizeof f->text, fmt, ap);
	va_end(ap);
	return 0;
}

int ktrace_job_warning(struct job_result *r, const char *fmt, ...)
{
	size_t cap = r->nwarnings;
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (ktrace_grow(&r->warnings, &cap, r->nwarnings + 1, sizeof *r->warnings))
		return -1;
	if (!(r->warnings[r->nwarnings] = strdup(line)))
		return -1;
	r->nwarnings++;
	return 0;
}

/* ---- a run directory ------------------------------------------------------ */

struct path_list {
	char **v;
	size_t n, cap;
};

static int path_add(struct path_list *l, const char *path)
{
	if (ktrace_grow(&l->v, &l->cap, l->n + 1, sizeof *l->v))
		return -1;
	if (!(l->v[l->n] = strdup(path)))
		return -1;
	l->n++;
	return 0;
}

static int ends_with_ktrace(const char *name)
{
	size_t len = strlen(name);
	return len > 7 && !strcmp(name + len - 7, ".ktrace");
}

/* Add the traces under dir (depth levels of subdirectories): 0, or -1 with err. */
static int list_dir(const char *dir, int depth, struct path_list *l, char *err, size_t errlen)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4096];
	int rc = 0;

	if (!d) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	while (rc == 0 && (e = readdir(d))) {
		struct stat st;
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (stat(path, &st) != 0)
			continue; /* gone, or a dangling link: nothing to read */
		if (S_ISDIR(st.st_mode) && depth > 0)
			rc = list_dir(path, depth - 1, l, err, errlen);
		else if (S_ISREG(st.st_mode) && ends_with_ktrace(e->d_name) && path_add(l, path))
			rc = -1, snprintf(err, errlen, "out of memory listing %s", dir);
	}
	closedir(d);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int ktrace_job_list_dir(const char *dir, char ***paths, size_t *n, char *err, size_t errlen)
{
	struct path_list l = { 0 };

	if (list_dir(dir, JOB_DIR_DEPTH, &l, err, errlen)) {
		ktrace_job_paths_free(l.v, l.n);
		return -1;
	}
	ktrace_sort(l.v, l.n, sizeof *l.v, cmp_str);
	*paths = l.v;
	*n = l.n;
	return 0;
}

void ktrace_job_paths_free(char **paths, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
}

/* ---- scanning and grouping ---------------------------------------------- */

struct scanned {
	const char *path;
	struct tm_run_scan s;
	int readable;         /* read to its end, or to where it was cut */
	char err[512];
};

/* Scan every trace of a run: its rank, job size and launches. */
static struct scanned *scan_all(const char *const *paths, size_t n)
{
	struct scanned *v = calloc(n ? n : 1, sizeof *v);

	for (size_t i = 0; v && i < n; i++) {
		v[i].path = paths[i];
		v[i].readable = ktrace_tm_scan_run(paths[i], &v[i].s, v[i].err, sizeof v[i].err) == 0 ||
				(v[i].s.truncated && v[i].s.have_header);
	}
	return v;
}

/* A trace of a helper process: read, but no launch and no JOB record. */
static int is_helper(const struct scanned *t)
{
	return t->readable && !t->s.launches && !t->s.have_job;
}

/* The job size a run's traces give: their JOB records' (the largest), else
 * the highest rank found plus one. */
static int32_t world_size_of(const struct scanned *v, size_t n)
{
	int32_t job = -1, ranks = 0;

	for (size_t i = 0; i < n; i++) {
		if (is_helper(&v[i]) || !v[i].s.have_header)
			continue;
		if (v[i].s.have_job && v[i].s.world_size > job)
			job = v[i].s.world_size;
		if ((int32_t)v[i].s.rank + 1 > ranks)
			ranks = (int32_t)v[i].s.rank + 1;
	}
	return job > 0 ? job : ranks;
}

/* The rank entry of r for rank, made when new (ranks kept sorted). */
static struct job_rank *rank_entry(struct job_result *r, int32_t rank)
{
	size_t i = 0, cap = r->nranks;

	while (i < r->nranks && r->ranks[i].rank < rank)
		i++;
	if (i < r->nranks && r->ranks[i].rank == rank)
		return &r->ranks[i];
	if (ktrace_grow(&r->ranks, &cap, r->nranks + 1, sizeof *r->ranks))
		return NULL;
	memmove(&r->ranks[i + 1], &r->ranks[i], (r->nranks - i) * sizeof *r->ranks);
	memset(&r->ranks[i], 0, sizeof r->ranks[i]);
	r->ranks[i].rank = rank;
	r->ranks[i].status = -1;
	r->ranks[i].via_rank = -1;
	r->nranks++;
	return &r->ranks[i];
}

/* The trace of run (0 A, 1 B) chosen for rank e->rank: set its path, or a
 * finding when two traces with launches claim the rank.  The launches
 * counted so far hold the chosen trace's until the rank is compared. */
static int take_trace(struct job_result *r, struct job_rank *e, int run, const struct scanned *t)
{
	char **slot = run ? &e->path_b : &e->path_a;
	int *truncated = run ? &e->truncated_b : &e->truncated_a;
	uint64_t *launches = run ? &e->launches_b : &e->launches_a;

	if (*slot && t->s.launches && *launches) {
		/* a second trace of this rank with launches: which to compare is not ours to guess */
		if (e->status == JOB_RANK_UNUSABLE)
			return 0;
		e->status = JOB_RANK_UNUSABLE;
		return ktrace_job_finding(r, JOB_FIND_DUPLICATE_RANK, e->rank, 2,
					  "run %s: several traces of rank %d launched kernels (%s, %s): compare them one "
					  "by one with ktrace-diff A.ktrace B.ktrace",
					  run ? "B" : "A", e->rank, *slot, t->path);
	}
	if (*slot && !t->s.launches)
		return 0; /* a rank's launches win over its helpers' (data loader workers share its RANK) */
	free(*slot);
	if (!(*slot = strdup(t->path)))
		return -1;
	*truncated = t->s.truncated;
	*launches = (uint64_t)t->s.launches;
	return 0;
}

/* A trace that could not be read: a finding (its rank when its header was read). */
static int unreadable(struct job_result *r, int run, const struct scanned *t)
{
	int32_t rank = t->s.have_header ? (int32_t)t->s.rank : -1;
	struct job_rank *e = rank >= 0 ? rank_entry(r, rank) : NULL;

	if (rank >= 0 && !e)
		return -1;
	if (e)
		e->status = JOB_RANK_UNUSABLE;
	return ktrace_job_finding(r, JOB_FIND_UNREADABLE, rank, 2, "run %s: %s", run ? "B" : "A",
				  t->err[0] ? t->err : "unreadable trace");
}

static int group_run(struct job_result *r, int run, const struct scanned *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct job_rank *e;
		if (is_helper(&v[i])) {
			*(run ? &r->skipped_b : &r->skipped_a) += 1;
			continue;
		}
		if (!v[i].readable && v[i].s.truncated) {
			/* cut before its first record: a process killed before its first flush */
			if (ktrace_job_warning(r, "run %s: %s ends before its first record (killed before its first "
						  "flush?): left out", run ? "B" : "A", v[i].path))
				return -1;
			continue;
		}
		if (!v[i].readable) {
			if (unreadable(r, run, &v[i]))
				return -1;
			continue;
		}
		if (!(e = rank_entry(r, (int32_t)v[i].s.rank)) || take_trace(r, e, run, &v[i]))
			return -1;
	}
	return 0;
}

/* Findings of each rank: in one run only, truncated. */
static int rank_findings(struct job_result *r, int partial)
{
	for (size_t i = 0; i < r->nranks; i++) {
		struct job_rank *e = &r->ranks[i];
		int rc = 0;
		if (e->status == JOB_RANK_UNUSABLE)
			continue; /* unreadable or claimed twice: said already */
		if (!e->path_a || !e->path_b)
			rc = ktrace_job_finding(r, JOB_FIND_RANK_MISSING, e->rank, 1,
						"rank %d has a trace in run %s only: in run %s it was killed before its "
						"first flush, never started, or its trace is not among those given",
						e->rank, e->path_a ? "A" : "B", e->path_a ? "B" : "A");
		for (int run = 0; rc == 0 && run < 2; run++) {
			if (!(run ? e->truncated_b : e->truncated_a))
				continue;
			if (partial)
				rc = ktrace_job_warning(r, "rank %d's trace in run %s ends early (%s): compared as far as "
							   "it goes", e->rank, run ? "B" : "A", run ? e->path_b : e->path_a);
			else
				rc = ktrace_job_finding(r, JOB_FIND_TRUNCATED, e->rank, 1,
							"rank %d's trace in run %s ends early (killed?): %s; compared as far "
							"as it goes (--partial makes this a warning)", e->rank,
							run ? "B" : "A", run ? e->path_b : e->path_a);
		}
		if (rc)
			return -1;
	}
	return 0;
}

int ktrace_job_pair_ranks(struct job_result *r, const char *const *pa, size_t na, const char *const *pb, size_t nb,
			  int partial, char *err, size_t errlen)
{
	struct scanned *va = scan_all(pa, na), *vb = scan_all(pb, nb);
	int rc = -1;

	if (!va || !vb || group_run(r, 0, va, na) || group_run(r, 1, vb, nb))
		goto out;
	r->world_a = world_size_of(va, na);
	r->world_b = world_size_of(vb, nb);
	if (r->world_a != r->world_b &&
	    ktrace_job_finding(r, JOB_FIND_WORLD_SIZE, -1, 2,
			       "run A's job has %d rank%s, run B's %d: not two runs of the same job", r->world_a,
			       r->world_a == 1 ? "" : "s", r->world_b))
		goto out;
	rc = r->world_a == r->world_b ? rank_findings(r, partial) : 0;
	for (int32_t k = 0; rc == 0 && k < r->world_a && r->world_a == r->world_b; k++) {
		size_t i = 0;
		while (i < r->nranks && r->ranks[i].rank != k)
			i++;
		if (i == r->nranks)
			rc = ktrace_job_warning(r, "rank %d of %d has a trace in neither run: not compared", k, r->world_a);
	}
out:
	free(va);
	free(vb);
	if (rc)
		snprintf(err, errlen, "out of memory while reading the runs' traces");
	return rc;
}
