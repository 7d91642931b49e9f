/* The archive catalog: Aeron's archive.catalog, memory-mapped, appended and updated in place. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive/aa_archive_catalog.h"
#include "archive/aa_archive_segment.h"
#include "util/aa_error.h"
#include "util/aa_fs.h"
#include "util/aa_bytes.h"
#include "util/aa_fs.h"

/* a catalog header with alignment 0 is the legacy layout: 1024-byte entries from offset 1024 */
#define AA_ARCHIVE_CATALOG_LEGACY_ALIGNMENT 1024
#define AA_PAGE 4096

/* RecordingDescriptor field offsets (in the descriptor, after its 32-byte header) */
#define AA_RD_CONTROL_SESSION_ID 0
#define AA_RD_CORRELATION_ID 8
#define AA_RD_STOP_TIMESTAMP 32
#define AA_RD_START_POSITION 40
#define AA_RD_STOP_POSITION 48
#define AA_RD_SESSION_ID 72

typedef struct aa_catalog_index_entry_stct
{
    int64_t recording_id;
    int32_t offset;
}
aa_catalog_index_entry_t;

struct aa_archive_catalog_stct
{
    char dir[PATH_MAX];
    char path[PATH_MAX];
    int fd;
    uint8_t *map;
    size_t capacity;
    bool read_only;
    int32_t sync_level;
    int32_t checksum_type;
    int32_t alignment;
    int32_t first_offset;
    int32_t next_offset;
    int64_t next_recording_id;
    int32_t repaired;
    aa_catalog_index_entry_t *index;
    int32_t count;
    int32_t index_capacity;
    bool ids_ascending;
};

static int32_t aa_align(int64_t value, int32_t alignment)
{
    return (int32_t)((value + alignment - 1) & ~(int64_t)(alignment - 1));
}

/* forces [offset, offset + length) of the mapping at sync level >= 1 */
static int aa_catalog_force(aa_archive_catalog_t *catalog, size_t offset, size_t length)
{
    if (catalog->sync_level < AA_ARCHIVE_SYNC_DATA || catalog->read_only)
    {
        return 0;
    }
    size_t start = offset & ~(size_t)(AA_PAGE - 1);
    if (msync(catalog->map + start, offset + length - start, MS_SYNC) < 0)
    {
        AA_SET_ERR(errno, "msync of %s failed: %s", catalog->path, strerror(errno));
        return -1;
    }
    if (catalog->sync_level >= AA_ARCHIVE_SYNC_DATA_AND_METADATA && fsync(catalog->fd) < 0)
    {
        AA_SET_ERR(errno, "fsync of %s failed: %s", catalog->path, strerror(errno));
        return -1;
    }
    return 0;
}

static int aa_catalog_index_add(aa_archive_catalog_t *catalog, int64_t recording_id, int32_t offset)
{
    if (catalog->count == catalog->index_capacity)
    {
        int32_t capacity = catalog->index_capacity < 16 ? 16 : catalog->index_capacity * 2;
        aa_catalog_index_entry_t *grown = realloc(catalog->index, sizeof(*grown) * (size_t)capacity);
        if (NULL == grown)
        {
            AA_SET_ERR(ENOMEM, "%s", "out of memory for the catalog index");
            return -1;
        }
        catalog->index = grown;
        catalog->index_capacity = capacity;
    }
    if (catalog->count > 0 && catalog->index[catalog->count - 1].recording_id >= recording_id)
    {
        catalog->ids_ascending = false;
    }
    catalog->index[catalog->count].recording_id = recording_id;
    catalog->index[catalog->count].offset = offset;
    catalog->count++;
    return 0;
}

static int32_t aa_catalog_index_find(const aa_archive_catalog_t *catalog, int64_t recording_id)
{
    if (catalog->ids_ascending)
    {
        int32_t low = 0, high = catalog->count - 1;
        while (low <= high)
        {
            int32_t mid = low + (high - low) / 2;
            int64_t id = catalog->index[mid].recording_id;
            if (id == recording_id)
            {
                return mid;
            }
            if (id < recording_id)
            {
                low = mid + 1;
            }
            else
            {
                high = mid - 1;
            }
        }
        return -1;
    }
    for (int32_t i = 0; i < catalog->count; i++)
    {
        if (catalog->index[i].recording_id == recording_id)
        {
            return i;
        }
    }
    return -1;
}

/* decodes the entry at offset: 0, or -1 when it is not a well-formed entry (error set) */
static int aa_catalog_read_entry(const aa_archive_catalog_t *catalog, int32_t offset, aa_archive_catalog_entry_t *entry)
{
    const uint8_t *h = catalog->map + offset;
    int32_t length = aa_get_i32(h);
    int32_t state = aa_get_i32(h + 4);
    if (length <= 0 || 0 != (((int64_t)length + AA_ARCHIVE_CATALOG_DESCRIPTOR_HEADER_LENGTH) % catalog->alignment) ||
        (size_t)offset + AA_ARCHIVE_CATALOG_DESCRIPTOR_HEADER_LENGTH + (size_t)length > catalog->capacity)
    {
        AA_SET_ERR(AA_ERROR_CODE_MALFORMED_COMMAND, "catalog entry at offset %d has length %d, not a descriptor "
            "of alignment %d within the %zu-byte file", offset, length, catalog->alignment, catalog->capacity);
        return -1;
    }
    if (state < AA_ARCHIVE_RECORDING_INVALID || state > AA_ARCHIVE_RECORDING_DELETED)
    {
        AA_SET_ERR(AA_ERROR_CODE_MALFORMED_COMMAND, "catalog entry at offset %d has state %d", offset, state);
        return -1;
    }
    aa_archive_message_t msg;
    const uint8_t *descriptor = h + AA_ARCHIVE_CATALOG_DESCRIPTOR_HEADER_LENGTH;
    int64_t n = aa_archive_decode_body(descriptor, (size_t)length, AA_ARCHIVE_TEMPLATE_RECORDING_DESCRIPTOR,
        AA_ARCHIVE_RECORDING_DESCRIPTOR_BLOCK_LENGTH, AA_ARCHIVE_SCHEMA_VERSION, &msg);
    if (n < 0)
    {
        AA_APPEND_ERR("catalog entry at offset %d", offset);
        return -1;
    }
    entry->recording_id = msg.recording_descriptor.recording_id;
    entry->offset = offset;
    entry->length = length;
    entry->state = state;
    entry->checksum = aa_get_i32(h + 8);
    entry->descriptor = descriptor;
    entry->encoded_length = (int32_t)n;
    entry->fields = msg.recording_descriptor;
    return 0;
}

/* zeroes [offset, capacity) where it is not zero already (so untouched pages are not dirtied);
 * whether anything was not zero */
static bool aa_catalog_zero_tail(aa_archive_catalog_t *catalog, size_t offset)
{
    size_t end = catalog->capacity;
    bool dirty = false;
    while (offset < end)
    {
        size_t chunk_end = (offset & ~(size_t)(AA_PAGE - 1)) + AA_PAGE;
        if (chunk_end > end)
        {
            chunk_end = end;
        }
        for (size_t i = offset; i < chunk_end; i++)
        {
            if (0 != catalog->map[i])
            {
                memset(catalog->map + offset, 0, chunk_end - offset);
                dirty = true;
                break;
            }
        }
        offset = chunk_end;
    }
    return dirty;
}

/* the offset of a well-formed entry with an id above last_id at or after from (stepping by the
 * alignment), or -1: whether committed entries lie beyond where the scan stopped */
static int32_t aa_catalog_entry_beyond(const aa_archive_catalog_t *catalog, size_t from, int64_t last_id)
{
    for (size_t offset = from; offset + AA_ARCHIVE_CATALOG_DESCRIPTOR_HEADER_LENGTH <= catalog->capacity;
        offset += (size_t)catalog->alignment)
    {
        aa_archive_catalog_entry_t entry;
        if (0 != aa_get_i32(catalog->map + offset) && 0 == aa_catalog_read_entry(catalog, (int32_t)offset, &entry) &&
            entry.recording_id > last_id)
        {
            return (int32_t)offset;
        }
    }
    return -1;
}

static int aa_catalog_scan(aa_archive_catalog_t *catalog)
{
    int32_t offset = catalog->first_offset;
    int64_t max_id = -1;
    while ((size_t)offset + AA_ARCHIVE_CATALOG_DESCRIPTOR_HEADER_LENGTH <= catalog->capacity)
    {
        if (0 == aa_get_i32(catalog->map + offset))
        {
            break;
        }
        aa_archive_catalog_entry_t entry;
        if (aa_catalog_read_entry(catalog, offset, &entry) < 0)
        {
            break; /* a torn append (pages lost at sync level 0): the catalog ends before it */
        }
        if (aa_catalog_index_add(catalog, entry.recording_id, offset) < 0)
        {
            return -1;
        }
        if (entry.recording_id > max_id)
        {
            max_id = entry.recording_id;
        }
        offset += AA_ARCHIVE_CATALOG_DESCRIPTOR_HEADER_LENGTH + entry.length;
    }
    catalog->next_offset = offset;
    if (!catalog->read_only && (size_t)offset + AA_ARCHIVE_CATALOG_DESCRIPTOR_HEADER_LENGTH <= catalog->capacity)
    {
        /* damage in the middle (committed entries follow where the scan stopped) is not a torn
         * append: refuse rather than cut those entries off */
        int32_t beyond = aa_catalog_entry_beyond(catalog, (size_t)offset + (size_t)catalog->alignment, max_id);
        if (beyond >= 0)
        {
            AA_SET_ERR(AA_ERROR_CODE_MALFORMED_COMMAND, "catalog %s is damaged: the entry at offset %d is %s, yet "
                "entries follow it (the next at offset %d); open it read-only to list what is readable, and repair "
                "it with Aeron's ArchiveTool", catalog->path, offset,
                0 == aa_get_i32(catalog->map + offset) ? "empty" : "malformed", beyond);
            return -1;
        }
    }
    /* nothing may follow the last entry: a torn entry, or the descriptor of an append that never
     * reached its commit point, is cut off, so the next append starts on zeros and leaves none of
     * it behind for a later scan to misread */
    if (!catalog->read_only && aa_catalog_zero_tail(catalog, (size_t)offset))
    {
        if (aa_catalog_force(catalog, (size_t)offset, catalog->capacity - (size_t)offset) < 0)
        {
            return -1;
        }
        catalog->repaired++;
    }
    int64_t header_next = aa_get_i64(catalog->map + 8);
    catalog->next_recording_id = header_next > max_id + 1 ? header_next : max_id + 1;
    if (!catalog->read_only && header_next != catalog->next_recording_id)
    {
        aa_put_i64(catalog->map + 8, catalog->next_recording_id);
        return aa_catalog_force(catalog, 0, AA_ARCHIVE_CATALOG_HEADER_LENGTH);
    }
    return 0;
}

static int aa_catalog_map(aa_archive_catalog_t *catalog, size_t length)
{
    void *map = mmap(NULL, length, catalog->read_only ? PROT_READ : PROT_READ | PROT_WRITE, MAP_SHARED, catalog->fd, 0);
    if (MAP_FAILED == map)
    {
        AA_SET_ERR(errno, "cannot map %s (%zu bytes): %s", catalog->path, length, strerror(errno));
        return -1;
    }
    catalog->map = map;
    catalog->capacity = length;
    return 0;
}

int aa_archive_catalog_open(
    aa_archive_catalog_t **out, const char *archive_dir, int64_t capacity, int32_t sync_level,
    int32_t checksum_type, int32_t flags)
{
    *out = NULL;
    if (0 == capacity)
    {
        capacity = AA_ARCHIVE_CATALOG_CAPACITY_DEFAULT;
    }
    if (capacity < AA_ARCHIVE_CATALOG_HEADER_LENGTH || capacity > AA_ARCHIVE_CATALOG_CAPACITY_MAX)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "catalog capacity %" PRId64 " must be from 32 to 2147483647 bytes",
            capacity);
        return -1;
    }
    if (sync_level < AA_ARCHIVE_SYNC_NONE || sync_level > AA_ARCHIVE_SYNC_DATA_AND_METADATA)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "catalog sync level %d must be 0 (none), 1 (data) or 2 (data and "
            "metadata)", sync_level);
        return -1;
    }
    if (NULL == aa_archive_checksum_name(checksum_type))
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "unknown catalog checksum type %d", checksum_type);
        return -1;
    }
    aa_archive_catalog_t *catalog = calloc(1, sizeof(*catalog));
    if (NULL == catalog)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory for the catalog");
        return -1;
    }
    catalog->fd = -1;
    catalog->read_only = 0 != (flags & AA_ARCHIVE_CATALOG_READ_ONLY);
    catalog->sync_level = sync_level;
    catalog->checksum_type = checksum_type;
    catalog->ids_ascending = true;
    snprintf(catalog->dir, sizeof(catalog->dir), "%s", archive_dir);
    if (snprintf(catalog->path, sizeof(catalog->path), "%s/%s", archive_dir, AA_ARCHIVE_CATALOG_FILE_NAME) >=
        (int)sizeof(catalog->path))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "archive directory path %s is too long", archive_dir);
        goto fail;
    }

    bool create = !catalog->read_only && 0 != (flags & AA_ARCHIVE_CATALOG_CREATE);
    /* a writer gives the catalog the directory's access (docs/security.md, "Files"); never through a link */
    aa_fs_access_t access;
    if (!catalog->read_only && aa_fs_dir_access(archive_dir, false, &access) < 0)
    {
        goto fail;
    }
    catalog->fd = aa_fs_open_file(
        catalog->path, (catalog->read_only ? O_RDONLY : O_RDWR) | (create ? O_CREAT : 0), catalog->read_only ? NULL : &access);
    if (catalog->fd < 0)
    {
        AA_APPEND_ERR("cannot open the archive catalog %s%s", catalog->path,
            ENOENT == aa_errcode() && !create ? " (no archive here: give the archive directory)" : "");
        goto fail;
    }
    struct stat st;
    if (fstat(catalog->fd, &st) < 0)
    {
        AA_SET_ERR(errno, "fstat of %s: %s", catalog->path, strerror(errno));
        goto fail;
    }
    bool is_new = 0 == st.st_size && create;
    if (!is_new && st.st_size < AA_ARCHIVE_CATALOG_HEADER_LENGTH)
    {
        AA_SET_ERR(AA_ERROR_CODE_MALFORMED_COMMAND, "archive catalog %s is %lld bytes, shorter than its 32-byte header",
            catalog->path, (long long)st.st_size);
        goto fail;
    }
    size_t length = catalog->read_only ? (size_t)st.st_size :
        ((size_t)st.st_size > (size_t)capacity ? (size_t)st.st_size : (size_t)capacity);
    /* every block allocated before it is mapped writable (docs/security.md, Disks): a catalog
     * created sparse (by an older archive) is allocated here too */
    if (!catalog->read_only && aa_fs_allocate_range(catalog->fd, catalog->path, 0, length, "archive catalog",
        "lower the catalog capacity (AERON_ARCHIVE_CATALOG_CAPACITY)") < 0)
    {
        goto fail;
    }
    if (aa_catalog_map(catalog, length) < 0)
    {
        goto fail;
    }

    if (is_new)
    {
        aa_put_i32(catalog->map, AA_ARCHIVE_CATALOG_VERSION);
        aa_put_i32(catalog->map + 4, AA_ARCHIVE_CATALOG_HEADER_LENGTH);
        aa_put_i64(catalog->map + 8, 0);
        aa_put_i32(catalog->map + 16, AA_ARCHIVE_CATALOG_ALIGNMENT);
        if (aa_catalog_force(catalog, 0, AA_ARCHIVE_CATALOG_HEADER_LENGTH) < 0 ||
            (sync_level >= AA_ARCHIVE_SYNC_DATA && aa_archive_dir_sync(archive_dir) < 0))
        {
            goto fail;
        }
    }
    int32_t version = aa_get_i32(catalog->map);
    int32_t header_length = aa_get_i32(catalog->map + 4);
    int32_t alignment = aa_get_i32(catalog->map + 16);
    if ((version >> 16) != AA_ARCHIVE_CATALOG_MAJOR_VERSION)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "incompatible catalog file version %d.%d.%d in %s: this archive "
            "reads major version %d (migrate it with Aeron's ArchiveTool)", (version >> 16) & 0xFF,
            (version >> 8) & 0xFF, version & 0xFF, catalog->path, AA_ARCHIVE_CATALOG_MAJOR_VERSION);
        goto fail;
    }
    if (0 == alignment)
    {
        catalog->alignment = AA_ARCHIVE_CATALOG_LEGACY_ALIGNMENT;
        catalog->first_offset = AA_ARCHIVE_CATALOG_LEGACY_ALIGNMENT;
    }
    else if (header_length != AA_ARCHIVE_CATALOG_HEADER_LENGTH || alignment < 32 || 0 != (alignment & (alignment - 1)))
    {
        AA_SET_ERR(AA_ERROR_CODE_MALFORMED_COMMAND, "catalog %s has header length %d and alignment %d: expected 32 "
            "and a power of 2 >= 32", catalog->path, header_length, alignment);
        goto fail;
    }
    else
    {
        catalog->alignment = alignment;
        catalog->first_offset = AA_ARCHIVE_CATALOG_HEADER_LENGTH;
    }
    if (aa_catalog_scan(catalog) < 0)
    {
        goto fail;
    }
    *out = catalog;
    return 0;

fail:
    AA_APPEND_ERR("opening the archive catalog in %s", archive_dir);
    if (NULL != catalog->map)
    {
        munmap(catalog->map, catalog->capacity);
    }
    if (catalog->fd >= 0)
    {
        close(catalog->fd);
    }
    free(catalog->index);
    free(catalog);
    return -1;
}

int aa_archive_catalog_close(aa_archive_catalog_t *catalog)
{
    if (NULL == catalog)
    {
        return 0;
    }
    int rc = aa_catalog_force(catalog, 0, catalog->capacity);
    munmap(catalog->map, catalog->capacity);
    close(catalog->fd);
    free(catalog->index);
    free(catalog);
    return rc;
}

void aa_archive_catalog_info(aa_archive_catalog_t *catalog, aa_archive_catalog_info_t *info)
{
    memset(info, 0, sizeof(*info));
    info->version = aa_get_i32(catalog->map);
    info->alignment = catalog->alignment;
    info->next_recording_id = catalog->next_recording_id;
    info->capacity = (int64_t)catalog->capacity;
    info->next_entry_offset = catalog->next_offset;
    info->entry_count = catalog->count;
    for (int32_t i = 0; i < catalog->count; i++)
    {
        if (AA_ARCHIVE_RECORDING_VALID == aa_get_i32(catalog->map + catalog->index[i].offset + 4))
        {
            info->valid_count++;
        }
    }
    info->repaired_entries = catalog->repaired;
    info->sync_level = catalog->sync_level;
    info->checksum_type = catalog->checksum_type;
}

static int aa_catalog_grow(aa_archive_catalog_t *catalog, size_t needed)
{
    size_t old_capacity = catalog->capacity;
    if (needed > AA_ARCHIVE_CATALOG_CAPACITY_MAX)
    {
        AA_SET_ERR(AA_ERROR_CODE_STORAGE_SPACE, "the catalog is full: %zu bytes needed, at most %d allowed "
            "(purge recordings, or compact the catalog)", needed, AA_ARCHIVE_CATALOG_CAPACITY_MAX);
        return -1;
    }
    size_t capacity = old_capacity;
    while (capacity < needed)
    {
        size_t next = capacity + (capacity >> 1);
        capacity = next > AA_ARCHIVE_CATALOG_CAPACITY_MAX ? AA_ARCHIVE_CATALOG_CAPACITY_MAX : next;
    }
    /* the catalog grows only into allocated space (docs/security.md, Disks): the next chunk is
     * allocated before the mapping reaches it, and on a full disk the add fails with STORAGE_SPACE */
    if (aa_fs_allocate_range(catalog->fd, catalog->path, old_capacity, capacity - old_capacity,
        "archive catalog's next chunk", "purge recordings") < 0)
    {
        (void)ftruncate(catalog->fd, (off_t)old_capacity);
        return -1;
    }
    void *map = mremap(catalog->map, old_capacity, capacity, MREMAP_MAYMOVE);
    if (MAP_FAILED == map)
    {
        AA_SET_ERR(errno, "cannot remap %s at %zu bytes: %s", catalog->path, capacity, strerror(errno));
        return -1;
    }
    catalog->map = map;
    catalog->capacity = capacity;
    if (catalog->sync_level >= AA_ARCHIVE_SYNC_DATA_AND_METADATA && fsync(catalog->fd) < 0)
    {
        AA_SET_ERR(errno, "fsync of %s failed: %s", catalog->path, strerror(errno));
        return -1;
    }
    return 0;
}

static int aa_catalog_writable(const aa_archive_catalog_t *catalog)
{
    if (catalog->read_only)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "the catalog %s is open read-only", catalog->path);
        return -1;
    }
    return 0;
}

int64_t aa_archive_catalog_add(aa_archive_catalog_t *catalog, const aa_archive_recording_descriptor_t *descriptor)
{
    if (aa_catalog_writable(catalog) < 0)
    {
        return -1;
    }
    aa_archive_message_t msg;
    memset(&msg, 0, sizeof(msg));
    msg.template_id = AA_ARCHIVE_TEMPLATE_RECORDING_DESCRIPTOR;
    msg.recording_descriptor = *descriptor;
    msg.recording_descriptor.recording_id = catalog->next_recording_id;
    int64_t encoded = aa_archive_encoded_length(&msg);
    if (encoded < 0)
    {
        AA_APPEND_ERR("%s", "adding a recording to the catalog");
        return -1;
    }
    encoded -= AA_ARCHIVE_MESSAGE_HEADER_LENGTH;
    int64_t frame_length = aa_align(encoded + AA_ARCHIVE_CATALOG_DESCRIPTOR_HEADER_LENGTH, catalog->alignment);
    if (encoded > INT32_MAX / 2 || (size_t)catalog->next_offset + (size_t)frame_length > catalog->capacity)
    {
        if (encoded > INT32_MAX / 2 ||
            aa_catalog_grow(catalog, (size_t)catalog->next_offset + (size_t)frame_length) < 0)
        {
            AA_APPEND_ERR("adding a recording of %" PRId64 " descriptor bytes", encoded);
            return -1;
        }
    }
    int32_t offset = catalog->next_offset;
    uint8_t *h = catalog->map + offset;
    int32_t length = (int32_t)(frame_length - AA_ARCHIVE_CATALOG_DESCRIPTOR_HEADER_LENGTH);
    /* 1. the descriptor and its padding (the header's length is still 0) */
    aa_archive_encode_body(h + AA_ARCHIVE_CATALOG_DESCRIPTOR_HEADER_LENGTH, (size_t)length, &msg);
    memset(h + AA_ARCHIVE_CATALOG_DESCRIPTOR_HEADER_LENGTH + encoded, 0, (size_t)(length - encoded));
    /* 2. checksum and state */
    aa_put_i32(h + 8, aa_archive_checksum(catalog->checksum_type, h + AA_ARCHIVE_CATALOG_DESCRIPTOR_HEADER_LENGTH,
        (size_t)length));
    aa_put_i32(h + 4, AA_ARCHIVE_RECORDING_VALID);
    if (aa_catalog_force(catalog, (size_t)offset, (size_t)frame_length) < 0)
    {
        return -1;
    }
    /* 3. the commit point */
    __atomic_store_n((int32_t *)h, length, __ATOMIC_RELEASE);
    /* 4. the next id */
    int64_t recording_id = catalog->next_recording_id;
    aa_put_i64(catalog->map + 8, recording_id + 1);
    if (aa_catalog_index_add(catalog, recording_id, offset) < 0)
    {
        return -1;
    }
    catalog->next_recording_id = recording_id + 1;
    catalog->next_offset = offset + (int32_t)frame_length;
    if (aa_catalog_force(catalog, (size_t)offset, AA_ARCHIVE_CATALOG_DESCRIPTOR_HEADER_LENGTH) < 0 ||
        aa_catalog_force(catalog, 0, AA_ARCHIVE_CATALOG_HEADER_LENGTH) < 0)
    {
        return -1;
    }
    return recording_id;
}

int aa_archive_catalog_entry(aa_archive_catalog_t *catalog, int32_t index, aa_archive_catalog_entry_t *entry)
{
    if (index < 0 || index >= catalog->count)
    {
        return 0;
    }
    return aa_catalog_read_entry(catalog, catalog->index[index].offset, entry) < 0 ? -1 : 1;
}

int aa_archive_catalog_find(aa_archive_catalog_t *catalog, int64_t recording_id, aa_archive_catalog_entry_t *entry)
{
    int32_t i = aa_catalog_index_find(catalog, recording_id);
    if (i < 0)
    {
        return 0;
    }
    return aa_catalog_read_entry(catalog, catalog->index[i].offset, entry) < 0 ? -1 : 1;
}

int32_t aa_archive_catalog_lower_bound(aa_archive_catalog_t *catalog, int64_t recording_id)
{
    if (!catalog->ids_ascending)
    {
        for (int32_t i = 0; i < catalog->count; i++)
        {
            if (catalog->index[i].recording_id >= recording_id)
            {
                return i;
            }
        }
        return catalog->count;
    }
    int32_t low = 0, high = catalog->count;
    while (low < high)
    {
        int32_t mid = low + (high - low) / 2;
        if (catalog->index[mid].recording_id < recording_id)
        {
            low = mid + 1;
        }
        else
        {
            high = mid;
        }
    }
    return low;
}

/* the offset of a VALID recording's entry header, or -1 with an error */
static int32_t aa_catalog_valid_offset(aa_archive_catalog_t *catalog, int64_t recording_id)
{
    if (aa_catalog_writable(catalog) < 0)
    {
        return -1;
    }
    int32_t i = aa_catalog_index_find(catalog, recording_id);
    if (i < 0 || AA_ARCHIVE_RECORDING_VALID != aa_get_i32(catalog->map + catalog->index[i].offset + 4))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "recording %" PRId64 " is %s", recording_id,
            i < 0 ? "not in the catalog" : "not VALID in the catalog");
        return -1;
    }
    return catalog->index[i].offset;
}

static int aa_catalog_updated(aa_archive_catalog_t *catalog, int32_t offset)
{
    uint8_t *h = catalog->map + offset;
    int32_t length = aa_get_i32(h);
    if (AA_ARCHIVE_CHECKSUM_NONE != catalog->checksum_type)
    {
        aa_put_i32(h + 8, aa_archive_checksum(catalog->checksum_type, h + AA_ARCHIVE_CATALOG_DESCRIPTOR_HEADER_LENGTH,
            (size_t)length));
    }
    return aa_catalog_force(catalog, (size_t)offset, AA_ARCHIVE_CATALOG_DESCRIPTOR_HEADER_LENGTH + (size_t)length);
}

static void aa_store_i64_release(uint8_t *p, int64_t v)
{
    __atomic_store_n((int64_t *)p, v, __ATOMIC_RELEASE);
}

/* Stores a position of a valid recording's descriptor (release: a reader of the mapping that sees it
 * sees what was written before it), then its checksum, and forces it to storage. */
static int aa_catalog_update_position(aa_archive_catalog_t *catalog, int64_t recording_id, size_t field, int64_t position)
{
    int32_t offset = aa_catalog_valid_offset(catalog, recording_id);
    if (offset < 0)
    {
        return -1;
    }
    aa_store_i64_release(catalog->map + offset + AA_ARCHIVE_CATALOG_DESCRIPTOR_HEADER_LENGTH + field, position);
    return aa_catalog_updated(catalog, offset);
}

int aa_archive_catalog_update_stop(aa_archive_catalog_t *catalog, int64_t recording_id, int64_t stop_position, int64_t stop_timestamp)
{
    int32_t offset = aa_catalog_valid_offset(catalog, recording_id);
    if (offset < 0)
    {
        return -1;
    }
    uint8_t *d = catalog->map + offset + AA_ARCHIVE_CATALOG_DESCRIPTOR_HEADER_LENGTH;
    aa_put_i64(d + AA_RD_STOP_TIMESTAMP, stop_timestamp);
    aa_store_i64_release(d + AA_RD_STOP_POSITION, stop_position);
    return aa_catalog_updated(catalog, offset);
}

int aa_archive_catalog_update_stop_position(aa_archive_catalog_t *catalog, int64_t recording_id, int64_t stop_position)
{
    return aa_catalog_update_position(catalog, recording_id, AA_RD_STOP_POSITION, stop_position);
}

int aa_archive_catalog_update_start_position(aa_archive_catalog_t *catalog, int64_t recording_id, int64_t start_position)
{
    return aa_catalog_update_position(catalog, recording_id, AA_RD_START_POSITION, start_position);
}

int aa_archive_catalog_extend(
    aa_archive_catalog_t *catalog, int64_t recording_id, int64_t control_session_id, int64_t correlation_id,
    int32_t session_id)
{
    int32_t offset = aa_catalog_valid_offset(catalog, recording_id);
    if (offset < 0)
    {
        return -1;
    }
    uint8_t *d = catalog->map + offset + AA_ARCHIVE_CATALOG_DESCRIPTOR_HEADER_LENGTH;
    aa_put_i64(d + AA_RD_CONTROL_SESSION_ID, control_session_id);
    aa_put_i64(d + AA_RD_CORRELATION_ID, correlation_id);
    aa_put_i64(d + AA_RD_STOP_TIMESTAMP, AA_ARCHIVE_NULL_TIMESTAMP);
    aa_put_i32(d + AA_RD_SESSION_ID, session_id);
    aa_store_i64_release(d + AA_RD_STOP_POSITION, AA_ARCHIVE_NULL_POSITION);
    return aa_catalog_updated(catalog, offset);
}

int aa_archive_catalog_change_state(aa_archive_catalog_t *catalog, int64_t recording_id, int32_t state)
{
    if (aa_catalog_writable(catalog) < 0)
    {
        return -1;
    }
    if (state < AA_ARCHIVE_RECORDING_INVALID || state > AA_ARCHIVE_RECORDING_DELETED)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "recording state %d is not INVALID (0), VALID (1) or DELETED (2)",
            state);
        return -1;
    }
    int32_t i = aa_catalog_index_find(catalog, recording_id);
    if (i < 0)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "recording %" PRId64 " is not in the catalog", recording_id);
        return -1;
    }
    int32_t offset = catalog->index[i].offset;
    __atomic_store_n((int32_t *)(catalog->map + offset + 4), state, __ATOMIC_RELEASE);
    return aa_catalog_force(catalog, (size_t)offset, AA_ARCHIVE_CATALOG_DESCRIPTOR_HEADER_LENGTH);
}

int64_t aa_archive_catalog_encode_descriptor(
    aa_archive_catalog_t *catalog, int64_t recording_id, int64_t control_session_id, int64_t correlation_id,
    uint8_t *buffer, size_t capacity)
{
    aa_archive_catalog_entry_t entry;
    int found = aa_archive_catalog_find(catalog, recording_id, &entry);
    if (found <= 0 || AA_ARCHIVE_RECORDING_VALID != entry.state)
    {
        return found < 0 ? -1 : 0;
    }
    size_t length = AA_ARCHIVE_MESSAGE_HEADER_LENGTH + (size_t)entry.encoded_length;
    if (length > capacity)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "the descriptor of recording %" PRId64 " needs %zu bytes, the "
            "buffer has %zu", recording_id, length, capacity);
        return -1;
    }
    uint16_t header[4] = {
        AA_ARCHIVE_RECORDING_DESCRIPTOR_BLOCK_LENGTH, AA_ARCHIVE_TEMPLATE_RECORDING_DESCRIPTOR, AA_ARCHIVE_SCHEMA_ID,
        AA_ARCHIVE_SCHEMA_VERSION };
    memcpy(buffer, header, sizeof(header));
    memcpy(buffer + AA_ARCHIVE_MESSAGE_HEADER_LENGTH, entry.descriptor, (size_t)entry.encoded_length);
    aa_put_i64(buffer + AA_ARCHIVE_MESSAGE_HEADER_LENGTH + AA_RD_CONTROL_SESSION_ID, control_session_id);
    aa_put_i64(buffer + AA_ARCHIVE_MESSAGE_HEADER_LENGTH + AA_RD_CORRELATION_ID, correlation_id);
    return (int64_t)length;
}

int32_t aa_archive_catalog_compute_checksum(
    aa_archive_catalog_t *catalog, const aa_archive_catalog_entry_t *entry, int32_t checksum_type)
{
    (void)catalog;
    return aa_archive_checksum(checksum_type, entry->descriptor, (size_t)entry->length);
}

int aa_archive_catalog_sync(aa_archive_catalog_t *catalog)
{
    if (catalog->read_only)
    {
        return 0;
    }
    if (msync(catalog->map, catalog->capacity, MS_SYNC) < 0 ||
        (catalog->sync_level >= AA_ARCHIVE_SYNC_DATA_AND_METADATA && fsync(catalog->fd) < 0))
    {
        AA_SET_ERR(errno, "syncing %s failed: %s", catalog->path, strerror(errno));
        return -1;
    }
    return 0;
}
