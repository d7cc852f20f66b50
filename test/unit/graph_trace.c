/* test/unit/graph_trace.c: what the CUDA graph tests share (graph_trace.h). */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "hashkern/ktrace_digest.h"
#include "test/scratch.h"
#include "test/unit/graph_trace.h"

/* The words of mode (a copy in buf) into argv, at most max, NULL after. */
static void mode_words(const char *mode, char *buf, size_t cap, char **argv, int max)
{
	int n = 0;

	snprintf(buf, cap, "%s", mode);
	for (char *w = strtok(buf, " "); w && n < max; w = strtok(NULL, " "))
		argv[n++] = w;
	argv[n] = NULL;
}

char gt_build_dir[PATH_MAX], gt_tmp_dir[PATH_MAX];
const char *gt_extra_env = "KTRACE_QUIET=1", *gt_extra_env2 = "KTRACE_QUIET=1";
const char *gt_app = "graph_app";

/* Run gt_app MODE into trace NAME (hash: KTRACE_HASH; seed: the fake's
 * FAKECUDA_NONDET_SEED); its stdout must end with "OK". */
void gt_run_app(const char *mode, const char *name, int hash, int seed)
{
	char app[PATH_MAX + 32], preload[PATH_MAX + 32], libpath[PATH_MAX + 32], output[PATH_MAX + 64];
	char hashv[32], seedv[48], outp[PATH_MAX + 16], out[4096];
	int status = 0;
	pid_t pid;

	snprintf(app, sizeof app, "%s/%s", gt_build_dir, gt_app);
	snprintf(preload, sizeof preload, "LD_PRELOAD=%s/libktrace.so", gt_build_dir);
	snprintf(libpath, sizeof libpath, "LD_LIBRARY_PATH=%s/fakecuda-real", gt_build_dir);
	snprintf(output, sizeof output, "KTRACE_OUTPUT=%s/%s", gt_tmp_dir, name);
	snprintf(hashv, sizeof hashv, "KTRACE_HASH=%d", hash);
	snprintf(seedv, sizeof seedv, "FAKECUDA_NONDET_SEED=%d", seed);
	snprintf(outp, sizeof outp, "%s/stdout", gt_tmp_dir);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		const char *envp[] = { preload, libpath, output, hashv, seedv, "KTRACE_QUIET=1", gt_extra_env, gt_extra_env2,
				       "KTRACE_OVERWRITE=1", "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0", NULL };
		char words[256], *argv[6] = { app };

		mode_words(mode, words, sizeof words, argv + 1, 4);
		int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(o, 1);
		execve(app, argv, (char *const *)envp);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	FILE *f = fopen(outp, "r");
	assert_non_null(f);
	size_t n = fread(out, 1, sizeof out - 1, f);
	out[n] = '\0';
	fclose(f);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !strstr(out, "OK\n"))
		fail_msg("%s %s (hash %d): status %d, output:\n%s", gt_app, mode, hash, status, out);
}

/* ---- the records of a trace ------------------------------------------------------------------ */


void gt_read_recs(const char *name, struct recs *x)
{
	char path[PATH_MAX + 64], err[512];
	const void *rec;
	size_t len;

	memset(x, 0, sizeof *x);
	snprintf(path, sizeof path, "%s/%s", gt_tmp_dir, name);
	x->r = ktrace_reader_open(path, err, sizeof err);
	if (!x->r)
		fail_msg("%s", err);
	while (ktrace_reader_next(x->r, &rec, &len) == KTRACE_READ_RECORD) {
		struct ktrace_record_prefix p;
		assert_int_equal(ktrace_decode_prefix(rec, len, &p), 0);
		if (p.type == KTRACE_REC_COUNTERS) {
			struct ktrace_rec_counters c;
			assert_int_equal(ktrace_decode_counters(rec, len, &c), 0);
			for (uint32_t i = 0; i < c.ncounters; i++) {
				struct ktrace_counter v;
				ktrace_counters_get(&c, i, &v);
				if (v.id < 64)
					x->counters[v.id] = v.value;
			}
		}
		assert_true(x->n < MAX_RECS);
		x->rec[x->n] = malloc(len);
		memcpy(x->rec[x->n], rec, len);
		x->len[x->n] = len;
		x->type[x->n++] = p.type;
	}
	ktrace_reader_close(x->r);
}

void gt_free_recs(struct recs *x)
{
	for (size_t i = 0; i < x->n; i++)
		free(x->rec[i]);
}

/* The graph LAUNCH records of (graph launch, node), or NULL. */
int gt_graph_launch(const struct recs *x, uint64_t launch, uint32_t node, struct ktrace_rec_launch *l)
{
	for (size_t i = 0; i < x->n; i++)
		if (x->type[i] == KTRACE_REC_LAUNCH && !ktrace_decode_launch(x->rec[i], x->len[i], l) &&
		    (l->flags & KTRACE_LAUNCHF_GRAPH) && l->graph.launch == launch && l->graph.node == node)
			return 1;
	return 0;
}

unsigned gt_count_type(const struct recs *x, uint16_t type, int graph_only)
{
	unsigned n = 0;

	for (size_t i = 0; i < x->n; i++) {
		struct ktrace_rec_launch l;
		struct ktrace_rec_memcpy c;
		struct ktrace_rec_memset m;
		if (x->type[i] != type)
			continue;
		if (!graph_only)
			n++;
		else if (type == KTRACE_REC_LAUNCH)
			n += !ktrace_decode_launch(x->rec[i], x->len[i], &l) && (l.flags & KTRACE_LAUNCHF_GRAPH);
		else if (type == KTRACE_REC_MEMCPY)
			n += !ktrace_decode_memcpy(x->rec[i], x->len[i], &c) && (c.flags & KTRACE_COPYF_GRAPH);
		else if (type == KTRACE_REC_MEMSET)
			n += !ktrace_decode_memset(x->rec[i], x->len[i], &m) && (m.flags & KTRACE_COPYF_GRAPH);
	}
	return n;
}

/* The GRAPH record of revision rev (one part: these graphs are small). */
void gt_graph_rev(const struct recs *x, uint32_t rev, struct ktrace_rec_graph *g)
{
	for (size_t i = 0; i < x->n; i++)
		if (x->type[i] == KTRACE_REC_GRAPH && !ktrace_decode_graph(x->rec[i], x->len[i], g) &&
		    g->revision == rev)
			return;
	fail_msg("no GRAPH record of revision %u", rev);
}

void gt_graph_nodes(const struct ktrace_rec_graph *g, struct ktrace_graph_node *v)
{
	uint32_t off = 0;

	for (uint32_t i = 0; i < g->nnodes; i++)
		assert_int_equal(ktrace_graph_node_next(g, &off, &v[i]), 0);
}

unsigned gt_count_graph_notes(const struct recs *x, const char *says)
{
	return gt_count_notes(x, KTRACE_NOTE_CODE_GRAPH, says);
}

unsigned gt_count_notes(const struct recs *x, uint32_t code, const char *says)
{
	unsigned n = 0;

	for (size_t i = 0; i < x->n; i++) {
		struct ktrace_rec_note note;
		char text[1024];

		if (x->type[i] != KTRACE_REC_NOTE || ktrace_decode_note(x->rec[i], x->len[i], &note) || note.code != code)
			continue;
		snprintf(text, sizeof text, "%.*s", (int)note.text.len, note.text.ptr);
		n += !says || strstr(text, says);
	}
	return n;
}

uint64_t gt_floats_digest(float base, float added, int upto, float rest_added)
{
	float h[N];

	for (int i = 0; i < N; i++)
		h[i] = base + (float)i + (i < upto ? added : rest_added);
	return ktrace_digest(h, sizeof h);
}

/* ---- the diff ---- */

void gt_compare_with(const char *a, const char *b, struct tm_trace *ta, struct tm_trace *tb,
			 struct diff_result *r, int strict)
{
	char pa[PATH_MAX + 64], pb[PATH_MAX + 64], err[512];
	struct diff_opts o = { .strict = strict };

	snprintf(pa, sizeof pa, "%s/%s", gt_tmp_dir, a);
	snprintf(pb, sizeof pb, "%s/%s", gt_tmp_dir, b);
	if (ktrace_tm_load(ta, pa, 0, err, sizeof err) || ktrace_tm_load(tb, pb, 0, err, sizeof err) ||
	    ktrace_diff_compare(ta, tb, &o, r, err, sizeof err))
		fail_msg("%s", err);
}

void gt_compare(const char *a, const char *b, struct tm_trace *ta, struct tm_trace *tb, struct diff_result *r)
{
	gt_compare_with(a, b, ta, tb, r, 0);
}

/* `ktrace check [opt] -- graph_app MODE`, every run numbered by a counter
 * file, its stdout into outp and its stderr into errp (may be outp): its
 * exit status. */
static int check_run(const char *mode, const char *opt, const char *outp, const char *errp)
{
	char k[PATH_MAX + 16], app[PATH_MAX + 32], libpath[PATH_MAX + 32], counter[PATH_MAX + 48];
	char tmpdir[PATH_MAX + 16];
	int status = 0;
	pid_t pid;

	snprintf(k, sizeof k, "%s/ktrace", gt_build_dir);
	snprintf(tmpdir, sizeof tmpdir, "TMPDIR=%s", gt_tmp_dir); /* the traces check keeps */
	snprintf(app, sizeof app, "%s/%s", gt_build_dir, gt_app);
	snprintf(libpath, sizeof libpath, "LD_LIBRARY_PATH=%s/fakecuda-real", gt_build_dir);
	snprintf(counter, sizeof counter, "GRAPH_APP_COUNTER=%s/counter", gt_tmp_dir);
	unlink(counter + strlen("GRAPH_APP_COUNTER="));
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		const char *envp[] = { libpath, counter, tmpdir, "PATH=/usr/bin:/bin",
				       "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0:handle_segv=0:"
				       "handle_abort=0:allow_user_segv_handler=1", NULL };
		char words[256], *argv[11] = { k, "check", "--quiet" };
		int n = 3;

		if (opt)
			argv[n++] = (char *)opt;
		argv[n++] = "--";
		argv[n++] = app;
		mode_words(mode, words, sizeof words, argv + n, 4);
		int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = strcmp(errp, outp) ? open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600) : o;

		dup2(o, 1);
		dup2(e, 2);
		execve(k, argv, (char *const *)envp);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* `ktrace check -- graph_app MODE`: its exit status, stdout and stderr in out. */
int gt_check_app(const char *mode, char *out, size_t cap)
{
	char outp[PATH_MAX + 16];
	int st;

	snprintf(outp, sizeof outp, "%s/check.out", gt_tmp_dir);
	st = check_run(mode, NULL, outp, outp);
	FILE *f = fopen(outp, "r");
	assert_non_null(f);
	size_t n = fread(out, 1, cap - 1, f);
	out[n] = '\0';
	fclose(f);
	return st;
}

int gt_check_app_json(const char *mode, const char *json_path)
{
	char errp[PATH_MAX + 16];

	snprintf(errp, sizeof errp, "%s/check.err", gt_tmp_dir);
	return check_run(mode, "--json", json_path, errp);
}

int gt_setup(void **state)
{
	const char *b = getenv("BUILD");

	(void)state;
	if (!realpath(b ? b : "build", gt_build_dir))
		return -1;
	return kt_scratch_dir(gt_tmp_dir, sizeof gt_tmp_dir, "graph") ? 0 : -1;
}

int gt_teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	if (getenv("KT_GRAPH_KEEP")) { /* the traces, for ktrace-dump */
		fprintf(stderr, "kept %s\n", gt_tmp_dir);
		return 0;
	}
	snprintf(cmd, sizeof cmd, "rm -rf %s", gt_tmp_dir);
	return system(cmd) == 0 ? 0 : -1;
}

