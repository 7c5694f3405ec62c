/* bigmem.c - see bigmem.h. */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include "bigmem.h"

#define HUGE_PAGE ((uintptr_t)2 << 20)

/* The whole huge pages inside [p, p + bytes); madvise's failure only means no huge pages. */
static void *hint(void *p, size_t bytes)
{
	uintptr_t start = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	uintptr_t end = ((uintptr_t)p + bytes) & ~(HUGE_PAGE - 1);

	if (p && end > start)
		(void)madvise((void *)start, end - start, MADV_HUGEPAGE);
	return p;
}

void *xb_big_malloc(size_t bytes)
{
	return hint(malloc(bytes), bytes);
}

void *xb_big_realloc(void *p, size_t bytes)
{
	return hint(realloc(p, bytes), bytes);
}
