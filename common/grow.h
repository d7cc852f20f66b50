/* common/grow.h: the growth of a heap array (grow.c), for meta/'s parse
 * state and the tools' arrays (tools/model/array.h) alike.
 */
#ifndef KTRACE_COMMON_GROW_H
#define KTRACE_COMMON_GROW_H

#include <stddef.h>

/* Make the array that arrp points to (the address of a T *, its capacity
 * *cap elements of elem bytes) hold at least need elements, doubling it
 * (from 16).  0, or -1 when memory runs out (the array is then unchanged). */
int ktrace_grow(void *arrp, size_t *cap, size_t need, size_t elem);

#endif
