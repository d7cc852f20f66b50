/* bench/writer_bench.c: throughput and producer cost of the trace writer.
 *
 * N producer threads (default 8) append realistic LAUNCH records as fast as
 * they can for a fixed time: a "training step" of 284 kernels repeating in
 * order, each launch reading 2-3 buffers (pre == post digest, the value the
 * producing launch left) and writing one (a new random post digest), with the
 * kernel's pointer and scalar arguments.  Reports records/s committed (the
 * sustained rate: with --max-wait-ms large producers wait for the writer
 * instead of dropping), drops, the producer's reserve+commit cost (median,
 * p99; sampled 1 in 16, encode time excluded, clock overhead subtracted) and
 * compressed bytes per record.
 *
 *   build/writer_bench [--threads N] [--seconds S] [--level L]
 *                      [--max-wait-ms M] [--buf-kib K] [--out PATH] [--keep]
 *
 * Calls format/ (the LAUNCH encoder and the writer) and libc only.
 */
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/ktrace_format.h"
#include "format/trace_writer.h"

#define STEP_KERNELS 284
#define NBUFFERS 512
#define SAMPLE_EVERY 16
#define MAX_SAMPLES (1 << 20)

struct worker {
	pthread_t th;
	struct ktrace_writer *w;
	uint32_t id;
	uint64_t attempted, committed, bytes;
	uint32_t *samples; /* reserve+commit in ns */
	size_t nsamples;
};

static atomic_int stop;
static uint64_t clock_overhead_ns;

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void *producer(void *arg)
{
	struct worker *wk = arg;
	uint64_t rng = 0x9e3779b97f4a7c15ull * (wk->id + 1);
	uint64_t hash[NBUFFERS];
	for (int i = 0; i < NBUFFERS; i++)
		hash[i] = xorshift(&rng);
	struct ktrace_region reg[4];
	uint8_t params[48];
	uint64_t launch = 0;
	wk->samples = malloc(MAX_SAMPLES * sizeof *wk->samples);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		uint32_t k = (uint32_t)(launch % STEP_KERNELS);
		uint32_t nin = 2 + k % 2;
		memset(params, 0, sizeof params);
		for (uint32_t r = 0; r <= nin; r++) {
			uint32_t b = (k * 7 + r * 131) % NBUFFERS; /* fixed buffers per kernel */
			uint64_t ptr = 0x7f0000000000ull + (uint64_t)b * 0x40000;
			memcpy(params + 8 * r, &ptr, 8);
			reg[r] = (struct ktrace_region){ .param_offset = 8 * r, .ordinal = (uint16_t)r,
							 .flags = KTRACE_REGIONF_PRE | KTRACE_REGIONF_POST, .ptr = ptr,
							 .alloc_base = ptr & ~0x1fffffull, .alloc_size = 2u << 20,
							 .hash_len = 4096u << (k % 6), .pre_hash = hash[b], .post_hash = hash[b] };
			if (r == nin) { /* the output */
				reg[r].post_hash = xorshift(&rng);
				hash[b] = reg[r].post_hash;
			}
		}
		uint32_t n = 1024u << (k % 4);
		memcpy(params + 32, &n, 4);
		float alpha = 1.0f / (float)(1 + k % 3);
		memcpy(params + 36, &alpha, 4);
		struct ktrace_rec_launch l = { .launch_seq = launch, .kernel_id = 1 + k, .context = 0x55d0c0de0000ull,
					       .stream = 0x55d0c0de8000ull, .tid = 1000 + wk->id, .device = 0,
					       .api = KTRACE_API_LAUNCH_KERNEL, .flags = KTRACE_LAUNCHF_HASHED,
					       .grid = { 1 + k % 128, 1, 1 }, .block = { 128u << (k % 3), 1, 1 },
					       .shared_mem = (k % 5) * 1024, .param_bytes_len = 40,
					       .nregions = nin + 1, .param_bytes = params };
		size_t size = ktrace_encode_launch(NULL, 0, &l, reg);
		int sample = (launch % SAMPLE_EVERY) == 0 && wk->nsamples < MAX_SAMPLES;
		uint64_t t0 = sample ? ktrace_now_ns() : 0;
		void *p = ktrace_writer_reserve(wk->w, size);
		uint64_t t1 = sample ? ktrace_now_ns() : 0;
		wk->attempted++;
		if (p) {
			ktrace_encode_launch(p, size, &l, reg);
			uint64_t t2 = sample ? ktrace_now_ns() : 0;
			ktrace_writer_commit(wk->w, p);
			if (sample) {
				uint64_t t3 = ktrace_now_ns();
				uint64_t d = (t1 - t0) + (t3 - t2);
				d = d > 2 * clock_overhead_ns ? d - 2 * clock_overhead_ns : 0;
				wk->samples[wk->nsamples++] = (uint32_t)(d > UINT32_MAX ? UINT32_MAX : d);
			}
			wk->committed++;
			wk->bytes += size;
		}
		launch++;
	}
	return NULL;
}

/* CPU seconds used so far by the writer's thread ("ktrace-writer"), -1 if not found. */
static double writer_thread_cpu(void)
{
	DIR *d = opendir("/proc/self/task");
	double cpu = -1;
	struct dirent *e;
	while (d && (e = readdir(d))) {
		char path[300], buf[1024];
		snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		int is_writer = fgets(buf, sizeof buf, f) && !strncmp(buf, "ktrace-writer", 13);
		fclose(f);
		if (!is_writer)
			continue;
		snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
		f = fopen(path, "r");
		if (f && fgets(buf, sizeof buf, f)) {
			char *p = strrchr(buf, ')');
			unsigned long ut = 0, st = 0;
			/* fields after the name: state ppid ... utime(14) stime(15) */
			if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) == 2)
				cpu = (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
		}
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return cpu;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static void calibrate(void)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 100000; i++) {
		uint64_t a = ktrace_now_ns(), b = ktrace_now_ns();
		if (b - a < best)
			best = b - a;
	}
	clock_overhead_ns = best;
}

struct bench_opts {
	int threads, level, keep;
	double seconds;
	unsigned max_wait_ms, buf_kib;
	const char *out;
};

/* 0, or 2 (usage printed) on a bad command line. */
static int parse_args(int argc, char **argv, struct bench_opts *b)
{
	*b = (struct bench_opts){ .threads = 8, .seconds = 5, .max_wait_ms = 1000, .buf_kib = 1024,
				  .out = "/tmp/ktrace-writer-bench.ktrace" };
	for (int i = 1; i < argc; i++) {
		if (i + 1 < argc && !strcmp(argv[i], "--threads"))
			b->threads = atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--seconds"))
			b->seconds = atof(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--level"))
			b->level = atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--max-wait-ms"))
			b->max_wait_ms = (unsigned)atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--buf-kib"))
			b->buf_kib = (unsigned)atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--out"))
			b->out = argv[++i];
		else if (!strcmp(argv[i], "--keep"))
			b->keep = 1;
		else {
			fprintf(stderr, "usage: writer_bench [--threads N] [--seconds S] [--level L] "
					"[--max-wait-ms M] [--buf-kib K] [--out PATH] [--keep]\n");
			return 2;
		}
	}
	if (b->threads < 1 || b->threads > 256 || b->seconds <= 0) {
		fprintf(stderr, "writer_bench: bad --threads or --seconds\n");
		return 2;
	}
	return 0;
}

/* What one run measured. */
struct bench_result {
	uint64_t t0, t_prod, t_end;	/* start, producers stopped, file closed */
	uint64_t waits, wait_ns, dropped;
	double writer_cpu;
	uint64_t attempted, committed, bytes;
	uint32_t *samples;		/* reserve+commit ns of every worker, sorted */
	size_t nsamples;
	long long file_bytes;
};

/* Run the producers for b->seconds against an open writer, close it, and
 * gather the workers' counts and samples. */
static void run(const struct bench_opts *b, struct ktrace_writer *w, struct bench_result *r)
{
	struct worker *wk = calloc((size_t)b->threads, sizeof *wk);
	struct stat st;

	r->t0 = ktrace_now_ns();
	for (int i = 0; i < b->threads; i++) {
		wk[i].w = w;
		wk[i].id = (uint32_t)i;
		pthread_create(&wk[i].th, NULL, producer, &wk[i]);
	}
	usleep((useconds_t)(b->seconds * 1e6));
	atomic_store(&stop, 1);
	for (int i = 0; i < b->threads; i++)
		pthread_join(wk[i].th, NULL);
	r->t_prod = ktrace_now_ns();
	r->waits = ktrace_writer_counter(w, KTRACE_CTR_PRODUCER_WAITS);
	r->wait_ns = ktrace_writer_counter(w, KTRACE_CTR_PRODUCER_WAIT_NS);
	r->dropped = ktrace_writer_counter(w, KTRACE_CTR_RECORDS_DROPPED);
	r->writer_cpu = writer_thread_cpu();
	ktrace_writer_close(w, NULL);
	r->t_end = ktrace_now_ns();

	for (int i = 0; i < b->threads; i++) {
		r->attempted += wk[i].attempted;
		r->committed += wk[i].committed;
		r->bytes += wk[i].bytes;
		r->nsamples += wk[i].nsamples;
	}
	r->samples = malloc((r->nsamples ? r->nsamples : 1) * sizeof *r->samples);
	for (int i = 0, k = 0; i < b->threads; i++) {
		memcpy(r->samples + k, wk[i].samples, wk[i].nsamples * sizeof *r->samples);
		k += (int)wk[i].nsamples;
		free(wk[i].samples);
	}
	qsort(r->samples, r->nsamples, sizeof *r->samples, cmp_u32);
	r->file_bytes = stat(b->out, &st) == 0 ? (long long)st.st_size : 0;
	free(wk);
}

static void report(const struct bench_opts *b, const struct bench_result *r)
{
	double secs = (double)(r->t_end - r->t0) / 1e9;
	uint64_t committed = r->committed;
	const uint32_t *all = r->samples;
	size_t ns = r->nsamples;
	int level = b->level ? b->level : 1;

	printf("writer_bench: %d producers, %.1f s (+%.3f s drain), zstd level %d, %u KiB buffers, max wait %u ms\n",
	       b->threads, (double)(r->t_prod - r->t0) / 1e9, (double)(r->t_end - r->t_prod) / 1e9, level,
	       b->buf_kib, b->max_wait_ms);
	printf("  committed %llu of %llu records, dropped %llu; avg record %.0f bytes\n",
	       (unsigned long long)committed, (unsigned long long)r->attempted, (unsigned long long)r->dropped,
	       committed ? (double)r->bytes / (double)committed : 0.0);
	printf("  sustained %.0f records/s (%.1f MB/s uncompressed), until the file was closed\n",
	       (double)committed / secs, (double)r->bytes / secs / 1e6);
	printf("  file %lld bytes: %.1f compressed bytes per record (ratio %.1f)\n", r->file_bytes,
	       committed ? (double)r->file_bytes / (double)committed : 0.0,
	       r->file_bytes ? (double)r->bytes / (double)r->file_bytes : 0.0);
	if (ns)
		printf("  reserve+commit: median %u ns, p90 %u ns, p99 %u ns, p99.9 %u ns, max %u ns "
		       "(%zu samples, clock overhead %llu ns subtracted)\n",
		       all[ns / 2], all[ns * 9 / 10], all[ns * 99 / 100], all[ns * 999 / 1000], all[ns - 1], ns,
		       (unsigned long long)clock_overhead_ns);
	printf("  producer waits %llu (%.3f s total)\n", (unsigned long long)r->waits, (double)r->wait_ns / 1e9);
	if (r->writer_cpu >= 0 && committed)
		printf("  writer thread CPU %.2f s: %.0f ns per record, so one core sustains %.0f records/s\n",
		       r->writer_cpu, r->writer_cpu * 1e9 / (double)committed, (double)committed / r->writer_cpu);
	printf("BENCH|writer_records_per_s|%.0f|records/s|%d producers, level %d\n", (double)committed / secs,
	       b->threads, level);
	if (ns)
		printf("BENCH|writer_reserve_commit_median|%u|ns|p99 %u ns\n", all[ns / 2], all[ns * 99 / 100]);
	printf("BENCH|writer_bytes_per_record|%.1f|bytes|compressed\n",
	       committed ? (double)r->file_bytes / (double)committed : 0.0);
}

int main(int argc, char **argv)
{
	struct bench_opts b;
	struct bench_result r = { 0 };
	char err[512];

	if (parse_args(argc, argv, &b))
		return 2;
	calibrate();
	struct ktrace_writer_opts o = { .path = b.out, .overwrite = 1, .zstd_level = b.level,
					.thread_buf_bytes = b.buf_kib << 10,
					.max_wait_ns = (uint64_t)b.max_wait_ms * 1000000ull };
	struct ktrace_writer *w = ktrace_writer_open(&o, err, sizeof err);
	if (!w) {
		fprintf(stderr, "writer_bench: %s\n", err);
		return 1;
	}
	run(&b, w, &r);
	report(&b, &r);
	free(r.samples);
	if (!b.keep)
		unlink(b.out);
	return 0;
}
