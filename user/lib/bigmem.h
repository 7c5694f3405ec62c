/* bigmem.h - the large arrays of a policy compile (a million entries is tens of MiB in each of
 * several lists) asked for huge pages. On this kind of virtual machine a 4 KiB page fault costs
 * microseconds, and a 1M-prefix compile spent about a seventh of its time in them; a 2 MiB
 * page takes the place of 512. Only a hint (madvise MADV_HUGEPAGE, which transparent huge
 * pages in their default "madvise" mode honour): where they are off, nothing changes. */
#ifndef XDPBAN_BIGMEM_H
#define XDPBAN_BIGMEM_H

#include <stddef.h>

/* malloc and realloc, with the hint for blocks of 2 MiB and more. */
void *xb_big_malloc(size_t bytes);
void *xb_big_realloc(void *p, size_t bytes);

#endif /* XDPBAN_BIGMEM_H */
