/* test/reliability/rel_util.c: running programs with a timeout and reading
 * traces for the reliability tests (rel_util.h).
 */
#include "test/reliability/rel_util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "format/trace_reader.h"
#include "test/scratch.h"

char rel_build[PATH_MAX], rel_tmp[PATH_MAX];

int rel_init(const char *name)
{
	const char *b = getenv("BUILD");

	if (!realpath(b && *b ? b : "build", rel_build))
		return -1;
	if (kt_scratch_dir(rel_tmp, sizeof(rel_tmp), name))
		return 0;
	rel_tmp[0] = '\0';
	return -1;
}

static void rm_tree(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[PATH_MAX + 300];
	struct stat st;

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
			chmod(path, 0700);
			rm_tree(path);
		} else {
			unlink(path);
		}
	}
	closedir(d);
	rmdir(dir);
}

void rel_cleanup(void)
{
	if (rel_tmp[0])
		rm_tree(rel_tmp);
}

unsigned rel_lines(const char *s)
{
	unsigned n = 0;

	for (; *s; s++)
		if (*s == '\n' || !s[1])
			n++;
	return n;
}

static void slurp(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;

	buf[0] = '\0';
	if (!f)
		return;
	n = fread(buf, 1, cap - 1, f);
	buf[n] = '\0';
	fclose(f);
}

pid_t rel_start(struct rel_run *r)
{
	static char app[PATH_MAX + 32], preload[PATH_MAX + 64], libpath[PATH_MAX + 64], output[PATH_MAX + 64];
	char outp[PATH_MAX + 16], errp[PATH_MAX + 16];
	const char *argv[32], *envp[48];
	int n = 0, a = 0;
	pid_t pid;

	snprintf(app, sizeof(app), "%s/rel_app", rel_build);
	argv[a++] = r->prog ? r->prog : app;
	for (const char *const *p = r->argv; p && *p && a < 30; p++)
		argv[a++] = *p;
	argv[a] = NULL;
	for (const char *const *e = r->env; e && *e && n < 32; e++)
		envp[n++] = *e;
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s/libktrace.so", rel_build);
	if (r->libpath)
		snprintf(libpath, sizeof(libpath), "LD_LIBRARY_PATH=%s", r->libpath);
	else
		snprintf(libpath, sizeof(libpath), "LD_LIBRARY_PATH=%s/fakecuda", rel_build);
	if (r->preload)
		envp[n++] = preload;
	envp[n++] = libpath;
	if (r->output) {
		snprintf(output, sizeof(output), "KTRACE_OUTPUT=%s", r->output);
		envp[n++] = output;
	}
	envp[n++] = "KTRACE_HASH=0";
	envp[n++] = "PATH=/usr/bin:/bin";
	envp[n++] = "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0:handle_segv=0:handle_abort=0:"
		    "allow_user_segv_handler=1";
	envp[n++] = "UBSAN_OPTIONS=halt_on_error=1";
	envp[n] = NULL;
	snprintf(outp, sizeof(outp), "%s/stdout", rel_tmp);
	snprintf(errp, sizeof(errp), "%s/stderr", rel_tmp);

	fflush(NULL);
	pid = fork();
	if (pid != 0)
		return pid;
	{
		int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int i = open(r->stdin_path ? r->stdin_path : "/dev/null", O_RDONLY);

		if (o < 0 || e < 0 || i < 0)
			_exit(126);
		dup2(i, 0);
		dup2(o, 1);
		dup2(e, 2);
		for (int fd = 3; fd < 1024; fd++)
			if (fd != r->keep_fd)
				close(fd);
		if (r->fsize_limit > 0) {
			struct rlimit rl = { (rlim_t)r->fsize_limit, (rlim_t)r->fsize_limit };

			setrlimit(RLIMIT_FSIZE, &rl);
		}
		execve(argv[0], (char *const *)argv, (char *const *)envp);
		_exit(127);
	}
}

void rel_finish(struct rel_run *r, pid_t pid)
{
	char outp[PATH_MAX + 16], errp[PATH_MAX + 16];
	unsigned limit = r->timeout_ms ? r->timeout_ms : 60000;
	struct timespec ts = { 0, 1000000 };

	r->timed_out = 0;
	r->status = -1;
	for (unsigned ms = 0;; ms++) {
		pid_t w = waitpid(pid, &r->status, WNOHANG);

		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			break;
		if (ms >= limit) {
			r->timed_out = 1;
			kill(pid, SIGKILL);
			waitpid(pid, &r->status, 0);
			break;
		}
		nanosleep(&ts, NULL);
	}
	snprintf(outp, sizeof(outp), "%s/stdout", rel_tmp);
	snprintf(errp, sizeof(errp), "%s/stderr", rel_tmp);
	slurp(outp, r->out, sizeof(r->out));
	slurp(errp, r->err, sizeof(r->err));
}

int rel_exec(struct rel_run *r)
{
	pid_t pid = rel_start(r);

	if (pid < 0)
		return -1;
	rel_finish(r, pid);
	return r->status;
}

/* ---- traces ------------------------------------------------------------- */

#define SEQ_BITS (1u << 22)

static void read_records(struct ktrace_reader *rd, struct rel_trace *t, uint8_t *seen, uint8_t *rseen,
			 rel_launch_fn fn, void *ctx)
{
	const void *rec;
	size_t len;
	enum ktrace_read_status st;

	while ((st = ktrace_reader_next(rd, &rec, &len)) == KTRACE_READ_RECORD) {
		struct ktrace_record_prefix p;

		if (ktrace_decode_prefix(rec, len, &p)) {
			snprintf(t->error, sizeof(t->error), "record %llu: bad prefix", (unsigned long long)t->records);
			return;
		}
		if (p.seq >= SEQ_BITS || (rseen[p.seq / 8] & (1u << (p.seq % 8))))
			t->record_seq_errors++;
		else
			rseen[p.seq / 8] |= (uint8_t)(1u << (p.seq % 8));
		if (p.seq > t->max_record_seq)
			t->max_record_seq = p.seq;
		if (!t->records)
			t->first_record_ns = p.time_ns;
		t->records++;
		if (p.time_ns > t->last_record_ns)
			t->last_record_ns = p.time_ns;
		switch (p.type) {
		case KTRACE_REC_HEADER: {
			struct ktrace_rec_header h;

			if (ktrace_decode_header(rec, len, &h) == 0) {
				t->have_header = 1;
				t->header_pid = h.pid;
			}
			break;
		}
		case KTRACE_REC_KERNEL:
			t->kernels++;
			break;
		case KTRACE_REC_LAUNCH: {
			struct ktrace_rec_launch l;

			if (ktrace_decode_launch(rec, len, &l)) {
				t->seq_errors++;
				break;
			}
			t->launches++;
			if (l.launch_seq > t->max_launch_seq)
				t->max_launch_seq = l.launch_seq;
			if (l.launch_seq >= SEQ_BITS || (seen[l.launch_seq / 8] & (1u << (l.launch_seq % 8))))
				t->seq_errors++, t->launch_dups++;
			else
				seen[l.launch_seq / 8] |= (uint8_t)(1u << (l.launch_seq % 8));
			if (p.time_ns > t->last_launch_ns)
				t->last_launch_ns = p.time_ns;
			if (fn)
				fn(&l, p.time_ns, ctx);
			break;
		}
		case KTRACE_REC_NOTE: {
			struct ktrace_rec_note nt;

			if (ktrace_decode_note(rec, len, &nt) == 0 && t->nnotes < REL_MAX_NOTES) {
				t->notes[t->nnotes].level = nt.level;
				t->notes[t->nnotes].code = nt.code;
				snprintf(t->notes[t->nnotes].text, sizeof(t->notes[0].text), "%.*s", (int)nt.text.len,
					 nt.text.ptr);
				t->nnotes++;
			}
			break;
		}
		case KTRACE_REC_COUNTERS: {
			struct ktrace_rec_counters rc;

			if (ktrace_decode_counters(rec, len, &rc) == 0)
				for (uint32_t i = 0; i < rc.ncounters; i++) {
					struct ktrace_counter c;

					ktrace_counters_get(&rc, i, &c);
					if (c.id == KTRACE_CTR_RECORDS_DROPPED)
						t->dropped = c.value;
				}
			break;
		}
		case KTRACE_REC_END:
			if (ktrace_decode_end(rec, len, &t->end) == 0)
				t->have_end = 1;
			break;
		default:
			break;
		}
	}
	t->clean_eof = st == KTRACE_READ_EOF;
	t->truncated = st == KTRACE_READ_TRUNCATED;
	if (st != KTRACE_READ_EOF)
		snprintf(t->error, sizeof(t->error), "%s", ktrace_reader_error(rd));
}

void rel_read_trace(const char *path, struct rel_trace *t, rel_launch_fn fn, void *ctx)
{
	struct ktrace_reader *rd;
	uint8_t *seen, *rseen;

	memset(t, 0, sizeof(*t));
	rd = ktrace_reader_open(path, t->error, sizeof(t->error));
	if (!rd)
		return;
	t->opened = 1;
	seen = calloc(SEQ_BITS / 8, 1);
	rseen = calloc(SEQ_BITS / 8, 1);
	if (seen && rseen)
		read_records(rd, t, seen, rseen, fn, ctx);
	if (getenv("KTRACE_REL_DEBUG") && seen)
		for (uint64_t i = 0; i <= t->max_launch_seq; i++)
			if (!(seen[i / 8] & (1u << (i % 8))))
				fprintf(stderr, "%s: launch %llu missing\n", path, (unsigned long long)i);
	free(seen);
	free(rseen);
	ktrace_reader_close(rd);
	/* launch seqs 0..n-1 each once: with no duplicates, the largest is n-1 */
	if (t->launches && t->max_launch_seq != t->launches - 1) {
		t->seq_errors++;
		if (!t->launch_dups && t->max_launch_seq >= t->launches)
			t->launch_holes = t->max_launch_seq + 1 - t->launches;
	}
	/* record seqs unique; 0..records-1 on a complete trace (its END record written).  A
	 * killed process's trace may end at a frame's end and still miss records: a seq is
	 * taken at commit, and a record whose thread was preempted before publishing it
	 * is not in the file when a later one of another thread is. */
	if (t->clean_eof && t->have_end && t->records && t->max_record_seq != t->records - 1)
		t->record_seq_errors++;
}

int64_t rel_param_n(const struct ktrace_rec_launch *l)
{
	int32_t n;

	if (!l->param_bytes || l->param_bytes_len < 12)
		return -1;
	memcpy(&n, l->param_bytes + 8, sizeof(n));
	return n;
}

uint64_t rel_param_p(const struct ktrace_rec_launch *l)
{
	uint64_t p;

	if (!l->param_bytes || l->param_bytes_len < 8)
		return 0;
	memcpy(&p, l->param_bytes, sizeof(p));
	return p;
}
