/* interpose/init.c: the tracer's lifecycle.
 *
 * Owns ktrace_tracer, initialisation, the end of the trace (exit, _exit,
 * fatal signals) and the tracer's part of fork.  May call: the
 * configuration (config.c), the driver loader, the trace writer and output
 * paths (format/), the hash pipeline, the metadata worker and registry (to
 * finish the trace), the launch clock and expander, the fork handler's
 * installation (fork.c), logging, common/read_all.h (the command line).
 *
 * Initialisation is lazy: the constructor only notes the start time; the
 * first driver entry point the process reaches (any wrapper, a mapped
 * cuGetProcAddress) runs ktrace_tracer_ensure_init(), which reads the
 * configuration, loads the driver, opens the trace (HEADER first), starts the
 * hash pipeline, installs the end handlers and prints one start-up line.  So
 * a process that never uses CUDA (a shell, ptxas, a compiler worker started
 * with LD_PRELOAD inherited) writes no file and prints nothing.  The state is
 * marked "in progress" before the initialiser runs: re-entry from the same
 * thread gets "not tracing", other threads wait for it (at most 1 s).
 *
 * Ending: exit() and return from main run an on_exit handler (registered at
 * initialisation, so it runs before handlers registered earlier, while the
 * driver is alive): hash pipeline drained (bounded), END {EXIT, status}.
 * _exit()/_Exit() (Python's os._exit) are wrapped to do the same.  Fatal
 * signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) always, and SIGTERM,
 * SIGINT, SIGQUIT when their previous disposition was the default
 * (termination), write END {SIGNAL/ABORT, signo} through
 * ktrace_writer_emergency_close() and then chain to the previous handler, or
 * restore the default action and re-raise.  A signal whose disposition was
 * SIG_IGN is left alone.  A handler the application installs after
 * initialisation replaces ktrace's (ktrace does not wrap sigaction/signal):
 * the application's behaviour wins, and the writer's periodic flush (100 ms)
 * bounds what such a crash loses.  The writer is never freed at the end:
 * other threads may still be inside a hook while the process exits.
 *
 * fork(): the initialisation installs the one fork handler (fork.c, which
 * states the order of every module's hooks); this file's part runs first in
 * the child: it abandons the parent's writer and hash pipeline without
 * touching their locks or threads.  So that the child inherits no lock one
 * of ktrace's threads held (an allocator's above all), those threads are
 * never mid-start-up (common/spawn.h) and the metadata worker is held
 * between jobs across fork() (meta_worker.h).  By default the child is not
 * traced; with KTRACE_FOLLOW_FORK=1 it initialises again on its first driver
 * call and writes its own file: the KTRACE_OUTPUT pattern re-expanded with
 * the child's pid, with ".<pid>" appended when the pattern has no %p.  Only
 * the process whose pid opened the trace ever writes its END (a vfork()ed
 * child calling _exit shares our memory and must not).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/ablate.h"
#include "common/log.h"
#include "common/read_all.h"
#include "format/ktrace_format.h"
#include "format/output_path.h"
#include "format/trace_writer.h"
#include "hashkern/ktrace_digest.h"
#include "interpose/capture/gpu_times.h"
#include "interpose/capture/launch_expand.h"
#include "interpose/capture/launch_profile.h"
#include "interpose/driver/driver_real.h"
#include "interpose/driver/hooks.h"
#include "interpose/graph/graph.h"
#include "interpose/hash/hash_module.h"
#include "interpose/hash/hash_pipeline.h"
#include "interpose/lifecycle.h"
#include "interpose/model/config.h"
#include "interpose/model/launch_clock.h"
#include "interpose/model/replay_spec.h"
#include "interpose/nvtx/nvtx.h"
#include "interpose/poller/poller.h"
#include "interpose/pystack/pystack.h"
#include "interpose/registry/meta_worker.h"
#include "interpose/registry/registry.h"

enum { INIT_NONE = 0, INIT_RUNNING = 1, INIT_DONE = 2 };

/* The driver's gate (interpose/driver/hooks.h), which this file opens and closes. */
static inline int tracing(void)
{
	return atomic_load_explicit(&ktrace_hooks.tracing, memory_order_acquire);
}
static atomic_int init_state;
static __thread __attribute__((tls_model("initial-exec"))) int init_here;

static uint64_t start_rt_ns, start_mono_ns;
static atomic_int traced_pid;     /* pid whose trace is open, 0 if none */
static int hash_started;
static int follows_parent;        /* this process is a fork child tracing to its own file */
static int handlers_installed;    /* on_exit, signals, fork: once per process image */

#define END_DRAIN_MS 2000
#define END_FLUSH_MS 10000
#define SIGNAL_FLUSH_MS 2000

static const int end_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT, SIGQUIT };
static struct sigaction prev_action[NSIG];
static unsigned char have_prev[NSIG];

static void capture_start_time(void)
{
	struct timespec rt, mono;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	start_rt_ns = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
	start_mono_ns = (uint64_t)mono.tv_sec * 1000000000ull + (uint64_t)mono.tv_nsec;
}

/* ---- the end of the trace -------------------------------------------------- */

/* Only the process that opened the trace ends it, once. */
static int claim_end(void)
{
	struct ktrace_writer *w = ktrace_tracer.writer;

	if (!w || atomic_load(&traced_pid) != (int)syscall(SYS_getpid))
		return 0;
	if (atomic_exchange(&ktrace_tracer.ending, 1))
		return 0;
	atomic_store_explicit(&ktrace_hooks.tracing, 0, memory_order_release);
	return 1;
}

static void end_normally(uint32_t reason, int status)
{
	struct ktrace_rec_end e = { .reason = reason, .status = status };

	if (!claim_end())
		return;
	/* GPU times first: ktrace's poller writes none once the trace ends
	 * unless this drain runs (a fatal signal's end has none). */
	ktrace_gpu_times_drain(END_DRAIN_MS);
	/* KERNEL and MODULE records still being resolved go out next (the
	 * worker's own atexit handler does this on exit(), not on _exit()). */
	ktrace_meta_worker_drain(END_DRAIN_MS);
	ktrace_meta_worker_stop();
	ktrace_graph_drain(END_DRAIN_MS);
	ktrace_poller_stop();
	if (hash_started) {
		ktrace_hash_pipeline_drain(END_DRAIN_MS);
		ktrace_hash_pipeline_stop();
	}
	e.launches = atomic_load(&ktrace_tracer.launch_seq);
	ktrace_registry_profile_print();
	ktrace_seg_print();
	/* Not ktrace_writer_close(): it frees the writer, and a thread the
	 * application did not stop may still be inside a hook. */
	ktrace_writer_emergency_close(ktrace_tracer.writer, &e, END_FLUSH_MS);
}

static void on_exit_handler(int status, void *arg)
{
	(void)arg;
	end_normally(KTRACE_END_EXIT, status);
}

typedef void (*exit_fn)(int) __attribute__((noreturn));

static exit_fn real_exit_fn(const char *name)
{
	ktrace_dlsym_fn real_dlsym = ktrace_real_dlsym_get();

	return real_dlsym ? (exit_fn)real_dlsym(RTLD_NEXT, name) : NULL;
}

KTRACE_EXPORT void _exit(int status)
{
	static exit_fn real;
	exit_fn f = __atomic_load_n(&real, __ATOMIC_RELAXED);

	end_normally(KTRACE_END_EXIT, status);
	if (!f) {
		f = real_exit_fn("_exit");
		__atomic_store_n(&real, f, __ATOMIC_RELAXED);
	}
	if (f)
		f(status);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

KTRACE_EXPORT void _Exit(int status)
{
	_exit(status);
}

static int is_fault(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGABRT;
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	struct sigaction *p = &prev_action[sig];
	int dfl = !(p->sa_flags & SA_SIGINFO) && p->sa_handler == SIG_DFL;

	if ((is_fault(sig) || dfl) && claim_end()) {
		struct ktrace_rec_end e = {
			.reason = sig == SIGABRT ? KTRACE_END_ABORT : KTRACE_END_SIGNAL,
			.status = sig,
			.launches = atomic_load(&ktrace_tracer.launch_seq),
		};

		ktrace_writer_emergency_close(ktrace_tracer.writer, &e, SIGNAL_FLUSH_MS);
	}
	if (p->sa_flags & SA_SIGINFO) {
		if (p->sa_sigaction)
			p->sa_sigaction(sig, si, uc);
	} else if (dfl) {
		/* Default action: restore it and let the signal take the
		 * process (a re-raised signal is delivered when this handler
		 * returns; a fault also recurs on return). */
		struct sigaction d;

		memset(&d, 0, sizeof(d));
		d.sa_handler = SIG_DFL;
		sigemptyset(&d.sa_mask);
		sigaction(sig, &d, NULL);
		raise(sig);
	} else if (p->sa_handler != SIG_IGN) {
		p->sa_handler(sig);
	}
	errno = saved;
}

static void install_signal_handlers(void)
{
	for (size_t i = 0; i < sizeof(end_signals) / sizeof(end_signals[0]); i++) {
		int sig = end_signals[i];
		struct sigaction cur, mine;

		if (sigaction(sig, NULL, &cur) != 0)
			continue;
		if (!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_IGN)
			continue; /* never over SIG_IGN */
		prev_action[sig] = cur;
		have_prev[sig] = 1;
		memset(&mine, 0, sizeof(mine));
		mine.sa_sigaction = on_signal;
		mine.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
		sigemptyset(&mine.sa_mask);
		if (sigaction(sig, &mine, NULL) != 0)
			have_prev[sig] = 0;
	}
}

/* ---- fork ------------------------------------------------------------------- */

/* The tracer's part of the fork handler's child step (fork.c), before any
 * module's: stop tracing and forget the parent's writer, hash pipeline,
 * modules of ktrace's kernels and GPU times' pools. */
void ktrace_tracer_fork_child(void)
{
	int was_tracing = atomic_load(&traced_pid) != 0 && ktrace_tracer.writer;

	atomic_store(&ktrace_hooks.tracing, 0);
	if (ktrace_tracer.writer)
		ktrace_writer_abandon_after_fork(ktrace_tracer.writer);
	ktrace_tracer.writer = NULL;
	if (hash_started)
		ktrace_hash_pipeline_abandon_after_fork();
	hash_started = 0;
	ktrace_hash_module_fork_child();
	ktrace_gpu_times_fork_child();
	atomic_store(&traced_pid, 0);
	atomic_store(&ktrace_tracer.ending, 0);
	atomic_store(&ktrace_tracer.launch_seq, 0);
	if (was_tracing && ktrace_tracer.cfg.follow_fork) {
		follows_parent = 1;
		atomic_store(&init_state, INIT_NONE);
	}
}

/* ---- initialisation --------------------------------------------------------- */

static size_t read_cmdline(char *buf, size_t cap)
{
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	size_t n;

	if (fd < 0)
		return 0;
	n = ktrace_read_all(fd, buf, cap);
	close(fd);
	while (n && buf[n - 1] == '\0')
		n--;
	for (size_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	return n;
}

/* The output path of a fork child: the pattern re-expanded with its pid,
 * ".<pid>" appended when the pattern has no %p. */
static int child_output(struct ktrace_config *c, char *err, size_t errlen)
{
	char pattern[PATH_MAX + 32];
	const char *p = c->output_pattern;
	int has_pid = 0;

	for (; *p; p++) {
		if (*p != '%')
			continue;
		if (p[1] == 'p')
			has_pid = 1;
		if (p[1])
			p++;
	}
	snprintf(pattern, sizeof(pattern), "%s%s", c->output_pattern, has_pid ? "" : ".%p");
	return ktrace_output_path_expand(pattern, c->output, sizeof(c->output), err, errlen);
}

/* ---- the job this process is a rank of (JOB record) --------------------------------------- */

/* Where each launcher says what rank a process is; the first whose rank
 * variable is set names the job.  torchrun's variables are also those of
 * torch.distributed's env:// (RANK, WORLD_SIZE alone: "env"). */
struct job_env {
	const char *launcher, *rank, *size, *local_rank, *local_size, *node, *job_id, *addr, *port;
};
static const struct job_env job_envs[] = {
	{ "torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "TORCHELASTIC_RUN_ID",
	  "MASTER_ADDR", "MASTER_PORT" },
	{ "open_mpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
	  "OMPI_COMM_WORLD_LOCAL_SIZE", "OMPI_COMM_WORLD_NODE_RANK", "OMPI_MCA_ess_base_jobid", NULL, NULL },
	{ "pmi", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS", NULL, NULL, NULL, NULL },
	{ "slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", NULL, "SLURM_NODEID", "SLURM_JOB_ID", NULL,
	  NULL },
};

/* A variable's value as a non-negative int, else -1 (unset, not a number). */
static int32_t env_int(const char *name)
{
	const char *v = name ? getenv(name) : NULL;
	char *end;
	long n;

	if (!v || !*v)
		return -1;
	n = strtol(v, &end, 10);
	return *end || n < 0 || n > INT32_MAX ? -1 : (int32_t)n;
}

static struct ktrace_str env_str(const char *name)
{
	const char *v = name ? getenv(name) : NULL;
	size_t n = v ? strlen(v) : 0;

	return (struct ktrace_str){ v ? v : "", (uint16_t)(n > 1024 ? 1024 : n) };
}

/* The rendezvous endpoint "addr:port" (either alone when the other is unset). */
static struct ktrace_str coordinator(const struct job_env *e, char *buf, size_t cap)
{
	struct ktrace_str a = env_str(e->addr), p = env_str(e->port);

	snprintf(buf, cap, "%.*s%s%.*s", (int)a.len, a.ptr, a.len && p.len ? ":" : "", (int)p.len, p.ptr);
	return (struct ktrace_str){ buf, (uint16_t)strlen(buf) };
}

/* The launcher whose variables give this process a rank (the first of
 * job_envs whose rank variable is set), or NULL. */
static const struct job_env *job_launcher(void)
{
	for (size_t i = 0; i < sizeof job_envs / sizeof job_envs[0]; i++)
		if (env_int(job_envs[i].rank) >= 0)
			return &job_envs[i];
	return NULL;
}

/* KTRACE_REPLAY's rank=R: a process whose job rank (the JOB record's) is
 * not R, or that has none, ignores the spec and traces as without it. */
static void replay_for_this_rank(struct ktrace_config *c)
{
	const struct job_env *e = job_launcher();

	if (!c->replay_spec || c->replay_spec->rank < 0 || (e && env_int(e->rank) == c->replay_spec->rank))
		return;
	KT_DEBUG("KTRACE_REPLAY names rank %d; this process is %s: no replay", (int)c->replay_spec->rank,
		 e ? getenv(e->rank) : "no rank");
	ktrace_replay_spec_free(c->replay_spec);
	free(c->replay_spec);
	c->replay_spec = NULL;
	c->replay = 0;
}

/* A JOB record after the HEADER when a launcher's variables say this process
 * is a rank of a job, so that the tools pair rank k of one run with rank k
 * of another; none otherwise. */
static void write_job(void)
{
	_Alignas(8) uint8_t rec[4096];
	char coord[2100];
	struct ktrace_rec_job j = { 0 };
	const struct job_env *e = job_launcher();
	size_t size;

	if (!e)
		return;
	j.rank = env_int(e->rank);
	j.world_size = env_int(e->size);
	j.local_rank = env_int(e->local_rank);
	j.local_world_size = env_int(e->local_size);
	j.node_rank = env_int(e->node);
	/* torchrun sets TORCHELASTIC_RUN_ID; RANK and WORLD_SIZE alone are env:// */
	j.launcher = env_str(NULL);
	j.launcher.ptr = e == job_envs && !getenv("TORCHELASTIC_RUN_ID") ? "env" : e->launcher;
	j.launcher.len = (uint16_t)strlen(j.launcher.ptr);
	j.job_id = env_str(e->job_id);
	j.coordinator = coordinator(e, coord, sizeof coord);
	size = ktrace_encode_job(rec, sizeof rec, &j);
	if (size <= sizeof rec)
		ktrace_writer_append(ktrace_tracer.writer, rec, size);
}

static int open_trace(struct ktrace_config *c)
{
	static char cmdline[16384];
	char host[256], cfgstr[PATH_MAX + 1536], err[512];
	struct ktrace_rec_header h;
	struct ktrace_writer_opts o;
	size_t clen;

	if (gethostname(host, sizeof(host)) != 0)
		strcpy(host, "unknown");
	host[sizeof(host) - 1] = '\0';
	clen = read_cmdline(cmdline, sizeof(cmdline));
	ktrace_config_describe(c, cfgstr, sizeof(cfgstr));

	memset(&h, 0, sizeof(h));
	h.pid = (uint32_t)getpid();
	h.ppid = (uint32_t)getppid();
	h.rank = ktrace_output_rank();
	h.digest_alg = KTRACE_DIGEST_ALG_KT64V1;
	h.start_realtime_ns = start_rt_ns;
	h.start_monotonic_ns = start_mono_ns;
	h.host = (struct ktrace_str){ host, (uint16_t)strlen(host) };
	h.cmdline = (struct ktrace_str){ cmdline, (uint16_t)(clen > 65535 ? 65535 : clen) };
	h.ktrace_version = (struct ktrace_str){ KTRACE_VERSION, (uint16_t)strlen(KTRACE_VERSION) };
	h.config = (struct ktrace_str){ cfgstr, (uint16_t)strlen(cfgstr) };

	memset(&o, 0, sizeof(o));
	o.path = c->output;
	o.overwrite = c->overwrite;
	o.header = &h;
	o.expander = ktrace_launch_expander();
	o.seq = &ktrace_tracer.record_seq;
	if (KTRACE_ABLATING(KTRACE_ABLATE_COMPRESS))
		o.flags |= KTRACE_WRITER_DISCARD;
	ktrace_tracer.writer = ktrace_writer_open(&o, err, sizeof(err));
	if (!ktrace_tracer.writer && errno == EBUSY) {
		/* Same path as a live traced process (a child inheriting a
		 * KTRACE_OUTPUT without %p): write beside it, never over it. */
		size_t n = strlen(c->output);
		int m = snprintf(c->output + n, sizeof(c->output) - n, ".%d", (int)getpid());

		if (m > 0 && (size_t)m < sizeof(c->output) - n) {
			KT_INFO("%s; this process writes %s", err, c->output);
			ktrace_tracer.writer = ktrace_writer_open(&o, err, sizeof(err));
		} else {
			c->output[n] = '\0';
		}
	}
	if (!ktrace_tracer.writer) {
		KT_ERR("%s; tracing is off", err);
		return -1;
	}
	atomic_store(&traced_pid, (int)getpid());
	write_job();
	return 0;
}

/* The poller thread's clients: graph launches whose digests are in flight
 * (polled every 100 us at most meanwhile), the GPU times of sampled
 * launches (alone in flight, their records can wait: 1 ms). */
static const struct ktrace_poll_client graph_poll_client = {
	ktrace_graph_poll, ktrace_graph_pending, 100000ull,
};
static const struct ktrace_poll_client gpu_times_poll_client = {
	ktrace_gpu_times_poll, ktrace_gpu_times_pending, 1000000ull,
};

static void initialise(void)
{
	struct ktrace_config *c = &ktrace_tracer.cfg;
	char err[1024];

	ktrace_log_configure();
	if (!start_mono_ns) /* a library constructor reached CUDA before ours ran */
		capture_start_time();
	if (follows_parent) {
		capture_start_time();
		if (child_output(c, err, sizeof(err))) {
			KT_ERR("%s; tracing is off in child %d", err, (int)getpid());
			return;
		}
	} else if (ktrace_config_from_environ(c, err, sizeof(err))) {
		KT_ERR("%s", err);
		return;
	}
	replay_for_this_rank(c);
	if (ktrace_real_driver_load() != 0) {
		KT_WARN("cannot load the CUDA driver (libcuda.so.1); tracing is off");
		return;
	}
	ktrace_launch_clock_init(-1); /* before the writer thread and any launch */
	if (open_trace(c) != 0)
		return;
	ktrace_nvtx_trace_opened(); /* before any launch can be recorded: RANGE records first */
	ktrace_pystack_configure(c->pystack_spec);
	ktrace_poller_register(&graph_poll_client);
	ktrace_poller_register(&gpu_times_poll_client);
	if (!handlers_installed) {
		handlers_installed = 1;
		on_exit(on_exit_handler, NULL);
		ktrace_fork_handler_install();
		install_signal_handlers();
	}
	atomic_store(&ktrace_tracer.launch_seq, 0);
	ktrace_tracer.gpu_times_below = ktrace_gpu_times_threshold(c->gpu_times);
	atomic_store_explicit(&ktrace_hooks.tracing, 1, memory_order_release);
	if (c->hash) {
		struct ktrace_hash_opts ho = { 0 };

		ho.carry_off = !c->hash_carry;
		ho.verify = c->hash_verify;
		ho.merge_off = !c->hash_merge || c->replay; /* a replay run keeps its launches apart */
		ho.hold_ns = (uint64_t)c->hash_hold_us * 1000u;
		ho.held_flag = &ktrace_hooks.held;

		if (ktrace_hash_pipeline_start(ktrace_tracer.writer, &ho) == 0)
			hash_started = 1;
		else
			ktrace_tracer_disable_feature(KTRACE_FEATURE_HASH,
						      "hash pipeline could not start; buffers are not hashed "
						      "(launches are still recorded)");
	}
	if (!c->quiet)
		KT_INFO("tracing to %s (hashing %s); allocator: %s; NVTX ranges: %s", c->output,
			hash_started ? "on" : "off", c->allocator_startup, ktrace_nvtx_status());
}

int ktrace_tracer_ensure_init(void)
{
	int st = atomic_load_explicit(&init_state, memory_order_acquire);
	int expect = INIT_NONE;

	if (kt_likely(st == INIT_DONE))
		return tracing();
	if (init_here)
		return 0;
	if (st == INIT_NONE && atomic_compare_exchange_strong(&init_state, &expect, INIT_RUNNING)) {
		init_here = 1;
		initialise();
		init_here = 0;
		atomic_store_explicit(&init_state, INIT_DONE, memory_order_release);
		return tracing();
	}
	for (int i = 0; i < 20000; i++) { /* another thread initialises: 1 s at most */
		struct timespec ts = { 0, 50000 };

		if (atomic_load_explicit(&init_state, memory_order_acquire) == INIT_DONE)
			return tracing();
		nanosleep(&ts, NULL);
	}
	return 0;
}

__attribute__((constructor)) static void ktrace_constructor(void)
{
	if (!start_mono_ns)
		capture_start_time();
	(void)ktrace_real_dlsym_get();
	ktrace_nvtx_preload_env();
}
