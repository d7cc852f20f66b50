/* interpose/control.c: the control API (include/ktrace.h).
 *
 * Owns ktrace_pause(), ktrace_resume(), ktrace_is_paused() and ktrace_mark(): one flag,
 * ktrace_tracer.paused, read by the launch path (launch_capture.c) and the
 * copy hooks (memory_events.c), and a NOTE record at each change of state;
 * a mark is a NOTE record of the program's text.
 * A post-hash held back for a merge is launched first (docs/hashing.md,
 * "Merged hash launches").
 * May call: ktrace_tracer_note() (tracer_note.c), the hash pipeline's flush.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "include/ktrace.h"
#include "format/ktrace_format.h"
#include "interpose/hash/hash_pipeline.h"
#include "interpose/model/tracer.h"

static void set_paused(int on)
{
	char text[96];

	ktrace_hash_flush_held(KTRACE_CTR_HASH_FLUSH_OTHER); /* a held post-hash belongs to the tracing before the change */
	if (atomic_exchange(&ktrace_tracer.paused, on) == on)
		return;
	snprintf(text, sizeof(text), "tracing %s at launch_seq %llu", on ? "paused" : "resumed",
		 (unsigned long long)atomic_load_explicit(&ktrace_tracer.launch_seq, memory_order_relaxed));
	ktrace_tracer_note(KTRACE_NOTE_INFO, on ? KTRACE_NOTE_CODE_PAUSED : KTRACE_NOTE_CODE_RESUMED, text);
}

KTRACE_EXPORT void ktrace_pause(void)
{
	set_paused(1);
}

KTRACE_EXPORT void ktrace_resume(void)
{
	set_paused(0);
}

KTRACE_EXPORT int ktrace_is_paused(void)
{
	return atomic_load_explicit(&ktrace_tracer.paused, memory_order_relaxed);
}

KTRACE_EXPORT void ktrace_mark(const char *text)
{
	ktrace_tracer_note(KTRACE_NOTE_INFO, KTRACE_NOTE_CODE_MARK, text ? text : "");
}
