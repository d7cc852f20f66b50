/* interpose/nccl/nccl_record.c: COLL and COMM records, and what they say.
 *
 * Owns the writing of COLL and COMM records (encoded by format/'s codecs,
 * generated from the record table), the communicators' identities (the
 * KT64 digest, hashkern/ktrace_digest.h, of what every rank of a
 * communicator passes alike), the NCCL version string (ncclGetVersion,
 * asked once) and the settings string: the NCCL_* variables of the
 * environment that choose how NCCL reduces (algorithms, protocols,
 * channels, transports, buffer sizes, topology), as NCCL's documentation
 * lists them.  May call: the trace writer, the real ncclGetVersion, the
 * capture model's thread id, the digest, libc.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/trace_writer.h"
#include "hashkern/ktrace_digest.h"
#include "interpose/model/capture_thread.h"
#include "interpose/nccl/nccl_internal.h"

uint64_t ktrace_nccl_datatype_size(ncclDataType_t datatype)
{
	/* int8 uint8 int32 uint32 int64 uint64 float16 float32 float64 bfloat16 float8e4m3 float8e5m2 */
	static const uint8_t sizes[] = { 1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1 };

	return datatype >= 0 && (size_t)datatype < sizeof sizes ? sizes[datatype] : 0;
}

uint64_t ktrace_nccl_id_of_unique_ids(const ncclUniqueId *ids, int nids)
{
	if (!ids || nids <= 0 || nids > (1 << 20))
		return 0;
	return ktrace_digest(ids, (size_t)nids * sizeof(*ids));
}

/* Little-endian words, so that ranks of any host agree. */
static void put_le(uint8_t *p, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

uint64_t ktrace_nccl_id_of_split(uint64_t parent_id, uint64_t split_number, int32_t color)
{
	uint8_t b[20];

	put_le(b, parent_id, 8);
	put_le(b + 8, split_number, 8);
	put_le(b + 16, (uint32_t)color, 4);
	return ktrace_digest(b, sizeof b);
}

uint64_t ktrace_nccl_id_of_init_all(uint64_t call_number, int ndev, const int *devlist)
{
	uint8_t b[16 + 4 * 64];
	int n = ndev > 64 ? 64 : ndev < 0 ? 0 : ndev;

	put_le(b, (uint64_t)getpid(), 8);
	put_le(b + 8, call_number, 8);
	for (int i = 0; i < n; i++)
		put_le(b + 16 + 4 * i, (uint32_t)(devlist ? devlist[i] : i), 4);
	return ktrace_digest(b, 16 + 4 * (size_t)n);
}

/* Reserve, encode, commit at t0 (0: the commit's time): no copy. */
#define WRITE_RECORD(lower, r, t0)                                                     \
	do {                                                                           \
		struct ktrace_writer *w_ = ktrace_tracer.writer;                        \
		size_t size_ = ktrace_encode_##lower(NULL, 0, (r));                     \
		void *p_ = w_ && ktrace_nccl_enabled() ? ktrace_writer_reserve(w_, size_) : NULL; \
		if (p_) {                                                              \
			ktrace_encode_##lower(p_, size_, (r));                          \
			ktrace_writer_commit_at(w_, p_, (t0));                          \
		}                                                                      \
	} while (0)

void ktrace_nccl_write_coll(struct ktrace_rec_coll *r, uint64_t t0)
{
	if (atomic_load_explicit(&ktrace_tracer.paused, memory_order_relaxed))
		return; /* numbered, not recorded, as launches are */
	r->tid = ktrace_capture_tid();
	WRITE_RECORD(coll, r, t0);
}

/* "2.27.3" from ncclGetVersion's code (X*10000 + Y*100 + Z since 2.9,
 * X*1000 + Y*100 + Z before), asked once; "" when NCCL cannot say. */
static const char *version_string(void)
{
	static char version[32];
	static atomic_int state; /* 0 not asked, 1 asking, 2 known */
	ktrace_ncclGetVersion_fn get = KT_NCCL_REAL(ncclGetVersion);
	int expect = 0, code = 0;

	if (atomic_load_explicit(&state, memory_order_acquire) == 2)
		return version;
	if (!get || !atomic_compare_exchange_strong(&state, &expect, 1))
		return "";
	ktrace_nccl_in_call++;
	if (get(&code) == KTRACE_NCCL_SUCCESS && code > 0) {
		if (code >= 10000)
			snprintf(version, sizeof version, "%d.%d.%d", code / 10000, code / 100 % 100, code % 100);
		else
			snprintf(version, sizeof version, "%d.%d.%d", code / 1000, code / 100 % 10, code % 100);
	}
	ktrace_nccl_in_call--;
	atomic_store_explicit(&state, 2, memory_order_release);
	return version;
}

/* The variables that choose NCCL's algorithm, protocol, channels and
 * transports, and so the order in which it adds (NCCL's "Environment
 * Variables" documentation). */
static const char *const order_settings[] = {
	"NCCL_ALGO", "NCCL_PROTO", "NCCL_NTHREADS", "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS", "NCCL_MIN_CTAS",
	"NCCL_MAX_CTAS", "NCCL_NVLS_ENABLE", "NCCL_COLLNET_ENABLE", "NCCL_PAT_ENABLE", "NCCL_BUFFSIZE",
	"NCCL_LL128_BUFFSIZE", "NCCL_LL_THRESHOLD", "NCCL_TREE_THRESHOLD", "NCCL_SINGLE_RING_THRESHOLD",
	"NCCL_P2P_LEVEL", "NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE", "NCCL_NET_GDR_LEVEL", "NCCL_IB_DISABLE",
	"NCCL_NET", "NCCL_CROSS_NIC", "NCCL_TOPO_FILE", "NCCL_GRAPH_FILE", "NCCL_TUNER_PLUGIN",
};

static size_t settings_string(char *buf, size_t cap)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof order_settings / sizeof order_settings[0]; i++) {
		const char *v = getenv(order_settings[i]);
		int m;

		if (!v)
			continue;
		m = snprintf(buf + n, cap - n, "%s%s=%s", n ? " " : "", order_settings[i], v);
		if (m < 0 || (size_t)m >= cap - n) {
			buf[n] = '\0'; /* the ones that fit */
			break;
		}
		n += (size_t)m;
	}
	return n;
}

void ktrace_nccl_write_comm(struct ktrace_rec_comm *r)
{
	char settings[2048];
	const char *v = version_string();

	r->tid = ktrace_capture_tid();
	r->version = (struct ktrace_str){ v, (uint16_t)strlen(v) };
	r->settings.len = (uint16_t)settings_string(settings, sizeof settings);
	r->settings.ptr = settings;
	WRITE_RECORD(comm, r, 0);
}
