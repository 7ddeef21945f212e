#ifndef ALLOCATION_COUNTER_H
#define ALLOCATION_COUNTER_H

/// Heap allocations (malloc, calloc, realloc of NULL, posix_memalign, aligned_alloc, memalign)
/// made by this process since it started, counted by interposing glibc's allocator.
long long allocation_counter_count(void);

/// Bytes the heap has handed out and not had back (glibc's mallinfo2: uordblks + hblkhd), all arenas.
long long allocation_counter_heap_in_use(void);

/// Bytes free in the heap but kept by malloc for reuse (mallinfo2: fordblks).
long long allocation_counter_heap_free(void);

/// Returns the heap's free pages to the kernel (malloc_trim(0)).
void allocation_counter_trim(void);

/// Prints each malloc arena's size and bytes in use to standard error (glibc's malloc_stats).
void allocation_counter_print_arenas(void);

/// Starts recording, for every allocation from now on, where it was made (its call stack); frees remove
/// it. Each call starts a new recording, forgetting the last. Slow; nothing on Linux/glibc builds with
/// ALLOCATION_COUNTER_OFF or elsewhere.
void allocation_counter_sites_start(void);

/// Stops recording and prints to standard error the `top` call sites holding the most bytes still
/// allocated (`mode` 0), that held the most at once while recording (`mode` 1: transient memory), or that
/// made the most allocations while recording, freed or not (`mode` 2: where an allocation count comes from),
/// with figures per unit (`divisor`: e.g. the number of connections or requests).
void allocation_counter_sites_report(int top, long long divisor, int mode);

#endif
