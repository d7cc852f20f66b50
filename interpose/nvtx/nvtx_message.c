/* interpose/nvtx/nvtx_message.c: what a range's message says besides its
 * name (nvtx_internal.h, kt_nvtx_parse), and wide messages as UTF-8.
 *
 * PyTorch's op ranges (torch.autograd.profiler.emit_nvtx) append fields
 * that change at every call: ", seq = N" (the autograd node the op creates,
 * or, on a backward node, the forward op's number), ", op_id = N",
 * ", sizes = [...]", ", input_op_ids = [...]"; older releases wrote
 * ", stashed seq = N" on backward nodes.  Interning such messages whole
 * would make every call a new path: the fields are cut and the sequence
 * number kept beside the path instead.  Calls libc only.
 */
#include "interpose/nvtx/nvtx_internal.h"

#include <string.h>
#include <wchar.h>

static int starts(const char *p, const char *end, const char *lit)
{
	size_t n = strlen(lit);

	return (size_t)(end - p) >= n && memcmp(p, lit, n) == 0;
}

/* Decimal digits at p (at least one): their value in *v, where they end. */
static const char *digits(const char *p, const char *end, uint64_t *v)
{
	const char *q = p;

	*v = 0;
	while (q < end && *q >= '0' && *q <= '9' && q - p < 19)
		*v = *v * 10 + (uint64_t)(*q++ - '0');
	return q > p ? q : NULL;
}

/* A field of PyTorch's at p (a ", "): 1 and the number when it is a sequence
 * number, 0 for another known field, -1 for text that is not one. */
static int field(const char *p, const char *end, struct kt_nvtx_text *t)
{
	static const char *const seqs[] = { ", seq = ", ", seq=", ", stashed seq = ", ", stashed seq=" };
	static const char *const others[] = { ", op_id = ", ", sizes = ", ", input_op_ids = " };

	for (size_t i = 0; i < sizeof seqs / sizeof seqs[0]; i++) {
		uint64_t v;

		if (!starts(p, end, seqs[i]) || !digits(p + strlen(seqs[i]), end, &v))
			continue;
		t->has_seq = 1;
		t->seq = v;
		if (i >= 2)
			t->flags |= KTRACE_RANGEF_BACKWARD;
		return 1;
	}
	for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
		if (starts(p, end, others[i]))
			return 0;
	return -1;
}

/* An autograd node's name: "...Backward" and digits ("AddmmBackward0"). */
static int backward_name(const char *s, size_t n)
{
	while (n && s[n - 1] >= '0' && s[n - 1] <= '9')
		n--;
	return n >= 8 && memcmp(s + n - 8, "Backward", 8) == 0;
}

void kt_nvtx_parse(const char *msg, size_t len, struct kt_nvtx_text *t)
{
	const char *end = msg + len, *p = msg, *cut = end;

	t->ptr = msg;
	t->flags = 0;
	t->has_seq = 0;
	t->seq = 0;
	t->source = NULL;
	t->source_len = 0;
	while ((p = memchr(p, ',', (size_t)(end - p))) != NULL) {
		if (field(p, end, t) >= 0 && p < cut)
			cut = p;
		p++;
	}
	len = (size_t)(cut - msg);
	if (len > KT_NVTX_MSG_MAX) {
		len = KT_NVTX_MSG_MAX;
		t->flags |= KTRACE_RANGEF_CUT;
	}
	t->len = (uint16_t)len;
	if (t->has_seq)
		t->flags |= KTRACE_RANGEF_FW_SEQ;
	if (backward_name(msg, len))
		t->flags |= KTRACE_RANGEF_BACKWARD;
}

/* One code point as UTF-8 into p (room for 4); returns its length. */
static size_t put_utf8(char *p, uint32_t c)
{
	if (c < 0x80) {
		p[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		p[0] = (char)(0xc0 | (c >> 6));
		p[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		p[0] = (char)(0xe0 | (c >> 12));
		p[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		p[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	p[0] = (char)(0xf0 | (c >> 18));
	p[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	p[2] = (char)(0x80 | ((c >> 6) & 0x3f));
	p[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

size_t kt_nvtx_utf8(const void *wide, char *buf, size_t cap)
{
	const wchar_t *w = wide;
	size_t n = 0;

	for (; w && *w && n + 4 <= cap; w++) {
		uint32_t c = (uint32_t)*w;

		if (c > 0x10ffff || (c >= 0xd800 && c < 0xe000))
			c = 0xfffd; /* not a character: the replacement character */
		n += put_utf8(buf + n, c);
	}
	return n;
}
