// Counts heap allocations by defining the allocator entry points in the executable, which the
// dynamic linker then resolves for every library (Swift runtime, Foundation, BoringSSL, NIO);
// each forwards to glibc's own implementation. Linux/glibc only; elsewhere it counts nothing.
// Built with `-Xcc -DALLOCATION_COUNTER_OFF` it interposes nothing, so that a heap profiler that
// interposes the allocator itself (heaptrack, valgrind) sees every allocation, BoringSSL's included.
#define _GNU_SOURCE 1  // dladdr's Dl_info
#include "AllocationCounter.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>  // defines __GLIBC__ on glibc
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#if defined(__linux__) && defined(__GLIBC__) && !defined(ALLOCATION_COUNTER_OFF)
#include <dlfcn.h>
#include <execinfo.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
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

// MARK: Live heap by call site (allocation_counter_sites_start / _report)
//
// While on, every allocation records its call stack (glibc's backtrace) in a table keyed by address,
// and every free removes it, so the report lists what is still allocated, grouped by where it was
// allocated — or, ranked by allocations made (mode 2), where an allocation count comes from. The tables are mmapped (not allocated through malloc); a thread-local flag keeps the
// tracker from tracking its own allocations (backtrace loads libgcc_s on first use). Slow: for
// finding where memory goes, not for timing.

enum { SITE_FRAMES = 14, SITE_SKIP = 2, SITE_SLOTS = 1 << 16, LIVE_SLOTS = 1 << 22 };

struct site {
    unsigned long long hash;
    int depth;
    void *frames[SITE_FRAMES];
    long long bytes;
    long long count;
    long long peak;  // the most bytes live at once
    long long made;  // allocations made here while tracking, freed or not
};

struct live {
    void *pointer;  // NULL: empty; (void *)1: deleted
    unsigned int site;
};

static _Atomic int sites_on = 0;
static atomic_flag sites_lock = ATOMIC_FLAG_INIT;
static struct site *site_table = NULL;
static struct live *live_table = NULL;
static __thread int in_tracker = 0;

static inline unsigned long long mix(unsigned long long value) {
    value ^= value >> 33;
    value *= 0xff51afd7ed558ccdULL;
    value ^= value >> 33;
    return value;
}

static void track_allocation(void *pointer) {
    if (pointer == NULL || !atomic_load_explicit(&sites_on, memory_order_relaxed) || in_tracker) return;
    in_tracker = 1;
    void *frames[SITE_FRAMES + SITE_SKIP];
    int depth = backtrace(frames, SITE_FRAMES + SITE_SKIP) - SITE_SKIP;
    if (depth < 0) depth = 0;
    unsigned long long hash = 1469598103934665603ULL;
    for (int index = 0; index < depth; index++) hash = mix(hash ^ (unsigned long long)frames[index + SITE_SKIP]);
    long long bytes = (long long)malloc_usable_size(pointer);
    while (atomic_flag_test_and_set_explicit(&sites_lock, memory_order_acquire)) {}
    unsigned int slot = (unsigned int)(hash & (SITE_SLOTS - 1));
    for (unsigned int probe = 0; probe < SITE_SLOTS; probe++, slot = (slot + 1) & (SITE_SLOTS - 1)) {
        struct site *site = &site_table[slot];
        if (site->depth == 0 && site->hash == 0) {
            site->hash = hash;
            site->depth = depth > 0 ? depth : 1;
            memcpy(site->frames, frames + SITE_SKIP, sizeof(void *) * (size_t)depth);
        }
        if (site->hash == hash) {
            site->bytes += bytes;
            site->count += 1;
            site->made += 1;
            if (site->bytes > site->peak) site->peak = site->bytes;
            unsigned int entry = (unsigned int)(mix((unsigned long long)pointer) & (LIVE_SLOTS - 1));
            unsigned int probes = 0;
            while (live_table[entry].pointer != NULL && live_table[entry].pointer != (void *)1 && ++probes < LIVE_SLOTS) entry = (entry + 1) & (LIVE_SLOTS - 1);
            if (probes < LIVE_SLOTS) {
                live_table[entry].pointer = pointer;
                live_table[entry].site = slot;
            }
            break;
        }
    }
    atomic_flag_clear_explicit(&sites_lock, memory_order_release);
    in_tracker = 0;
}

static void track_free(void *pointer) {
    if (pointer == NULL || site_table == NULL || in_tracker) return;
    long long bytes = (long long)malloc_usable_size(pointer);
    while (atomic_flag_test_and_set_explicit(&sites_lock, memory_order_acquire)) {}
    unsigned int entry = (unsigned int)(mix((unsigned long long)pointer) & (LIVE_SLOTS - 1));
    for (unsigned int probe = 0; probe < LIVE_SLOTS && live_table[entry].pointer != NULL; probe++, entry = (entry + 1) & (LIVE_SLOTS - 1)) {
        if (live_table[entry].pointer == pointer) {
            live_table[entry].pointer = (void *)1;
            site_table[live_table[entry].site].bytes -= bytes;
            site_table[live_table[entry].site].count -= 1;
            break;
        }
    }
    atomic_flag_clear_explicit(&sites_lock, memory_order_release);
}

void allocation_counter_sites_start(void) {
    if (site_table == NULL) {
        site_table = mmap(NULL, sizeof(struct site) * SITE_SLOTS, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        live_table = mmap(NULL, sizeof(struct live) * LIVE_SLOTS, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (site_table == MAP_FAILED || live_table == MAP_FAILED) {
            site_table = NULL;
            return;
        }
    } else {
        // A new recording: the kernel gives back the tables' pages zeroed, when next touched.
        madvise(site_table, sizeof(struct site) * SITE_SLOTS, MADV_DONTNEED);
        madvise(live_table, sizeof(struct live) * LIVE_SLOTS, MADV_DONTNEED);
    }
    void *frames[4];
    in_tracker = 1;
    (void)backtrace(frames, 4);  // loads the unwinder before tracking begins
    in_tracker = 0;
    atomic_store(&sites_on, 1);
}

static int report_mode = 0;  // 0: live bytes, 1: peak live bytes, 2: allocations made

// What a site is ranked by in the report (`mode` of allocation_counter_sites_report).
static long long ranked(const struct site *site) {
    switch (report_mode) {
        case 1: return site->peak;
        case 2: return site->made;
        default: return site->bytes;
    }
}

static int by_bytes(const void *left, const void *right) {
    long long a = ranked(&site_table[*(const unsigned int *)left]), b = ranked(&site_table[*(const unsigned int *)right]);
    return a < b ? 1 : (a > b ? -1 : 0);
}

static const char *const report_titles[] = {"live heap allocated while tracking", "sum of each call site's peak live heap while tracking",
                                             "allocations made while tracking"};

void allocation_counter_sites_report(int top, long long divisor, int mode) {
    report_mode = mode >= 0 && mode <= 2 ? mode : 0;
    atomic_store(&sites_on, 0);
    if (site_table == NULL) return;
    in_tracker = 1;
    static unsigned int order[SITE_SLOTS];
    int used = 0;
    long long total = 0;
    for (unsigned int slot = 0; slot < SITE_SLOTS; slot++) {
        if (site_table[slot].depth > 0 && ranked(&site_table[slot]) > 0) {
            order[used++] = slot;
            total += ranked(&site_table[slot]);
        }
    }
    qsort(order, (size_t)used, sizeof(unsigned int), by_bytes);
    if (divisor < 1) divisor = 1;
    const char *unit = report_mode == 2 ? "allocations" : "bytes";
    fprintf(stderr, "%s: %lld %s (%.1f per unit) at %d call sites\n", report_titles[report_mode], total, unit, (double)total / (double)divisor, used);
    for (int rank = 0; rank < used && rank < top; rank++) {
        struct site *site = &site_table[order[rank]];
        long long shown = ranked(site);
        fprintf(stderr, "#%d %lld %s (%.2f per unit), %lld blocks still live (%.2f per unit)\n", rank + 1, shown, unit, (double)shown / (double)divisor,
                site->count, (double)site->count / (double)divisor);
        for (int index = 0; index < site->depth; index++) {
            Dl_info info;
            // Module and offset, for a symbolizer (symbols of the executable itself are not in its dynamic table).
            if (dladdr(site->frames[index], &info) && info.dli_fname != NULL) {
                fprintf(stderr, "    %s %s+0x%lx\n", info.dli_sname != NULL ? info.dli_sname : "?", info.dli_fname,
                        (unsigned long)((char *)site->frames[index] - (char *)info.dli_fbase));
            } else {
                fprintf(stderr, "    %p\n", site->frames[index]);
            }
        }
    }
    in_tracker = 0;
}

INTERPOSED void *malloc(size_t size) {
    count_one();
    void *pointer = __libc_malloc(size);
    track_allocation(pointer);
    return pointer;
}

INTERPOSED void *calloc(size_t count, size_t size) {
    count_one();
    void *pointer = __libc_calloc(count, size);
    track_allocation(pointer);
    return pointer;
}

INTERPOSED void *realloc(void *pointer, size_t size) {
    if (pointer == NULL) count_one();
    track_free(pointer);
    void *moved = __libc_realloc(pointer, size);
    track_allocation(moved);
    return moved;
}

INTERPOSED void free(void *pointer) {
    track_free(pointer);
    __libc_free(pointer);
}

INTERPOSED void *memalign(size_t alignment, size_t size) {
    count_one();
    void *pointer = __libc_memalign(alignment, size);
    track_allocation(pointer);
    return pointer;
}

INTERPOSED void *aligned_alloc(size_t alignment, size_t size) {
    count_one();
    void *pointer = __libc_memalign(alignment, size);
    track_allocation(pointer);
    return pointer;
}

INTERPOSED int posix_memalign(void **result, size_t alignment, size_t size) {
    count_one();
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    track_allocation(pointer);
    *result = pointer;
    return 0;
}

long long allocation_counter_count(void) { return atomic_load_explicit(&allocations, memory_order_relaxed); }

#else
long long allocation_counter_count(void) { return -1; }
void allocation_counter_sites_start(void) {}
void allocation_counter_sites_report(int top, long long divisor, int mode) {}
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
