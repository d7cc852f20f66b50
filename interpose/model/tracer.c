/* interpose/model/tracer.c: the tracer's state and its NOTE records.
 *
 * Owns ktrace_tracer (tracer.h: filled by the lifecycle, read everywhere),
 * ktrace_tracer_note(): the NOTE records of features turned off, of tracing
 * paused and resumed, and the program's marks (interpose/control.c), and
 * ktrace_tracer_disable_feature(), which reports each feature turned off
 * once.  May call: the record encoder and the trace writer (format/),
 * logging.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "format/ktrace_format.h"
#include "format/trace_writer.h"
#include "interpose/model/tracer.h"

struct ktrace_tracer ktrace_tracer;

void ktrace_tracer_note(uint32_t level, uint32_t code, const char *text)
{
	struct ktrace_writer *w = ktrace_tracer.writer;
	_Alignas(8) uint8_t rec[640];
	size_t len = strlen(text);
	struct ktrace_rec_note n = {
		.level = level,
		.code = code,
		.text = { text, (uint16_t)(len < 512 ? len : 511) },
	};
	size_t size;

	/* Not dropped while the trace ends: the end's drains write records
	 * (graph launches whose digests landed late) whose NOTEs belong with
	 * them; once the END record is being written the writer drops it. */
	if (!w)
		return;
	size = ktrace_encode_note(rec, sizeof(rec), &n);
	if (size && size <= sizeof(rec))
		ktrace_writer_append(w, rec, size);
}

static _Atomic uint64_t disabled_codes[4]; /* codes 0..255 reported once */

void ktrace_tracer_disable_feature(uint32_t code, const char *fmt, ...)
{
	char text[512];
	va_list ap;

	if (code < 256) {
		uint64_t bit = 1ull << (code % 64);

		if (atomic_fetch_or(&disabled_codes[code / 64], bit) & bit)
			return;
	}
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	KT_WARN("%s", text);
	ktrace_tracer_note(KTRACE_NOTE_DISABLED, code, text);
}
