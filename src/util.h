/* util.h: small helpers of every module: lexicographic comparison of integer tuples, the next
 * element of a growable array, freeing several allocations at once, a name's index in a list. */
#ifndef CS_UTIL_H
#define CS_UTIL_H

#include <stddef.h>

/* -1, 0 or 1 as x sorts before, with or after y: the one comparison every qsort comparator of
 * the library chains, key by key (c = cs_cmp_ll(...); if (c == 0) c = ...). */
static inline int cs_cmp_ll(long long x, long long y)
{
    return (x > y) - (x < y);
}

static inline int cs_cmp_dbl(double x, double y)
{
    return (x > y) - (x < y);
}

/* -1, 0 or 1 as the n-tuple x sorts before, with or after y (first element most significant). */
int cs_cmp_ints(const int *x, const int *y, int n);

/* Element n of the array *arr (capacity *cap elements of size bytes), zeroed: when n == *cap the
 * array doubles first (8 elements at the start). The caller then counts the element. NULL when
 * memory runs out, the array unchanged. */
void *cs_array_slot(void **arr, int n, int *cap, size_t size);

/* free() each of the n pointers that follow (NULL ones too). */
void cs_free_each(int n, ...);

/* Hand the heap's free pages back to the system (glibc's malloc_trim; nothing elsewhere): after
 * millions of small blocks are freed in the middle of the heap, which free() alone keeps
 * resident. */
void cs_give_back_memory(void);

/* The index of name among names[0..n), or -1. */
int cs_name_index(char *const *names, int n, const char *name);

#endif
