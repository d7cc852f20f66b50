/* common/grow.c: the growth of a heap array (grow.h). */
#include "common/grow.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int ktrace_grow(void *arrp, size_t *cap, size_t need, size_t elem)
{
	size_t nc = *cap ? *cap : 16;
	void *p, *q;

	if (need <= *cap)
		return 0;
	while (nc < need) {
		if (nc > SIZE_MAX / 2)
			return -1;
		nc *= 2;
	}
	if (elem && nc > SIZE_MAX / elem)
		return -1;
	memcpy(&p, arrp, sizeof p);
	q = realloc(p, nc * elem);
	if (!q)
		return -1;
	memcpy(arrp, &q, sizeof q);
	*cap = nc;
	return 0;
}
