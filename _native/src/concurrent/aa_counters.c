#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "concurrent/aa_counters.h"
#include "concurrent/aa_atomic.h"
#include "util/aa_error.h"

#define AA_META(m, id) ((m)->metadata + (size_t)(id) * AA_COUNTER_METADATA_LENGTH)
#define AA_VALUE(m, id) ((m)->values + (size_t)(id) * AA_COUNTER_VALUE_LENGTH)

int aa_counters_manager_init(
    aa_counters_manager_t *m, uint8_t *metadata, size_t metadata_length, uint8_t *values, size_t values_length,
    int64_t free_to_reuse_timeout_ms)
{
    if (metadata_length < values_length * (AA_COUNTER_METADATA_LENGTH / AA_COUNTER_VALUE_LENGTH) ||
        0 != values_length % AA_COUNTER_VALUE_LENGTH || 0 == values_length)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "counters metadata (%zu bytes) must be at least 4x the values length (%zu bytes, a multiple of 128)",
            metadata_length, values_length);
        return -1;
    }
    memset(m, 0, sizeof(*m));
    m->values = values;
    m->values_length = values_length;
    m->metadata = metadata;
    m->metadata_length = metadata_length;
    m->max_counter_id = (int32_t)(values_length / AA_COUNTER_VALUE_LENGTH) - 1;
    m->id_high_water_mark = -1;
    m->free_to_reuse_timeout_ms = free_to_reuse_timeout_ms;
    m->free_list = malloc(sizeof(int32_t) * (size_t)(m->max_counter_id + 1));
    if (NULL == m->free_list)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory for the counters free list");
        return -1;
    }
    return 0;
}

void aa_counters_manager_close(aa_counters_manager_t *m)
{
    free(m->free_list);
    m->free_list = NULL;
    m->free_list_length = 0;
}

static int32_t aa_counters_manager_next_id(aa_counters_manager_t *m, int64_t now_ms)
{
    for (int32_t i = 0; i < m->free_list_length; i++)
    {
        int32_t id = m->free_list[i];
        int64_t deadline = aa_get_int64_volatile(
            (volatile int64_t *)(AA_META(m, id) + AA_COUNTER_FREE_FOR_REUSE_DEADLINE_OFFSET));
        if (now_ms >= deadline)
        {
            memmove(&m->free_list[i], &m->free_list[i + 1], sizeof(int32_t) * (size_t)(m->free_list_length - i - 1));
            m->free_list_length--;
            return id;
        }
    }
    if (m->id_high_water_mark + 1 > m->max_counter_id)
    {
        return -1;
    }
    return ++m->id_high_water_mark;
}

int32_t aa_counters_manager_allocate(
    aa_counters_manager_t *m, int64_t now_ms, int32_t type_id, const uint8_t *key, size_t key_length,
    const char *label, size_t label_length)
{
    int32_t id = aa_counters_manager_next_id(m, now_ms);
    if (id < 0)
    {
        AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR,
            "no counters left (%d in use); raise AERON_COUNTERS_BUFFER_LENGTH", m->max_counter_id + 1);
        return -1;
    }
    uint8_t *meta = AA_META(m, id);
    uint8_t *value = AA_VALUE(m, id);
    aa_put_int64_volatile((volatile int64_t *)value, 0);
    memset(value + AA_COUNTER_REGISTRATION_ID_OFFSET, 0, AA_COUNTER_VALUE_LENGTH - AA_COUNTER_REGISTRATION_ID_OFFSET);
    *(int32_t *)(meta + AA_COUNTER_TYPE_ID_OFFSET) = type_id;
    *(int64_t *)(meta + AA_COUNTER_FREE_FOR_REUSE_DEADLINE_OFFSET) = AA_COUNTER_NOT_FREE_TO_REUSE;
    memset(meta + AA_COUNTER_KEY_OFFSET, 0, AA_COUNTER_KEY_MAX_LENGTH);
    if (NULL != key && key_length > 0)
    {
        memcpy(meta + AA_COUNTER_KEY_OFFSET, key, key_length < AA_COUNTER_KEY_MAX_LENGTH ? key_length : AA_COUNTER_KEY_MAX_LENGTH);
    }
    size_t n = label_length < AA_COUNTER_LABEL_MAX_LENGTH ? label_length : AA_COUNTER_LABEL_MAX_LENGTH;
    memset(meta + AA_COUNTER_LABEL_OFFSET, 0, AA_COUNTER_LABEL_MAX_LENGTH);
    memcpy(meta + AA_COUNTER_LABEL_OFFSET, label, n);
    *(int32_t *)(meta + AA_COUNTER_LABEL_LENGTH_OFFSET) = (int32_t)n;
    aa_put_int32_release((volatile int32_t *)meta, AA_COUNTER_RECORD_ALLOCATED);
    return id;
}

void aa_counters_manager_free(aa_counters_manager_t *m, int64_t now_ms, int32_t counter_id)
{
    if (counter_id < 0 || counter_id > m->id_high_water_mark)
    {
        return;
    }
    uint8_t *meta = AA_META(m, counter_id);
    if (AA_COUNTER_RECORD_ALLOCATED != aa_get_int32_volatile((volatile int32_t *)meta))
    {
        return;
    }
    aa_put_int64_volatile((volatile int64_t *)(meta + AA_COUNTER_FREE_FOR_REUSE_DEADLINE_OFFSET),
        now_ms + m->free_to_reuse_timeout_ms);
    aa_put_int32_release((volatile int32_t *)meta, AA_COUNTER_RECORD_RECLAIMED);
    m->free_list[m->free_list_length++] = counter_id;
}

void aa_counter_set_registration_id(aa_counters_manager_t *m, int32_t counter_id, int64_t registration_id)
{
    aa_put_int64_release((volatile int64_t *)(AA_VALUE(m, counter_id) + AA_COUNTER_REGISTRATION_ID_OFFSET), registration_id);
}

void aa_counter_set_owner_id(aa_counters_manager_t *m, int32_t counter_id, int64_t owner_id)
{
    aa_put_int64_release((volatile int64_t *)(AA_VALUE(m, counter_id) + AA_COUNTER_OWNER_ID_OFFSET), owner_id);
}

void aa_counter_set_reference_id(aa_counters_manager_t *m, int32_t counter_id, int64_t reference_id)
{
    aa_put_int64_release((volatile int64_t *)(AA_VALUE(m, counter_id) + AA_COUNTER_REFERENCE_ID_OFFSET), reference_id);
}

void aa_counters_manager_append_to_label(aa_counters_manager_t *m, int32_t counter_id, const char *text, size_t length)
{
    uint8_t *meta = AA_META(m, counter_id);
    int32_t current = *(volatile int32_t *)(meta + AA_COUNTER_LABEL_LENGTH_OFFSET);
    if (current < 0 || current > AA_COUNTER_LABEL_MAX_LENGTH)
    {
        current = AA_COUNTER_LABEL_MAX_LENGTH;    /* written by another writer of the CnC file: append nothing */
    }
    size_t room = AA_COUNTER_LABEL_MAX_LENGTH - (size_t)current;
    size_t n = length < room ? length : room;
    memcpy(meta + AA_COUNTER_LABEL_OFFSET + current, text, n);
    aa_put_int32_release((volatile int32_t *)(meta + AA_COUNTER_LABEL_LENGTH_OFFSET), current + (int32_t)n);
}

void aa_counters_reader_init(
    aa_counters_reader_t *r, uint8_t *metadata, size_t metadata_length, uint8_t *values, size_t values_length)
{
    r->values = values;
    r->values_length = values_length;
    r->metadata = metadata;
    r->metadata_length = metadata_length;
    /* both buffers bound the ids: a CnC header that lies about one cannot send a read past the other */
    size_t count = values_length / AA_COUNTER_VALUE_LENGTH;
    if (metadata_length / AA_COUNTER_METADATA_LENGTH < count)
    {
        count = metadata_length / AA_COUNTER_METADATA_LENGTH;
    }
    r->max_counter_id = (int32_t)count - 1;
}

int32_t aa_counters_reader_counter_state(aa_counters_reader_t *r, int32_t counter_id)
{
    if (counter_id < 0 || counter_id > r->max_counter_id)
    {
        return AA_COUNTER_RECORD_UNUSED;
    }
    return aa_get_int32_acquire((volatile int32_t *)AA_META(r, counter_id));
}

int32_t aa_counters_reader_counter_type_id(aa_counters_reader_t *r, int32_t counter_id)
{
    return *(volatile int32_t *)(AA_META(r, counter_id) + AA_COUNTER_TYPE_ID_OFFSET);
}

int64_t aa_counters_reader_counter_registration_id(aa_counters_reader_t *r, int32_t counter_id)
{
    return aa_get_int64_acquire((volatile int64_t *)(AA_VALUE(r, counter_id) + AA_COUNTER_REGISTRATION_ID_OFFSET));
}

int64_t aa_counters_reader_counter_owner_id(aa_counters_reader_t *r, int32_t counter_id)
{
    return aa_get_int64_acquire((volatile int64_t *)(AA_VALUE(r, counter_id) + AA_COUNTER_OWNER_ID_OFFSET));
}

int32_t aa_counters_reader_counter_label(aa_counters_reader_t *r, int32_t counter_id, char *buf, size_t buf_length)
{
    const uint8_t *meta = AA_META(r, counter_id);
    int32_t length = aa_get_int32_acquire((volatile int32_t *)(meta + AA_COUNTER_LABEL_LENGTH_OFFSET));
    if (length < 0 || length > AA_COUNTER_LABEL_MAX_LENGTH)
    {
        length = 0;
    }
    size_t n = (size_t)length < buf_length - 1 ? (size_t)length : buf_length - 1;
    memcpy(buf, meta + AA_COUNTER_LABEL_OFFSET, n);
    buf[n] = '\0';
    return (int32_t)n;
}

void aa_counters_reader_foreach(aa_counters_reader_t *r, aa_counters_foreach_func_t func, void *clientd)
{
    for (int32_t id = 0; id <= r->max_counter_id; id++)
    {
        int32_t state = aa_counters_reader_counter_state(r, id);
        if (AA_COUNTER_RECORD_UNUSED == state)
        {
            break;
        }
        if (AA_COUNTER_RECORD_ALLOCATED == state)
        {
            const uint8_t *meta = AA_META(r, id);
            int32_t label_length = *(const volatile int32_t *)(meta + AA_COUNTER_LABEL_LENGTH_OFFSET);
            label_length = label_length < 0 || label_length > AA_COUNTER_LABEL_MAX_LENGTH ? 0 : label_length;
            func(aa_get_int64_acquire(aa_counters_reader_addr(r, id)), id, aa_counters_reader_counter_type_id(r, id),
                meta + AA_COUNTER_KEY_OFFSET, AA_COUNTER_KEY_MAX_LENGTH, (const char *)(meta + AA_COUNTER_LABEL_OFFSET),
                (size_t)label_length, clientd);
        }
    }
}

int32_t aa_counters_reader_find_by_type_id_and_registration_id(
    aa_counters_reader_t *r, int32_t type_id, int64_t registration_id)
{
    for (int32_t id = 0; id <= r->max_counter_id; id++)
    {
        int32_t state = aa_counters_reader_counter_state(r, id);
        if (AA_COUNTER_RECORD_UNUSED == state)
        {
            break;
        }
        if (AA_COUNTER_RECORD_ALLOCATED == state && type_id == aa_counters_reader_counter_type_id(r, id) &&
            registration_id == aa_counters_reader_counter_registration_id(r, id))
        {
            return id;
        }
    }
    return AA_NULL_COUNTER_ID;
}
