/* The archive catalog: Aeron's layout byte for byte (header, descriptor headers, descriptors),
 * append/update/find, growth, reopen, checksums, the crash cases of the append order, sync levels. */
#include <fcntl.h>
#include <sys/stat.h>

#include "aa_test.h"
#include "aa_archive_test_util.h"
#include "archive/aa_archive_catalog.h"
#include "archive/aa_archive_checksum.h"
#include "util/aa_error.h"

static char g_path[512];

static aa_archive_var_t str(const char *s)
{
    aa_archive_var_t v = { (const uint8_t *)s, (uint32_t)strlen(s) };
    return v;
}

static aa_archive_recording_descriptor_t descriptor(int32_t stream_id, const char *channel)
{
    aa_archive_recording_descriptor_t d;
    memset(&d, 0, sizeof(d));
    d.start_timestamp = 1700000000000LL;
    d.stop_timestamp = -1;
    d.start_position = 4096;
    d.stop_position = -1;
    d.initial_term_id = 7;
    d.segment_file_length = 128 << 20;
    d.term_buffer_length = 64 << 10;
    d.mtu_length = 1408;
    d.session_id = -99;
    d.stream_id = stream_id;
    d.stripped_channel = str(channel);
    d.original_channel = str(channel);
    d.source_identity = str("aeron:ipc");
    return d;
}

/* the file's bytes, read through read(2) (not the mapping) */
static uint8_t *read_file(size_t *length)
{
    int fd = open(g_path, O_RDONLY);
    AA_CHECK(fd >= 0);
    struct stat st;
    AA_CHECK(0 == fstat(fd, &st));
    uint8_t *bytes = malloc((size_t)st.st_size);
    AA_CHECK_EQ(pread(fd, bytes, (size_t)st.st_size, 0), st.st_size);
    close(fd);
    *length = (size_t)st.st_size;
    return bytes;
}

static void write_file_at(size_t offset, const void *data, size_t length)
{
    int fd = open(g_path, O_WRONLY);
    AA_CHECK(fd >= 0);
    AA_CHECK_EQ(pwrite(fd, data, length, (off_t)offset), (ssize_t)length);
    close(fd);
}

/* A new temporary directory, g_path naming the catalog file in it; returns the directory. */
static const char *catalog_dir(void)
{
    const char *dir = make_temp_dir();
    snprintf(g_path, sizeof(g_path), "%s/archive.catalog", dir);
    return dir;
}

/* A catalog created in a new temporary directory (catalog_dir, returned in dir). */
static aa_archive_catalog_t *create_catalog(const char **dir, int64_t capacity, int32_t checksum_type)
{
    *dir = catalog_dir();
    aa_archive_catalog_t *catalog;
    AA_CHECK_EQ(aa_archive_catalog_open(&catalog, *dir, capacity, 0, checksum_type, AA_ARCHIVE_CATALOG_CREATE), 0);
    return catalog;
}

static void should_create_catalog_and_append_as_laid_out(void)
{
    const char *dir;
    aa_archive_catalog_t *catalog = create_catalog(&dir, 0, AA_ARCHIVE_CHECKSUM_NONE);
    aa_archive_recording_descriptor_t d = descriptor(1001, "aeron:udp?endpoint=localhost:40456");
    d.recording_id = 12345; /* assigned by the catalog */
    AA_CHECK_EQ(aa_archive_catalog_add(catalog, &d), 0);
    AA_CHECK_EQ(aa_archive_catalog_add(catalog, &d), 1);

    size_t length;
    uint8_t *bytes = read_file(&length);
    AA_CHECK_EQ(length, 1 << 20);
    AA_CHECK_EQ(test_get32(bytes), 0x030100);
    AA_CHECK_EQ(test_get32(bytes + 4), 32);
    AA_CHECK_EQ(test_get64(bytes + 8), 2);
    AA_CHECK_EQ(test_get32(bytes + 16), 64);
    for (int i = 20; i < 32; i++)
    {
        AA_CHECK_EQ(bytes[i], 0);
    }
    /* descriptor: 80 + 4 + 34 + 4 + 34 + 4 + 9 = 169 bytes; entry 32 + 169 aligned to 64 = 256 */
    AA_CHECK_EQ(test_get32(bytes + 32), 256 - 32);
    AA_CHECK_EQ(test_get32(bytes + 36), AA_ARCHIVE_RECORDING_VALID);
    AA_CHECK_EQ(test_get32(bytes + 40), 0);
    const uint8_t *desc = bytes + 64;
    AA_CHECK_EQ(test_get64(desc + 0), 0);            /* controlSessionId */
    AA_CHECK_EQ(test_get64(desc + 16), 0);           /* recordingId */
    AA_CHECK_EQ(test_get64(desc + 24), 1700000000000LL);
    AA_CHECK_EQ(test_get64(desc + 32), -1);
    AA_CHECK_EQ(test_get64(desc + 40), 4096);
    AA_CHECK_EQ(test_get64(desc + 48), -1);
    AA_CHECK_EQ(test_get32(desc + 56), 7);
    AA_CHECK_EQ(test_get32(desc + 60), 128 << 20);
    AA_CHECK_EQ(test_get32(desc + 64), 64 << 10);
    AA_CHECK_EQ(test_get32(desc + 68), 1408);
    AA_CHECK_EQ(test_get32(desc + 72), -99);
    AA_CHECK_EQ(test_get32(desc + 76), 1001);
    AA_CHECK_EQ(test_get32(desc + 80), 34);
    AA_CHECK(0 == memcmp(desc + 84, "aeron:udp?endpoint=localhost:40456", 34));
    AA_CHECK_EQ(test_get32(desc + 118), 34);
    AA_CHECK_EQ(test_get32(desc + 156), 9);
    AA_CHECK(0 == memcmp(desc + 160, "aeron:ipc", 9));
    for (int i = 169; i < 224; i++)
    {
        AA_CHECK_EQ(desc[i], 0);
    }
    /* the second entry at 32 + 256 */
    AA_CHECK_EQ(test_get32(bytes + 288), 224);
    AA_CHECK_EQ(test_get64(bytes + 288 + 32 + 16), 1);
    AA_CHECK_EQ(test_get32(bytes + 288 + 256), 0);
    free(bytes);

    aa_archive_catalog_entry_t entry;
    AA_CHECK_EQ(aa_archive_catalog_find(catalog, 1, &entry), 1);
    AA_CHECK_EQ(entry.offset, 288);
    AA_CHECK_EQ(entry.encoded_length, 169);
    AA_CHECK_EQ(entry.fields.stream_id, 1001);
    AA_CHECK_EQ(entry.fields.source_identity.length, 9);
    AA_CHECK_EQ(aa_archive_catalog_find(catalog, 2, &entry), 0);

    /* a listing: the SBE message with the descriptor bytes verbatim and the two ids overwritten */
    uint8_t message[512];
    AA_CHECK_EQ(aa_archive_catalog_encode_descriptor(catalog, 1, 77, 88, message, sizeof(message)), 8 + 169);
    aa_archive_message_t decoded;
    AA_CHECK_EQ(aa_archive_decode(message, 8 + 169, &decoded), 8 + 169);
    AA_CHECK_EQ(decoded.template_id, AA_ARCHIVE_TEMPLATE_RECORDING_DESCRIPTOR);
    AA_CHECK_EQ(decoded.recording_descriptor.control_session_id, 77);
    AA_CHECK_EQ(decoded.recording_descriptor.correlation_id, 88);
    AA_CHECK_EQ(decoded.recording_descriptor.recording_id, 1);
    AA_CHECK(0 == memcmp(message + 8 + 16, entry.descriptor + 16, 169 - 16));
    AA_CHECK_EQ(aa_archive_catalog_encode_descriptor(catalog, 1, 77, 88, message, 100), -1);

    /* updates */
    AA_CHECK_EQ(aa_archive_catalog_update_stop(catalog, 0, 8192, 1700000001000LL), 0);
    AA_CHECK_EQ(aa_archive_catalog_update_start_position(catalog, 1, 65536), 0);
    AA_CHECK_EQ(aa_archive_catalog_update_stop_position(catalog, 5, 1), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "recording 5 is not in the catalog"));
    AA_CHECK_EQ(aa_archive_catalog_change_state(catalog, 1, AA_ARCHIVE_RECORDING_DELETED), 0);
    AA_CHECK_EQ(aa_archive_catalog_encode_descriptor(catalog, 1, 77, 88, message, sizeof(message)), 0);
    AA_CHECK_EQ(aa_archive_catalog_update_stop_position(catalog, 1, 1), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "not VALID"));
    AA_CHECK_EQ(aa_archive_catalog_close(catalog), 0);

    /* reopen: everything is where it was */
    AA_CHECK_EQ(aa_archive_catalog_open(&catalog, dir, 0, 0, AA_ARCHIVE_CHECKSUM_NONE, 0), 0);
    aa_archive_catalog_info_t info;
    aa_archive_catalog_info(catalog, &info);
    AA_CHECK_EQ(info.next_recording_id, 2);
    AA_CHECK_EQ(info.entry_count, 2);
    AA_CHECK_EQ(info.valid_count, 1);
    AA_CHECK_EQ(info.next_entry_offset, 32 + 2 * 256);
    AA_CHECK_EQ(aa_archive_catalog_find(catalog, 0, &entry), 1);
    AA_CHECK_EQ(entry.fields.stop_position, 8192);
    AA_CHECK_EQ(entry.fields.stop_timestamp, 1700000001000LL);
    AA_CHECK_EQ(aa_archive_catalog_entry(catalog, 1, &entry), 1);
    AA_CHECK_EQ(entry.state, AA_ARCHIVE_RECORDING_DELETED);
    AA_CHECK_EQ(entry.fields.start_position, 65536);
    AA_CHECK_EQ(aa_archive_catalog_entry(catalog, 2, &entry), 0);
    AA_CHECK_EQ(aa_archive_catalog_lower_bound(catalog, -5), 0);
    AA_CHECK_EQ(aa_archive_catalog_lower_bound(catalog, 1), 1);
    AA_CHECK_EQ(aa_archive_catalog_lower_bound(catalog, 2), 2);
    AA_CHECK_EQ(aa_archive_catalog_extend(catalog, 0, 5, 6, 42), 0);
    AA_CHECK_EQ(aa_archive_catalog_find(catalog, 0, &entry), 1);
    AA_CHECK_EQ(entry.fields.stop_position, -1);
    AA_CHECK_EQ(entry.fields.stop_timestamp, -1);
    AA_CHECK_EQ(entry.fields.session_id, 42);
    AA_CHECK_EQ(entry.fields.control_session_id, 5);
    aa_archive_catalog_close(catalog);

    /* read-only: readable, every update refused */
    AA_CHECK_EQ(aa_archive_catalog_open(&catalog, dir, 0, 0, AA_ARCHIVE_CHECKSUM_NONE, AA_ARCHIVE_CATALOG_READ_ONLY), 0);
    AA_CHECK_EQ(aa_archive_catalog_find(catalog, 0, &entry), 1);
    AA_CHECK_EQ(aa_archive_catalog_update_stop_position(catalog, 0, 1), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "read-only"));
    AA_CHECK_EQ(aa_archive_catalog_add(catalog, &d), -1);
    aa_archive_catalog_close(catalog);
    remove_temp_dir();
}

static void should_keep_checksums_of_descriptors(void)
{
    const char *dir;
    aa_archive_catalog_t *catalog = create_catalog(&dir, 0, AA_ARCHIVE_CHECKSUM_CRC32C);
    aa_archive_recording_descriptor_t d = descriptor(5, "aeron:ipc");
    AA_CHECK_EQ(aa_archive_catalog_add(catalog, &d), 0);
    aa_archive_catalog_entry_t entry;
    AA_CHECK_EQ(aa_archive_catalog_find(catalog, 0, &entry), 1);
    /* over the header's length of descriptor bytes, padding included */
    AA_CHECK_EQ(entry.checksum, (int32_t)aa_crc32c(0, entry.descriptor, (size_t)entry.length));
    AA_CHECK(0 != entry.checksum);
    AA_CHECK_EQ(aa_archive_catalog_compute_checksum(catalog, &entry, AA_ARCHIVE_CHECKSUM_CRC32C), entry.checksum);
    int32_t before = entry.checksum;
    AA_CHECK_EQ(aa_archive_catalog_update_stop(catalog, 0, 1 << 20, 5), 0);
    AA_CHECK_EQ(aa_archive_catalog_find(catalog, 0, &entry), 1);
    AA_CHECK(before != entry.checksum);
    AA_CHECK_EQ(entry.checksum, (int32_t)aa_crc32c(0, entry.descriptor, (size_t)entry.length));
    aa_archive_catalog_close(catalog);
    remove_temp_dir();
}

static void should_grow_past_capacity_by_half(void)
{
    const char *dir;
    aa_archive_catalog_t *catalog = create_catalog(&dir, 4096, AA_ARCHIVE_CHECKSUM_NONE);
    char channel[64];
    for (int i = 0; i < 100; i++)
    {
        snprintf(channel, sizeof(channel), "aeron:udp?endpoint=localhost:%d", 40000 + i);
        aa_archive_recording_descriptor_t d = descriptor(i, channel);
        AA_CHECK_EQ(aa_archive_catalog_add(catalog, &d), i);
    }
    aa_archive_catalog_info_t info;
    aa_archive_catalog_info(catalog, &info);
    /* 100 entries of 256 bytes after the 32-byte header: 25,632 bytes; 4096 x 1.5^5 = 31,104 */
    AA_CHECK_EQ(info.capacity, 31104);
    aa_archive_catalog_close(catalog);
    struct stat st;
    AA_CHECK_EQ(stat(g_path, &st), 0);
    AA_CHECK_EQ(st.st_size, 31104);
    /* every chunk allocated before it was mapped (docs/security.md, Disks): no block is a hole */
    AA_CHECK((int64_t)st.st_blocks * 512 >= (int64_t)st.st_size);

    AA_CHECK_EQ(aa_archive_catalog_open(&catalog, dir, 4096, 0, AA_ARCHIVE_CHECKSUM_NONE, 0), 0);
    aa_archive_catalog_info(catalog, &info);
    AA_CHECK_EQ(info.entry_count, 100);
    AA_CHECK_EQ(info.next_recording_id, 100);
    for (int i = 0; i < 100; i++)
    {
        aa_archive_catalog_entry_t entry;
        AA_CHECK_EQ(aa_archive_catalog_find(catalog, i, &entry), 1);
        AA_CHECK_EQ(entry.fields.stream_id, i);
        snprintf(channel, sizeof(channel), "aeron:udp?endpoint=localhost:%d", 40000 + i);
        AA_CHECK(0 == memcmp(entry.fields.original_channel.data, channel, strlen(channel)));
    }
    aa_archive_catalog_close(catalog);
    remove_temp_dir();
}

static void should_survive_a_crash_at_every_step_of_an_append(void)
{
    const char *dir;
    aa_archive_catalog_t *catalog = create_catalog(&dir, 0, AA_ARCHIVE_CHECKSUM_NONE);
    aa_archive_recording_descriptor_t d = descriptor(1, "aeron:ipc");
    AA_CHECK_EQ(aa_archive_catalog_add(catalog, &d), 0);
    AA_CHECK_EQ(aa_archive_catalog_add(catalog, &d), 1);
    aa_archive_catalog_close(catalog);
    /* entries of 32 + 80 + 12 + 9 + 9 + 9 = 151 -> 192 bytes: at 32 and 224; the next goes at 416 */

    /* crash after step 1/2: a descriptor written, its header's length still 0: invisible */
    uint8_t junk[192];
    memset(junk, 0x5A, sizeof(junk));
    memset(junk, 0, 4);
    write_file_at(416, junk, sizeof(junk));
    AA_CHECK_EQ(aa_archive_catalog_open(&catalog, dir, 0, 0, AA_ARCHIVE_CHECKSUM_NONE, 0), 0);
    aa_archive_catalog_info_t info;
    aa_archive_catalog_info(catalog, &info);
    AA_CHECK_EQ(info.entry_count, 2);
    AA_CHECK_EQ(info.next_entry_offset, 416);
    AA_CHECK_EQ(info.repaired_entries, 1); /* its remnant zeroed */
    size_t length;
    uint8_t *bytes = read_file(&length);
    for (size_t i = 416; i < 416 + 192; i++)
    {
        AA_CHECK_EQ(bytes[i], 0);
    }
    free(bytes);
    /* the next append takes its place, whole */
    AA_CHECK_EQ(aa_archive_catalog_add(catalog, &d), 2);
    aa_archive_catalog_entry_t entry;
    AA_CHECK_EQ(aa_archive_catalog_find(catalog, 2, &entry), 1);
    AA_CHECK_EQ(entry.offset, 416);
    AA_CHECK_EQ(entry.fields.stream_id, 1);
    aa_archive_catalog_close(catalog);

    /* crash between step 3 and 4: the entry is committed, nextRecordingId not advanced yet */
    int64_t stale = 1;
    write_file_at(8, &stale, 8);
    AA_CHECK_EQ(aa_archive_catalog_open(&catalog, dir, 0, 0, AA_ARCHIVE_CHECKSUM_NONE, 0), 0);
    aa_archive_catalog_info(catalog, &info);
    AA_CHECK_EQ(info.next_recording_id, 3);
    AA_CHECK_EQ(aa_archive_catalog_add(catalog, &d), 3);
    aa_archive_catalog_close(catalog);
    bytes = read_file(&length);
    AA_CHECK_EQ(test_get64(bytes + 8), 4);
    free(bytes);

    /* a torn last entry (pages lost at sync level 0): a length with a descriptor that is not there */
    int32_t torn_header[3] = { 160, AA_ARCHIVE_RECORDING_VALID, 0 };
    uint8_t torn[192];
    memset(torn, 0, sizeof(torn));
    memcpy(torn, torn_header, sizeof(torn_header));
    int32_t huge = 1000; /* strippedChannel's length runs past the entry */
    memcpy(torn + 32 + 80, &huge, 4);
    write_file_at(800, torn, sizeof(torn));
    AA_CHECK_EQ(aa_archive_catalog_open(&catalog, dir, 0, 0, AA_ARCHIVE_CHECKSUM_NONE, AA_ARCHIVE_CATALOG_READ_ONLY), 0);
    aa_archive_catalog_info(catalog, &info);
    AA_CHECK_EQ(info.entry_count, 4);
    AA_CHECK_EQ(info.repaired_entries, 0); /* read-only: left as it is */
    aa_archive_catalog_close(catalog);
    AA_CHECK_EQ(aa_archive_catalog_open(&catalog, dir, 0, 0, AA_ARCHIVE_CHECKSUM_NONE, 0), 0);
    aa_archive_catalog_info(catalog, &info);
    AA_CHECK_EQ(info.entry_count, 4);
    AA_CHECK_EQ(info.repaired_entries, 1);
    AA_CHECK_EQ(info.next_entry_offset, 800);
    AA_CHECK_EQ(aa_archive_catalog_add(catalog, &d), 4);
    aa_archive_catalog_close(catalog);
    bytes = read_file(&length);
    for (size_t i = 800 + 192; i < 800 + 192 + 64; i++)
    {
        AA_CHECK_EQ(bytes[i], 0);
    }
    free(bytes);
    AA_CHECK_EQ(aa_archive_catalog_open(&catalog, dir, 0, 0, AA_ARCHIVE_CHECKSUM_NONE, 0), 0);
    aa_archive_catalog_info(catalog, &info);
    AA_CHECK_EQ(info.entry_count, 5);
    AA_CHECK_EQ(info.repaired_entries, 0);
    aa_archive_catalog_close(catalog);

    /* damage in the middle: entry 1's length zeroed, committed entries after it: refused writable,
     * readable (up to the damage) read-only, and nothing was changed */
    int32_t zero = 0;
    write_file_at(224, &zero, 4);
    AA_CHECK_EQ(aa_archive_catalog_open(&catalog, dir, 0, 0, AA_ARCHIVE_CHECKSUM_NONE, 0), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "the entry at offset 224 is empty, yet entries follow it (the next at offset 416)"));
    AA_CHECK_EQ(aa_archive_catalog_open(&catalog, dir, 0, 0, AA_ARCHIVE_CHECKSUM_NONE, AA_ARCHIVE_CATALOG_READ_ONLY), 0);
    aa_archive_catalog_info(catalog, &info);
    AA_CHECK_EQ(info.entry_count, 1);
    aa_archive_catalog_close(catalog);
    bytes = read_file(&length);
    AA_CHECK_EQ(test_get64(bytes + 416 + 32 + 16), 2);
    free(bytes);
    remove_temp_dir();
}

static void should_refuse_catalogs_it_cannot_read(void)
{
    const char *dir = catalog_dir();
    aa_archive_catalog_t *catalog;
    AA_CHECK_EQ(aa_archive_catalog_open(&catalog, dir, 0, 0, AA_ARCHIVE_CHECKSUM_NONE, 0), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "no archive here"));
    AA_CHECK_EQ(aa_archive_catalog_open(&catalog, dir, 16, 0, AA_ARCHIVE_CHECKSUM_NONE, AA_ARCHIVE_CATALOG_CREATE), -1);
    AA_CHECK_EQ(aa_archive_catalog_open(&catalog, dir, 0, 3, AA_ARCHIVE_CHECKSUM_NONE, AA_ARCHIVE_CATALOG_CREATE), -1);
    AA_CHECK_EQ(aa_archive_catalog_open(&catalog, dir, 0, 0, AA_ARCHIVE_CHECKSUM_NONE, AA_ARCHIVE_CATALOG_CREATE), 0);
    aa_archive_catalog_close(catalog);
    int32_t version = 2 << 16;
    write_file_at(0, &version, 4);
    AA_CHECK_EQ(aa_archive_catalog_open(&catalog, dir, 0, 0, AA_ARCHIVE_CHECKSUM_NONE, 0), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "incompatible catalog file version 2.0.0"));
    version = AA_ARCHIVE_CATALOG_VERSION;
    write_file_at(0, &version, 4);
    int32_t alignment = 48;
    write_file_at(16, &alignment, 4);
    AA_CHECK_EQ(aa_archive_catalog_open(&catalog, dir, 0, 0, AA_ARCHIVE_CHECKSUM_NONE, 0), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "alignment 48"));
    remove_temp_dir();
}

static void should_force_writes_as_the_sync_level_says(void)
{
    const char *dir = make_temp_dir();
    aa_archive_catalog_t *catalog;
    aa_archive_recording_descriptor_t d = descriptor(1, "aeron:ipc");

    reset_sync_counts();
    AA_CHECK_EQ(aa_archive_catalog_open(&catalog, dir, 0, 0, AA_ARCHIVE_CHECKSUM_NONE, AA_ARCHIVE_CATALOG_CREATE), 0);
    AA_CHECK_EQ(aa_archive_catalog_add(catalog, &d), 0);
    AA_CHECK_EQ(aa_archive_catalog_update_stop(catalog, 0, 64, 1), 0);
    aa_archive_catalog_close(catalog);
    AA_CHECK_EQ(g_msync_calls + g_fsync_calls + g_fdatasync_calls, 0);
    remove_temp_dir();

    dir = make_temp_dir();
    reset_sync_counts();
    AA_CHECK_EQ(aa_archive_catalog_open(&catalog, dir, 0, 1, AA_ARCHIVE_CHECKSUM_NONE, AA_ARCHIVE_CATALOG_CREATE), 0);
    AA_CHECK_EQ(g_fsync_calls, 1); /* the directory, for the new file */
    AA_CHECK(g_msync_calls >= 1);
    reset_sync_counts();
    AA_CHECK_EQ(aa_archive_catalog_add(catalog, &d), 0);
    AA_CHECK(g_msync_calls >= 2); /* before the commit point and after it */
    AA_CHECK_EQ(g_fsync_calls, 0);
    reset_sync_counts();
    AA_CHECK_EQ(aa_archive_catalog_update_stop(catalog, 0, 64, 1), 0);
    AA_CHECK_EQ(g_msync_calls, 1);
    AA_CHECK_EQ(g_fsync_calls, 0);
    aa_archive_catalog_close(catalog);
    remove_temp_dir();

    dir = make_temp_dir();
    AA_CHECK_EQ(aa_archive_catalog_open(&catalog, dir, 0, 2, AA_ARCHIVE_CHECKSUM_NONE, AA_ARCHIVE_CATALOG_CREATE), 0);
    reset_sync_counts();
    AA_CHECK_EQ(aa_archive_catalog_add(catalog, &d), 0);
    AA_CHECK(g_msync_calls >= 2);
    AA_CHECK(g_fsync_calls >= 2);
    reset_sync_counts();
    AA_CHECK_EQ(aa_archive_catalog_change_state(catalog, 0, AA_ARCHIVE_RECORDING_INVALID), 0);
    AA_CHECK_EQ(g_msync_calls, 1);
    AA_CHECK_EQ(g_fsync_calls, 1);
    aa_archive_catalog_close(catalog);
    remove_temp_dir();
}

int main(void)
{
    AA_RUN(should_create_catalog_and_append_as_laid_out);
    AA_RUN(should_keep_checksums_of_descriptors);
    AA_RUN(should_grow_past_capacity_by_half);
    AA_RUN(should_survive_a_crash_at_every_step_of_an_append);
    AA_RUN(should_refuse_catalogs_it_cannot_read);
    AA_RUN(should_force_writes_as_the_sync_level_says);
    return 0;
}
