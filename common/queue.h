/* common/queue.h: appending to a first-in first-out queue kept as a singly
 * linked list with head and tail pointers, as interpose/'s work queues are
 * (the hash pipeline's jobs, the graph hash jobs, the metadata worker's
 * modules, the GPU times' pending pairs).  Header only; no locking (the
 * caller holds the queue's lock).
 */
#ifndef KTRACE_COMMON_QUEUE_H
#define KTRACE_COMMON_QUEUE_H

/* Put node, whose link member `next` is already NULL, at the end of the
 * queue from head to tail (both NULL when it is empty). */
#define KTRACE_QUEUE_APPEND(head, tail, node, next) \
	do { \
		if (tail) \
			(tail)->next = (node); \
		else \
			(head) = (node); \
		(tail) = (node); \
	} while (0)

#endif
