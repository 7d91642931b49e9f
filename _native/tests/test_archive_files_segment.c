/* Archive segment files: CRC vectors, names and positions, sparse creation, positional I/O with
 * sync levels, a full disk, frame checksums, and the recovery scan (frames, torn last frames). */
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "aa_test.h"
#include "aa_archive_test_util.h"
#include "archive/aa_archive_segment.h"
#include "util/aa_error.h"

#define TERM_LENGTH 65536
#define SEGMENT_LENGTH 131072
#define INITIAL_TERM_ID 5
#define STREAM_ID 1001
#define SESSION_ID 77

static void should_compute_crc_known_vectors(void)
{
    const uint8_t *digits = (const uint8_t *)"123456789";
    AA_CHECK_EQ(aa_crc32c(0, digits, 9), 0xE3069283u);
    AA_CHECK_EQ(aa_crc32(0, digits, 9), 0xCBF43926u);
    uint8_t zeros[32] = { 0 }, ones[32], ascending[32];
    memset(ones, 0xFF, sizeof(ones));
    for (int i = 0; i < 32; i++)
    {
        ascending[i] = (uint8_t)i;
    }
    /* RFC 3720 B.4 */
    AA_CHECK_EQ(aa_crc32c(0, zeros, 32), 0x8A9136AAu);
    AA_CHECK_EQ(aa_crc32c(0, ones, 32), 0x62A8AB43u);
    AA_CHECK_EQ(aa_crc32c(0, ascending, 32), 0x46DD794Eu);
    /* continuing a CRC gives the CRC of the whole, at every split */
    uint8_t data[1000];
    for (size_t i = 0; i < sizeof(data); i++)
    {
        data[i] = (uint8_t)(i * 31 + 7);
    }
    uint32_t whole_c = aa_crc32c(0, data, sizeof(data)), whole = aa_crc32(0, data, sizeof(data));
    for (size_t split = 0; split <= sizeof(data); split += 37)
    {
        AA_CHECK_EQ(aa_crc32c(aa_crc32c(0, data, split), data + split, sizeof(data) - split), whole_c);
        AA_CHECK_EQ(aa_crc32(aa_crc32(0, data, split), data + split, sizeof(data) - split), whole);
    }
    AA_CHECK_EQ(aa_archive_checksum(AA_ARCHIVE_CHECKSUM_CRC32C, digits, 9), (int32_t)0xE3069283u);
    AA_CHECK_EQ(aa_archive_checksum(AA_ARCHIVE_CHECKSUM_NONE, digits, 9), 0);
    AA_CHECK_EQ(aa_archive_checksum_parse("CRC-32C"), AA_ARCHIVE_CHECKSUM_CRC32C);
    AA_CHECK_EQ(aa_archive_checksum_parse("io.aeron.archive.checksum.Crc32"), AA_ARCHIVE_CHECKSUM_CRC32);
    AA_CHECK_EQ(aa_archive_checksum_parse("md5"), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "use none, crc-32 or crc-32c"));
}

static void should_name_files_and_place_positions(void)
{
    char name[64];
    AA_CHECK_EQ(aa_archive_segment_file_name(name, sizeof(name), 12, 268435456), 16);
    AA_CHECK(0 == strcmp(name, "12-268435456.rec"));
    AA_CHECK_EQ(aa_archive_segment_file_name(name, 10, 12, 268435456), -1);
    int64_t id, base;
    AA_CHECK_EQ(aa_archive_segment_parse_file_name("12-268435456.rec", &id, &base), 1);
    AA_CHECK_EQ(id, 12);
    AA_CHECK_EQ(base, 268435456);
    AA_CHECK_EQ(aa_archive_segment_parse_file_name("12-268435456.rec.del", &id, &base), 0);
    AA_CHECK_EQ(aa_archive_segment_parse_file_name("archive.catalog", &id, &base), 0);
    AA_CHECK_EQ(aa_archive_segment_parse_file_name("x-1.rec", &id, &base), 0);
    AA_CHECK_EQ(aa_archive_segment_parse_file_name("1--1.rec", &id, &base), 0);

    AA_CHECK_EQ(aa_archive_segment_length_for(AA_ARCHIVE_SEGMENT_LENGTH_DEFAULT, 65536), 134217728);
    AA_CHECK_EQ(aa_archive_segment_length_for(65536, 1 << 20), 1 << 20);
    AA_CHECK_EQ(aa_archive_segment_length_for(100000, 65536), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "power of 2"));
    AA_CHECK_EQ(aa_archive_segment_validate_length(2LL << 30), -1);

    /* a recording that starts mid-term: start 3 terms + 4096 with 64 KiB terms and 128 KiB segments */
    int64_t start = 3 * TERM_LENGTH + 4096;
    AA_CHECK_EQ(aa_archive_segment_base_position(start, start, TERM_LENGTH, SEGMENT_LENGTH), 3 * TERM_LENGTH);
    AA_CHECK_EQ(aa_archive_segment_file_offset(start, start, TERM_LENGTH, SEGMENT_LENGTH), 4096);
    AA_CHECK_EQ(aa_archive_segment_base_position(start, 5 * TERM_LENGTH - 32, TERM_LENGTH, SEGMENT_LENGTH), 3 * TERM_LENGTH);
    AA_CHECK_EQ(aa_archive_segment_base_position(start, 5 * TERM_LENGTH, TERM_LENGTH, SEGMENT_LENGTH), 5 * TERM_LENGTH);
    AA_CHECK_EQ(aa_archive_segment_file_offset(start, 6 * TERM_LENGTH + 64, TERM_LENGTH, SEGMENT_LENGTH), TERM_LENGTH + 64);
}

/* a DATA frame at position, as the log holds it */
static size_t put_frame(uint8_t *at, int64_t position, int32_t payload_length, uint8_t fill)
{
    int32_t frame_length = 32 + payload_length;
    memset(at, 0, 32);
    memcpy(at, &frame_length, 4);
    at[5] = 0xC0;
    at[6] = 1;
    int32_t term_offset = (int32_t)(position & (TERM_LENGTH - 1));
    int32_t term_id = INITIAL_TERM_ID + (int32_t)(position / TERM_LENGTH);
    int32_t session_id = SESSION_ID, stream_id = STREAM_ID;
    memcpy(at + 8, &term_offset, 4);
    memcpy(at + 12, &session_id, 4);
    memcpy(at + 16, &stream_id, 4);
    memcpy(at + 20, &term_id, 4);
    memset(at + 32, fill, (size_t)payload_length);
    size_t aligned = ((size_t)frame_length + 31) & ~(size_t)31;
    memset(at + frame_length, 0, aligned - (size_t)frame_length);
    return aligned;
}

static void should_create_sparse_files_and_write_with_sync_levels(void)
{
    const char *dir = make_temp_dir();
    reset_sync_counts();
    int fd = aa_archive_segment_open(dir, 3, 0, SEGMENT_LENGTH, AA_ARCHIVE_SEGMENT_CREATE, AA_ARCHIVE_SYNC_NONE);
    AA_CHECK(fd >= 0);
    AA_CHECK_EQ(g_fsync_calls + g_fdatasync_calls, 0);
    struct stat st;
    AA_CHECK_EQ(fstat(fd, &st), 0);
    AA_CHECK_EQ(st.st_size, SEGMENT_LENGTH);
    AA_CHECK(st.st_blocks * 512 < SEGMENT_LENGTH); /* sparse */
    uint8_t block[8192];
    size_t n = put_frame(block, 0, 100, 'a');
    n += put_frame(block + n, (int64_t)n, 5000, 'b');
    AA_CHECK_EQ(aa_archive_segment_write(fd, 0, block, n, AA_ARCHIVE_SYNC_NONE), 0);
    AA_CHECK_EQ(g_fsync_calls + g_fdatasync_calls, 0);
    AA_CHECK_EQ(aa_archive_segment_write(fd, 0, block, n, AA_ARCHIVE_SYNC_DATA), 0);
    AA_CHECK_EQ(g_fdatasync_calls, 1);
    AA_CHECK_EQ(g_fsync_calls, 0);
    AA_CHECK_EQ(aa_archive_segment_write(fd, 0, block, n, AA_ARCHIVE_SYNC_DATA_AND_METADATA), 0);
    AA_CHECK_EQ(g_fsync_calls, 1);
    uint8_t back[8192];
    AA_CHECK_EQ(aa_archive_segment_read(fd, 0, back, n), (int64_t)n);
    AA_CHECK(0 == memcmp(back, block, n));
    AA_CHECK_EQ(aa_archive_segment_read(fd, SEGMENT_LENGTH - 100, back, 1000), 100);
    close(fd);

    /* a new file at level >= 1 syncs itself and its directory */
    reset_sync_counts();
    fd = aa_archive_segment_open(dir, 3, SEGMENT_LENGTH, SEGMENT_LENGTH, AA_ARCHIVE_SEGMENT_CREATE, AA_ARCHIVE_SYNC_DATA);
    AA_CHECK(fd >= 0);
    AA_CHECK_EQ(g_fdatasync_calls, 1);
    AA_CHECK_EQ(g_fsync_calls, 1);
    close(fd);
    /* an existing file opens as it is, no sync */
    reset_sync_counts();
    fd = aa_archive_segment_open(dir, 3, SEGMENT_LENGTH, SEGMENT_LENGTH, AA_ARCHIVE_SEGMENT_CREATE, AA_ARCHIVE_SYNC_DATA);
    AA_CHECK(fd >= 0);
    AA_CHECK_EQ(g_fdatasync_calls + g_fsync_calls, 0);
    close(fd);
    AA_CHECK_EQ(aa_archive_segment_open(dir, 4, 0, SEGMENT_LENGTH, 0, 0), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "4-0.rec"));

    int64_t bases[4];
    fd = aa_archive_segment_open(dir, 3, 2 * SEGMENT_LENGTH, SEGMENT_LENGTH, AA_ARCHIVE_SEGMENT_CREATE, 0);
    close(fd);
    fd = aa_archive_segment_open(dir, 33, 0, SEGMENT_LENGTH, AA_ARCHIVE_SEGMENT_CREATE, 0);
    close(fd);
    AA_CHECK_EQ(aa_archive_segment_list(dir, 3, bases, 4), 3);
    AA_CHECK_EQ(bases[0], 0);
    AA_CHECK_EQ(bases[1], SEGMENT_LENGTH);
    AA_CHECK_EQ(bases[2], 2 * SEGMENT_LENGTH);
    AA_CHECK_EQ(aa_archive_segment_delete_from(dir, 3, SEGMENT_LENGTH, 0), 2);
    AA_CHECK_EQ(aa_archive_segment_list(dir, 3, bases, 4), 1);
    AA_CHECK_EQ(aa_archive_segment_delete_from(dir, 3, INT64_MIN, 0), 1);
    AA_CHECK_EQ(aa_archive_segment_list(dir, 3, bases, 4), 0);
    AA_CHECK_EQ(aa_archive_segment_list(dir, 33, bases, 4), 1);
    remove_temp_dir();
}

static void should_fail_a_write_to_a_full_disk_with_storage_space(void)
{
    const char *dir = make_temp_dir();
    int fd = aa_archive_segment_open(dir, 1, 0, SEGMENT_LENGTH, AA_ARCHIVE_SEGMENT_CREATE, 0);
    AA_CHECK(fd >= 0);
    /* a file size limit stands in for a full disk: writes past it fail with EFBIG */
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit old, limit;
    getrlimit(RLIMIT_FSIZE, &old);
    limit = old;
    limit.rlim_cur = 8192;
    AA_CHECK_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
    uint8_t block[16384];
    size_t n = put_frame(block, 0, 5000, 'x');
    n += put_frame(block + n, (int64_t)n, 5000, 'y');
    AA_CHECK_EQ(aa_archive_segment_write(fd, 0, block, n, 0), -1);
    AA_CHECK_EQ(aa_errcode(), AA_ERROR_CODE_STORAGE_SPACE);
    AA_CHECK(NULL != strstr(aa_errmsg(), "failed after 8192 bytes"));
    AA_CHECK_EQ(setrlimit(RLIMIT_FSIZE, &old), 0);
    /* what was written stays readable */
    uint8_t back[8192];
    AA_CHECK_EQ(aa_archive_segment_read(fd, 0, back, sizeof(back)), 8192);
    AA_CHECK(0 == memcmp(back, block, 8192));
    close(fd);
    remove_temp_dir();
}

static void should_apply_and_verify_frame_checksums(void)
{
    uint8_t block[8192];
    size_t n = put_frame(block, 0, 100, 'a');
    n += put_frame(block + n, (int64_t)n, 3, 'b');
    size_t pad_at = n;
    int32_t pad_length = 1024;
    memset(block + n, 0, 32);
    memcpy(block + n, &pad_length, 4);
    n += 32;
    AA_CHECK_EQ(aa_archive_frames_apply_checksum(block, n, AA_ARCHIVE_CHECKSUM_CRC32C), 0);
    int32_t sum;
    memcpy(&sum, block + 12, 4);
    uint8_t payload[100];
    memset(payload, 'a', sizeof(payload));
    AA_CHECK_EQ(sum, (int32_t)aa_crc32c(0, payload, 100));
    AA_CHECK_EQ(aa_archive_frames_verify_checksum(block, n, AA_ARCHIVE_CHECKSUM_CRC32C, NULL), 0);
    int32_t pad_session;
    memcpy(&pad_session, block + pad_at + 12, 4);
    AA_CHECK_EQ(pad_session, 0);
    block[32 + 50] ^= 1;
    int64_t bad = -1;
    AA_CHECK_EQ(aa_archive_frames_verify_checksum(block, n, AA_ARCHIVE_CHECKSUM_CRC32C, &bad), 1);
    AA_CHECK_EQ(bad, 0);
    int32_t broken = 20;
    memcpy(block, &broken, 4);
    AA_CHECK_EQ(aa_archive_frames_apply_checksum(block, n, AA_ARCHIVE_CHECKSUM_CRC32C), -1);
}

static int64_t write_frames(const char *dir, int64_t recording_id, int64_t base, int64_t from, int64_t to_position,
    int32_t checksum, uint8_t *segment)
{
    /* frames of mixed sizes from `from` to at most `to_position` into segment (the file's image) */
    int64_t position = from;
    int32_t sizes[] = { 0, 17, 200, 1000, 3000, 5000 };
    int i = 0;
    while (1)
    {
        int32_t payload = sizes[i++ % 6];
        int64_t aligned = (32 + payload + 31) & ~31;
        int64_t term_left = TERM_LENGTH - (position & (TERM_LENGTH - 1));
        if (aligned > term_left && position + term_left <= to_position)
        {
            /* a PAD to the end of the term, stored as its header only */
            int32_t pad = (int32_t)term_left;
            uint8_t *at = segment + (position - base);
            put_frame(at, position, 0, 0);
            memcpy(at, &pad, 4);
            at[6] = 0;
            position += term_left;
            continue;
        }
        if (position + aligned > to_position)
        {
            break;
        }
        put_frame(segment + (position - base), position, payload, (uint8_t)('a' + i % 26));
        position += aligned;
    }
    int fd = aa_archive_segment_open(dir, recording_id, base, SEGMENT_LENGTH, AA_ARCHIVE_SEGMENT_CREATE, 0);
    AA_CHECK(fd >= 0);
    size_t length = (size_t)(position - from);
    uint8_t *block = segment + (from - base);
    AA_CHECK_EQ(aa_archive_frames_apply_checksum(block, length, checksum), 0);
    AA_CHECK_EQ(aa_archive_segment_write(fd, from - base, block, length, 0), 0);
    close(fd);
    return position;
}

static void recover(const char *dir, int64_t recording_id, int64_t start, int32_t checksum, bool repair,
    aa_archive_recovery_t *result)
{
    AA_CHECK_EQ(aa_archive_segment_recover(dir, recording_id, start, INITIAL_TERM_ID, TERM_LENGTH, SEGMENT_LENGTH,
        STREAM_ID, checksum, repair, 0, result), 0);
}

static void should_recover_the_stop_position_from_the_last_segment(void)
{
    const char *dir = make_temp_dir();
    static uint8_t image[SEGMENT_LENGTH];
    aa_archive_recovery_t r;

    /* no segment yet: the start position */
    int64_t start = 2 * TERM_LENGTH + 4096;
    recover(dir, 1, start, 0, false, &r);
    AA_CHECK_EQ(r.stop_position, start);
    AA_CHECK_EQ(r.segment_count, 0);

    /* a first segment filled to the end, then a second one partly written */
    memset(image, 0, sizeof(image));
    int64_t base = 2 * TERM_LENGTH;
    int64_t end = write_frames(dir, 1, base, start, base + SEGMENT_LENGTH, 0, image);
    AA_CHECK_EQ(end, base + SEGMENT_LENGTH); /* ends with a PAD to the end of the second term */
    recover(dir, 1, start, 0, false, &r);
    AA_CHECK_EQ(r.stop_position, base + SEGMENT_LENGTH);
    AA_CHECK(!r.torn_frame);
    memset(image, 0, sizeof(image));
    int64_t base2 = base + SEGMENT_LENGTH;
    int64_t stop = write_frames(dir, 1, base2, base2, base2 + 50000, 0, image);
    recover(dir, 1, start, 0, false, &r);
    AA_CHECK_EQ(r.segment_count, 2);
    AA_CHECK_EQ(r.segment_base, base2);
    AA_CHECK_EQ(r.stop_position, stop);
    AA_CHECK(!r.torn_frame);

    /* a frame cut short at a page boundary: its header and first page written, the rest not */
    int64_t torn_at = stop;
    size_t torn_aligned = put_frame(image + (torn_at - base2), torn_at, 9000, 'z');
    int64_t page_end = ((torn_at - base2) & ~(int64_t)4095) + 4096;
    int fd = aa_archive_segment_open(dir, 1, base2, SEGMENT_LENGTH, 0, 0);
    AA_CHECK_EQ(aa_archive_segment_write(fd, torn_at - base2, image + (torn_at - base2), (size_t)(page_end - (torn_at - base2)), 0), 0);
    close(fd);
    recover(dir, 1, start, 0, false, &r);
    AA_CHECK_EQ(r.stop_position, stop);
    AA_CHECK(r.torn_frame);
    AA_CHECK_EQ(r.torn_frame_position, torn_at);
    AA_CHECK_EQ(r.torn_frame_length, 9032);
    AA_CHECK(!r.repaired);
    /* repaired: the torn bytes are zeroed, so the segment ends cleanly at the stop position */
    recover(dir, 1, start, 0, true, &r);
    AA_CHECK(r.repaired);
    fd = aa_archive_segment_open(dir, 1, base2, SEGMENT_LENGTH, AA_ARCHIVE_SEGMENT_READ_ONLY, 0);
    uint8_t back[9056];
    AA_CHECK_EQ(aa_archive_segment_read(fd, torn_at - base2, back, torn_aligned), (int64_t)torn_aligned);
    for (size_t i = 0; i < torn_aligned; i++)
    {
        AA_CHECK_EQ(back[i], 0);
    }
    close(fd);
    recover(dir, 1, start, 0, false, &r);
    AA_CHECK_EQ(r.stop_position, stop);
    AA_CHECK(!r.torn_frame);

    /* written whole, the same frame is complete (its last page is not zero) */
    fd = aa_archive_segment_open(dir, 1, base2, SEGMENT_LENGTH, 0, 0);
    AA_CHECK_EQ(aa_archive_segment_write(fd, torn_at - base2, image + (torn_at - base2), torn_aligned, 0), 0);
    close(fd);
    recover(dir, 1, start, 0, false, &r);
    AA_CHECK_EQ(r.stop_position, stop + (int64_t)torn_aligned);
    AA_CHECK(!r.torn_frame);

    /* a frame that does not belong (wrong term offset) ends the data */
    int64_t after = stop + (int64_t)torn_aligned;
    uint8_t alien[64];
    put_frame(alien, after + 32, 10, 'q');
    fd = aa_archive_segment_open(dir, 1, base2, SEGMENT_LENGTH, 0, 0);
    AA_CHECK_EQ(aa_archive_segment_write(fd, after - base2, alien, 64, 0), 0);
    close(fd);
    recover(dir, 1, start, 0, false, &r);
    AA_CHECK_EQ(r.stop_position, after);
    remove_temp_dir();
}

static void should_tell_a_complete_zero_tail_frame_from_a_torn_one_by_checksum(void)
{
    const char *dir = make_temp_dir();
    static uint8_t image[SEGMENT_LENGTH];
    memset(image, 0, sizeof(image));
    aa_archive_recovery_t r;
    int64_t stop = write_frames(dir, 2, 0, 0, 20000, AA_ARCHIVE_CHECKSUM_CRC32C, image);
    /* a complete frame whose payload after its last page boundary is all zero */
    size_t aligned = put_frame(image + stop, stop, 9000, 'k');
    int64_t last_boundary = ((stop + 32 + 9000 - 1) & ~(int64_t)4095);
    memset(image + last_boundary, 0, (size_t)(stop + 32 + 9000 - last_boundary));
    AA_CHECK_EQ(aa_archive_frames_apply_checksum(image + stop, aligned, AA_ARCHIVE_CHECKSUM_CRC32C), 0);
    int fd = aa_archive_segment_open(dir, 2, 0, SEGMENT_LENGTH, 0, 0);
    AA_CHECK_EQ(aa_archive_segment_write(fd, stop, image + stop, aligned, 0), 0);
    close(fd);
    /* with the checksum: complete */
    recover(dir, 2, 0, AA_ARCHIVE_CHECKSUM_CRC32C, false, &r);
    AA_CHECK_EQ(r.stop_position, stop + (int64_t)aligned);
    AA_CHECK(!r.torn_frame);
    /* without one it cannot be told from a write cut short: taken as torn (documented) */
    recover(dir, 2, 0, AA_ARCHIVE_CHECKSUM_NONE, false, &r);
    AA_CHECK_EQ(r.stop_position, stop);
    AA_CHECK(r.torn_frame);
    /* a truly torn one fails its checksum */
    image[stop + 100] ^= 0xFF;
    fd = aa_archive_segment_open(dir, 2, 0, SEGMENT_LENGTH, 0, 0);
    AA_CHECK_EQ(aa_archive_segment_write(fd, stop, image + stop, aligned, 0), 0);
    close(fd);
    recover(dir, 2, 0, AA_ARCHIVE_CHECKSUM_CRC32C, false, &r);
    AA_CHECK_EQ(r.stop_position, stop);
    AA_CHECK(r.torn_frame);
    /* bad arguments are named */
    AA_CHECK_EQ(aa_archive_segment_recover(dir, 2, 33, INITIAL_TERM_ID, TERM_LENGTH, SEGMENT_LENGTH, STREAM_ID, 0, false,
        0, &r), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "multiple of 32"));
    AA_CHECK_EQ(aa_archive_segment_recover(dir, 2, 0, INITIAL_TERM_ID, 1 << 20, SEGMENT_LENGTH, STREAM_ID, 0, false,
        0, &r), -1);
    remove_temp_dir();
}

/* the scans read no page of a sparse segment that was never written (a read fault there allocates
 * it, a SIGBUS on a full tmpfs) and find what they found by reading its zeros */
static void should_scan_a_sparse_segment_without_reading_its_holes(void)
{
    const char *dir = make_temp_dir();
    static uint8_t image[SEGMENT_LENGTH];
    memset(image, 0, sizeof(image));
    size_t first = put_frame(image, 0, 100, 'a');
    size_t second = put_frame(image + first, (int64_t)first, 9000, 'b');
    int fd = aa_archive_segment_open(dir, 4, 0, SEGMENT_LENGTH, AA_ARCHIVE_SEGMENT_CREATE, AA_ARCHIVE_SYNC_NONE);
    AA_CHECK(fd >= 0);
    /* the first frame and the first page of the second: its last pages stay holes */
    AA_CHECK_EQ(aa_archive_segment_write(fd, 0, image, 4096, AA_ARCHIVE_SYNC_NONE), 0);
    close(fd);
    aa_archive_recovery_t r;
    recover(dir, 4, 0, AA_ARCHIVE_CHECKSUM_NONE, false, &r);
    AA_CHECK_EQ(r.stop_position, (int64_t)first);
    AA_CHECK(r.torn_frame);
    recover(dir, 4, 0, AA_ARCHIVE_CHECKSUM_CRC32C, false, &r);
    AA_CHECK_EQ(r.stop_position, (int64_t)first);
    AA_CHECK(r.torn_frame);
    /* the whole second frame, then a hole: the scan ends at the hole as at zeros */
    fd = aa_archive_segment_open(dir, 4, 0, SEGMENT_LENGTH, 0, AA_ARCHIVE_SYNC_NONE);
    AA_CHECK_EQ(aa_archive_segment_write(fd, 0, image, first + second, AA_ARCHIVE_SYNC_NONE), 0);
    close(fd);
    recover(dir, 4, 0, AA_ARCHIVE_CHECKSUM_NONE, false, &r);
    AA_CHECK_EQ(r.stop_position, (int64_t)(first + second));
    AA_CHECK(!r.torn_frame);
    aa_archive_verify_t v;
    int64_t end = (int64_t)(first + second);
    AA_CHECK_EQ(aa_archive_segment_verify(dir, 4, 0, end + 8192, INITIAL_TERM_ID, TERM_LENGTH, SEGMENT_LENGTH,
        STREAM_ID, AA_ARCHIVE_CHECKSUM_NONE, &v), 1);
    AA_CHECK(v.bad_position >= end);
    AA_CHECK(NULL != strstr(v.message, "the data ends here"));
    remove_temp_dir();
}

static void should_verify_frames_and_find_frame_starts(void)
{
    const char *dir = make_temp_dir();
    static uint8_t image[SEGMENT_LENGTH];
    memset(image, 0, sizeof(image));
    int64_t start = TERM_LENGTH + 64, base = TERM_LENGTH;
    int64_t end1 = write_frames(dir, 9, base, start, base + SEGMENT_LENGTH, AA_ARCHIVE_CHECKSUM_CRC32, image);
    AA_CHECK_EQ(end1, base + SEGMENT_LENGTH);
    memset(image, 0, sizeof(image));
    int64_t stop = write_frames(dir, 9, end1, end1, end1 + 30000, AA_ARCHIVE_CHECKSUM_CRC32, image);
    aa_archive_verify_t v;
    AA_CHECK_EQ(aa_archive_segment_verify(dir, 9, start, stop, INITIAL_TERM_ID, TERM_LENGTH, SEGMENT_LENGTH, STREAM_ID,
        AA_ARCHIVE_CHECKSUM_CRC32, &v), 0);
    AA_CHECK(v.frames > 20);
    AA_CHECK_EQ(v.bytes, stop - start);
    AA_CHECK_EQ(v.bad_position, -1);
    /* a stop position past the data */
    AA_CHECK_EQ(aa_archive_segment_verify(dir, 9, start, stop + 64, INITIAL_TERM_ID, TERM_LENGTH, SEGMENT_LENGTH,
        STREAM_ID, 0, &v), 1);
    AA_CHECK_EQ(v.bad_position, stop);
    AA_CHECK(NULL != strstr(v.message, "the data ends here"));
    /* frame starts: the start, the stop (a frame may follow), not mid-frame or misaligned */
    AA_CHECK_EQ(aa_archive_segment_frame_at(dir, 9, start, start, INITIAL_TERM_ID, TERM_LENGTH, SEGMENT_LENGTH, STREAM_ID), 1);
    AA_CHECK_EQ(aa_archive_segment_frame_at(dir, 9, start, start + 32, INITIAL_TERM_ID, TERM_LENGTH, SEGMENT_LENGTH, STREAM_ID), 1);
    AA_CHECK_EQ(aa_archive_segment_frame_at(dir, 9, start, start + 64 + 64, INITIAL_TERM_ID, TERM_LENGTH, SEGMENT_LENGTH, STREAM_ID), 0);
    AA_CHECK_EQ(aa_archive_segment_frame_at(dir, 9, start, start + 8, INITIAL_TERM_ID, TERM_LENGTH, SEGMENT_LENGTH, STREAM_ID), 0);
    AA_CHECK_EQ(aa_archive_segment_frame_at(dir, 9, start, end1, INITIAL_TERM_ID, TERM_LENGTH, SEGMENT_LENGTH, STREAM_ID), 1);
    AA_CHECK_EQ(aa_archive_segment_frame_at(dir, 9, start, stop, INITIAL_TERM_ID, TERM_LENGTH, SEGMENT_LENGTH, STREAM_ID), 0);
    AA_CHECK_EQ(aa_archive_segment_frame_at(dir, 9, start, end1 + SEGMENT_LENGTH, INITIAL_TERM_ID, TERM_LENGTH, SEGMENT_LENGTH, STREAM_ID), 0);
    AA_CHECK_EQ(aa_archive_segment_frame_at(dir, 9, start, start, INITIAL_TERM_ID, TERM_LENGTH, SEGMENT_LENGTH, STREAM_ID + 1), 0);

    /* a flipped payload byte in the second segment fails its checksum there */
    int fd = aa_archive_segment_open(dir, 9, end1, SEGMENT_LENGTH, 0, 0);
    uint8_t byte;
    AA_CHECK_EQ(aa_archive_segment_read(fd, 32 + 40, &byte, 1), 1);
    byte ^= 0x10;
    AA_CHECK_EQ(aa_archive_segment_write(fd, 32 + 40, &byte, 1, 0), 0);
    AA_CHECK_EQ(aa_archive_segment_verify(dir, 9, start, stop, INITIAL_TERM_ID, TERM_LENGTH, SEGMENT_LENGTH, STREAM_ID,
        AA_ARCHIVE_CHECKSUM_CRC32, &v), 1);
    AA_CHECK_EQ(v.bad_position, end1 + 32);
    AA_CHECK(NULL != strstr(v.message, "crc-32 checksum"));
    /* erased (a truncation to end1 + 32): the data ends there */
    AA_CHECK_EQ(aa_archive_segment_erase(fd, 32, SEGMENT_LENGTH - 32, 0), 0);
    uint8_t back[64];
    AA_CHECK_EQ(aa_archive_segment_read(fd, 32, back, sizeof(back)), 64);
    for (size_t i = 0; i < sizeof(back); i++)
    {
        AA_CHECK_EQ(back[i], 0);
    }
    struct stat st;
    AA_CHECK_EQ(fstat(fd, &st), 0);
    AA_CHECK_EQ(st.st_size, SEGMENT_LENGTH);
    close(fd);
    AA_CHECK_EQ(aa_archive_segment_verify(dir, 9, start, end1 + 32, INITIAL_TERM_ID, TERM_LENGTH, SEGMENT_LENGTH,
        STREAM_ID, AA_ARCHIVE_CHECKSUM_CRC32, &v), 0);
    aa_archive_recovery_t r;
    AA_CHECK_EQ(aa_archive_segment_recover(dir, 9, start, INITIAL_TERM_ID, TERM_LENGTH, SEGMENT_LENGTH, STREAM_ID, 0,
        false, 0, &r), 0);
    AA_CHECK_EQ(r.stop_position, end1 + 32);
    /* a missing segment */
    AA_CHECK_EQ(aa_archive_segment_delete_from(dir, 9, end1, 0), 1);
    AA_CHECK_EQ(aa_archive_segment_verify(dir, 9, start, stop, INITIAL_TERM_ID, TERM_LENGTH, SEGMENT_LENGTH, STREAM_ID,
        0, &v), 1);
    AA_CHECK_EQ(v.bad_position, end1);
    AA_CHECK(NULL != strstr(v.message, "is missing"));
    remove_temp_dir();
}

int main(void)
{
    AA_RUN(should_compute_crc_known_vectors);
    AA_RUN(should_name_files_and_place_positions);
    AA_RUN(should_create_sparse_files_and_write_with_sync_levels);
    AA_RUN(should_fail_a_write_to_a_full_disk_with_storage_space);
    AA_RUN(should_apply_and_verify_frame_checksums);
    AA_RUN(should_recover_the_stop_position_from_the_last_segment);
    AA_RUN(should_tell_a_complete_zero_tail_frame_from_a_torn_one_by_checksum);
    AA_RUN(should_scan_a_sparse_segment_without_reading_its_holes);
    AA_RUN(should_verify_frames_and_find_frame_starts);
    return 0;
}
