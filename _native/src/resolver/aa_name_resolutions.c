/* The name resolution results table (aa_name_resolutions.h). */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "resolver/aa_name_resolutions.h"
#include "util/aa_error.h"

_Static_assert(sizeof(aa_name_resolution_entry_t) == AA_NAME_RESOLUTIONS_ENTRY_LENGTH, "entry layout");
_Static_assert(offsetof(aa_name_resolution_entry_t, name) == 160, "entry layout");

#define AA_NAME_RESOLUTIONS_COUNT_OFFSET 16

static uint8_t *aa_name_resolutions_header(aa_name_resolutions_t *table)
{
    return (uint8_t *)table->file.addr;
}

static aa_name_resolution_entry_t *aa_name_resolutions_entry(aa_name_resolutions_t *table, int32_t index)
{
    return (aa_name_resolution_entry_t *)(aa_name_resolutions_header(table) + AA_NAME_RESOLUTIONS_HEADER_LENGTH +
        (size_t)index * AA_NAME_RESOLUTIONS_ENTRY_LENGTH);
}

int aa_name_resolutions_init(
    aa_name_resolutions_t *table, const char *aeron_dir, const aa_fs_access_t *access, const char *resolver_name,
    int64_t now_ms)
{
    char path[PATH_MAX];
    memset(table, 0, sizeof(*table));
    snprintf(path, sizeof(path), "%s/%s", aeron_dir, AA_NAME_RESOLUTIONS_FILE);
    size_t length = AA_NAME_RESOLUTIONS_HEADER_LENGTH + (size_t)AA_NAME_RESOLUTIONS_CAPACITY * AA_NAME_RESOLUTIONS_ENTRY_LENGTH;
    if (aa_map_new_file(&table->file, path, length, "name resolutions table", "give the aeron directory more room",
            access) < 0)
    {
        AA_APPEND_ERR("%s", "creating the name resolutions table");
        return -1;
    }
    uint8_t *h = aa_name_resolutions_header(table);
    int32_t v32;
    v32 = AA_NAME_RESOLUTIONS_VERSION;
    memcpy(h + 4, &v32, 4);
    v32 = AA_NAME_RESOLUTIONS_ENTRY_LENGTH;
    memcpy(h + 8, &v32, 4);
    v32 = AA_NAME_RESOLUTIONS_CAPACITY;
    memcpy(h + 12, &v32, 4);
    v32 = (int32_t)getpid();
    memcpy(h + 20, &v32, 4);
    memcpy(h + 24, &now_ms, 8);
    snprintf((char *)h + 32, 64, "%s", NULL != resolver_name ? resolver_name : "default");
    __atomic_store_n((int32_t *)h, AA_NAME_RESOLUTIONS_MAGIC, __ATOMIC_RELEASE);
    return 0;
}

void aa_name_resolutions_close(aa_name_resolutions_t *table)
{
    if (NULL != table->file.addr)
    {
        aa_unmap(&table->file);
    }
    memset(table, 0, sizeof(*table));
}

/* The entry for (name, key): found, else a new one, else (full) the one resolved longest ago. */
static aa_name_resolution_entry_t *aa_name_resolutions_slot(
    aa_name_resolutions_t *table, const char *name, const char *key, bool *is_new)
{
    aa_name_resolution_entry_t *oldest = NULL;
    for (int32_t i = 0; i < table->count; i++)
    {
        aa_name_resolution_entry_t *e = aa_name_resolutions_entry(table, i);
        if (0 == strncmp(e->name, name, sizeof(e->name)) && 0 == strncmp(e->key, key, sizeof(e->key)))
        {
            *is_new = false;
            return e;
        }
        if (NULL == oldest || e->last_resolution_ms < oldest->last_resolution_ms)
        {
            oldest = e;
        }
    }
    *is_new = true;
    if (table->count < AA_NAME_RESOLUTIONS_CAPACITY)
    {
        return aa_name_resolutions_entry(table, table->count);
    }
    table->evictions++;
    return oldest;
}

static void aa_name_resolutions_publish(aa_name_resolutions_t *table, aa_name_resolution_entry_t *e)
{
    if (e == aa_name_resolutions_entry(table, table->count))
    {
        table->count++;
        __atomic_store_n((int32_t *)(aa_name_resolutions_header(table) + AA_NAME_RESOLUTIONS_COUNT_OFFSET), table->count,
            __ATOMIC_RELEASE);
    }
}

static aa_name_resolution_entry_t *aa_name_resolutions_begin(
    aa_name_resolutions_t *table, const char *name, const char *key, bool *is_new)
{
    if (NULL == table || NULL == table->file.addr || NULL == name || NULL == key)
    {
        return NULL;
    }
    aa_name_resolution_entry_t *e = aa_name_resolutions_slot(table, name, key, is_new);
    int64_t sequence = e->sequence;
    __atomic_store_n(&e->sequence, sequence + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    if (*is_new)
    {
        memset((uint8_t *)e + sizeof(e->sequence), 0, sizeof(*e) - sizeof(e->sequence));
        snprintf(e->name, sizeof(e->name), "%s", name);
        snprintf(e->key, sizeof(e->key), "%s", key);
    }
    return e;
}

static void aa_name_resolutions_end(aa_name_resolutions_t *table, aa_name_resolution_entry_t *e)
{
    __atomic_store_n(&e->sequence, e->sequence + 1, __ATOMIC_RELEASE);
    aa_name_resolutions_publish(table, e);
}

int aa_name_resolutions_record(
    aa_name_resolutions_t *table, const char *name, const char *key, const struct sockaddr_storage *address,
    const char *source, int64_t now_ms)
{
    char text[AA_UDP_ADDRESS_FORMAT_MAX_LENGTH];
    if (NULL == address || aa_udp_address_format(text, sizeof(text), address) < 0)
    {
        return -1;
    }
    bool is_new = false;
    aa_name_resolution_entry_t *e = aa_name_resolutions_begin(table, name, key, &is_new);
    if (NULL == e)
    {
        return -1;
    }
    int changed = 0;
    if (is_new || '\0' == e->address[0])
    {
        e->first_resolution_ms = now_ms;
    }
    else if (0 != strcmp(e->address, text))
    {
        e->change_count++;
        changed = 1;
    }
    snprintf(e->address, sizeof(e->address), "%s", text);
    snprintf(e->source, sizeof(e->source), "%s", NULL != source ? source : "");
    e->last_resolution_ms = now_ms;
    e->state = AA_NAME_RESOLUTION_STATE_RESOLVED;
    aa_name_resolutions_end(table, e);
    return changed;
}

int aa_name_resolutions_record_failure(
    aa_name_resolutions_t *table, const char *name, const char *key, const char *source, const char *error,
    int64_t now_ms)
{
    bool is_new = false;
    aa_name_resolution_entry_t *e = aa_name_resolutions_begin(table, name, key, &is_new);
    if (NULL == e)
    {
        return -1;
    }
    e->failure_count++;
    e->state = AA_NAME_RESOLUTION_STATE_FAILED;
    e->last_resolution_ms = now_ms;
    snprintf(e->source, sizeof(e->source), "%s", NULL != source ? source : "");
    snprintf(e->error, sizeof(e->error), "%s", NULL != error ? error : "");
    aa_name_resolutions_end(table, e);
    return 0;
}
