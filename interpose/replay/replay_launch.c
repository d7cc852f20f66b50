/* interpose/replay/replay_launch.c: KTRACE_REPLAY on the launch path.
 *
 * Owns what happens at the traced launches of a run with KTRACE_REPLAY set
 * (replay.h, "the launch path's side"): the matcher asked at each launch, the
 * gate that holds other threads' launches back while the candidate is
 * confirmed, the buffers the candidate can reach (its parameters rebuilt and
 * scanned for pointers into tracked allocations, each allocation taken whole
 * and once, names and element types from the kernel's metadata), the
 * confirmation itself (replay_confirm.c) around the program's real launch,
 * and the verdict: a REPLAY record, a NOTE record and one line on stderr
 * (the finding of the buffers, the gate and the verdict also for a body's
 * kernel node, replay_body.c).
 * Everything here runs only in such runs; the candidate's work runs once.
 * Calls the registry through the services table (kernel entries, parameter
 * names from module metadata), the parameter scan, the allocation map, meta/
 * (parameter types) and format/ (records, the report blob).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "format/ktrace_format.h"
#include "format/trace_writer.h"
#include "interpose/model/alloc_map.h"
#include "interpose/model/kernels.h"
#include "interpose/model/param_scan.h"
#include "interpose/model/services.h"
#include "interpose/model/tracer.h"
#include "interpose/replay/replay_internal.h"
#include "meta/kernel_meta.h"

/* ---- the matcher and the gate ---------------------------------------------- */

static struct {
	pthread_once_t once;
	struct ktrace_replay_matcher matcher;
	int owner_pid;          /* the process whose launches are counted */
	atomic_int gate_pid;    /* the confirming process (0: open) */
	atomic_int in_flight;   /* launches between begin and end */
	atomic_int done;        /* the candidate has been seen */
} rs = { .once = PTHREAD_ONCE_INIT };

/* Every kernel entry of the spec's name is passed to the matcher as this
 * one token, so the occurrence spans modules and handles. */
static const char name_token;

static void state_init(void)
{
	const struct ktrace_replay_spec *spec = ktrace_tracer.cfg.replay_spec;

	ktrace_replay_matcher_init(&rs.matcher, spec ? spec->kernel : NULL, spec ? spec->occurrence : 0);
	rs.owner_pid = (int)getpid();
}

static void pause_briefly(void)
{
	struct timespec ts = { 0, 20000 };

	nanosleep(&ts, NULL);
}

/* The matcher's token for the kernel launched through handle: the name
 * token for an entry of the spec's name, else the entry (never matched).
 * A thread remembers its last entry, so a loop of one kernel compares no
 * name. */
static const void *launch_token(uint64_t handle)
{
	static __thread const struct ktrace_kernel_entry *last;
	static __thread const void *last_token;
	const struct ktrace_replay_spec *spec = ktrace_tracer.cfg.replay_spec;
	const struct ktrace_kernel_entry *e = ktrace_services.kernel_lookup(handle);

	if (e && e == last)
		return last_token;
	last = e;
	last_token = e && e->name && spec && strcmp(e->name, spec->kernel) == 0 ? (const void *)&name_token
									      : (const void *)e;
	return last_token;
}

/* Is the gate closed by a thread of this process?  (A fork child inherits
 * the value its parent had: that gate is not its own.) */
static int gate_closed_here(void)
{
	int pid = atomic_load(&rs.gate_pid);

	return pid && pid == (int)getpid();
}

/* Wait while another thread of this process confirms, then count this
 * launch in flight (the confirmer waits for those to end). */
static void enter_gate(struct ktrace_replay_call *c)
{
	for (;;) {
		while (gate_closed_here())
			pause_briefly();
		atomic_fetch_add(&rs.in_flight, 1);
		if (!gate_closed_here())
			break;
		atomic_fetch_sub(&rs.in_flight, 1);
	}
	c->in_flight = 1;
}

int ktrace_replay_launch_begin(struct ktrace_replay_call *c, const struct ktrace_launch_args *a,
			       ktrace_real_launch_fn real, void *ctx, uint64_t seq, uint64_t kernel_id)
{
	const void *tok;

	memset(c, 0, sizeof(*c));
	c->a = a;
	c->real = real;
	c->real_ctx = ctx;
	c->seq = seq;
	c->kernel_id = kernel_id;
	if (atomic_load_explicit(&rs.done, memory_order_acquire))
		return 0;
	pthread_once(&rs.once, state_init);
	if (ktrace_tracer.cfg.replay_spec && ktrace_tracer.cfg.replay_spec->body) {
		enter_gate(c); /* the candidate is a graph's body node (replay_body.c) */
		return 0;
	}
	tok = launch_token((uint64_t)(uintptr_t)a->f);
	if (!ktrace_replay_match(&rs.matcher, tok, tok == &name_token ? rs.matcher.kernel : NULL) ||
	    rs.owner_pid != (int)getpid()) {
		enter_gate(c);
		return 0;
	}
	/* The candidate: close the gate, let the launches in flight end. */
	atomic_store(&rs.gate_pid, rs.owner_pid);
	while (atomic_load(&rs.in_flight) > 0)
		pause_briefly();
	c->candidate = 1;
	return 1;
}

void ktrace_replay_launch_end(struct ktrace_replay_call *c)
{
	if (c->in_flight)
		atomic_fetch_sub(&rs.in_flight, 1);
	if (c->candidate) {
		atomic_store_explicit(&rs.done, 1, memory_order_release);
		atomic_store(&rs.gate_pid, 0);
	}
}

/* ---- the buffers the candidate can reach ------------------------------------ */

static void param_names_free(struct rp_param_names *p)
{
	for (uint32_t i = 0; i < p->n; i++) {
		free(p->name[i]);
		free(p->type[i]);
	}
	free(p->name);
	free(p->type);
	memset(p, 0, sizeof(*p));
}

/* As the KERNEL record names them: the metadata's names and types, else
 * "argN" with the types of the Itanium-mangled name when it has them. */
static void param_names_get(struct ktrace_kernel_entry *e, struct rp_param_names *p)
{
	uint32_t n = e->layout ? e->layout->nparams : 0;

	memset(p, 0, sizeof(*p));
	p->name = calloc(n ? n : 1, sizeof(char *));
	p->type = calloc(n ? n : 1, sizeof(char *));
	if (!p->name || !p->type) {
		free(p->name);
		free(p->type);
		p->name = p->type = NULL;
		return;
	}
	p->n = n;
	if (ktrace_services.kernel_param_names(e, p->name, p->type, n))
		return;
	if (e->name && ktrace_demangle_param_types(e->name, p->type, (int)n) != (int)n) {
		for (uint32_t i = 0; i < n; i++) {
			free(p->type[i]);
			p->type[i] = NULL;
		}
	}
	for (uint32_t i = 0; i < n; i++) {
		char buf[16];

		snprintf(buf, sizeof(buf), "arg%u", i);
		p->name[i] = strdup(buf);
	}
}

void rp_reach_free(struct rp_reach *r)
{
	free(r->v);
	param_names_free(&r->names);
	memset(r, 0, sizeof(*r));
}

/* Add the allocation of one pointer region, unless a region before it
 * already added that allocation or it lies in none (a typed pointer the
 * allocation map does not know: nothing ktrace could copy). */
static void reach_add(struct rp_reach *r, const struct ktrace_region *g, const struct ktrace_alloc_info *al)
{
	uint32_t ord = g->ordinal;

	if (!al->size)
		return;
	for (uint32_t i = 0; i < r->n; i++)
		if (r->v[i].base == (CUdeviceptr)al->base)
			return;
	r->v[r->n] = (struct ktrace_replay_buffer){
		.base = (CUdeviceptr)al->base,
		.size = al->kind == KTRACE_ALLOC_RESERVE ? 0 : al->size, /* no memory behind it */
		.arg_index = ord,
		.name = ord < r->names.n ? r->names.name[ord] : NULL,
		.type = ord < r->names.n ? r->names.type[ord] : NULL,
	};
	r->n++;
}

int rp_reach_find(struct rp_reach *r, const struct ktrace_launch_args *a, struct ktrace_kernel_entry *e)
{
	const struct ktrace_param_layout *l = e ? e->layout : NULL;
	uint8_t *params = malloc(KTRACE_PARAM_MAX_BYTES);
	struct ktrace_region *regions = malloc(KTRACE_PARAM_MAX_WORDS * sizeof(*regions));
	struct ktrace_alloc_info *allocs = malloc(KTRACE_PARAM_MAX_WORDS * sizeof(*allocs));
	uint32_t flags = 0, len, n = 0;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	r->v = malloc(KTRACE_PARAM_MAX_WORDS * sizeof(*r->v));
	if (!params || !regions || !allocs || !r->v)
		goto out;
	if (e)
		param_names_get(e, &r->names);
	len = ktrace_params_assemble(l, a->kernel_params, a->extra, params, KTRACE_PARAM_MAX_BYTES, &flags);
	n = ktrace_params_scan(l, params, len, a->grid, regions, allocs, KTRACE_PARAM_MAX_WORDS, NULL);
	for (uint32_t i = 0; i < n; i++)
		reach_add(r, &regions[i], &allocs[i]);
	rc = 0;
out:
	free(params);
	free(regions);
	free(allocs);
	return rc;
}

/* ---- the confirmation and its verdict ---------------------------------------- */

static CUresult program_launch(void *arg)
{
	struct ktrace_replay_call *c = arg;

	return c->real(c->a, c->real_ctx);
}

/* The verdict as a REPLAY record (the report blob) for the launch. */
static void write_replay_record(struct ktrace_writer *w, uint64_t seq, uint64_t kernel_id,
				const struct ktrace_replay_report *rep)
{
	size_t blen = ktrace_replay_report_serialize(rep, NULL, 0), size;
	struct ktrace_rec_replay rec = { .launch_seq = seq, .kernel_id = kernel_id };
	uint8_t *blob = malloc(blen);
	void *buf = NULL;

	if (!blob || ktrace_replay_report_serialize(rep, blob, blen) != blen)
		goto out;
	rec.blob = blob;
	rec.blob_len = (uint32_t)blen;
	size = ktrace_encode_replay(NULL, 0, &rec);
	buf = malloc(size);
	if (buf && ktrace_encode_replay(buf, size, &rec) == size)
		ktrace_writer_append(w, buf, size);
out:
	free(blob);
	free(buf);
}

/* The paragraph as a NOTE record and one line on stderr (not silenced by
 * KTRACE_QUIET: it is what the run is for). */
static void write_replay_note(struct ktrace_writer *w, const struct ktrace_replay_report *rep)
{
	size_t plen = ktrace_replay_report_format(rep, NULL, 0);
	char *line = malloc(plen + 64);
	struct ktrace_rec_note note;
	size_t size, pre;
	ssize_t wrote;
	void *buf;

	if (!line)
		return;
	pre = (size_t)snprintf(line, 64, "ktrace[%d/%ld]: replay: ", (int)getpid(), (long)syscall(SYS_gettid));
	ktrace_replay_report_format(rep, line + pre, plen + 1);
	note = (struct ktrace_rec_note){
		.level = rep->outcome == KTRACE_REPLAY_NOT_REPRODUCED ? KTRACE_NOTE_INFO : KTRACE_NOTE_WARN,
		.code = KTRACE_NOTE_CODE_REPLAY,
		.text = { line + pre, (uint16_t)(plen < 65535 ? plen : 65535) },
	};
	size = ktrace_encode_note(NULL, 0, &note);
	buf = malloc(size);
	if (buf && ktrace_encode_note(buf, size, &note) == size)
		ktrace_writer_append(w, buf, size);
	free(buf);
	line[pre + plen] = '\n';
	wrote = write(STDERR_FILENO, line, pre + plen + 1);
	(void)wrote;
	free(line);
}

void rp_write_verdict(uint64_t seq, uint64_t kernel_id, const struct ktrace_replay_report *rep)
{
	struct ktrace_writer *w = ktrace_tracer.writer;

	if (w && !atomic_load(&ktrace_tracer.ending)) {
		write_replay_record(w, seq, kernel_id, rep);
		write_replay_note(w, rep);
	}
}

int rp_owner_process(void)
{
	pthread_once(&rs.once, state_init);
	return rs.owner_pid == (int)getpid();
}

void rp_hold_others(void)
{
	pthread_once(&rs.once, state_init);
	atomic_store(&rs.gate_pid, (int)getpid());
	while (atomic_load(&rs.in_flight) > 0)
		pause_briefly();
}

void rp_release_others(void)
{
	atomic_store(&rs.gate_pid, 0);
}

CUresult ktrace_replay_launch_real(const struct ktrace_launch_args *a, void *call)
{
	struct ktrace_replay_call *c = call;
	const struct ktrace_replay_spec *spec = ktrace_tracer.cfg.replay_spec;
	struct ktrace_kernel_entry *e = ktrace_services.kernel_lookup((uint64_t)(uintptr_t)a->f);
	struct ktrace_replay_launch l = {
		.fn = program_launch,
		.arg = c,
		.stream = a->ptsz && !a->stream ? CU_STREAM_PER_THREAD : a->stream,
		.kernel = e && e->name ? e->name : spec->kernel,
		.occurrence = spec->occurrence,
	};
	struct ktrace_replay_opts o = { spec->runs, spec->budget, spec->host_budget };
	struct ktrace_replay_report rep;
	struct rp_reach r;
	CUresult res;

	if (rp_reach_find(&r, a, e) != 0) {
		rp_reach_free(&r);
		return program_launch(c); /* out of memory: no verdict */
	}
	res = ktrace_replay_confirm(&l, r.v, r.n, &o, &rep);
	rp_write_verdict(c->seq, c->kernel_id, &rep);
	ktrace_replay_report_free(&rep);
	rp_reach_free(&r);
	return res;
}
