/* test/reliability/rel_app.c: the CUDA program of the reliability tests.
 *
 * Linked against the fake libcuda.so.1 (test/fakecuda) and run by the tests
 * under LD_PRELOAD=libktrace.so.  Every launch is fake_kernel_a(p, n) with n
 * the launch's number in its thread, so a test can check order and
 * completeness from the parameter bytes of the trace alone.
 *
 *   stream FD             launch forever (paced: batches of 16, then 100 us
 *                         sleep); after each batch write {count, CLOCK_MONOTONIC
 *                         ns} (two u64) to FD; the test kills it (SIGKILL)
 *   end HOW N             N launches (paced like stream), print "LAUNCHES N",
 *                         then end by HOW:
 *                         return exit _exit abort segv term int kill
 *   threads T N [US]      T threads, each on its own stream with its own
 *                         buffer, N launches each, sleeping US microseconds
 *                         after each (default 0); prints LAUNCHES T*N
 *   forkstorm F           4 threads launching (20 us pauses) while the main thread forks F
 *                         times; children in turn: launch twice and exit(0),
 *                         exec this program ("end return 3"), exec /bin/true,
 *                         _exit(0) at once.  Each child must end within 10 s
 *                         (else FAIL).  Prints "CHILD <pid> <kind>" per child,
 *                         and "CHILDTHREADS <pid> <n>" from each launching child
 *                         (its thread count after its launches).
 *   pipeline              two launches, then copies stdin to stdout (a
 *                         program whose output must not change under ktrace)
 * Exit status 99 with "FAIL: ..." on stdout when an in-process check fails.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>

static CUfunction fa;
static int failures;
static char self_path[4096];

#define FAIL(...) \
	do { \
		printf("FAIL: " __VA_ARGS__); \
		printf("\n"); \
		__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED); \
	} while (0)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void setup(void)
{
	CUmodule m;

	if (cuInit(0) != CUDA_SUCCESS || cuModuleLoadData(&m, "fake image") != CUDA_SUCCESS ||
	    cuModuleGetFunction(&fa, m, "fake_kernel_a") != CUDA_SUCCESS)
		FAIL("setup");
}

/* One launch of fake_kernel_a(buf, n) on stream s. */
static void launch(CUdeviceptr *buf, int n, CUstream s)
{
	void *params[2] = { buf, &n };

	if (cuLaunchKernel(fa, 1, 1, 1, 32, 1, 1, 0, s, params, NULL) != CUDA_SUCCESS)
		FAIL("launch %d", n);
}

static CUdeviceptr alloc(void)
{
	CUdeviceptr d = 0;

	if (cuMemAlloc_v2(&d, 4096) != CUDA_SUCCESS)
		FAIL("cuMemAlloc_v2");
	return d;
}

static void mode_stream(int fd)
{
	CUdeviceptr d = alloc();
	uint64_t rep[2];
	struct timespec pause_ts = { 0, 100000 };

	for (uint64_t n = 0;;) {
		for (int i = 0; i < 16; i++, n++)
			launch(&d, (int)n, NULL);
		rep[0] = n;
		rep[1] = now_ns();
		if (write(fd, rep, sizeof(rep)) != (ssize_t)sizeof(rep))
			_exit(98);
		nanosleep(&pause_ts, NULL);
	}
}

static void mode_end(const char *how, int n)
{
	CUdeviceptr d = alloc();
	struct timespec pause_ts = { 0, 100000 };

	for (int i = 0; i < n; i++) {
		launch(&d, i, NULL);
		if (i % 16 == 15)
			nanosleep(&pause_ts, NULL);
	}
	printf("LAUNCHES %d\n", n);
	fflush(stdout);
	if (strcmp(how, "return") == 0)
		return;
	if (strcmp(how, "exit") == 0)
		exit(5);
	if (strcmp(how, "_exit") == 0)
		_exit(6);
	if (strcmp(how, "abort") == 0)
		abort();
	if (strcmp(how, "segv") == 0) {
		static volatile uintptr_t bad = 64; /* a real fault, not NULL (UBSan would catch that first) */

		*(volatile int *)bad = 1;
	}
	if (strcmp(how, "term") == 0)
		raise(SIGTERM);
	if (strcmp(how, "int") == 0)
		raise(SIGINT);
	if (strcmp(how, "kill") == 0)
		raise(SIGKILL);
	FAIL("still alive after %s", how);
	exit(99);
}

struct worker {
	pthread_t t;
	unsigned n;
	unsigned pace_us;   /* sleep after each launch (a real launch costs microseconds) */
	CUstream stream;
	volatile int *stop; /* forkstorm: run until set */
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	CUdeviceptr d = alloc();

	struct timespec ts = { 0, (long)w->pace_us * 1000 };

	for (unsigned i = 0; w->stop ? !*w->stop : i < w->n; i++) {
		launch(&d, (int)i, w->stream);
		if (w->pace_us)
			nanosleep(&ts, NULL);
	}
	return NULL;
}

static void mode_threads(unsigned nt, unsigned n, unsigned pace_us)
{
	struct worker *w = calloc(nt, sizeof(*w));

	for (unsigned i = 0; i < nt; i++) {
		w[i].n = n;
		w[i].pace_us = pace_us;
		w[i].stream = (CUstream)(uintptr_t)(0x5000 + 16 * i); /* distinct handles per thread */
		if (pthread_create(&w[i].t, NULL, worker_main, &w[i]))
			FAIL("pthread_create");
	}
	for (unsigned i = 0; i < nt; i++)
		pthread_join(w[i].t, NULL);
	free(w);
	printf("LAUNCHES %u\n", nt * n);
}

/* Wait for pid at most 10 s; a child that hangs is a deadlock. */
static int wait_child(pid_t pid, int *status)
{
	for (int i = 0; i < 10000; i++) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -1;
		usleep(1000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, status, 0);
	return -1;
}

/* Threads of this process (/proc/self/task entries); their names in names. */
static int count_threads(char *names, size_t cap)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;
	size_t used = 0;

	names[0] = '\0';
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char path[300], comm[32] = "";
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		n++;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (f) {
			if (!fgets(comm, sizeof(comm), f))
				comm[0] = '\0';
			fclose(f);
		}
		comm[strcspn(comm, "\n")] = '\0';
		if (used + strlen(comm) + 2 < cap)
			used += (size_t)snprintf(names + used, cap - used, " %s", comm);
	}
	closedir(d);
	return n;
}

/* no_malloc_children: children only exec or _exit (see the ASan note in
 * rel_concurrency_test.c); the parent's threads launch all the same. */
static void mode_forkstorm(int nforks, int no_malloc_children)
{
	static const char *const kinds[] = { "launch", "exec-self", "exec-true", "quick" };
	volatile int stop = 0;
	struct worker w[4];
	CUdeviceptr d = alloc();
	unsigned long main_launches = 0;
	int failed_before;

	memset(w, 0, sizeof(w));
	for (int i = 0; i < 4; i++) {
		w[i].stop = &stop;
		w[i].pace_us = 20;
		w[i].stream = (CUstream)(uintptr_t)(0x7000 + 16 * i);
		pthread_create(&w[i].t, NULL, worker_main, &w[i]);
	}
	for (int f = 0; f < nforks; f++) {
		int kind = no_malloc_children ? 1 + f % 3 : f % 4, status = 0;
		pid_t pid;

		launch(&d, (int)main_launches++, NULL);
		fflush(stdout);
		failed_before = failures;
		pid = fork();
		if (pid < 0) {
			FAIL("fork: %s", strerror(errno));
			break;
		}
		if (pid == 0) {
			if (kind == 0) {
				launch(&d, 0, NULL);
				launch(&d, 1, NULL);
				char names[256];
				int nt = count_threads(names, sizeof(names));

				printf("CHILDTHREADS %d %d%s\n", (int)getpid(), nt, names);
				exit(failures != failed_before ? 99 : 0);
			} else if (kind == 1) {
				execl(self_path, self_path, "end", "return", "3", (char *)NULL);
				_exit(97);
			} else if (kind == 2) {
				execl("/bin/true", "true", (char *)NULL);
				_exit(97);
			}
			_exit(0);
		}
		printf("CHILD %d %s\n", (int)pid, kinds[kind]);
		if (wait_child(pid, &status))
			FAIL("child %d (%s) hung (deadlock after fork?)", (int)pid, kinds[kind]);
		else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			FAIL("child %d (%s) status 0x%x", (int)pid, kinds[kind], status);
	}
	stop = 1;
	for (int i = 0; i < 4; i++)
		pthread_join(w[i].t, NULL);
	printf("FORKS %d\n", nforks);
}

/* n launches, an exec'd child ("end return m") inheriting the environment
 * (the same KTRACE_OUTPUT), then n more launches. */
static void mode_execchild(int n, int m)
{
	CUdeviceptr d = alloc();
	char ms[16];
	int status = 0;
	pid_t pid;

	for (int i = 0; i < n; i++)
		launch(&d, i, NULL);
	snprintf(ms, sizeof(ms), "%d", m);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		execl(self_path, self_path, "end", "return", ms, (char *)NULL);
		_exit(97);
	}
	if (pid < 0 || wait_child(pid, &status) || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		FAIL("exec'd child %d status 0x%x", (int)pid, status);
	printf("CHILD %d\n", (int)pid);
	for (int i = n; i < 2 * n; i++)
		launch(&d, i, NULL);
}

static void mode_pipeline(void)
{
	CUdeviceptr d = alloc();
	char buf[4096];
	size_t n;

	launch(&d, 0, NULL);
	launch(&d, 1, NULL);
	while ((n = fread(buf, 1, sizeof(buf), stdin)) > 0)
		fwrite(buf, 1, n, stdout);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	ssize_t sl = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);

	self_path[sl > 0 ? sl : 0] = '\0';
	setvbuf(stdout, NULL, _IOLBF, 0);
	setup();
	if (strcmp(mode, "stream") == 0 && argc > 2) {
		mode_stream(atoi(argv[2]));
	} else if (strcmp(mode, "end") == 0 && argc > 3) {
		mode_end(argv[2], atoi(argv[3]));
	} else if (strcmp(mode, "threads") == 0 && argc > 3) {
		mode_threads((unsigned)atoi(argv[2]), (unsigned)atoi(argv[3]), argc > 4 ? (unsigned)atoi(argv[4]) : 0);
	} else if (strcmp(mode, "forkstorm") == 0 && argc > 2) {
		mode_forkstorm(atoi(argv[2]), argc > 3 && strcmp(argv[3], "no-malloc-children") == 0);
	} else if (strcmp(mode, "execchild") == 0 && argc > 3) {
		mode_execchild(atoi(argv[2]), atoi(argv[3]));
	} else if (strcmp(mode, "pipeline") == 0) {
		mode_pipeline();
	} else {
		fprintf(stderr, "rel_app: unknown mode or missing arguments\n");
		return 2;
	}
	return failures ? 99 : 0;
}
