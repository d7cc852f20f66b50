/* interpose/hash/memory_events.h: the fork hooks of memory_events.c.
 *
 * memory_events.c implements the memory and context hooks of
 * interpose/driver/events.h; besides those it exposes only these, which
 * interpose/fork.c calls: prepare takes the lock that serialises the merging
 * and splitting of VMM ranges (a merge is several allocation-map updates),
 * parent and child release it.  May call: nothing (declarations only).
 */
#ifndef KTRACE_MEMORY_EVENTS_H
#define KTRACE_MEMORY_EVENTS_H

void ktrace_memory_events_fork_prepare(void) __attribute__((visibility("hidden")));
void ktrace_memory_events_fork_parent(void) __attribute__((visibility("hidden")));
void ktrace_memory_events_fork_child(void) __attribute__((visibility("hidden")));

#endif
