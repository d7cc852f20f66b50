/* format/trace_reader.c: read a trace file record by record (see trace_reader.h).
 *
 * Checks the 16-byte preamble, then streams the concatenated zstd frames
 * through one ZSTD_DCtx into a window buffer and hands out whole records.  A
 * record that straddles a read or frame boundary is reassembled in the window
 * (which grows up to one maximum-size record).  Memory is bounded by
 * KTRACE_RECORD_MAX_SIZE plus the zstd window (at most 2^KTRACE_READER_WINDOW_LOG);
 * every loop consumes input or produces output, so nothing hangs.  Calls
 * libc, libzstd and the record prefix decoder (ktrace_format.c) only.
 */
#include "format/trace_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zstd.h>

#define KTRACE_READER_WINDOW_LOG 24
#define IN_CAP (128u << 10)
#define OUT_INIT (256u << 10)

struct ktrace_reader {
	int fd;			/* -1 for memory */
	int own_fd;
	const uint8_t *mem;
	size_t mem_len;
	ZSTD_DCtx *dctx;
	uint8_t *in;		/* compressed input not yet consumed: in[in_pos..in_len) */
	size_t in_len, in_pos;
	uint64_t in_base;	/* file offset of in[0] */
	int in_eof;
	int frame_open;		/* inside a zstd frame */
	uint8_t *out;		/* decompressed bytes: out[start..end) not yet returned */
	size_t out_cap, start, end;
	uint64_t nrecords;
	uint16_t major, minor;
	int done;
	enum ktrace_read_status final;
	char name[256];
	char err[512];
};

static void set_err(struct ktrace_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_err(struct ktrace_reader *r, const char *fmt, ...)
{
	int n = snprintf(r->err, sizeof r->err, "%s: ", r->name);
	if (n < 0 || (size_t)n >= sizeof r->err)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->err + n, sizeof r->err - (size_t)n, fmt, ap);
	va_end(ap);
}

static enum ktrace_read_status finish(struct ktrace_reader *r, enum ktrace_read_status st)
{
	r->done = 1;
	r->final = st;
	return st;
}

/* Read up to n bytes from the file; returns bytes read, or -1 (errno set). */
static ssize_t read_some(int fd, void *buf, size_t n)
{
	for (;;) {
		ssize_t k = read(fd, buf, n);
		if (k >= 0 || errno != EINTR)
			return k;
	}
}

static ssize_t read_full(int fd, uint8_t *buf, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t k = read_some(fd, buf + got, n - got);
		if (k < 0)
			return -1;
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

static struct ktrace_reader *reader_new(const char *name)
{
	struct ktrace_reader *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	r->fd = -1;
	snprintf(r->name, sizeof r->name, "%s", name && *name ? name : "(trace)");
	r->dctx = ZSTD_createDCtx();
	r->out_cap = OUT_INIT;
	r->out = malloc(r->out_cap);
	if (!r->dctx || !r->out ||
	    ZSTD_isError(ZSTD_DCtx_setParameter(r->dctx, ZSTD_d_windowLogMax, KTRACE_READER_WINDOW_LOG))) {
		ktrace_reader_close(r);
		return NULL;
	}
	return r;
}

/* Validate the preamble in p[0..n); 0 or -1 with the error set. */
static int check_preamble(struct ktrace_reader *r, const uint8_t *p, size_t n)
{
	if (n == 0) {
		set_err(r, "empty file (not a ktrace trace)");
		return -1;
	}
	size_t m = n < KTRACE_MAGIC_LEN ? n : KTRACE_MAGIC_LEN;
	if (memcmp(p, KTRACE_MAGIC, m) != 0) {
		set_err(r, "not a ktrace trace (bad magic)");
		return -1;
	}
	if (n < KTRACE_PREAMBLE_SIZE) {
		set_err(r, "truncated: file ends inside the %d-byte preamble", KTRACE_PREAMBLE_SIZE);
		return -1;
	}
	r->major = (uint16_t)(p[8] | (p[9] << 8));
	r->minor = (uint16_t)(p[10] | (p[11] << 8));
	if (r->major > KTRACE_FORMAT_MAJOR) {
		set_err(r, "trace format version %u.%u is newer than this ktrace reads (%u.x); use a newer ktrace",
			r->major, r->minor, KTRACE_FORMAT_MAJOR);
		return -1;
	}
	if (r->major < 1) {
		set_err(r, "unsupported trace format version %u.%u", r->major, r->minor);
		return -1;
	}
	return 0;
}

static void copy_err(char *err, size_t errlen, const struct ktrace_reader *r)
{
	if (err && errlen)
		snprintf(err, errlen, "%s", r->err);
}

struct ktrace_reader *ktrace_reader_open(const char *path, char *err, size_t errlen)
{
	int stdin_ = path && strcmp(path, "-") == 0;
	struct ktrace_reader *r = reader_new(stdin_ ? "(stdin)" : path);
	if (!r) {
		snprintf(err, errlen, "%s: out of memory", path ? path : "(trace)");
		return NULL;
	}
	if (stdin_) {
		r->fd = STDIN_FILENO;
	} else {
		r->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (r->fd < 0) {
			set_err(r, "cannot open: %s", strerror(errno));
			goto fail;
		}
		r->own_fd = 1;
	}
	r->in = malloc(IN_CAP);
	if (!r->in) {
		set_err(r, "out of memory");
		goto fail;
	}
	uint8_t pre[KTRACE_PREAMBLE_SIZE];
	ssize_t n = read_full(r->fd, pre, sizeof pre);
	if (n < 0) {
		set_err(r, "cannot read: %s", strerror(errno));
		goto fail;
	}
	if (check_preamble(r, pre, (size_t)n))
		goto fail;
	r->in_base = KTRACE_PREAMBLE_SIZE;
	return r;
fail:
	copy_err(err, errlen, r);
	ktrace_reader_close(r);
	return NULL;
}

struct ktrace_reader *ktrace_reader_open_mem(const void *data, size_t len, const char *name,
					     char *err, size_t errlen)
{
	struct ktrace_reader *r = reader_new(name);
	if (!r) {
		snprintf(err, errlen, "%s: out of memory", name ? name : "(trace)");
		return NULL;
	}
	if (check_preamble(r, data, data ? len : 0)) {
		copy_err(err, errlen, r);
		ktrace_reader_close(r);
		return NULL;
	}
	r->mem = data;
	r->mem_len = len;
	r->in = (uint8_t *)data; /* never written */
	r->in_pos = KTRACE_PREAMBLE_SIZE;
	r->in_len = len;
	r->in_eof = 1;
	return r;
}

/* Make room for `need` bytes from out[start]: compact, then grow. */
static int make_room(struct ktrace_reader *r, size_t need)
{
	if (r->start && r->out_cap - r->start < need + (r->out_cap >> 2)) {
		memmove(r->out, r->out + r->start, r->end - r->start);
		r->end -= r->start;
		r->start = 0;
	}
	if (r->out_cap - r->start < need) {
		size_t cap = r->out_cap;
		while (cap - r->start < need)
			cap *= 2;
		uint8_t *p = realloc(r->out, cap);
		if (!p)
			return -1;
		r->out = p;
		r->out_cap = cap;
	}
	return 0;
}

/* Decompress more into out[end..).  >0: bytes produced; 0: end of input at a
 * frame boundary; <0: a final status (error text set). */
static int fill(struct ktrace_reader *r)
{
	for (;;) {
		if (r->in_pos == r->in_len && !r->in_eof) {
			r->in_base += r->in_len;
			r->in_pos = r->in_len = 0;
			ssize_t k = read_some(r->fd, r->in, IN_CAP);
			if (k < 0) {
				set_err(r, "read error after %llu records: %s", (unsigned long long)r->nrecords,
					strerror(errno));
				return KTRACE_READ_IOERR;
			}
			if (k == 0)
				r->in_eof = 1;
			r->in_len = (size_t)k;
		}
		int at_eof = r->in_pos == r->in_len && r->in_eof;
		if (at_eof && !r->frame_open)
			return 0;
		ZSTD_outBuffer ob = { r->out, r->out_cap, r->end };
		ZSTD_inBuffer ib = { r->in, r->in_len, r->in_pos };
		size_t ret = ZSTD_decompressStream(r->dctx, &ob, &ib);
		if (ZSTD_isError(ret)) {
			set_err(r, "corrupt: zstd: %s (near byte %llu, after %llu records)", ZSTD_getErrorName(ret),
				(unsigned long long)(r->in_base + r->in_pos), (unsigned long long)r->nrecords);
			return KTRACE_READ_CORRUPT;
		}
		size_t produced = ob.pos - r->end;
		int progressed = produced || ib.pos != r->in_pos || (ret == 0) != !r->frame_open;
		r->frame_open = ret != 0;
		r->end = ob.pos;
		r->in_pos = ib.pos;
		if (produced)
			return (int)(produced > 0x7fffffff ? 0x7fffffff : produced);
		if (progressed)
			continue;
		if (at_eof) { /* the frame needs bytes the file does not have */
			set_err(r, "truncated: file ends inside a zstd frame after %llu complete record%s",
				(unsigned long long)r->nrecords, r->nrecords == 1 ? "" : "s");
			return KTRACE_READ_TRUNCATED;
		}
		set_err(r, "corrupt: zstd makes no progress near byte %llu",
			(unsigned long long)(r->in_base + r->in_pos));
		return KTRACE_READ_CORRUPT;
	}
}

enum ktrace_read_status ktrace_reader_next(struct ktrace_reader *r, const void **rec, size_t *len)
{
	if (!r)
		return KTRACE_READ_IOERR;
	if (r->done)
		return r->final;
	for (;;) {
		size_t avail = r->end - r->start;
		size_t need = KTRACE_RECORD_PREFIX_SIZE;
		if (avail >= 8) {
			const uint8_t *p = r->out + r->start;
			uint32_t size = (uint32_t)p[4] | ((uint32_t)p[5] << 8) | ((uint32_t)p[6] << 16) |
					((uint32_t)p[7] << 24);
			if (size < KTRACE_RECORD_PREFIX_SIZE || size % KTRACE_RECORD_ALIGN ||
			    size > KTRACE_RECORD_MAX_SIZE) {
				set_err(r, "corrupt: bad record size %u after %llu records", size,
					(unsigned long long)r->nrecords);
				return finish(r, KTRACE_READ_CORRUPT);
			}
			if (avail >= size) {
				uint16_t type = (uint16_t)(p[0] | (p[1] << 8));
				if (r->nrecords == 0 && type != KTRACE_REC_HEADER) {
					set_err(r, "corrupt: first record is type %u, not a header", type);
					return finish(r, KTRACE_READ_CORRUPT);
				}
				r->start += size;
				r->nrecords++;
				*rec = p;
				*len = size;
				return KTRACE_READ_RECORD;
			}
			need = size;
		}
		if (make_room(r, need)) {
			set_err(r, "out of memory for a %zu-byte record", need);
			return finish(r, KTRACE_READ_IOERR);
		}
		int st = fill(r);
		if (st < 0)
			return finish(r, (enum ktrace_read_status)st);
		if (st == 0) {
			if (avail) {
				set_err(r, "truncated: file ends inside a record after %llu complete record%s",
					(unsigned long long)r->nrecords, r->nrecords == 1 ? "" : "s");
				return finish(r, KTRACE_READ_TRUNCATED);
			}
			if (r->nrecords == 0) {
				set_err(r, "truncated: no records after the preamble");
				return finish(r, KTRACE_READ_TRUNCATED);
			}
			return finish(r, KTRACE_READ_EOF);
		}
	}
}

const char *ktrace_reader_error(const struct ktrace_reader *r)
{
	return r ? r->err : "";
}

uint16_t ktrace_reader_major(const struct ktrace_reader *r)
{
	return r ? r->major : 0;
}

uint16_t ktrace_reader_minor(const struct ktrace_reader *r)
{
	return r ? r->minor : 0;
}

void ktrace_reader_close(struct ktrace_reader *r)
{
	if (!r)
		return;
	if (r->own_fd && r->fd >= 0)
		close(r->fd);
	if (!r->mem)
		free(r->in);
	free(r->out);
	ZSTD_freeDCtx(r->dctx);
	free(r);
}
