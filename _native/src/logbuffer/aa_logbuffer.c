#include <inttypes.h>
#include <string.h>

#include "logbuffer/aa_logbuffer.h"
#include "util/aa_error.h"

int aa_logbuffer_check_term_length(int64_t term_length)
{
    if (term_length < AA_LOGBUFFER_TERM_MIN_LENGTH || term_length > AA_LOGBUFFER_TERM_MAX_LENGTH ||
        !AA_IS_POWER_OF_TWO(term_length))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "term length %" PRId64 " is not a power of two between %d and %d (e.g. 65536 (64k), 1048576 (1m), "
            "16777216 (16m))", term_length, AA_LOGBUFFER_TERM_MIN_LENGTH, AA_LOGBUFFER_TERM_MAX_LENGTH);
        return -1;
    }
    return 0;
}

int aa_logbuffer_check_page_size(int64_t page_size)
{
    if (page_size < AA_PAGE_MIN_SIZE || page_size > AA_PAGE_MAX_SIZE || !AA_IS_POWER_OF_TWO(page_size))
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "page size %" PRId64 " is not a power of two between %d and %d", page_size, AA_PAGE_MIN_SIZE, AA_PAGE_MAX_SIZE);
        return -1;
    }
    return 0;
}

void aa_mapped_log_init(aa_mapped_log_t *log, uint8_t *addr, size_t length, int32_t term_length)
{
    log->addr = addr;
    log->length = length;
    log->term_length = term_length;
    for (int i = 0; i < AA_LOGBUFFER_PARTITION_COUNT; i++)
    {
        log->term_buffers[i] = addr + (size_t)i * (size_t)term_length;
    }
    log->metadata = (aa_logbuffer_metadata_t *)(addr + (size_t)term_length * AA_LOGBUFFER_PARTITION_COUNT);
}

int aa_mapped_log_wrap(aa_mapped_log_t *log, uint8_t *addr, size_t length)
{
    for (int64_t term_length = AA_LOGBUFFER_TERM_MIN_LENGTH; term_length <= AA_LOGBUFFER_TERM_MAX_LENGTH; term_length <<= 1)
    {
        size_t needed = (size_t)term_length * AA_LOGBUFFER_PARTITION_COUNT + AA_LOGBUFFER_META_DATA_LENGTH;
        if (needed > length)
        {
            break;
        }
        const aa_logbuffer_metadata_t *metadata = (const aa_logbuffer_metadata_t *)(addr + needed - AA_LOGBUFFER_META_DATA_LENGTH);
        if (metadata->term_length == term_length && metadata->page_size > 0 &&
            aa_logbuffer_compute_log_length((int32_t)term_length, metadata->page_size) == length)
        {
            aa_mapped_log_init(log, addr, length, (int32_t)term_length);
            return 0;
        }
    }
    AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR, "log buffer of %zu bytes has no valid metadata (not a log buffer?)", length);
    return -1;
}

void aa_logbuffer_metadata_init(aa_mapped_log_t *log, const aa_logbuffer_init_params_t *params)
{
    aa_logbuffer_metadata_t *m = log->metadata;
    int32_t term_count = (int32_t)((uint32_t)params->active_term_id - (uint32_t)params->initial_term_id);
    int32_t index = aa_index_by_term_count(term_count);

    m->term_tail_counters[index] = aa_pack_tail(params->active_term_id, params->term_offset);
    for (int i = 1; i < AA_LOGBUFFER_PARTITION_COUNT; i++)
    {
        int32_t expected_term_id = (int32_t)((uint32_t)params->active_term_id + (uint32_t)i - AA_LOGBUFFER_PARTITION_COUNT);
        m->term_tail_counters[(index + i) % AA_LOGBUFFER_PARTITION_COUNT] = aa_pack_tail(expected_term_id, 0);
    }
    m->active_term_count = term_count;
    m->end_of_stream_position = INT64_MAX;
    m->is_connected = 0;
    m->active_transport_count = 0;
    m->correlation_id = params->correlation_id;
    m->initial_term_id = params->initial_term_id;
    m->default_frame_header_length = AA_DATA_HEADER_LENGTH;
    m->mtu_length = params->mtu_length;
    m->term_length = params->term_length;
    m->page_size = params->page_size;
    m->publication_window_length = params->publication_window_length;
    m->receiver_window_length = params->receiver_window_length;
    m->max_resend = params->max_resend;
    aa_logbuffer_fill_default_header(m->default_header, params->session_id, params->stream_id, params->initial_term_id);
    m->entity_tag = params->entity_tag;
    m->response_correlation_id = -1;
    m->linger_timeout_ns = params->linger_timeout_ns;
    m->untethered_window_limit_timeout_ns = params->untethered_window_limit_timeout_ns;
    m->untethered_resting_timeout_ns = params->untethered_resting_timeout_ns;
    m->untethered_linger_timeout_ns = params->untethered_linger_timeout_ns;
    m->type = (uint8_t)params->type;
    m->is_publication_revoked = 0;
    m->group = params->group;
    m->is_response = 0;
    m->rejoin = params->rejoin;
    m->reliable = params->reliable;
    m->sparse = params->sparse;
    m->signal_eos = params->signal_eos;
    m->spies_simulate_connection = params->spies_simulate_connection;
    m->tether = params->tether;
    aa_release_fence();
}

bool aa_logbuffer_rotate_log(aa_logbuffer_metadata_t *metadata, int32_t current_term_count, int32_t current_term_id)
{
    int32_t next_term_id = (int32_t)((uint32_t)current_term_id + 1);
    int32_t next_term_count = current_term_count + 1;
    int32_t next_index = aa_index_by_term_count(next_term_count);
    int32_t expected_term_id = (int32_t)((uint32_t)next_term_id - AA_LOGBUFFER_PARTITION_COUNT);
    int64_t new_raw_tail = aa_pack_tail(next_term_id, 0);
    int64_t raw_tail;
    do
    {
        raw_tail = aa_get_int64_volatile(&metadata->term_tail_counters[next_index]);
        if (expected_term_id != aa_term_id(raw_tail))
        {
            break;
        }
    }
    while (!aa_cas_int64(&metadata->term_tail_counters[next_index], raw_tail, new_raw_tail));
    return aa_cas_int32(&metadata->active_term_count, current_term_count, next_term_count);
}

int64_t aa_logbuffer_producer_position(aa_mapped_log_t *log)
{
    aa_logbuffer_metadata_t *m = log->metadata;
    int32_t term_count = aa_logbuffer_active_term_count(m);
    int64_t raw_tail = aa_get_int64_volatile(&m->term_tail_counters[aa_index_by_term_count(term_count)]);
    int32_t bits = aa_position_bits_to_shift(log->term_length);
    return aa_compute_term_begin_position(aa_term_id(raw_tail), bits, m->initial_term_id) +
        aa_term_offset(raw_tail, log->term_length);
}
