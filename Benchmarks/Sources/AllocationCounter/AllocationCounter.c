// Counts heap allocations by defining the allocator entry points in the executable, which the
// dynamic linker then resolves for every library (Swift runtime, Foundation, BoringSSL, NIO);
// each forwards to glibc's own implementation. Linux/glibc only; elsewhere it counts nothing.
// Built with `-Xcc -DALLOCATION_COUNTER_OFF` it interposes nothing, so that a heap profiler that
// interposes the allocator itself (heaptrack, valgrind) sees every allocation, BoringSSL's included.
#include "AllocationCounter.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>  // defines __GLIBC__ on glibc
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#if defined(__linux__) && defined(__GLIBC__) && !defined(ALLOCATION_COUNTER_OFF)

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void __libc_free(void *pointer);
extern void *__libc_memalign(size_t alignment, size_t size);

static _Atomic long long allocations = 0;

// `used, retain`: nothing in the program calls these by name, so the linker's dead-code stripping
// would otherwise drop them and the interposition with them.
#define INTERPOSED __attribute__((used, retain, visibility("default")))

static inline void count_one(void) { atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed); }

INTERPOSED void *malloc(size_t size) {
    count_one();
    return __libc_malloc(size);
}

INTERPOSED void *calloc(size_t count, size_t size) {
    count_one();
    return __libc_calloc(count, size);
}

INTERPOSED void *realloc(void *pointer, size_t size) {
    if (pointer == NULL) count_one();
    return __libc_realloc(pointer, size);
}

INTERPOSED void free(void *pointer) { __libc_free(pointer); }

INTERPOSED void *memalign(size_t alignment, size_t size) {
    count_one();
    return __libc_memalign(alignment, size);
}

INTERPOSED void *aligned_alloc(size_t alignment, size_t size) {
    count_one();
    return __libc_memalign(alignment, size);
}

INTERPOSED int posix_memalign(void **result, size_t alignment, size_t size) {
    count_one();
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *result = pointer;
    return 0;
}

long long allocation_counter_count(void) { return atomic_load_explicit(&allocations, memory_order_relaxed); }

#else
long long allocation_counter_count(void) { return -1; }
#endif

#if defined(__linux__) && defined(__GLIBC__)
long long allocation_counter_heap_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return (long long)(info.uordblks + info.hblkhd);
}

long long allocation_counter_heap_free(void) { return (long long)mallinfo2().fordblks; }

void allocation_counter_trim(void) { malloc_trim(0); }

void allocation_counter_print_arenas(void) { malloc_stats(); }
#else
long long allocation_counter_heap_in_use(void) { return -1; }
long long allocation_counter_heap_free(void) { return -1; }
void allocation_counter_trim(void) {}
void allocation_counter_print_arenas(void) {}
#endif
