/* Archive segment files: naming, positions, sparse creation, positional I/O with sync levels,
 * frame checksums and the recovery scan of a recording's last segment. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive/aa_archive_segment.h"
#include "util/aa_error.h"
#include "util/aa_fs.h"
#include "protocols/aa_udp_protocol.h"
#include "util/aa_bytes.h"

#define AA_FRAME_ALIGN(n) (((n) + (AA_FRAME_ALIGNMENT_BYTES - 1)) & ~(int64_t)(AA_FRAME_ALIGNMENT_BYTES - 1))
#define AA_FRAME_ALIGNMENT_BYTES 32

static bool aa_is_power_of_2(int64_t v)
{
    return v > 0 && 0 == (v & (v - 1));
}

int aa_archive_segment_file_name(char *buffer, size_t length, int64_t recording_id, int64_t base_position)
{
    int n = snprintf(buffer, length, "%" PRId64 "-%" PRId64 "%s", recording_id, base_position,
        AA_ARCHIVE_SEGMENT_FILE_SUFFIX);
    if (n < 0 || (size_t)n >= length)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "segment file name needs %d bytes, the buffer has %zu", n + 1, length);
        return -1;
    }
    return n;
}

static bool aa_parse_i64(const char *s, size_t length, int64_t *value)
{
    if (0 == length || length > 19)
    {
        return false;
    }
    int64_t v = 0;
    for (size_t i = 0; i < length; i++)
    {
        if (s[i] < '0' || s[i] > '9')
        {
            return false;
        }
        if (v > (INT64_MAX - (s[i] - '0')) / 10)
        {
            return false;
        }
        v = v * 10 + (s[i] - '0');
    }
    *value = v;
    return true;
}

int aa_archive_segment_parse_file_name(const char *name, int64_t *recording_id, int64_t *base_position)
{
    size_t length = strlen(name);
    size_t suffix = strlen(AA_ARCHIVE_SEGMENT_FILE_SUFFIX);
    if (length <= suffix || 0 != strcmp(name + length - suffix, AA_ARCHIVE_SEGMENT_FILE_SUFFIX))
    {
        return 0;
    }
    const char *dash = memchr(name, '-', length - suffix);
    if (NULL == dash)
    {
        return 0;
    }
    int64_t id, base;
    if (!aa_parse_i64(name, (size_t)(dash - name), &id) ||
        !aa_parse_i64(dash + 1, (size_t)(name + length - suffix - (dash + 1)), &base))
    {
        return 0;
    }
    *recording_id = id;
    *base_position = base;
    return 1;
}

int aa_archive_segment_validate_length(int64_t segment_length)
{
    if (!aa_is_power_of_2(segment_length) || segment_length < AA_ARCHIVE_SEGMENT_LENGTH_MIN ||
        segment_length > AA_ARCHIVE_SEGMENT_LENGTH_MAX)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "archive segment length %" PRId64 " must be a power of 2 from 64 KiB to 1 GiB (65536..1073741824)",
            segment_length);
        return -1;
    }
    return 0;
}

int32_t aa_archive_segment_length_for(int32_t configured_segment_length, int32_t term_length)
{
    if (aa_archive_segment_validate_length(configured_segment_length) < 0)
    {
        return -1;
    }
    if (!aa_is_power_of_2(term_length) || term_length < 65536 || term_length > 1073741824)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "term length %d is not a power of 2 from 64 KiB to 1 GiB",
            term_length);
        return -1;
    }
    return configured_segment_length > term_length ? configured_segment_length : term_length;
}

int64_t aa_archive_segment_base_position(
    int64_t start_position, int64_t position, int32_t term_length, int32_t segment_length)
{
    int64_t start_term_base = start_position - (start_position & (term_length - 1));
    int64_t length_from_base = position - start_term_base;
    return start_term_base + (length_from_base - (length_from_base & (segment_length - 1)));
}

int64_t aa_archive_segment_file_offset(
    int64_t start_position, int64_t position, int32_t term_length, int32_t segment_length)
{
    int64_t start_term_base = start_position - (start_position & (term_length - 1));
    return (position - start_term_base) & (segment_length - 1);
}

static int aa_fsync_level(int fd, int32_t sync_level)
{
    int rc = 0;
    if (sync_level >= AA_ARCHIVE_SYNC_DATA_AND_METADATA)
    {
        rc = fsync(fd);
    }
    else if (sync_level >= AA_ARCHIVE_SYNC_DATA)
    {
        rc = fdatasync(fd);
    }
    if (rc < 0)
    {
        int err = errno;
        AA_SET_ERR(ENOSPC == err || EDQUOT == err ? AA_ERROR_CODE_STORAGE_SPACE : err, "%s failed: %s",
            sync_level >= AA_ARCHIVE_SYNC_DATA_AND_METADATA ? "fsync" : "fdatasync", strerror(err));
        return -1;
    }
    return 0;
}

int aa_archive_segment_sync(int fd, int32_t sync_level)
{
    return aa_fsync_level(fd, sync_level);
}

int aa_archive_dir_sync(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
    {
        AA_SET_ERR(errno, "cannot open directory %s to sync it: %s", dir, strerror(errno));
        return -1;
    }
    int rc = fsync(fd);
    int err = errno;
    close(fd);
    if (rc < 0)
    {
        AA_SET_ERR(err, "fsync of directory %s failed: %s", dir, strerror(err));
        return -1;
    }
    return 0;
}

int aa_archive_dir_prepare(const char *dir)
{
    return aa_fs_prepare_dir(dir, NULL, "destination directory");
}

int aa_archive_segment_open(
    const char *dir, int64_t recording_id, int64_t base_position, int32_t segment_length, int32_t flags,
    int32_t sync_level)
{
    char name[64];
    char path[PATH_MAX];
    if (aa_archive_segment_file_name(name, sizeof(name), recording_id, base_position) < 0)
    {
        return -1;
    }
    if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "segment path %s/%s is too long", dir, name);
        return -1;
    }
    bool read_only = 0 != (flags & AA_ARCHIVE_SEGMENT_READ_ONLY);
    int fd = open(path, (read_only ? O_RDONLY : O_RDWR) | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0 || ENOENT != errno || read_only || 0 == (flags & AA_ARCHIVE_SEGMENT_CREATE))
    {
        if (fd < 0)
        {
            AA_SET_ERR(errno, "cannot open segment file %s: %s", path, strerror(errno));
        }
        return fd;
    }
    if (aa_archive_segment_validate_length(segment_length) < 0)
    {
        return -1;
    }
    /* the directory's access (docs/security.md, "Files"), a new file never through a link */
    aa_fs_access_t access;
    if (aa_fs_dir_access(dir, false, &access) < 0 || (fd = aa_fs_create_file(path, O_RDWR, &access)) < 0)
    {
        AA_APPEND_ERR("%s", "creating a segment file");
        return -1;
    }
    /* sparse at full length: the blocks are allocated as frames are written */
    if (ftruncate(fd, segment_length) < 0)
    {
        int err = errno;
        close(fd);
        unlink(path);
        AA_SET_ERR(ENOSPC == err || EDQUOT == err || EFBIG == err ? AA_ERROR_CODE_STORAGE_SPACE : err,
            "cannot size segment file %s to %d bytes: %s", path, segment_length, strerror(err));
        return -1;
    }
    if (sync_level >= AA_ARCHIVE_SYNC_DATA && (aa_fsync_level(fd, sync_level) < 0 || aa_archive_dir_sync(dir) < 0))
    {
        AA_APPEND_ERR("new segment file %s", path);
        close(fd);
        return -1;
    }
    return fd;
}

int aa_archive_segment_write(int fd, int64_t file_offset, const uint8_t *data, size_t length, int32_t sync_level)
{
    size_t done = 0;
    while (done < length)
    {
        ssize_t n = pwrite(fd, data + done, length - done, (off_t)(file_offset + (int64_t)done));
        if (n < 0)
        {
            if (EINTR == errno)
            {
                continue;
            }
            int err = errno;
            AA_SET_ERR(ENOSPC == err || EDQUOT == err || EFBIG == err ? AA_ERROR_CODE_STORAGE_SPACE : err,
                "segment write of %zu bytes at offset %" PRId64 " failed after %zu bytes: %s", length, file_offset,
                done, strerror(err));
            return -1;
        }
        if (0 == n)
        {
            AA_SET_ERR(AA_ERROR_CODE_STORAGE_SPACE, "segment write at offset %" PRId64 " wrote nothing",
                file_offset + (int64_t)done);
            return -1;
        }
        done += (size_t)n;
    }
    return aa_fsync_level(fd, sync_level);
}

int64_t aa_archive_segment_read(int fd, int64_t file_offset, uint8_t *buffer, size_t length)
{
    size_t done = 0;
    while (done < length)
    {
        ssize_t n = pread(fd, buffer + done, length - done, (off_t)(file_offset + (int64_t)done));
        if (n < 0)
        {
            if (EINTR == errno)
            {
                continue;
            }
            AA_SET_ERR(errno, "segment read of %zu bytes at offset %" PRId64 " failed: %s", length, file_offset,
                strerror(errno));
            return -1;
        }
        if (0 == n)
        {
            break;
        }
        done += (size_t)n;
    }
    return (int64_t)done;
}

static int aa_compare_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : (x > y ? 1 : 0);
}

/* every base of a recording's segments, sorted, malloc'd into *bases; the count or -1 */
static int32_t aa_segment_bases(const char *dir, int64_t recording_id, int64_t **bases)
{
    DIR *d = opendir(dir);
    if (NULL == d)
    {
        AA_SET_ERR(errno, "cannot list archive directory %s: %s", dir, strerror(errno));
        return -1;
    }
    int32_t count = 0, capacity = 16;
    int64_t *out = malloc(sizeof(int64_t) * (size_t)capacity);
    struct dirent *e;
    while (NULL != out && NULL != (e = readdir(d)))
    {
        int64_t id, base;
        if (1 == aa_archive_segment_parse_file_name(e->d_name, &id, &base) && id == recording_id)
        {
            if (count == capacity)
            {
                capacity *= 2;
                int64_t *grown = realloc(out, sizeof(int64_t) * (size_t)capacity);
                if (NULL == grown)
                {
                    free(out);
                    out = NULL;
                    break;
                }
                out = grown;
            }
            out[count++] = base;
        }
    }
    closedir(d);
    if (NULL == out)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory listing segment files");
        return -1;
    }
    qsort(out, (size_t)count, sizeof(int64_t), aa_compare_i64);
    *bases = out;
    return count;
}

int32_t aa_archive_segment_list(const char *dir, int64_t recording_id, int64_t *bases, int32_t capacity)
{
    int64_t *all;
    int32_t count = aa_segment_bases(dir, recording_id, &all);
    if (count < 0)
    {
        return -1;
    }
    for (int32_t i = 0; i < count && i < capacity; i++)
    {
        bases[i] = all[i];
    }
    free(all);
    return count;
}

int32_t aa_archive_segment_delete_from(const char *dir, int64_t recording_id, int64_t from_base_position, int32_t sync_level)
{
    int64_t *all;
    int32_t count = aa_segment_bases(dir, recording_id, &all);
    if (count < 0)
    {
        return -1;
    }
    int32_t deleted = 0;
    for (int32_t i = 0; i < count; i++)
    {
        if (all[i] < from_base_position)
        {
            continue;
        }
        char name[64], path[PATH_MAX];
        aa_archive_segment_file_name(name, sizeof(name), recording_id, all[i]);
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        if (unlink(path) < 0 && ENOENT != errno)
        {
            AA_SET_ERR(errno, "cannot delete segment file %s: %s", path, strerror(errno));
            free(all);
            return -1;
        }
        deleted++;
    }
    free(all);
    if (deleted > 0 && sync_level >= AA_ARCHIVE_SYNC_DATA && aa_archive_dir_sync(dir) < 0)
    {
        return -1;
    }
    return deleted;
}

/* walks a block of whole frames; each DATA frame's checksum is applied (verify false) or checked */
static int aa_frames_checksum(uint8_t *block, size_t length, int32_t type, bool verify, int64_t *bad_offset)
{
    if (AA_ARCHIVE_CHECKSUM_NONE == type)
    {
        return 0;
    }
    if (NULL == aa_archive_checksum_name(type))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "unknown checksum type %d", type);
        return -1;
    }
    size_t offset = 0;
    while (offset + AA_DATA_HEADER_LENGTH <= length)
    {
        const uint8_t *frame = block + offset;
        int32_t frame_length = aa_get_i32(frame);
        if (0 == frame_length)
        {
            break;
        }
        int64_t aligned = AA_FRAME_ALIGN((int64_t)frame_length);
        uint16_t type_field;
        memcpy(&type_field, frame + 6, 2);
        if (frame_length < AA_DATA_HEADER_LENGTH ||
            (AA_HDR_TYPE_PAD != type_field && (uint64_t)aligned > length - offset))
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "malformed frame at offset %zu: frame_length %d with %zu bytes left",
                offset, frame_length, length - offset);
            return -1;
        }
        if (AA_HDR_TYPE_DATA == type_field)
        {
            int32_t sum = aa_archive_checksum(type, frame + AA_DATA_HEADER_LENGTH, (size_t)(frame_length - AA_DATA_HEADER_LENGTH));
            if (verify)
            {
                if (sum != aa_get_i32(frame + 12))
                {
                    *bad_offset = (int64_t)offset;
                    return 1;
                }
            }
            else
            {
                memcpy(block + offset + 12, &sum, 4);
            }
        }
        else if (AA_HDR_TYPE_PAD == type_field && (uint64_t)aligned > length - offset)
        {
            break; /* a PAD to the end of the term, stored as its header only: the block ends here */
        }
        offset += (size_t)aligned;
    }
    return 0;
}

int aa_archive_frames_apply_checksum(uint8_t *block, size_t length, int32_t checksum_type)
{
    return aa_frames_checksum(block, length, checksum_type, false, NULL);
}

int aa_archive_frames_verify_checksum(const uint8_t *block, size_t length, int32_t checksum_type, int64_t *bad_offset)
{
    int64_t ignored;
    return aa_frames_checksum((uint8_t *)block, length, checksum_type, true, NULL == bad_offset ? &ignored : bad_offset);
}

/* whether bytes [from, to) of the mapping are all zero */
static bool aa_all_zero(const uint8_t *p, size_t length)
{
    for (size_t i = 0; i < length; i++)
    {
        if (0 != p[i])
        {
            return false;
        }
    }
    return true;
}

/* Where the first hole at or after `from` begins (the file's length when it has none): the pages of a
 * sparse segment past it were never written, and reading them through a mapping would allocate
 * them, which on a full tmpfs is a SIGBUS (docs/security.md, Disks). So the scans below read
 * mapped bytes only before it and know the rest to be zeros. */
static int64_t aa_segment_data_end(int fd, int64_t from, int64_t length)
{
    off_t hole = lseek(fd, (off_t)from, SEEK_HOLE);
    return hole < 0 || (int64_t)hole > length ? length : (int64_t)hole;
}

int aa_archive_segment_recover(
    const char *dir, int64_t recording_id, int64_t start_position, int32_t initial_term_id, int32_t term_length,
    int32_t segment_length, int32_t stream_id, int32_t checksum_type, bool repair, int32_t sync_level,
    aa_archive_recovery_t *result)
{
    memset(result, 0, sizeof(*result));
    result->stop_position = start_position;
    result->segment_base = -1;
    if (start_position < 0 || 0 != (start_position & (AA_FRAME_ALIGNMENT_BYTES - 1)))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "recovery of recording %" PRId64 ": start position %" PRId64
            " is not a non-negative multiple of 32", recording_id, start_position);
        return -1;
    }
    if (NULL == aa_archive_checksum_name(checksum_type))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "recovery of recording %" PRId64 ": unknown checksum type %d",
            recording_id, checksum_type);
        return -1;
    }
    if (aa_archive_segment_length_for(segment_length, term_length) != segment_length)
    {
        AA_APPEND_ERR("recovery of recording %" PRId64 ": segment length %d must be >= term length %d, both powers of 2",
            recording_id, segment_length, term_length);
        if (aa_archive_segment_validate_length(segment_length) == 0 && term_length > segment_length)
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "recovery of recording %" PRId64
                ": segment length %d is below the term length %d", recording_id, segment_length, term_length);
        }
        return -1;
    }

    int64_t *bases;
    int32_t count = aa_segment_bases(dir, recording_id, &bases);
    if (count < 0)
    {
        return -1;
    }
    result->segment_count = count;
    if (0 == count)
    {
        free(bases);
        return 0;
    }
    int64_t base = bases[count - 1];
    free(bases);
    result->segment_base = base;

    int fd = aa_archive_segment_open(dir, recording_id, base, segment_length, AA_ARCHIVE_SEGMENT_READ_ONLY, 0);
    if (fd < 0)
    {
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) < 0)
    {
        AA_SET_ERR(errno, "fstat of segment %" PRId64 "-%" PRId64 ": %s", recording_id, base, strerror(errno));
        close(fd);
        return -1;
    }
    size_t file_length = (size_t)st.st_size < (size_t)segment_length ? (size_t)st.st_size : (size_t)segment_length;
    int64_t position = base < start_position ? start_position : base;
    int64_t offset = position - base;
    if (0 == file_length || offset >= (int64_t)file_length)
    {
        close(fd);
        result->stop_position = position;
        return 0;
    }
    const int64_t data_end = aa_segment_data_end(fd, offset, (int64_t)file_length);
    const uint8_t *map = mmap(NULL, file_length, PROT_READ, MAP_SHARED, fd, 0);
    if (MAP_FAILED == map)
    {
        AA_SET_ERR(errno, "mmap of segment %" PRId64 "-%" PRId64 ": %s", recording_id, base, strerror(errno));
        close(fd);
        return -1;
    }

    int32_t bits = __builtin_ctz((unsigned)term_length);
    int64_t last_frame_offset = -1;
    int32_t last_frame_length = 0;
    /* a header in the hole past data_end reads as zeros: the end, as a zero frame length is */
    while (offset + AA_DATA_HEADER_LENGTH <= data_end)
    {
        const uint8_t *frame = map + offset;
        int32_t frame_length = aa_get_i32(frame);
        if (frame_length <= 0)
        {
            break;
        }
        uint16_t type;
        memcpy(&type, frame + 6, 2);
        int32_t term_offset = aa_get_i32(frame + 8);
        int32_t frame_stream_id = aa_get_i32(frame + 16);
        int32_t term_id = aa_get_i32(frame + 20);
        int32_t expected_term_offset = (int32_t)(position & (term_length - 1));
        int32_t expected_term_id = initial_term_id + (int32_t)(position >> bits);
        int64_t aligned = AA_FRAME_ALIGN((int64_t)frame_length);
        if ((AA_HDR_TYPE_DATA != type && AA_HDR_TYPE_PAD != type) || frame_length < AA_DATA_HEADER_LENGTH ||
            term_offset != expected_term_offset || term_id != expected_term_id || frame_stream_id != stream_id ||
            expected_term_offset + aligned > term_length || offset + aligned > (int64_t)file_length)
        {
            break;
        }
        last_frame_offset = offset;
        last_frame_length = AA_HDR_TYPE_DATA == type ? frame_length : 0;
        offset += aligned;
        position += aligned;
    }

    if (last_frame_offset >= 0 && last_frame_length > 0)
    {
        /* the last DATA frame: torn if it straddles a page and its final partial page is all zero */
        int64_t frame_end = last_frame_offset + last_frame_length;
        int64_t last_boundary = (frame_end - 1) & ~(int64_t)(AA_ARCHIVE_PAGE_SIZE - 1);
        /* a final page in the hole was never written: torn, known without reading it */
        bool in_hole = last_boundary >= data_end;
        if (last_boundary > last_frame_offset &&
            (in_hole || aa_all_zero(map + last_boundary, (size_t)(frame_end - last_boundary))))
        {
            bool complete = false;
            if (AA_ARCHIVE_CHECKSUM_NONE != checksum_type && !in_hole)
            {
                int32_t sum = aa_archive_checksum(checksum_type, map + last_frame_offset + AA_DATA_HEADER_LENGTH,
                    (size_t)(last_frame_length - AA_DATA_HEADER_LENGTH));
                complete = sum == aa_get_i32(map + last_frame_offset + 12);
            }
            if (!complete)
            {
                int64_t aligned = AA_FRAME_ALIGN((int64_t)last_frame_length);
                result->torn_frame = true;
                result->torn_frame_position = base + last_frame_offset;
                result->torn_frame_length = last_frame_length;
                position -= aligned;
            }
        }
    }
    munmap((void *)map, file_length);
    close(fd);
    result->stop_position = position;

    if (result->torn_frame && repair)
    {
        int wfd = aa_archive_segment_open(dir, recording_id, base, segment_length, 0, sync_level);
        if (wfd < 0)
        {
            return -1;
        }
        size_t length = (size_t)AA_FRAME_ALIGN((int64_t)result->torn_frame_length);
        uint8_t *zeros = calloc(1, length);
        int rc = NULL == zeros ? -1 : aa_archive_segment_write(wfd, result->torn_frame_position - base, zeros, length, sync_level);
        free(zeros);
        close(wfd);
        if (rc < 0)
        {
            AA_APPEND_ERR("zeroing the torn frame at position %" PRId64, result->torn_frame_position);
            return -1;
        }
        result->repaired = true;
    }
    return 0;
}

/* whether the frame header at frame is the one of position: NULL, or what is wrong */
static const char *aa_frame_mismatch(
    const uint8_t *frame, int64_t position, int32_t initial_term_id, int32_t term_length, int32_t stream_id,
    int64_t room)
{
    int32_t frame_length = aa_get_i32(frame);
    uint16_t type;
    memcpy(&type, frame + 6, 2);
    int32_t bits = __builtin_ctz((unsigned)term_length);
    int32_t expected_term_offset = (int32_t)(position & (term_length - 1));
    if (frame_length <= 0)
    {
        return "no frame (frame_length <= 0): the data ends here";
    }
    if (AA_HDR_TYPE_DATA != type && AA_HDR_TYPE_PAD != type)
    {
        return "a frame type that is neither DATA nor PAD";
    }
    if (frame_length < AA_DATA_HEADER_LENGTH)
    {
        return "a frame_length below the 32-byte header";
    }
    if (aa_get_i32(frame + 8) != expected_term_offset)
    {
        return "a term offset that is not the position's";
    }
    if (aa_get_i32(frame + 20) != initial_term_id + (int32_t)(position >> bits))
    {
        return "a term id that is not the position's";
    }
    if (aa_get_i32(frame + 16) != stream_id)
    {
        return "another stream id";
    }
    int64_t aligned = AA_FRAME_ALIGN((int64_t)frame_length);
    if (expected_term_offset + aligned > term_length || aligned > room)
    {
        return "a frame past the end of its term or segment";
    }
    return NULL;
}

int aa_archive_segment_frame_at(
    const char *dir, int64_t recording_id, int64_t start_position, int64_t position, int32_t initial_term_id,
    int32_t term_length, int32_t segment_length, int32_t stream_id)
{
    if (position < start_position || 0 != (position & (AA_FRAME_ALIGNMENT_BYTES - 1)))
    {
        return 0;
    }
    int64_t base = aa_archive_segment_base_position(start_position, position, term_length, segment_length);
    int fd = aa_archive_segment_open(dir, recording_id, base, segment_length, AA_ARCHIVE_SEGMENT_READ_ONLY, 0);
    if (fd < 0)
    {
        return ENOENT == aa_errcode() ? 0 : -1;
    }
    uint8_t header[AA_DATA_HEADER_LENGTH];
    int64_t n = aa_archive_segment_read(fd, position - base, header, sizeof(header));
    close(fd);
    if (n < 0)
    {
        return -1;
    }
    if (n < AA_DATA_HEADER_LENGTH)
    {
        return 0;
    }
    return NULL == aa_frame_mismatch(header, position, initial_term_id, term_length, stream_id,
        segment_length - (position - base)) ? 1 : 0;
}

int aa_archive_segment_erase(int fd, int64_t file_offset, int64_t length, int32_t sync_level)
{
    if (length <= 0)
    {
        return aa_fsync_level(fd, sync_level);
    }
    if (0 == fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)file_offset, (off_t)length))
    {
        return aa_fsync_level(fd, sync_level);
    }
    static const uint8_t zeros[65536];
    int64_t done = 0;
    while (done < length)
    {
        size_t chunk = (size_t)(length - done < (int64_t)sizeof(zeros) ? length - done : (int64_t)sizeof(zeros));
        if (aa_archive_segment_write(fd, file_offset + done, zeros, chunk, AA_ARCHIVE_SYNC_NONE) < 0)
        {
            return -1;
        }
        done += (int64_t)chunk;
    }
    return aa_fsync_level(fd, sync_level);
}

__attribute__((format(printf, 3, 4)))
static int aa_verify_problem(aa_archive_verify_t *result, int64_t position, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(result->message, sizeof(result->message), format, args);
    va_end(args);
    result->bad_position = position;
    return 1;
}

int aa_archive_segment_verify(
    const char *dir, int64_t recording_id, int64_t start_position, int64_t stop_position, int32_t initial_term_id,
    int32_t term_length, int32_t segment_length, int32_t stream_id, int32_t checksum_type, aa_archive_verify_t *result)
{
    memset(result, 0, sizeof(*result));
    result->bad_position = -1;
    if (aa_archive_segment_length_for(segment_length, term_length) != segment_length ||
        NULL == aa_archive_checksum_name(checksum_type))
    {
        if (NULL == aa_archive_checksum_name(checksum_type))
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "unknown checksum type %d", checksum_type);
        }
        else
        {
            AA_APPEND_ERR("verifying recording %" PRId64 ": segment length %d, term length %d", recording_id,
                segment_length, term_length);
        }
        return -1;
    }
    if (start_position < 0 || 0 != (start_position & (AA_FRAME_ALIGNMENT_BYTES - 1)))
    {
        return aa_verify_problem(result, start_position, "start position %" PRId64 " is not a non-negative multiple "
            "of 32", start_position);
    }
    if (stop_position < start_position || 0 != (stop_position & (AA_FRAME_ALIGNMENT_BYTES - 1)))
    {
        return aa_verify_problem(result, stop_position, "stop position %" PRId64 " is not a multiple of 32 at or "
            "after the start position %" PRId64, stop_position, start_position);
    }
    int64_t position = start_position;
    while (position < stop_position)
    {
        int64_t base = aa_archive_segment_base_position(start_position, position, term_length, segment_length);
        int fd = aa_archive_segment_open(dir, recording_id, base, segment_length, AA_ARCHIVE_SEGMENT_READ_ONLY, 0);
        if (fd < 0)
        {
            if (ENOENT == aa_errcode())
            {
                return aa_verify_problem(result, position, "segment file %" PRId64 "-%" PRId64 ".rec is missing",
                    recording_id, base);
            }
            return -1;
        }
        struct stat st;
        if (fstat(fd, &st) < 0 || st.st_size < segment_length)
        {
            close(fd);
            return aa_verify_problem(result, position, "segment file %" PRId64 "-%" PRId64 ".rec is %lld bytes, "
                "not %d", recording_id, base, (long long)st.st_size, segment_length);
        }
        const int64_t data_end = aa_segment_data_end(fd, position - base, segment_length);
        const uint8_t *map = mmap(NULL, (size_t)segment_length, PROT_READ, MAP_SHARED, fd, 0);
        close(fd);
        if (MAP_FAILED == map)
        {
            AA_SET_ERR(errno, "mmap of segment %" PRId64 "-%" PRId64 ": %s", recording_id, base, strerror(errno));
            return -1;
        }
        int64_t segment_end = base + segment_length;
        int rc = 0;
        while (position < stop_position && position < segment_end)
        {
            const uint8_t *frame = map + (position - base);
            if (segment_end - position < AA_DATA_HEADER_LENGTH)
            {
                rc = aa_verify_problem(result, position, "a frame header cut by the end of the segment");
                break;
            }
            if (position - base + AA_DATA_HEADER_LENGTH > data_end)
            {
                /* pages never written, not read through the mapping (docs/security.md, Disks) */
                rc = aa_verify_problem(result, position, "at position %" PRId64 " (segment %" PRId64 ", offset %"
                    PRId64 "): no frame (a hole, never written): the data ends here, before the stop position %"
                    PRId64, position, base, position - base, stop_position);
                break;
            }
            const char *wrong = aa_frame_mismatch(frame, position, initial_term_id, term_length, stream_id,
                segment_end - position);
            if (NULL != wrong)
            {
                rc = aa_verify_problem(result, position, "at position %" PRId64 " (segment %" PRId64 ", offset %"
                    PRId64 "): %s, before the stop position %" PRId64, position, base, position - base, wrong,
                    stop_position);
                break;
            }
            int32_t frame_length = aa_get_i32(frame);
            uint16_t type;
            memcpy(&type, frame + 6, 2);
            int64_t aligned = AA_FRAME_ALIGN((int64_t)frame_length);
            if (AA_HDR_TYPE_DATA == type)
            {
                if (position + aligned > stop_position)
                {
                    rc = aa_verify_problem(result, position, "the frame at %" PRId64 " of %d bytes runs past the "
                        "stop position %" PRId64, position, frame_length, stop_position);
                    break;
                }
                if (AA_ARCHIVE_CHECKSUM_NONE != checksum_type && position - base + frame_length > data_end)
                {
                    rc = aa_verify_problem(result, position, "the frame at %" PRId64 " runs into a hole of its "
                        "segment (never written)", position);
                    break;
                }
                if (AA_ARCHIVE_CHECKSUM_NONE != checksum_type &&
                    aa_archive_checksum(checksum_type, frame + AA_DATA_HEADER_LENGTH,
                        (size_t)(frame_length - AA_DATA_HEADER_LENGTH)) != aa_get_i32(frame + 12))
                {
                    rc = aa_verify_problem(result, position, "the %s checksum of the frame at %" PRId64 " does not "
                        "match its payload", aa_archive_checksum_name(checksum_type), position);
                    break;
                }
                result->frames++;
            }
            position += aligned;
        }
        munmap((void *)map, (size_t)segment_length);
        if (0 != rc)
        {
            result->bytes = position - start_position;
            return rc;
        }
    }
    result->bytes = position - start_position;
    if (position != stop_position)
    {
        return aa_verify_problem(result, position, "the last frame ends at %" PRId64 ", past the stop position %"
            PRId64, position, stop_position);
    }
    return 0;
}
