/* Log buffer operations: metadata layout, position arithmetic, appenders, reader, scanner,
 * rebuilder, gap scanner and unblocker. */
#include <stdlib.h>
#include <string.h>

#include "aa_test.h"
#include "aa_test_log.h"
#include "logbuffer/aa_term.h"

#define TERM (64 * 1024)

typedef struct
{
    aa_mapped_log_t log;
    uint8_t *memory;
}
test_log_t;

static void new_log(test_log_t *t, int32_t initial_term_id, int32_t active_term_id, int32_t term_offset, int32_t mtu)
{
    aa_logbuffer_init_params_t p = {
        .correlation_id = 7, .initial_term_id = initial_term_id, .active_term_id = active_term_id,
        .term_offset = term_offset, .term_length = TERM, .mtu_length = mtu, .page_size = 4096, .session_id = 11,
        .stream_id = 22, .publication_window_length = TERM / 2, .max_resend = 16,
    };
    t->memory = test_log_new(&t->log, &p);
}

static void should_initialise_metadata_per_reference(void)
{
    test_log_t t;
    new_log(&t, 100, 100, 0, 1408);
    aa_logbuffer_metadata_t *m = t.log.metadata;
    AA_CHECK_EQ(m->term_tail_counters[0], (int64_t)100 << 32);
    AA_CHECK_EQ(m->term_tail_counters[1], (int64_t)(100 + 1 - 3) << 32);
    AA_CHECK_EQ(m->term_tail_counters[2], (int64_t)(100 + 2 - 3) << 32);
    AA_CHECK_EQ(m->active_term_count, 0);
    AA_CHECK_EQ(m->end_of_stream_position, INT64_MAX);
    AA_CHECK_EQ(m->default_frame_header_length, 32);
    AA_CHECK_EQ(*(int32_t *)((uint8_t *)m + 276), TERM);
    const aa_data_header_t *h = (const aa_data_header_t *)m->default_header;
    AA_CHECK_EQ(h->frame_header.flags, 0xC0);
    AA_CHECK_EQ(h->frame_header.type, AA_HDR_TYPE_DATA);
    AA_CHECK_EQ(h->session_id, 11);
    AA_CHECK_EQ(h->term_id, 100);
    aa_mapped_log_t wrapped;
    AA_CHECK_EQ(aa_mapped_log_wrap(&wrapped, t.memory, t.log.length), 0);
    AA_CHECK_EQ(wrapped.term_length, TERM);
    AA_CHECK_EQ(aa_logbuffer_producer_position(&t.log), 0);
    free(t.memory);
}

static void should_start_at_a_given_position(void)
{
    test_log_t t;
    new_log(&t, INT32_MAX - 1, INT32_MIN, 4096, 1408);
    AA_CHECK_EQ(t.log.metadata->active_term_count, 2);
    AA_CHECK_EQ(aa_logbuffer_producer_position(&t.log), 2LL * TERM + 4096);
    AA_CHECK(aa_logbuffer_rotate_log(t.log.metadata, 2, INT32_MIN));
    AA_CHECK_EQ(aa_logbuffer_producer_position(&t.log), 3LL * TERM);
    free(t.memory);
}

static void should_compute_positions_across_wrap(void)
{
    int32_t bits = aa_position_bits_to_shift(TERM);
    AA_CHECK_EQ(bits, 16);
    AA_CHECK_EQ(aa_compute_position(INT32_MIN, 32, bits, INT32_MAX), (1LL << 16) + 32);
    AA_CHECK_EQ(aa_compute_term_id_from_position((1LL << 16) + 32, bits, INT32_MAX), INT32_MIN);
    AA_CHECK_EQ(aa_compute_fragmented_length(3000, 1376), 2 * 1408 + 288);
    AA_CHECK_EQ(aa_compute_max_message_length(TERM), TERM / 8);
    AA_CHECK_EQ(aa_compute_max_message_length(1 << 30), 16 * 1024 * 1024);
    AA_CHECK_EQ(aa_logbuffer_check_term_length(100000), -1);
    AA_CHECK_EQ(aa_logbuffer_check_term_length(TERM), 0);
}

typedef struct
{
    int count;
    size_t lengths[64];
    uint8_t flags[64];
    int32_t offsets[64];
}
reads_t;

static void on_fragment(void *clientd, const uint8_t *payload, size_t length, const aa_data_header_t *header)
{
    reads_t *r = clientd;
    (void)payload;
    r->lengths[r->count] = length;
    r->flags[r->count] = header->frame_header.flags;
    r->offsets[r->count] = header->term_offset;
    r->count++;
}

static void should_append_fragment_and_read_back(void)
{
    test_log_t t;
    new_log(&t, 0, 0, 0, 1408);
    uint8_t payload[3000];
    for (int i = 0; i < 3000; i++)
    {
        payload[i] = (uint8_t)i;
    }
    aa_iovec_t iov[2] = { { payload, 1000 }, { payload + 1000, 2000 } };
    int32_t term_id = -1;
    volatile int64_t *tail = &t.log.metadata->term_tail_counters[0];
    int32_t r1 = aa_term_appender_append_unfragmented(t.log.term_buffers[0], TERM, tail, t.log.metadata->default_header,
        iov, 1, 1000, 5, &term_id);
    AA_CHECK_EQ(r1, 1024 + 32);
    AA_CHECK_EQ(term_id, 0);
    int32_t r2 = aa_term_appender_append_fragmented(t.log.term_buffers[0], TERM, tail, t.log.metadata->default_header,
        iov, 2, 3000, 1376, 6, &term_id);
    AA_CHECK_EQ(r2, r1 + 2 * 1408 + 288);
    reads_t reads = { 0 };
    int32_t fragments = 0;
    int32_t offset = aa_term_reader_read(t.log.term_buffers[0], 0, TERM, on_fragment, &reads, 10, &fragments);
    AA_CHECK_EQ(offset, r2);
    AA_CHECK_EQ(fragments, 4);
    AA_CHECK_EQ(reads.lengths[0], 1000);
    AA_CHECK_EQ(reads.flags[0], 0xC0);
    AA_CHECK_EQ(reads.flags[1], 0x80);
    AA_CHECK_EQ(reads.flags[2], 0x00);
    AA_CHECK_EQ(reads.flags[3], 0x40);
    AA_CHECK_EQ(reads.lengths[1], 1376);
    AA_CHECK_EQ(reads.lengths[3], 3000 - 2 * 1376);
    AA_CHECK_EQ(reads.offsets[1], r1);
    const aa_data_header_t *h = (const aa_data_header_t *)(t.log.term_buffers[0] + r1);
    AA_CHECK_EQ(h->reserved_value, 6);
    AA_CHECK(0 == memcmp(t.log.term_buffers[0] + r1 + 32, payload, 1376));
    AA_CHECK(0 == memcmp(t.log.term_buffers[0] + r1 + 1408 + 32, payload + 1376, 1376));

    int32_t padding = 0;
    AA_CHECK_EQ(aa_term_scanner_scan_for_availability(t.log.term_buffers[0], 0, 1408, TERM, &padding), 1056);
    AA_CHECK_EQ(aa_term_scanner_scan_for_availability(t.log.term_buffers[0], 0, 4096, TERM, &padding), 1056 + 1408 + 1408);
    AA_CHECK_EQ(padding, 0);
    free(t.memory);
}

static void should_pad_at_term_end_and_rotate(void)
{
    test_log_t t;
    new_log(&t, 0, 0, TERM - 64, 1408);
    uint8_t payload[100] = { 0 };
    aa_iovec_t iov = { payload, 100 };
    int32_t term_id;
    volatile int64_t *tail = &t.log.metadata->term_tail_counters[0];
    AA_CHECK_EQ(aa_term_appender_append_unfragmented(t.log.term_buffers[0], TERM, tail, t.log.metadata->default_header,
        &iov, 1, 100, 0, &term_id), AA_TERM_APPENDER_FAILED);
    AA_CHECK_EQ(aa_frame_length_volatile(t.log.term_buffers[0], TERM - 64), 64);
    AA_CHECK(aa_frame_is_padding(t.log.term_buffers[0], TERM - 64));
    int32_t padding = 0;
    AA_CHECK_EQ(aa_term_scanner_scan_for_availability(t.log.term_buffers[0], TERM - 64, 1408, TERM, &padding), 32);
    AA_CHECK_EQ(padding, 32);
    AA_CHECK(aa_logbuffer_rotate_log(t.log.metadata, 0, 0));
    AA_CHECK_EQ(t.log.metadata->active_term_count, 1);
    AA_CHECK_EQ(t.log.metadata->term_tail_counters[1], (int64_t)1 << 32);
    AA_CHECK(!aa_logbuffer_rotate_log(t.log.metadata, 0, 0));
    reads_t reads = { 0 };
    int32_t fragments = 0;
    AA_CHECK_EQ(aa_term_reader_read(t.log.term_buffers[0], TERM - 64, TERM, on_fragment, &reads, 10, &fragments), TERM);
    AA_CHECK_EQ(fragments, 0);
    free(t.memory);
}

static void should_commit_and_abort_claims(void)
{
    test_log_t t;
    new_log(&t, 0, 0, 0, 1408);
    volatile int64_t *tail = &t.log.metadata->term_tail_counters[0];
    int32_t term_id, frame_offset;
    AA_CHECK_EQ(aa_term_appender_claim(t.log.term_buffers[0], TERM, tail, t.log.metadata->default_header, 10, &term_id,
        &frame_offset), 64);
    AA_CHECK_EQ(aa_frame_length_volatile(t.log.term_buffers[0], 0), -42);
    aa_term_claim_commit(t.log.term_buffers[0], frame_offset);
    AA_CHECK_EQ(aa_frame_length_volatile(t.log.term_buffers[0], 0), 42);
    AA_CHECK_EQ(aa_term_appender_claim(t.log.term_buffers[0], TERM, tail, t.log.metadata->default_header, 10, &term_id,
        &frame_offset), 128);
    aa_term_claim_abort(t.log.term_buffers[0], frame_offset);
    AA_CHECK(aa_frame_is_padding(t.log.term_buffers[0], 64));
    reads_t reads = { 0 };
    int32_t fragments = 0;
    AA_CHECK_EQ(aa_term_reader_read(t.log.term_buffers[0], 0, TERM, on_fragment, &reads, 10, &fragments), 128);
    AA_CHECK_EQ(fragments, 1);
    free(t.memory);
}

typedef struct
{
    int32_t term_id;
    int32_t offset;
    size_t length;
    int calls;
}
gap_t;

static void on_gap(void *clientd, int32_t term_id, int32_t term_offset, size_t length)
{
    gap_t *g = clientd;
    g->term_id = term_id;
    g->offset = term_offset;
    g->length = length;
    g->calls++;
}

static void should_rebuild_and_find_gaps(void)
{
    test_log_t t;
    new_log(&t, 0, 0, 0, 1408);
    uint8_t packet[96];
    memset(packet, 0, sizeof(packet));
    aa_data_header_t *h = (aa_data_header_t *)packet;
    h->frame_header.frame_length = 64;
    h->frame_header.flags = 0xC0;
    h->frame_header.type = AA_HDR_TYPE_DATA;
    h->term_offset = 0;
    memset(packet + 32, 0xAB, 32);
    aa_term_rebuilder_insert(t.log.term_buffers[0], 0, packet, 64);
    h->term_offset = 192;
    aa_term_rebuilder_insert(t.log.term_buffers[0], 192, packet, 64);
    AA_CHECK(0 == memcmp(t.log.term_buffers[0] + 32, packet + 32, 32));
    AA_CHECK_EQ(((aa_data_header_t *)(t.log.term_buffers[0] + 192))->term_offset, 192);
    AA_CHECK_EQ(aa_frame_length_volatile(t.log.term_buffers[0], 0), 64);
    gap_t gap = { 0 };
    AA_CHECK_EQ(aa_term_gap_scanner_scan_for_gap(t.log.term_buffers[0], 5, 0, 256, on_gap, &gap), 64);
    AA_CHECK_EQ(gap.calls, 1);
    AA_CHECK_EQ(gap.offset, 64);
    AA_CHECK_EQ(gap.length, 128);
    AA_CHECK_EQ(gap.term_id, 5);
    gap.calls = 0;
    AA_CHECK_EQ(aa_term_gap_scanner_scan_for_gap(t.log.term_buffers[0], 5, 192, 256, on_gap, &gap), 256);
    AA_CHECK_EQ(gap.calls, 0);
    free(t.memory);
}

static void should_unblock_negative_and_zero_regions(void)
{
    test_log_t t;
    new_log(&t, 0, 0, 0, 1408);
    uint8_t *term = t.log.term_buffers[0];
    volatile int64_t *tail = &t.log.metadata->term_tail_counters[0];
    int32_t term_id, frame_offset;
    aa_term_appender_claim(term, TERM, tail, t.log.metadata->default_header, 100, &term_id, &frame_offset);
    AA_CHECK_EQ(aa_term_unblocker_unblock(t.log.metadata, term, 0, 160, 0), AA_TERM_UNBLOCKER_STATUS_UNBLOCKED);
    AA_CHECK(aa_frame_is_padding(term, 0));
    AA_CHECK_EQ(aa_frame_length_volatile(term, 0), 132);

    /* a writer that died after claiming but before writing anything leaves zeros */
    aa_get_and_add_int64(tail, 64);
    uint8_t payload[16] = { 0 };
    aa_iovec_t iov = { payload, 16 };
    aa_term_appender_append_unfragmented(term, TERM, tail, t.log.metadata->default_header, &iov, 1, 16, 0, &term_id);
    AA_CHECK_EQ(aa_term_unblocker_unblock(t.log.metadata, term, 160, 272, 0), AA_TERM_UNBLOCKER_STATUS_UNBLOCKED);
    AA_CHECK_EQ(aa_frame_length_volatile(term, 160), 64);
    AA_CHECK(aa_frame_is_padding(term, 160));
    AA_CHECK_EQ(aa_term_unblocker_unblock(t.log.metadata, term, 224, 272, 0), AA_TERM_UNBLOCKER_STATUS_NO_ACTION);

    /* a claim that crossed the end of the term by a dead writer: pad to the end and rotate */
    int64_t to_end = TERM - 272;
    aa_get_and_add_int64(tail, to_end + 64);
    AA_CHECK_EQ(aa_term_unblocker_unblock(t.log.metadata, term, 272, TERM, 0), AA_TERM_UNBLOCKER_STATUS_UNBLOCKED_TO_END);
    AA_CHECK_EQ(aa_frame_length_volatile(term, 272), TERM - 272);
    AA_CHECK_EQ(t.log.metadata->active_term_count, 1);
    free(t.memory);
}

static void should_append_exclusively(void)
{
    test_log_t t;
    new_log(&t, 0, 0, 0, 1408);
    uint8_t *term = t.log.term_buffers[0];
    volatile int64_t *tail = &t.log.metadata->term_tail_counters[0];
    uint8_t payload[2000] = { 1 };
    aa_iovec_t iov = { payload, sizeof(payload) };
    int32_t r = aa_exclusive_term_appender_append_fragmented(
        term, TERM, tail, 0, 0, t.log.metadata->default_header, &iov, 1, 2000, 1376, 0);
    AA_CHECK_EQ(r, 1408 + 672);
    AA_CHECK_EQ(*tail, r);
    r = aa_exclusive_term_appender_append_unfragmented(term, TERM, tail, 0, r, t.log.metadata->default_header, &iov, 1, 8, 0);
    AA_CHECK_EQ(r, 1408 + 672 + 64);
    AA_CHECK_EQ(aa_exclusive_term_appender_append_padding(term, TERM, tail, 0, r, t.log.metadata->default_header, 0), r + 32);
    AA_CHECK_EQ(aa_exclusive_term_appender_append_unfragmented(
        term, TERM, tail, 0, TERM - 32, t.log.metadata->default_header, &iov, 1, 8, 0), AA_TERM_APPENDER_FAILED);
    AA_CHECK_EQ(aa_term_offset(*tail, TERM), TERM);
    free(t.memory);
}

int main(void)
{
    AA_RUN(should_initialise_metadata_per_reference);
    AA_RUN(should_start_at_a_given_position);
    AA_RUN(should_compute_positions_across_wrap);
    AA_RUN(should_append_fragment_and_read_back);
    AA_RUN(should_pad_at_term_end_and_rotate);
    AA_RUN(should_commit_and_abort_claims);
    AA_RUN(should_rebuild_and_find_gaps);
    AA_RUN(should_unblock_negative_and_zero_regions);
    AA_RUN(should_append_exclusively);
    return 0;
}
