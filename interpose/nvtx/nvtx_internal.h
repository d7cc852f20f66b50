/* interpose/nvtx/nvtx_internal.h: what the files of interpose/nvtx/ share:
 * nvtx_inject.c (the injection entry point, domains, registered strings),
 * nvtx_message.c (framework numbers in messages), nvtx_stack.c (the thread
 * stacks) and nvtx_intern.c (the table of paths, RANGE records).  Not used
 * outside the folder (nvtx.h is its public side).
 */
#ifndef KTRACE_NVTX_INTERNAL_H
#define KTRACE_NVTX_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "format/ktrace_format.h"

#define KT_NVTX_MSG_MAX 512   /* bytes of a message kept (longer: cut, flag CUT) */
#define KT_NVTX_DEPTH 64      /* open ranges tracked per thread (deeper ones are counted) */
#define KT_NVTX_DOMAINS 1024  /* named domains told apart (later ones share one) */
#define KT_NVTX_DOMAIN_NAME_MAX 256 /* bytes of a domain's name kept */
#define KT_NVTX_SOURCE_MAX 4096 /* bytes of a range's source locations kept (longer: cut, flag SOURCE_CUT) */

/* A message ready to be interned: the text a RANGE record keeps (framework
 * numbers cut) and what was cut from it. */
struct kt_nvtx_text {
	const char *ptr;
	uint16_t len;
	uint32_t flags;        /* KTRACE_RANGEF_* */
	int has_seq;           /* the message carried `seq = N` (or `stashed seq = N`) */
	uint64_t seq;          /* N */
	const char *source;    /* source locations attached to the range (a payload), or NULL */
	uint16_t source_len;
};

/* A registered string (nvtxDomainRegisterString*): parsed once, kept for
 * the life of the process (its address is the handle the program holds).
 * Kept to KT_NVTX_MSG_MAX + 1 bytes, except one that reads like Python
 * source locations ("file.py:LINE"), kept to KT_NVTX_SOURCE_MAX for the
 * payloads that name it (XLA's "Source locations"). */
struct kt_nvtx_regstr {
	uint32_t domain;
	struct kt_nvtx_text text; /* ptr points into buf */
	uint16_t source_len;      /* buf's bytes as source locations (0: not such a string) */
	uint16_t source_cut;      /* KTRACE_RANGEF_SOURCE_CUT when they were longer */
	char buf[];
};

/* nvtx_message.c: the framework numbers of a message.  PyTorch's op ranges
 * (emit_nvtx) read "aten::addmm, seq = 12, op_id = 345, sizes = [...]":
 * everything from the first such field on is cut (it differs at every
 * call), `seq = N` / `stashed seq = N` is kept in t->seq.  Names ending in
 * Backward<digits> (autograd nodes) and stashed numbers are flagged
 * BACKWARD.  The text is cut at KT_NVTX_MSG_MAX bytes. */
void kt_nvtx_parse(const char *msg, size_t len, struct kt_nvtx_text *t);
/* A wide (wchar_t) message as UTF-8 into buf (at most cap bytes, cut at a
 * character); returns the length. */
size_t kt_nvtx_utf8(const void *wide, char *buf, size_t cap);

/* nvtx_payload.c: the source locations in the payloads of attributes a
 * (NVTX's payload extension: a registered-string entry of a registered
 * schema whose name says "source"), into t->source; else nothing. */
struct nvtxEventAttributes_v2;
void kt_nvtx_payload_source(const struct nvtxEventAttributes_v2 *a, struct kt_nvtx_text *t);

/* nvtx_inject.c: a domain's id (0: the default domain) and its name. */
const char *kt_nvtx_domain_name(uint32_t id, uint16_t *len);
/* The folder's one lock: domains, registered strings, inserts into the table. */
void kt_nvtx_lock(void);
void kt_nvtx_unlock(void);

/* nvtx_intern.c: the id of the path (parent, domain, kind, category, text),
 * interned on first use and its RANGE record written (0 when the table is
 * full: the caller stays in the parent).  Lock-free for a path seen before. */
uint32_t kt_nvtx_intern(uint32_t parent, uint32_t domain, uint32_t kind, uint32_t category,
			const struct kt_nvtx_text *t);
/* The fields of interned path id (to intern it again under another parent
 * when a range closes out of order).  0, or -1 for an unknown id. */
int kt_nvtx_node(uint32_t id, uint32_t *domain, uint32_t *kind, uint32_t *category, struct kt_nvtx_text *t);
/* Count a range that could not be recorded (COUNTERS ranges_unrecorded). */
void kt_nvtx_count_unrecorded(void);

/* nvtx_stack.c: the calling thread's stack (return values as NVTX's API
 * wants them: push and pop the depth, start a range id, 0 for none). */
int kt_nvtx_push(uint32_t domain, uint32_t category, const struct kt_nvtx_text *t);
int kt_nvtx_pop(uint32_t domain);
uint64_t kt_nvtx_start(uint32_t domain, uint32_t category, const struct kt_nvtx_text *t);
void kt_nvtx_end(uint64_t id);
void kt_nvtx_mark(uint32_t domain, const struct kt_nvtx_text *t);

#endif
