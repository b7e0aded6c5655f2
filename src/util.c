/* util.c: integer tuple comparison, growable arrays, freeing several allocations, name lookup. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__ /* defined by the headers above */
#include <malloc.h>
#endif

#include "util.h"

int cs_cmp_ints(const int *x, const int *y, int n)
{
    for (int i = 0; i < n; i++)
        if (x[i] != y[i])
            return cs_cmp_ll(x[i], y[i]);
    return 0;
}

void *cs_array_slot(void **arr, int n, int *cap, size_t size)
{
    if (n == *cap) {
        int ncap = *cap ? *cap * 2 : 8;
        void *p = realloc(*arr, (size_t)ncap * size);

        if (p == NULL)
            return NULL;
        *arr = p;
        *cap = ncap;
    }
    memset((char *)*arr + (size_t)n * size, 0, size);
    return (char *)*arr + (size_t)n * size;
}

void cs_give_back_memory(void)
{
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

void cs_free_each(int n, ...)
{
    va_list ap;

    va_start(ap, n);
    while (n-- > 0)
        free(va_arg(ap, void *));
    va_end(ap);
}

int cs_name_index(char *const *names, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}
