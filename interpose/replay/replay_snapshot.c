/* interpose/replay/replay_snapshot.c: copies of a launch's buffers, their
 * digests and their comparison with R0.
 *
 * Owns where a copy lives: device scratch (cuMemAlloc_v2 + cuMemcpyDtoD_v2)
 * while the copies fit the device budget and, when cuMemGetInfo_v2 is there,
 * leave KTRACE_REPLAY_DEVICE_HEADROOM free; else host memory within the host
 * budget (pinned with cuMemHostAlloc, else malloc; cuMemcpyDtoH_v2 /
 * cuMemcpyHtoD_v2).  Digests (KT64V1, hashkern/ktrace_digest.h) and
 * comparisons read the live buffers through a bounded host staging area.
 * Every driver failure is recorded with rp_fail and returned as -1.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashkern/ktrace_digest.h"
#include "interpose/driver/driver_real.h"
#include "interpose/replay/replay_internal.h"

void rp_fail(struct rp_state *s, enum ktrace_replay_reason reason, CUresult res, const char *fmt, ...)
{
	struct ktrace_replay_report *r = s->report;
	va_list ap;

	if (r->reason != KTRACE_REPLAY_OK && reason != KTRACE_REPLAY_RESTORE_FAILED)
		return;
	r->reason = (uint8_t)reason;
	r->driver_error = (int32_t)res;
	va_start(ap, fmt);
	vsnprintf(r->detail, sizeof(r->detail), fmt, ap);
	va_end(ap);
}

const char *rp_error_name(CUresult res, char *buf, size_t len)
{
	const char *name = NULL;

	if (KT_REAL(cuGetErrorName, res, &name) == CUDA_SUCCESS && name)
		return name;
	snprintf(buf, len, "CUresult %d", (int)res);
	return buf;
}

static const char *buf_name(const struct ktrace_replay_buffer *b)
{
	return b->name && *b->name ? b->name : "?";
}

static void fail_call(struct rp_state *s, enum ktrace_replay_reason reason, CUresult res, const char *call,
		      uint32_t i)
{
	char eb[32];

	rp_fail(s, reason, res, "%s failed on buffer %s (argument %u): %s", call, buf_name(&s->bufs[i]),
		s->bufs[i].arg_index, rp_error_name(res, eb, sizeof(eb)));
}

/* ---- taking and restoring copies ------------------------------------------ */

static int alloc_device(struct rp_state *s, uint64_t n, CUdeviceptr *p)
{
	size_t free_b = 0, total_b = 0;

	if (n > s->budget - s->report->bytes_device)
		return -1;
	if (KT_REAL(cuMemGetInfo_v2, &free_b, &total_b) == CUDA_SUCCESS &&
	    (uint64_t)free_b < n + KTRACE_REPLAY_DEVICE_HEADROOM)
		return -1;
	if (KT_REAL(cuMemAlloc_v2, p, (size_t)n) != CUDA_SUCCESS)
		return -1;
	s->report->bytes_device += n;
	return 0;
}

static int alloc_host(struct rp_state *s, uint64_t n, struct rp_copy *c)
{

	if (n > s->host_budget - s->report->bytes_host)
		return -1;
	if (KT_REAL_HAS(cuMemFreeHost) && KT_REAL(cuMemHostAlloc, &c->host, (size_t)n, 0) == CUDA_SUCCESS)
		c->place = KTRACE_REPLAY_PLACE_PINNED;
	else if ((c->host = malloc((size_t)n)) != NULL)
		c->place = KTRACE_REPLAY_PLACE_HOST;
	else
		return -1;
	s->report->bytes_host += n;
	return 0;
}

static int take_one(struct rp_state *s, uint32_t i, struct rp_copy *c)
{
	const struct ktrace_replay_buffer *b = &s->bufs[i];
	CUresult res;

	if (alloc_device(s, b->size, &c->dev) == 0) {
		c->place = KTRACE_REPLAY_PLACE_DEVICE;
		res = KT_REAL(cuMemcpyDtoD_v2, c->dev, b->base, (size_t)b->size);
		if (res != CUDA_SUCCESS)
			fail_call(s, KTRACE_REPLAY_COPY_FAILED, res, "cuMemcpyDtoD_v2", i);
		return res == CUDA_SUCCESS ? 0 : -1;
	}
	if (alloc_host(s, b->size, c) != 0) {
		rp_fail(s, KTRACE_REPLAY_OUT_OF_MEMORY, CUDA_SUCCESS,
			"no room for a %llu-byte copy of buffer %s (argument %u): device budget %llu, "
			"host budget %llu, %llu and %llu bytes in use", (unsigned long long)b->size,
			buf_name(b), b->arg_index, (unsigned long long)s->budget,
			(unsigned long long)s->host_budget, (unsigned long long)s->report->bytes_device,
			(unsigned long long)s->report->bytes_host);
		return -1;
	}
	res = KT_REAL(cuMemcpyDtoH_v2, c->host, b->base, (size_t)b->size);
	if (res != CUDA_SUCCESS)
		fail_call(s, KTRACE_REPLAY_COPY_FAILED, res, "cuMemcpyDtoH_v2", i);
	return res == CUDA_SUCCESS ? 0 : -1;
}

int rp_copies_take(struct rp_state *s, struct rp_copy *copies)
{
	for (uint32_t i = 0; i < s->n; i++) {
		int failed = take_one(s, i, &copies[i]);

		if (copies == s->input)
			s->report->buffers[i].place = copies[i].place;
		if (failed)
			return -1;
	}
	return 0;
}

int rp_copies_restore(struct rp_state *s, const struct rp_copy *copies)
{
	for (uint32_t i = 0; i < s->n; i++) {
		const struct ktrace_replay_buffer *b = &s->bufs[i];
		const struct rp_copy *c = &copies[i];
		CUresult res;

		if (c->place == KTRACE_REPLAY_PLACE_DEVICE)
			res = KT_REAL(cuMemcpyDtoD_v2, b->base, c->dev, (size_t)b->size);
		else
			res = KT_REAL(cuMemcpyHtoD_v2, b->base, c->host, (size_t)b->size);
		if (res != CUDA_SUCCESS) {
			fail_call(s, KTRACE_REPLAY_COPY_FAILED, res,
				  c->place == KTRACE_REPLAY_PLACE_DEVICE ? "cuMemcpyDtoD_v2" : "cuMemcpyHtoD_v2", i);
			return -1;
		}
	}
	return 0;
}

void rp_copies_release(struct rp_state *s, struct rp_copy *copies)
{
	if (!copies)
		return;
	for (uint32_t i = 0; i < s->n; i++) {
		struct rp_copy *c = &copies[i];

		if (c->place == KTRACE_REPLAY_PLACE_DEVICE)
			KT_REAL(cuMemFree_v2, c->dev);
		else if (c->place == KTRACE_REPLAY_PLACE_PINNED)
			KT_REAL(cuMemFreeHost, c->host);
		else if (c->place == KTRACE_REPLAY_PLACE_HOST)
			free(c->host);
		memset(c, 0, sizeof(*c));
	}
}

/* ---- reading buffers: digests and comparisons ----------------------------- */

/* Bytes [off, off+len) of live buffer i, through stage. */
static const void *read_live(struct rp_state *s, uint32_t i, uint64_t off, size_t len, unsigned char *stage)
{
	CUresult res = KT_REAL(cuMemcpyDtoH_v2, stage, s->bufs[i].base + off, len);

	if (res != CUDA_SUCCESS) {
		fail_call(s, KTRACE_REPLAY_COPY_FAILED, res, "cuMemcpyDtoH_v2", i);
		return NULL;
	}
	return stage;
}

/* Bytes [off, off+len) of a copy of buffer i: in place for host copies. */
static const void *read_copy(struct rp_state *s, uint32_t i, const struct rp_copy *c, uint64_t off, size_t len,
			     unsigned char *stage)
{
	CUresult res;

	if (c->place != KTRACE_REPLAY_PLACE_DEVICE)
		return (const unsigned char *)c->host + off;
	res = KT_REAL(cuMemcpyDtoH_v2, stage, c->dev + off, len);
	if (res != CUDA_SUCCESS) {
		fail_call(s, KTRACE_REPLAY_COPY_FAILED, res, "cuMemcpyDtoH_v2", i);
		return NULL;
	}
	return stage;
}

int rp_digest_all(struct rp_state *s, uint64_t *out)
{
	for (uint32_t i = 0; i < s->n; i++) {
		struct ktrace_digest_state st;
		uint64_t size = s->bufs[i].size;

		ktrace_digest_init(&st);
		for (uint64_t off = 0; off < size; off += s->stage_len) {
			size_t len = (size_t)(size - off < s->stage_len ? size - off : s->stage_len);
			const void *p = read_live(s, i, off, len, s->stage_a);

			if (!p)
				return -1;
			ktrace_digest_update(&st, p, len);
		}
		out[i] = ktrace_digest_final(&st);
	}
	return 0;
}

int rp_compare(struct rp_state *s, uint32_t i, struct ktrace_replay_diff *d)
{
	enum ktrace_replay_elem e = ktrace_replay_elem_parse(s->bufs[i].type);
	unsigned esize = ktrace_replay_elem_size(e);
	uint64_t size = s->bufs[i].size;

	memset(d, 0, sizeof(*d));
	for (uint64_t off = 0; off < size; off += s->stage_len) {
		size_t len = (size_t)(size - off < s->stage_len ? size - off : s->stage_len);
		const void *ref = read_copy(s, i, &s->result[i], off, len, s->stage_a);
		const void *live = ref ? read_live(s, i, off, len, s->stage_b) : NULL;

		if (!live)
			return -1;
		ktrace_replay_diff_add(d, e, ref, live, len, off / esize);
	}
	return 0;
}
