#ifndef ALLOCATION_COUNTER_H
#define ALLOCATION_COUNTER_H

/// Heap allocations (malloc, calloc, realloc of NULL, posix_memalign, aligned_alloc, memalign)
/// made by this process since it started, counted by interposing glibc's allocator.
long long allocation_counter_count(void);

#endif
