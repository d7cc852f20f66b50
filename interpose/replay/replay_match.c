/* interpose/replay/replay_match.c: the launch matcher's slow path.
 *
 * Owns ktrace_replay_matcher_init() and ktrace_replay_match_resolve()
 * (replay.h), which resolves the candidate kernel's handle by name.  May
 * call: libc.
 */
#include <string.h>

#include "interpose/replay/replay.h"

void ktrace_replay_matcher_init(struct ktrace_replay_matcher *m, const char *kernel, uint64_t occurrence)
{
	atomic_init(&m->handle, NULL);
	atomic_init(&m->seen, 0);
	m->occurrence = occurrence;
	m->kernel = kernel;
}

int ktrace_replay_match_resolve(struct ktrace_replay_matcher *m, const void *handle, const char *name)
{
	const void *expected = NULL;

	if (!handle || !name || !m->kernel || strcmp(name, m->kernel) != 0)
		return 0;
	/* First match: publish the handle.  A racing thread that resolved another
	 * handle of the same name first: this launch still counts, later ones
	 * through this handle do not. */
	atomic_compare_exchange_strong_explicit(&m->handle, &expected, handle, memory_order_acq_rel,
						memory_order_acquire);
	return ktrace_replay_match_count(m);
}
