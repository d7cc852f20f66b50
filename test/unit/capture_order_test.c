/* test/unit/capture_order_test.c: the stream-order hook (interpose/capture/
 * order_events.c) through the real writer and reader: one ORDER record per
 * successful call with its fields (stream, event, context, device, thread,
 * the launch_seq counter given, stream flags and priority), none for a
 * failed call, polled queries recorded once per change (an event's once per
 * record, a stream's once per new work or wait, the per-thread stream's per
 * thread), the context cuCtxSynchronize_v2 names. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "test/unit/capture_support.h"
#include "interpose/capture/capture.h"
#include "interpose/model/tracer.h"

#define CTX ((CUcontext)(uintptr_t)0xc0)
#define S1 ((CUstream)(uintptr_t)0x5100)
#define S2 ((CUstream)(uintptr_t)0x5200)
#define E1 ((CUevent)(uintptr_t)0xe100)
#define E2 ((CUevent)(uintptr_t)0xe200)

static void call(uint32_t op, CUstream s, CUevent e, uint64_t issued, CUresult res)
{
	struct ktrace_order_call c = { .op = op, .stream = s, .event = e, .issued = issued };

	ktrace_on_order(&c, res);
}

/* The i-th ORDER record in commit order (records of other threads may come
 * earlier in the file). */
static struct ktrace_rec_order order(size_t i)
{
	size_t n = trace_count(KTRACE_REC_ORDER), rank;
	struct ktrace_record_prefix p, q;
	struct ktrace_rec_order r;

	assert_true(i < n);
	for (size_t k = 0; k < n; k++) {
		const struct loaded_rec *l = trace_nth(KTRACE_REC_ORDER, k);

		assert_int_equal(ktrace_decode_prefix(l->data, l->len, &p), 0);
		rank = 0;
		for (size_t j = 0; j < n; j++) {
			const struct loaded_rec *m = trace_nth(KTRACE_REC_ORDER, j);

			assert_int_equal(ktrace_decode_prefix(m->data, m->len, &q), 0);
			rank += q.seq < p.seq;
		}
		if (rank == i) {
			assert_int_equal(ktrace_decode_order(l->data, l->len, &r), 0);
			return r;
		}
	}
	fail_msg("no ORDER record of rank %zu", i);
	return r;
}

static int setup(void **state)
{
	(void)state;
	fake_driver_reset();
	fake_driver_set_context(CTX, 3, 90);
	trace_begin(0, 0);
	return 0;
}

static void test_fields_and_failures(void **state)
{
	CUstream made = S2;
	struct ktrace_order_call create = { .op = KTRACE_ORDER_STREAM_CREATE, .created = &made,
					    .stream_flags = KTRACE_STREAM_NON_BLOCKING, .priority = -2, .issued = 4 };
	struct ktrace_rec_order r;

	(void)state;
	ktrace_on_order(&create, CUDA_SUCCESS);
	ktrace_on_order(&create, CUDA_ERROR_INVALID_VALUE);
	call(KTRACE_ORDER_EVENT_RECORD, S1, E1, 7, CUDA_SUCCESS);
	call(KTRACE_ORDER_EVENT_RECORD, S1, NULL, 7, CUDA_ERROR_INVALID_HANDLE);
	call(KTRACE_ORDER_STREAM_WAIT_EVENT, CU_STREAM_PER_THREAD, E1, 9, CUDA_SUCCESS);
	call(KTRACE_ORDER_UNKNOWN, S1, NULL, 9, CUDA_SUCCESS);
	call(KTRACE_ORDER_STREAM_SYNC, S1, NULL, 10, CUDA_ERROR_LAUNCH_FAILED);
	trace_end();
	assert_int_equal(trace_count(KTRACE_REC_ORDER), 4);
	r = order(0);
	assert_int_equal(r.op, KTRACE_ORDER_STREAM_CREATE);
	assert_true(r.stream == (uint64_t)(uintptr_t)S2);
	assert_int_equal(r.stream_flags, KTRACE_STREAM_NON_BLOCKING);
	assert_int_equal(r.priority, -2);
	assert_true(r.launch_seq_before == 4);
	assert_true(r.context == (uint64_t)(uintptr_t)CTX);
	assert_int_equal(r.device, 3);
	assert_int_equal(r.tid, (uint32_t)syscall(SYS_gettid));
	r = order(1);
	assert_int_equal(r.op, KTRACE_ORDER_EVENT_RECORD);
	assert_true(r.stream == (uint64_t)(uintptr_t)S1 && r.event == (uint64_t)(uintptr_t)E1);
	assert_true(r.launch_seq_before == 7);
	assert_int_equal(r.stream_flags, 0);
	assert_int_equal(r.priority, 0);
	r = order(2);
	assert_int_equal(r.op, KTRACE_ORDER_STREAM_WAIT_EVENT);
	assert_true(r.stream == 2);
	assert_true(r.launch_seq_before == 9);
	assert_int_equal(order(3).op, KTRACE_ORDER_UNKNOWN);
}

/* cuEventQuery polled: the first success after each record; a
 * cuEventSynchronize of the record counts as that success. */
static void test_event_query_once_per_record(void **state)
{
	(void)state;
	call(KTRACE_ORDER_EVENT_RECORD, S1, E1, 1, CUDA_SUCCESS);
	call(KTRACE_ORDER_EVENT_QUERY_DONE, NULL, E1, 1, CUDA_ERROR_NOT_READY);
	call(KTRACE_ORDER_EVENT_QUERY_DONE, NULL, E1, 1, CUDA_SUCCESS);   /* recorded */
	call(KTRACE_ORDER_EVENT_QUERY_DONE, NULL, E1, 1, CUDA_SUCCESS);
	call(KTRACE_ORDER_EVENT_QUERY_DONE, NULL, E2, 1, CUDA_SUCCESS);   /* another event: recorded */
	call(KTRACE_ORDER_EVENT_RECORD, S1, E1, 2, CUDA_SUCCESS);
	call(KTRACE_ORDER_EVENT_SYNC, NULL, E1, 2, CUDA_SUCCESS);         /* recorded */
	call(KTRACE_ORDER_EVENT_QUERY_DONE, NULL, E1, 2, CUDA_SUCCESS);
	call(KTRACE_ORDER_EVENT_RECORD, S2, E1, 3, CUDA_SUCCESS);
	call(KTRACE_ORDER_EVENT_QUERY_DONE, NULL, E1, 3, CUDA_SUCCESS);   /* recorded */
	call(KTRACE_ORDER_EVENT_QUERY_DONE, NULL, E1, 3, CUDA_SUCCESS);
	trace_end();
	static const uint32_t want[] = { KTRACE_ORDER_EVENT_RECORD, KTRACE_ORDER_EVENT_QUERY_DONE,
					 KTRACE_ORDER_EVENT_QUERY_DONE, KTRACE_ORDER_EVENT_RECORD,
					 KTRACE_ORDER_EVENT_SYNC, KTRACE_ORDER_EVENT_RECORD,
					 KTRACE_ORDER_EVENT_QUERY_DONE };
	assert_int_equal(trace_count(KTRACE_REC_ORDER), sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_int_equal(order(i).op, want[i]);
	assert_true(order(2).event == (uint64_t)(uintptr_t)E2);
	assert_true(order(6).launch_seq_before == 3);
}

static void *query_per_thread_stream(void *arg)
{
	(void)arg;
	call(KTRACE_ORDER_STREAM_QUERY_DONE, CU_STREAM_PER_THREAD, NULL, 6, CUDA_SUCCESS);
	return NULL;
}

/* cuStreamQuery polled: again only once work (a launch number) or a stream
 * wait was issued; each thread's per-thread stream is its own. */
static void test_stream_query_once_per_change(void **state)
{
	pthread_t t;

	(void)state;
	call(KTRACE_ORDER_STREAM_QUERY_DONE, S1, NULL, 5, CUDA_SUCCESS);  /* recorded */
	call(KTRACE_ORDER_STREAM_QUERY_DONE, S1, NULL, 5, CUDA_SUCCESS);
	call(KTRACE_ORDER_STREAM_QUERY_DONE, S2, NULL, 5, CUDA_SUCCESS);  /* recorded */
	call(KTRACE_ORDER_STREAM_QUERY_DONE, S1, NULL, 6, CUDA_SUCCESS);  /* recorded: new work */
	call(KTRACE_ORDER_STREAM_WAIT_EVENT, S1, E1, 6, CUDA_SUCCESS);    /* recorded */
	call(KTRACE_ORDER_STREAM_QUERY_DONE, S1, NULL, 6, CUDA_SUCCESS);  /* recorded: a wait since */
	call(KTRACE_ORDER_STREAM_QUERY_DONE, S1, NULL, 6, CUDA_ERROR_NOT_READY);
	call(KTRACE_ORDER_STREAM_QUERY_DONE, CU_STREAM_PER_THREAD, NULL, 6, CUDA_SUCCESS); /* recorded */
	call(KTRACE_ORDER_STREAM_QUERY_DONE, CU_STREAM_PER_THREAD, NULL, 6, CUDA_SUCCESS);
	assert_int_equal(pthread_create(&t, NULL, query_per_thread_stream, NULL), 0);
	pthread_join(t, NULL);                                             /* recorded: its own stream */
	call(KTRACE_ORDER_STREAM_SYNC, S1, NULL, 6, CUDA_SUCCESS);        /* syncs always */
	call(KTRACE_ORDER_STREAM_SYNC, S1, NULL, 6, CUDA_SUCCESS);
	trace_end();
	assert_int_equal(trace_count(KTRACE_REC_ORDER), 9);
	assert_true(order(1).stream == (uint64_t)(uintptr_t)S2);
	assert_true(order(2).launch_seq_before == 6);
	assert_int_equal(order(3).op, KTRACE_ORDER_STREAM_WAIT_EVENT);
	assert_int_equal(order(5).op, KTRACE_ORDER_STREAM_QUERY_DONE);
	assert_int_equal(order(6).op, KTRACE_ORDER_STREAM_QUERY_DONE);
	assert_true(order(5).tid != order(6).tid);
	assert_int_equal(order(8).op, KTRACE_ORDER_STREAM_SYNC);
}

/* cuCtxSynchronize_v2 names its context: recorded as given (device unknown
 * unless it is the current one); cuCtxSynchronize's is the current one. */
static void test_ctx_sync_context(void **state)
{
	struct ktrace_order_call other = { .op = KTRACE_ORDER_CTX_SYNC, .context = (CUcontext)(uintptr_t)0xd0 };
	struct ktrace_order_call same = { .op = KTRACE_ORDER_CTX_SYNC, .context = CTX };
	struct ktrace_order_call current = { .op = KTRACE_ORDER_CTX_SYNC };

	(void)state;
	ktrace_on_order(&other, CUDA_SUCCESS);
	ktrace_on_order(&same, CUDA_SUCCESS);
	ktrace_on_order(&current, CUDA_SUCCESS);
	trace_end();
	assert_int_equal(trace_count(KTRACE_REC_ORDER), 3);
	assert_true(order(0).context == 0xd0);
	assert_int_equal(order(0).device, -1);
	assert_true(order(1).context == (uint64_t)(uintptr_t)CTX);
	assert_int_equal(order(1).device, 3);
	assert_true(order(2).context == (uint64_t)(uintptr_t)CTX);
	assert_int_equal(order(2).device, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_fields_and_failures, setup),
		cmocka_unit_test_setup(test_event_query_once_per_record, setup),
		cmocka_unit_test_setup(test_stream_query_once_per_change, setup),
		cmocka_unit_test_setup(test_ctx_sync_context, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
