/* interpose/model/tracer.c: NOTE records from the tracer.
 *
 * Owns ktrace_tracer_note() (tracer.h): the NOTE records of features turned
 * off, of tracing paused and resumed, and the program's marks (control.c).  May call: the record encoder and
 * the trace writer (format/).
 */
#include <stdatomic.h>
#include <string.h>

#include "format/ktrace_format.h"
#include "format/trace_writer.h"
#include "interpose/model/tracer.h"

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

	if (!w || atomic_load(&ktrace_tracer.ending))
		return;
	size = ktrace_encode_note(rec, sizeof(rec), &n);
	if (size && size <= sizeof(rec))
		ktrace_writer_append(w, rec, size);
}
