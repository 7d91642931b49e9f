/*
 * Growable arrays of the conductors' and agents' tables (clients, links, subscriber positions, ...):
 * a pointer, a count and a capacity, grown by doubling when full. Grown only by the thread that owns
 * the table, off the message path.
 */
#ifndef AA_ARRAY_H
#define AA_ARRAY_H

#include <stdbool.h>
#include <stddef.h>

/* Makes room for one element more than `count` in *array (of *capacity elements of element_size
 * bytes): when it is full, doubles the capacity (the first time to 8). Returns 0, or -1 (ENOMEM)
 * with the array left as it was. */
int aa_array_ensure_capacity(void **array, size_t *capacity, size_t count, size_t element_size);
/* aa_array_ensure_capacity for a table declared as `name`, `name##_count` and `name##_capacity`
 * (a conductor's AA_DECLARE_ARRAY, an agent's tables) of elements of `type`. */
#define AA_ARRAY_ENSURE(name, type) \
    aa_array_ensure_capacity((void **)&name, &name##_capacity, name##_count, sizeof(type))
/* Removes the first of the *count elements of array equal (byte for byte) to *element: the last
 * element takes its place. Returns true when one was there. */
bool aa_array_remove(void *array, size_t *count, size_t element_size, const void *element);
/* Frees *array and leaves it empty: NULL, no elements, no capacity. */
void aa_array_free(void **array, size_t *capacity, size_t *count);
/* aa_array_free for a table declared as `name`, `name##_count` and `name##_capacity`. */
#define AA_ARRAY_FREE(name) aa_array_free((void **)&(name), &name##_capacity, &name##_count)

#endif
