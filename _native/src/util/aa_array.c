#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/aa_array.h"
#include "util/aa_error.h"

int aa_array_ensure_capacity(void **array, size_t *capacity, size_t count, size_t element_size)
{
    if (count < *capacity)
    {
        return 0;
    }
    size_t new_capacity = 0 == *capacity ? 8 : *capacity * 2;
    void *grown = realloc(*array, new_capacity * element_size);
    if (NULL == grown)
    {
        AA_SET_ERR(ENOMEM, "out of memory growing a table to %zu elements", new_capacity);
        return -1;
    }
    *array = grown;
    *capacity = new_capacity;
    return 0;
}

bool aa_array_remove(void *array, size_t *count, size_t element_size, const void *element)
{
    uint8_t *elements = array;
    for (size_t i = 0; i < *count; i++)
    {
        if (0 == memcmp(elements + i * element_size, element, element_size))
        {
            (*count)--;
            memmove(elements + i * element_size, elements + *count * element_size, element_size);
            return true;
        }
    }
    return false;
}

void aa_array_free(void **array, size_t *capacity, size_t *count)
{
    free(*array);
    *array = NULL;
    *capacity = 0;
    *count = 0;
}
