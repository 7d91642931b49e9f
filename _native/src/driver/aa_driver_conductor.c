#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "aa_driver_conductor.h"
#include "../../../protocols/aa_control_protocol.h"
#include "../logbuffer/aa_logbuffer.h"
#include "../uri/aa_uri.h"
#include "../util/aa_clock.h"
#include "../util/aa_error.h"

#define AA_COMMAND_DRAIN_LIMIT 10
#define AA_CHANNEL_STATUS_INDICATOR_NOT_ALLOCATED (-1)

#define AA_ARRAY_ENSURE(array, type) \
    ((array##_count < array##_capacity) ? 0 : aa_array_grow((void **)&array, &array##_capacity, sizeof(type)))

static int aa_array_grow(void **array, size_t *capacity, size_t element_size)
{
    size_t new_capacity = 0 == *capacity ? 8 : *capacity * 2;
    void *grown = realloc(*array, new_capacity * element_size);
    if (NULL == grown)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory growing a conductor table");
        return -1;
    }
    *array = grown;
    *capacity = new_capacity;
    return 0;
}

void aa_driver_conductor_log_error(aa_driver_conductor_t *conductor, int32_t code, const char *message)
{
    aa_distinct_error_log_record(&conductor->error_log, aa_epoch_clock(), code, message);
    aa_get_and_add_int64(conductor->system_counters[AA_SYSTEM_COUNTER_ERRORS], 1);
}

void aa_driver_conductor_record_cycle(
    aa_driver_conductor_t *conductor, int64_t cycle_ns, int64_t threshold_ns, int max_counter, int exceeded_counter)
{
    volatile int64_t *max_cycle = conductor->system_counters[max_counter];
    if (cycle_ns > aa_get_int64_volatile(max_cycle))
    {
        aa_put_int64_release(max_cycle, cycle_ns);
    }
    if (cycle_ns > threshold_ns)
    {
        aa_get_and_add_int64(conductor->system_counters[exceeded_counter], 1);
    }
}

/* ---- responses ---- */

static void aa_conductor_transmit(aa_driver_conductor_t *conductor, int32_t msg_type_id, const void *msg, size_t length)
{
    if (aa_broadcast_transmitter_transmit(&conductor->to_clients, msg_type_id, msg, length) < 0)
    {
        aa_driver_conductor_log_error(conductor, AA_ERROR_CODE_GENERIC_ERROR, aa_errmsg());
    }
}

static void aa_conductor_on_error(
    aa_driver_conductor_t *conductor, int64_t correlation_id, int32_t error_code, const char *message)
{
    size_t message_length = strlen(message);
    size_t max = sizeof(conductor->response) - sizeof(aa_error_response_t);
    message_length = message_length < max ? message_length : max;
    aa_error_response_t *response = (aa_error_response_t *)conductor->response;
    response->offending_command_correlation_id = correlation_id;
    response->error_code = error_code;
    response->error_message_length = (int32_t)message_length;
    memcpy(conductor->response + sizeof(aa_error_response_t), message, message_length);
    aa_conductor_transmit(conductor, AA_RESPONSE_ON_ERROR, conductor->response, sizeof(*response) + message_length);
    aa_driver_conductor_log_error(conductor, error_code, message);
}

static void aa_conductor_on_operation_success(aa_driver_conductor_t *conductor, int64_t correlation_id)
{
    aa_operation_succeeded_t response = { .correlation_id = correlation_id };
    aa_conductor_transmit(conductor, AA_RESPONSE_ON_OPERATION_SUCCESS, &response, sizeof(response));
}

static void aa_conductor_on_publication_ready(
    aa_driver_conductor_t *conductor, int64_t correlation_id, int64_t registration_id, int32_t session_id,
    int32_t stream_id, int32_t position_limit_counter_id, int32_t channel_status_indicator_id, const char *log_path,
    bool is_exclusive)
{
    aa_publication_buffers_ready_t *response = (aa_publication_buffers_ready_t *)conductor->response;
    size_t path_length = strlen(log_path);
    response->correlation_id = correlation_id;
    response->registration_id = registration_id;
    response->session_id = session_id;
    response->stream_id = stream_id;
    response->position_limit_counter_id = position_limit_counter_id;
    response->channel_status_indicator_id = channel_status_indicator_id;
    response->log_file_length = (int32_t)path_length;
    memcpy(conductor->response + sizeof(*response), log_path, path_length);
    aa_conductor_transmit(
        conductor,
        is_exclusive ? AA_RESPONSE_ON_EXCLUSIVE_PUBLICATION_READY : AA_RESPONSE_ON_PUBLICATION_READY,
        conductor->response,
        sizeof(*response) + path_length);
}

static void aa_conductor_send_available_image(
    aa_driver_conductor_t *conductor, int64_t correlation_id, int32_t session_id, int32_t stream_id,
    int64_t subscription_registration_id, int32_t position_counter_id, const char *log_path, const char *source_identity)
{
    uint8_t *buf = conductor->response;
    aa_image_buffers_ready_t *response = (aa_image_buffers_ready_t *)buf;
    size_t path_length = strlen(log_path);
    response->correlation_id = correlation_id;
    response->session_id = session_id;
    response->stream_id = stream_id;
    response->subscriber_registration_id = subscription_registration_id;
    response->subscriber_position_id = position_counter_id;
    response->log_file_length = (int32_t)path_length;
    size_t offset = sizeof(*response);
    memcpy(buf + offset, log_path, path_length);
    offset += AA_ALIGN(path_length, sizeof(int32_t));
    int32_t identity_length = (int32_t)strlen(source_identity);
    memcpy(buf + offset, &identity_length, sizeof(identity_length));
    offset += sizeof(identity_length);
    memcpy(buf + offset, source_identity, (size_t)identity_length);
    offset += (size_t)identity_length;
    aa_conductor_transmit(conductor, AA_RESPONSE_ON_AVAILABLE_IMAGE, buf, offset);
}

static void aa_conductor_send_unavailable_image(
    aa_driver_conductor_t *conductor, int64_t correlation_id, int64_t subscription_registration_id, int32_t stream_id,
    const char *channel)
{
    aa_image_message_t *response = (aa_image_message_t *)conductor->response;
    size_t channel_length = strlen(channel);
    response->correlation_id = correlation_id;
    response->subscription_registration_id = subscription_registration_id;
    response->stream_id = stream_id;
    response->channel_length = (int32_t)channel_length;
    memcpy(conductor->response + sizeof(*response), channel, channel_length);
    aa_conductor_transmit(
        conductor, AA_RESPONSE_ON_UNAVAILABLE_IMAGE, conductor->response, sizeof(*response) + channel_length);
}

static void aa_conductor_on_available_image(
    aa_driver_conductor_t *conductor, aa_ipc_publication_t *pub, int64_t subscription_registration_id,
    int32_t position_counter_id)
{
    aa_conductor_send_available_image(
        conductor, pub->registration_id, pub->session_id, pub->stream_id, subscription_registration_id,
        position_counter_id, pub->log_path, "aeron:ipc");
}

static void aa_conductor_on_unavailable_image(
    aa_driver_conductor_t *conductor, aa_ipc_publication_t *pub, int64_t subscription_registration_id)
{
    aa_conductor_send_unavailable_image(
        conductor, pub->registration_id, subscription_registration_id, pub->stream_id, pub->channel);
}

/* ---- counters ---- */

static int32_t aa_conductor_allocate_stream_counter(
    aa_driver_conductor_t *conductor, int32_t type_id, const char *name, int64_t registration_id,
    int32_t session_id, int32_t stream_id, const char *channel, int64_t now_ms)
{
    uint8_t key[AA_COUNTER_KEY_MAX_LENGTH];
    memset(key, 0, sizeof(key));
    size_t channel_length = strlen(channel);
    size_t key_channel_max = sizeof(key) - 20;
    size_t key_channel_length = channel_length < key_channel_max ? channel_length : key_channel_max;
    int32_t key_channel_length32 = (int32_t)key_channel_length;
    memcpy(key, &registration_id, 8);
    memcpy(key + 8, &session_id, 4);
    memcpy(key + 12, &stream_id, 4);
    memcpy(key + 16, &key_channel_length32, 4);
    memcpy(key + 20, channel, key_channel_length);

    char label[AA_COUNTER_LABEL_MAX_LENGTH];
    int label_length = snprintf(
        label, sizeof(label), "%s: %" PRId64 " %" PRId32 " %" PRId32 " %s",
        name, registration_id, session_id, stream_id, channel);
    label_length = label_length < (int)sizeof(label) ? label_length : (int)sizeof(label) - 1;

    int32_t id = aa_counters_manager_allocate(
        &conductor->counters, now_ms, type_id, key, 20 + key_channel_length, label, (size_t)label_length);
    if (id >= 0)
    {
        aa_counter_set_registration_id(&conductor->counters, id, registration_id);
    }
    return id;
}

static void aa_conductor_free_counter(aa_driver_conductor_t *conductor, int32_t id, int64_t now_ms)
{
    if (id >= 0)
    {
        aa_counters_manager_free(&conductor->counters, now_ms, id);
    }
}

/* snd-channel / rcv-channel: the endpoint status (reference 3), keyed by the channel. */
static int32_t aa_conductor_allocate_channel_status_counter(
    aa_driver_conductor_t *conductor, int32_t type_id, const char *name, const char *channel, int64_t now_ms)
{
    uint8_t key[AA_COUNTER_KEY_MAX_LENGTH];
    memset(key, 0, sizeof(key));
    size_t channel_length = strlen(channel);
    size_t key_channel_max = sizeof(key) - sizeof(int32_t);
    size_t key_channel_length = channel_length < key_channel_max ? channel_length : key_channel_max;
    int32_t key_channel_length32 = (int32_t)key_channel_length;
    memcpy(key, &key_channel_length32, sizeof(key_channel_length32));
    memcpy(key + sizeof(int32_t), channel, key_channel_length);

    char label[AA_COUNTER_LABEL_MAX_LENGTH];
    int label_length = snprintf(label, sizeof(label), "%s: %s", name, channel);
    label_length = label_length < (int)sizeof(label) ? label_length : (int)sizeof(label) - 1;
    return aa_counters_manager_allocate(
        &conductor->counters, now_ms, type_id, key, sizeof(int32_t) + key_channel_length, label, (size_t)label_length);
}

/* ---- clients ---- */

static aa_driver_client_t *aa_conductor_find_client(aa_driver_conductor_t *conductor, int64_t client_id)
{
    for (size_t i = 0; i < conductor->clients_count; i++)
    {
        if (conductor->clients[i].client_id == client_id)
        {
            return &conductor->clients[i];
        }
    }
    return NULL;
}

static aa_driver_client_t *aa_conductor_get_or_add_client(aa_driver_conductor_t *conductor, int64_t client_id, int64_t now_ms)
{
    aa_driver_client_t *client = aa_conductor_find_client(conductor, client_id);
    if (NULL != client)
    {
        return client;
    }
    if (AA_ARRAY_ENSURE(conductor->clients, aa_driver_client_t) < 0)
    {
        return NULL;
    }
    uint8_t key[8];
    memcpy(key, &client_id, sizeof(client_id));
    char label[64];
    int label_length = snprintf(label, sizeof(label), "client-heartbeat: %" PRId64, client_id);
    int32_t id = aa_counters_manager_allocate(
        &conductor->counters, now_ms, AA_COUNTER_TYPE_CLIENT_HEARTBEAT, key, sizeof(key), label, (size_t)label_length);
    if (id < 0)
    {
        return NULL;
    }
    aa_counter_set_registration_id(&conductor->counters, id, client_id);
    volatile int64_t *heartbeat = aa_counters_manager_addr(&conductor->counters, id);
    aa_put_int64_release(heartbeat, now_ms);

    client = &conductor->clients[conductor->clients_count++];
    client->client_id = client_id;
    client->heartbeat_counter_id = id;
    client->heartbeat = heartbeat;
    return client;
}

/* ---- publications ---- */

static void aa_conductor_link_subscriber(
    aa_driver_conductor_t *conductor, aa_ipc_publication_t *pub, aa_subscription_link_t *link,
    int64_t now_ns, int64_t now_ms)
{
    if (NULL != link->endpoint || link->stream_id != pub->stream_id ||
        (link->has_session_id && link->session_id != pub->session_id))
    {
        return;
    }
    if (NULL != aa_ipc_publication_find_subscriber(pub, link->registration_id))
    {
        return;
    }
    int64_t join_position = aa_ipc_publication_join_position(pub);
    int32_t counter_id = aa_conductor_allocate_stream_counter(
        conductor, AA_COUNTER_TYPE_SUBSCRIBER_POSITION, "sub-pos", link->registration_id, pub->session_id,
        pub->stream_id, link->channel, now_ms);
    if (counter_id < 0)
    {
        aa_driver_conductor_log_error(conductor, AA_ERROR_CODE_GENERIC_ERROR, aa_errmsg());
        return;
    }
    char suffix[48];
    int suffix_length = snprintf(suffix, sizeof(suffix), " @%" PRId64, join_position);
    aa_counters_manager_append_to_label(&conductor->counters, counter_id, suffix, (size_t)suffix_length);
    volatile int64_t *value = aa_counters_manager_addr(&conductor->counters, counter_id);
    aa_put_int64_release(value, join_position);
    if (aa_ipc_publication_add_subscriber(
        pub, link->registration_id, link->client_id, counter_id, value, link->is_tether, now_ns) < 0)
    {
        aa_conductor_free_counter(conductor, counter_id, now_ms);
        aa_driver_conductor_log_error(conductor, ENOMEM, "out of memory adding a subscriber");
        return;
    }
    aa_conductor_on_available_image(conductor, pub, link->registration_id, counter_id);
}

/* The positions the driver's mappings of logs are kept populated ahead of (aa_prefault.h): the
 * sender reads behind the producer; the receiver writes up to its high-water mark; cleaning follows
 * behind the producer of an IPC log. */
static int64_t aa_conductor_ipc_publication_prefault_position(const void *pub)
{
    return aa_ipc_publication_producer_position((aa_ipc_publication_t *)pub);
}

static int64_t aa_conductor_network_publication_prefault_position(const void *pub)
{
    return aa_network_publication_producer_position((aa_network_publication_t *)pub);
}

static int64_t aa_conductor_image_prefault_position(const void *image)
{
    return aa_get_int64_volatile(((const aa_publication_image_t *)image)->rcv_hwm);
}

static int aa_conductor_check_storage(aa_driver_conductor_t *conductor, size_t log_length)
{
    if (!conductor->ctx->perform_storage_checks)
    {
        return 0;
    }
    struct statvfs vfs;
    if (0 == statvfs(conductor->ctx->aeron_dir, &vfs))
    {
        uint64_t usable = (uint64_t)vfs.f_bavail * vfs.f_frsize;
        if (usable < log_length)
        {
            AA_SET_ERR(AA_ERROR_CODE_STORAGE_SPACE,
                "insufficient usable storage for a new log of %zu bytes in %s (%" PRIu64 " bytes usable); "
                "free space there or use a shorter term-length", log_length, conductor->ctx->aeron_dir, usable);
            return -1;
        }
    }
    return 0;
}

static bool aa_conductor_session_id_in_use(aa_driver_conductor_t *conductor, int32_t stream_id, int32_t session_id)
{
    for (size_t i = 0; i < conductor->ipc_publications_count; i++)
    {
        aa_ipc_publication_t *p = conductor->ipc_publications[i];
        if (p->stream_id == stream_id && p->session_id == session_id && AA_IPC_PUBLICATION_STATE_DONE != p->state)
        {
            return true;
        }
    }
    for (size_t i = 0; i < conductor->network_publications_count; i++)
    {
        aa_network_publication_t *p = conductor->network_publications[i];
        if (p->stream_id == stream_id && p->session_id == session_id)
        {
            return true;
        }
    }
    return false;
}

static int32_t aa_conductor_next_session_id(aa_driver_conductor_t *conductor, int32_t stream_id)
{
    int32_t low = conductor->ctx->publication_reserved_session_id_low;
    int32_t high = conductor->ctx->publication_reserved_session_id_high;
    for (;;)
    {
        int32_t candidate = conductor->next_session_id;
        conductor->next_session_id = (int32_t)((uint32_t)candidate + 1);
        if ((candidate < low || candidate > high) && !aa_conductor_session_id_in_use(conductor, stream_id, candidate))
        {
            return candidate;
        }
    }
}

typedef struct aa_publication_params_stct
{
    int32_t term_length;
    int32_t mtu_length;
    bool has_position;
    int32_t initial_term_id;
    int32_t term_id;
    int32_t term_offset;
    bool has_session_id;
    int32_t session_id;
    int64_t linger_timeout_ns;
    int64_t term_window_length;
    bool sparse;
    bool signal_eos;
    bool tether;
}
aa_publication_params_t;

/* How far a publisher may run ahead: term/2 unless configured (0 = term/2), never above term/2. */
static int64_t aa_conductor_term_window_length(int64_t configured, int32_t term_length)
{
    int64_t half = term_length / 2;
    return 0 == configured ? half : (configured < half ? configured : half);
}

static int aa_conductor_parse_publication_params(
    aa_driver_conductor_t *conductor, const aa_uri_t *uri, aa_publication_params_t *params)
{
    aa_driver_context_t *ctx = conductor->ctx;
    bool is_udp = AA_URI_MEDIA_UDP == uri->media;
    int64_t term_length = is_udp ? ctx->term_buffer_length : ctx->ipc_term_buffer_length;
    int64_t mtu = is_udp ? ctx->mtu_length : ctx->ipc_mtu_length;
    params->linger_timeout_ns = ctx->publication_linger_timeout_ns;
    params->sparse = ctx->term_buffer_sparse_file;
    params->signal_eos = true;
    params->tether = ctx->tether_subscriptions;

    if (aa_uri_get_size(uri, "term-length", &term_length) < 0 ||
        aa_uri_get_size(uri, "mtu", &mtu) < 0 ||
        aa_uri_get_duration_ns(uri, "linger", &params->linger_timeout_ns) < 0 ||
        aa_uri_get_bool(uri, "sparse", &params->sparse) < 0 ||
        aa_uri_get_bool(uri, "eos", &params->signal_eos) < 0 ||
        aa_uri_get_bool(uri, "tether", &params->tether) < 0)
    {
        return -1;
    }
    if (aa_logbuffer_check_term_length(term_length) < 0)
    {
        AA_APPEND_ERR("%s", "channel parameter term-length");
        return -1;
    }
    if (mtu < 64 || mtu > 65504 || 0 != (mtu % AA_LOGBUFFER_FRAME_ALIGNMENT) || mtu > term_length)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "channel parameter mtu=%" PRId64 " must be a multiple of 32 between 64 and 65504 and at most the term length",
            mtu);
        return -1;
    }
    params->term_length = (int32_t)term_length;
    params->mtu_length = (int32_t)mtu;
    params->term_window_length = aa_conductor_term_window_length(
        is_udp ? ctx->publication_term_window_length : ctx->ipc_publication_term_window_length, params->term_length);
    int64_t publication_window = 0;
    int rc_window = is_udp ? aa_uri_get_size(uri, "pub-wnd", &publication_window) : 0;
    if (rc_window < 0)
    {
        return -1;
    }
    if (1 == rc_window)
    {
        if (publication_window < mtu || publication_window > term_length / 2)
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
                "channel parameter pub-wnd=%" PRId64 " must be at least the mtu (%" PRId64 ") and at most half the "
                "term length (%" PRId64 ")", publication_window, mtu, term_length / 2);
            return -1;
        }
        params->term_window_length = publication_window;
    }

    int rc_session = aa_uri_get_int32(uri, "session-id", &params->session_id);
    if (rc_session < 0)
    {
        return -1;
    }
    params->has_session_id = 1 == rc_session;

    int rc_init = aa_uri_get_int32(uri, "init-term-id", &params->initial_term_id);
    int rc_term = aa_uri_get_int32(uri, "term-id", &params->term_id);
    int rc_offset = aa_uri_get_int32(uri, "term-offset", &params->term_offset);
    if (rc_init < 0 || rc_term < 0 || rc_offset < 0)
    {
        return -1;
    }
    int count = rc_init + rc_term + rc_offset;
    if (0 != count && 3 != count)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL, "%s",
            "init-term-id, term-id and term-offset must be given together (e.g. init-term-id=0|term-id=2|term-offset=4096)");
        return -1;
    }
    params->has_position = 3 == count;
    if (params->has_position)
    {
        int32_t term_count = (int32_t)((uint32_t)params->term_id - (uint32_t)params->initial_term_id);
        if (term_count < 0)
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL, "term-id=%" PRId32 " is before init-term-id=%" PRId32,
                params->term_id, params->initial_term_id);
            return -1;
        }
        if (params->term_offset < 0 || params->term_offset > params->term_length ||
            0 != (params->term_offset % AA_LOGBUFFER_FRAME_ALIGNMENT))
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
                "term-offset=%" PRId32 " must be a multiple of 32 between 0 and the term length %" PRId32,
                params->term_offset, params->term_length);
            return -1;
        }
    }
    return 0;
}

static aa_ipc_publication_t *aa_conductor_create_ipc_publication(
    aa_driver_conductor_t *conductor, int64_t registration_id, int32_t stream_id, const char *channel,
    const aa_publication_params_t *params, bool is_exclusive, int64_t now_ns, int64_t now_ms)
{
    aa_driver_context_t *ctx = conductor->ctx;
    aa_ipc_publication_t *pub = calloc(1, sizeof(aa_ipc_publication_t));
    if (NULL == pub || NULL == (pub->channel = strdup(channel)))
    {
        free(pub);
        AA_SET_ERR(ENOMEM, "%s", "out of memory creating a publication");
        return NULL;
    }
    pub->pub_lmt_counter_id = -1;
    pub->pub_pos_counter_id = -1;
    pub->conductor = conductor;
    pub->registration_id = registration_id;
    pub->stream_id = stream_id;
    pub->is_exclusive = is_exclusive;
    pub->session_id = params->has_session_id ? params->session_id : aa_conductor_next_session_id(conductor, stream_id);
    pub->term_length = params->term_length;
    pub->mtu_length = params->mtu_length;
    pub->position_bits_to_shift = aa_position_bits_to_shift(params->term_length);
    pub->unblock_timeout_ns = ctx->publication_unblock_timeout_ns;
    pub->linger_timeout_ns = params->linger_timeout_ns;
    pub->untethered_window_limit_timeout_ns = ctx->untethered_window_limit_timeout_ns;
    pub->untethered_resting_timeout_ns = ctx->untethered_resting_timeout_ns;
    pub->term_window_length = params->term_window_length;

    snprintf(pub->log_path, sizeof(pub->log_path), "%s/publications/%" PRId64 ".logbuffer", ctx->aeron_dir, registration_id);
    size_t log_length = aa_logbuffer_compute_log_length(params->term_length, (int32_t)ctx->file_page_size);
    if (aa_conductor_check_storage(conductor, log_length) < 0 ||
        aa_map_new_file(&pub->mapped, pub->log_path, log_length, params->sparse) < 0)
    {
        aa_ipc_publication_free(pub);
        return NULL;
    }
    conductor->bytes_mapped += (int64_t)log_length;

    int32_t initial_term_id = params->has_position ? params->initial_term_id : (int32_t)(rand() ^ (int32_t)now_ns);
    aa_logbuffer_init_params_t init = {
        .correlation_id = registration_id,
        .initial_term_id = initial_term_id,
        .active_term_id = params->has_position ? params->term_id : initial_term_id,
        .term_offset = params->has_position ? params->term_offset : 0,
        .term_length = params->term_length,
        .mtu_length = params->mtu_length,
        .page_size = (int32_t)ctx->file_page_size,
        .session_id = pub->session_id,
        .stream_id = stream_id,
        .publication_window_length = (int32_t)pub->term_window_length,
        .receiver_window_length = 0,
        .linger_timeout_ns = params->linger_timeout_ns,
        .untethered_window_limit_timeout_ns = ctx->untethered_window_limit_timeout_ns,
        .untethered_resting_timeout_ns = ctx->untethered_resting_timeout_ns,
        .sparse = params->sparse,
        .tether = params->tether,
        .rejoin = ctx->rejoin_stream,
        .reliable = ctx->reliable_stream,
        .signal_eos = params->signal_eos,
        .group = false,
        .spies_simulate_connection = ctx->spies_simulate_connection,
        .max_resend = 16,
    };
    aa_mapped_log_init(&pub->log, pub->mapped.addr, pub->mapped.length, params->term_length);
    aa_logbuffer_metadata_init(&pub->log, &init);
    pub->initial_term_id = initial_term_id;

    int64_t start_position = aa_compute_position(
        init.active_term_id, init.term_offset, pub->position_bits_to_shift, initial_term_id);
    pub->start_position = start_position;
    pub->consumer_position = start_position;
    pub->last_consumer_position = start_position;
    pub->clean_position = start_position;
    pub->time_of_last_consumer_position_change_ns = now_ns;

    pub->pub_lmt_counter_id = aa_conductor_allocate_stream_counter(
        conductor, AA_COUNTER_TYPE_PUBLISHER_LIMIT, "pub-lmt", registration_id, pub->session_id, stream_id, channel, now_ms);
    pub->pub_pos_counter_id = pub->pub_lmt_counter_id < 0 ? -1 : aa_conductor_allocate_stream_counter(
        conductor, AA_COUNTER_TYPE_PUBLISHER_POSITION, "pub-pos (sampled)", registration_id, pub->session_id, stream_id,
        channel, now_ms);
    if (pub->pub_pos_counter_id < 0)
    {
        aa_conductor_free_counter(conductor, pub->pub_lmt_counter_id, now_ms);
        conductor->bytes_mapped -= (int64_t)pub->mapped.length;
        unlink(pub->log_path);
        aa_ipc_publication_free(pub);
        return NULL;
    }
    pub->pub_lmt = aa_counters_manager_addr(&conductor->counters, pub->pub_lmt_counter_id);
    pub->pub_pos = aa_counters_manager_addr(&conductor->counters, pub->pub_pos_counter_id);
    aa_put_int64_release(pub->pub_lmt, start_position);
    aa_put_int64_release(pub->pub_pos, start_position);
    pub->state = AA_IPC_PUBLICATION_STATE_ACTIVE;
    pub->time_of_last_state_change_ns = now_ns;
    pub->refcnt = 0;

    if (AA_ARRAY_ENSURE(conductor->ipc_publications, aa_ipc_publication_t *) < 0)
    {
        aa_conductor_free_counter(conductor, pub->pub_lmt_counter_id, now_ms);
        aa_conductor_free_counter(conductor, pub->pub_pos_counter_id, now_ms);
        conductor->bytes_mapped -= (int64_t)pub->mapped.length;
        unlink(pub->log_path);
        aa_ipc_publication_free(pub);
        return NULL;
    }
    conductor->ipc_publications[conductor->ipc_publications_count++] = pub;
    aa_put_int64_release(conductor->system_counters[AA_SYSTEM_COUNTER_BYTES_CURRENTLY_MAPPED], conductor->bytes_mapped);
    if (pub->mapped.allocated)
    {
        aa_prefault_add(&conductor->prefault, pub->mapped.addr, pub->term_length, start_position,
            aa_conductor_ipc_publication_prefault_position, pub);
    }
    return pub;
}

static void aa_conductor_decref_publication(aa_driver_conductor_t *conductor, aa_publication_link_t *link, int64_t now_ns)
{
    (void)conductor;
    aa_ipc_publication_t *pub = link->publication;
    aa_network_publication_t *network = link->network_publication;
    if (NULL != pub && --pub->refcnt <= 0 && AA_IPC_PUBLICATION_STATE_ACTIVE == pub->state)
    {
        aa_ipc_publication_begin_draining(pub, now_ns);
    }
    if (NULL != network && --network->refcnt <= 0 && AA_NETWORK_PUBLICATION_STATE_ACTIVE == network->state)
    {
        aa_network_publication_begin_draining(network, now_ns);
    }
}

static int aa_conductor_parse_channel(const char *channel, aa_uri_t *uri)
{
    if (aa_uri_parse(channel, uri) < 0)
    {
        return -1;
    }
    if (uri->is_spy)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "channel %s: spy subscriptions (aeron-spy:) are not supported by this driver; it carries aeron:ipc and "
            "unicast aeron:udp?endpoint=host:port", channel);
        return -1;
    }
    return 0;
}

/* Resolves a UDP channel (BLOCKING: name lookups) and rejects what this driver does not carry. */
static int aa_conductor_parse_udp_channel(
    aa_driver_conductor_t *conductor, const char *channel, bool is_publication, aa_udp_channel_t **out)
{
    aa_driver_context_t *ctx = conductor->ctx;
    aa_udp_channel_defaults_t defaults =
    {
        (int32_t)ctx->socket_so_rcvbuf, (int32_t)ctx->socket_so_sndbuf, ctx->socket_multicast_ttl
    };
    if (aa_udp_channel_parse(out, channel, &defaults) < 0)
    {
        return -1;
    }
    aa_udp_channel_t *udp = *out;
    const char *unsupported = NULL;
    const char *cc = aa_uri_find_param(&udp->uri, "cc");
    if (udp->is_multicast)
    {
        unsupported = "multicast";
    }
    else if (udp->has_explicit_control || AA_UDP_CHANNEL_CONTROL_MODE_NONE != udp->control_mode)
    {
        unsupported = "multi-destination-cast and response channels (control=, control-mode=)";
    }
    else if (!udp->has_explicit_endpoint)
    {
        unsupported = "a UDP channel without endpoint=";
    }
    else if (NULL != cc && 0 != strcmp(cc, "static"))
    {
        unsupported = "congestion control other than cc=static";
    }
    if (NULL != unsupported)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "channel %s: %s is not supported by this driver; it carries aeron:ipc and unicast "
            "aeron:udp?endpoint=host:port", channel, unsupported);
        aa_udp_channel_delete(udp);
        *out = NULL;
        return -1;
    }
    if (is_publication && 0 == aa_udp_address_port(&udp->remote_data))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "channel %s: a publication needs the port it sends to (endpoint=host:port with a port above 0)", channel);
        aa_udp_channel_delete(udp);
        *out = NULL;
        return -1;
    }
    return 0;
}

static aa_loss_generator_settings_t aa_conductor_loss_settings(aa_driver_conductor_t *conductor)
{
    aa_loss_generator_settings_t settings =
    {
        &conductor->ctx->udp_receive_loss, &conductor->ctx->udp_send_loss, (uint64_t)conductor->ctx->udp_loss_seed
    };
    return settings;
}

/* The send endpoint of a channel: an open one with the same canonical form, else a new socket. Takes
 * ownership of *udp (NULL afterwards when the endpoint kept it). */
static aa_send_channel_endpoint_t *aa_conductor_get_or_create_send_endpoint(
    aa_driver_conductor_t *conductor, aa_udp_channel_t **udp, const char *channel, int64_t now_ms)
{
    for (size_t i = 0; i < conductor->send_endpoints_count; i++)
    {
        aa_send_channel_endpoint_t *endpoint = conductor->send_endpoints[i];
        if (!endpoint->is_closing && aa_udp_channel_equals(endpoint->channel, *udp))
        {
            return endpoint;
        }
    }
    if (AA_ARRAY_ENSURE(conductor->send_endpoints, aa_send_channel_endpoint_t *) < 0)
    {
        return NULL;
    }
    aa_send_channel_endpoint_t *endpoint = NULL;
    aa_loss_generator_settings_t loss = aa_conductor_loss_settings(conductor);
    if (aa_send_channel_endpoint_create(&endpoint, *udp, &loss, conductor) < 0)
    {
        return NULL;
    }
    *udp = NULL;
    endpoint->status_counter_id = aa_conductor_allocate_channel_status_counter(
        conductor, AA_COUNTER_TYPE_SEND_CHANNEL_STATUS, "snd-channel", channel, now_ms);
    if (endpoint->status_counter_id < 0 || aa_driver_sender_proxy_add_endpoint(conductor->sender, endpoint) < 0)
    {
        aa_conductor_free_counter(conductor, endpoint->status_counter_id, now_ms);
        aa_send_channel_endpoint_delete(endpoint);
        return NULL;
    }
    endpoint->status = aa_counters_manager_addr(&conductor->counters, endpoint->status_counter_id);
    aa_put_int64_release(endpoint->status, AA_CHANNEL_ENDPOINT_STATUS_ACTIVE);
    conductor->send_endpoints[conductor->send_endpoints_count++] = endpoint;
    return endpoint;
}

/* An endpoint no publication uses any more: the sender lets go of it, then the timer frees it. */
static void aa_conductor_release_send_endpoint(aa_driver_conductor_t *conductor, aa_send_channel_endpoint_t *endpoint)
{
    if (endpoint->refcnt > 0 || endpoint->is_closing)
    {
        return;
    }
    if (aa_driver_sender_proxy_remove_endpoint(conductor->sender, endpoint) < 0)
    {
        aa_driver_conductor_log_error(conductor, AA_ERROR_CODE_GENERIC_ERROR, aa_errmsg());
        return; /* tried again on the next timer tick */
    }
    endpoint->is_closing = true;
    aa_put_int64_release(endpoint->status, AA_CHANNEL_ENDPOINT_STATUS_CLOSING);
}

static void aa_conductor_free_network_publication_counters(
    aa_driver_conductor_t *conductor, aa_network_publication_t *pub, int64_t now_ms)
{
    aa_conductor_free_counter(conductor, pub->pub_lmt_counter_id, now_ms);
    aa_conductor_free_counter(conductor, pub->pub_pos_counter_id, now_ms);
    aa_conductor_free_counter(conductor, pub->snd_pos_counter_id, now_ms);
    aa_conductor_free_counter(conductor, pub->snd_lmt_counter_id, now_ms);
    aa_conductor_free_counter(conductor, pub->snd_bpe_counter_id, now_ms);
}

static aa_network_publication_t *aa_conductor_create_network_publication(
    aa_driver_conductor_t *conductor, int64_t registration_id, int32_t stream_id, const char *channel,
    const aa_publication_params_t *params, aa_send_channel_endpoint_t *endpoint, bool is_exclusive, int64_t now_ns,
    int64_t now_ms)
{
    aa_driver_context_t *ctx = conductor->ctx;
    aa_network_publication_t *pub = calloc(1, sizeof(aa_network_publication_t));
    if (NULL == pub || NULL == (pub->channel = strdup(channel)))
    {
        free(pub);
        AA_SET_ERR(ENOMEM, "%s", "out of memory creating a publication");
        return NULL;
    }
    pub->pub_lmt_counter_id = -1;
    pub->pub_pos_counter_id = -1;
    pub->snd_pos_counter_id = -1;
    pub->snd_lmt_counter_id = -1;
    pub->snd_bpe_counter_id = -1;
    int32_t session_id = params->has_session_id ? params->session_id : aa_conductor_next_session_id(conductor, stream_id);
    int32_t initial_term_id = params->has_position ? params->initial_term_id : (int32_t)(rand() ^ (int32_t)now_ns);
    aa_network_publication_params_t init =
    {
        .registration_id = registration_id,
        .session_id = session_id,
        .stream_id = stream_id,
        .initial_term_id = initial_term_id,
        .term_length = params->term_length,
        .mtu_length = params->mtu_length,
        .term_window_length = params->term_window_length,
        .linger_timeout_ns = params->linger_timeout_ns,
        .unblock_timeout_ns = ctx->publication_unblock_timeout_ns,
        .connection_timeout_ns = ctx->publication_connection_timeout_ns,
        .retransmit_delay_ns = ctx->retransmit_unicast_delay_ns,
        .retransmit_linger_ns = ctx->retransmit_unicast_linger_ns,
        .is_exclusive = is_exclusive,
        .signal_eos = params->signal_eos,
    };
    if (aa_network_publication_init(pub, &init, conductor) < 0)
    {
        aa_network_publication_free(pub);
        return NULL;
    }
    pub->endpoint = endpoint;

    snprintf(pub->log_path, sizeof(pub->log_path), "%s/publications/%" PRId64 ".logbuffer", ctx->aeron_dir, registration_id);
    size_t log_length = aa_logbuffer_compute_log_length(params->term_length, (int32_t)ctx->file_page_size);
    if (aa_conductor_check_storage(conductor, log_length) < 0 ||
        aa_map_new_file(&pub->mapped, pub->log_path, log_length, params->sparse) < 0)
    {
        aa_network_publication_free(pub);
        return NULL;
    }
    aa_logbuffer_init_params_t log_params = {
        .correlation_id = registration_id,
        .initial_term_id = initial_term_id,
        .active_term_id = params->has_position ? params->term_id : initial_term_id,
        .term_offset = params->has_position ? params->term_offset : 0,
        .term_length = params->term_length,
        .mtu_length = params->mtu_length,
        .page_size = (int32_t)ctx->file_page_size,
        .session_id = session_id,
        .stream_id = stream_id,
        .publication_window_length = (int32_t)params->term_window_length,
        .receiver_window_length = 0,
        .linger_timeout_ns = params->linger_timeout_ns,
        .untethered_window_limit_timeout_ns = ctx->untethered_window_limit_timeout_ns,
        .untethered_resting_timeout_ns = ctx->untethered_resting_timeout_ns,
        .sparse = params->sparse,
        .tether = params->tether,
        .rejoin = ctx->rejoin_stream,
        .reliable = ctx->reliable_stream,
        .signal_eos = params->signal_eos,
        .group = false,
        .spies_simulate_connection = false,
        .max_resend = AA_MAX_RESEND_DEFAULT,
    };
    aa_mapped_log_init(&pub->log, pub->mapped.addr, pub->mapped.length, params->term_length);
    aa_logbuffer_metadata_init(&pub->log, &log_params);
    pub->log.metadata->socket_sndbuf_length = endpoint->transport.socket_sndbuf_length;
    pub->log.metadata->socket_rcvbuf_length = endpoint->transport.socket_rcvbuf_length;

    int64_t start_position = aa_compute_position(
        log_params.active_term_id, log_params.term_offset, pub->position_bits_to_shift, initial_term_id);
    pub->clean_position = start_position;
    pub->last_snd_pos = start_position;
    pub->time_of_last_snd_pos_change_ns = now_ns;

    static const struct
    {
        int32_t type_id;
        const char *name;
        size_t offset;
    }
    counters[] =
    {
        { AA_COUNTER_TYPE_PUBLISHER_LIMIT, "pub-lmt", offsetof(aa_network_publication_t, pub_lmt_counter_id) },
        { AA_COUNTER_TYPE_PUBLISHER_POSITION, "pub-pos (sampled)", offsetof(aa_network_publication_t, pub_pos_counter_id) },
        { AA_COUNTER_TYPE_SENDER_POSITION, "snd-pos", offsetof(aa_network_publication_t, snd_pos_counter_id) },
        { AA_COUNTER_TYPE_SENDER_LIMIT, "snd-lmt", offsetof(aa_network_publication_t, snd_lmt_counter_id) },
        { AA_COUNTER_TYPE_SENDER_BPE, "snd-bpe", offsetof(aa_network_publication_t, snd_bpe_counter_id) },
    };
    for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++)
    {
        int32_t id = aa_conductor_allocate_stream_counter(
            conductor, counters[i].type_id, counters[i].name, registration_id, session_id, stream_id, channel, now_ms);
        if (id < 0)
        {
            aa_conductor_free_counter(conductor, id, now_ms);
            aa_conductor_free_network_publication_counters(conductor, pub, now_ms);
            unlink(pub->log_path);
            aa_network_publication_free(pub);
            return NULL;
        }
        *(int32_t *)((uint8_t *)pub + counters[i].offset) = id;
    }
    if (AA_ARRAY_ENSURE(conductor->network_publications, aa_network_publication_t *) < 0)
    {
        aa_conductor_free_network_publication_counters(conductor, pub, now_ms);
        unlink(pub->log_path);
        aa_network_publication_free(pub);
        return NULL;
    }
    pub->pub_lmt = aa_counters_manager_addr(&conductor->counters, pub->pub_lmt_counter_id);
    pub->pub_pos = aa_counters_manager_addr(&conductor->counters, pub->pub_pos_counter_id);
    pub->snd_pos = aa_counters_manager_addr(&conductor->counters, pub->snd_pos_counter_id);
    pub->snd_lmt = aa_counters_manager_addr(&conductor->counters, pub->snd_lmt_counter_id);
    pub->snd_bpe = aa_counters_manager_addr(&conductor->counters, pub->snd_bpe_counter_id);
    aa_put_int64_release(pub->pub_lmt, start_position);
    aa_put_int64_release(pub->pub_pos, start_position);
    aa_put_int64_release(pub->snd_pos, start_position);
    aa_put_int64_release(pub->snd_lmt, start_position);
    aa_put_int64_release(pub->snd_bpe, 0);
    pub->state = AA_NETWORK_PUBLICATION_STATE_ACTIVE;
    pub->time_of_last_state_change_ns = now_ns;

    if (aa_driver_sender_proxy_add_publication(conductor->sender, pub) < 0)
    {
        aa_conductor_free_network_publication_counters(conductor, pub, now_ms);
        unlink(pub->log_path);
        aa_network_publication_free(pub);
        return NULL;
    }
    endpoint->refcnt++;
    conductor->bytes_mapped += (int64_t)pub->mapped.length;
    if (pub->mapped.allocated)
    {
        aa_prefault_add(&conductor->prefault, pub->mapped.addr, pub->term_length, start_position,
            aa_conductor_network_publication_prefault_position, pub);
    }
    aa_put_int64_release(conductor->system_counters[AA_SYSTEM_COUNTER_BYTES_CURRENTLY_MAPPED], conductor->bytes_mapped);
    conductor->network_publications[conductor->network_publications_count++] = pub;
    return pub;
}

static int aa_conductor_add_publication_link(
    aa_driver_conductor_t *conductor, int64_t correlation_id, int64_t client_id, aa_ipc_publication_t *pub,
    aa_network_publication_t *network)
{
    if (AA_ARRAY_ENSURE(conductor->publication_links, aa_publication_link_t) < 0)
    {
        return -1;
    }
    aa_publication_link_t *link = &conductor->publication_links[conductor->publication_links_count++];
    link->registration_id = correlation_id;
    link->client_id = client_id;
    link->publication = pub;
    link->network_publication = network;
    if (NULL != pub)
    {
        pub->refcnt++;
    }
    if (NULL != network)
    {
        network->refcnt++;
    }
    return 0;
}

static int aa_conductor_on_add_network_publication(
    aa_driver_conductor_t *conductor, const aa_publication_command_t *command, const char *channel,
    const aa_publication_params_t *params, bool is_exclusive, int64_t now_ns, int64_t now_ms)
{
    aa_udp_channel_t *udp = NULL;
    if (aa_conductor_parse_udp_channel(conductor, channel, true, &udp) < 0)
    {
        return -1;
    }
    int64_t correlation_id = command->correlated.correlation_id;
    aa_network_publication_t *pub = NULL;
    if (!is_exclusive)
    {
        for (size_t i = 0; i < conductor->network_publications_count; i++)
        {
            aa_network_publication_t *p = conductor->network_publications[i];
            if (!p->is_exclusive && AA_NETWORK_PUBLICATION_STATE_ACTIVE == p->state &&
                p->stream_id == command->stream_id && !p->endpoint->is_closing &&
                aa_udp_channel_equals(p->endpoint->channel, udp) &&
                (!params->has_session_id || params->session_id == p->session_id))
            {
                if (p->term_length != params->term_length || p->mtu_length != params->mtu_length)
                {
                    AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
                        "channel %s stream %" PRId32 ": an existing publication uses term-length=%" PRId32 " mtu=%" PRId32
                        "; a shared publication must use the same values (or use an exclusive publication)",
                        channel, command->stream_id, p->term_length, p->mtu_length);
                    aa_udp_channel_delete(udp);
                    return -1;
                }
                pub = p;
                break;
            }
        }
    }
    if (NULL == pub)
    {
        if (params->has_session_id && aa_conductor_session_id_in_use(conductor, command->stream_id, params->session_id))
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
                "channel %s: session-id=%" PRId32 " is already in use on stream %" PRId32, channel, params->session_id,
                command->stream_id);
            aa_udp_channel_delete(udp);
            return -1;
        }
        aa_send_channel_endpoint_t *endpoint = aa_conductor_get_or_create_send_endpoint(conductor, &udp, channel, now_ms);
        aa_udp_channel_delete(udp);
        if (NULL == endpoint)
        {
            return -1;
        }
        pub = aa_conductor_create_network_publication(
            conductor, correlation_id, command->stream_id, channel, params, endpoint, is_exclusive, now_ns, now_ms);
        if (NULL == pub)
        {
            aa_conductor_release_send_endpoint(conductor, endpoint);
            return -1;
        }
    }
    else
    {
        aa_udp_channel_delete(udp);
    }
    if (aa_conductor_add_publication_link(conductor, correlation_id, command->correlated.client_id, NULL, pub) < 0)
    {
        if (0 == pub->refcnt)
        {
            aa_network_publication_begin_draining(pub, now_ns);
        }
        return -1;
    }
    aa_conductor_on_publication_ready(
        conductor, correlation_id, pub->registration_id, pub->session_id, pub->stream_id, pub->pub_lmt_counter_id,
        pub->endpoint->status_counter_id, pub->log_path, pub->is_exclusive);
    return 0;
}

static int aa_conductor_on_add_publication(
    aa_driver_conductor_t *conductor, const aa_publication_command_t *command, const char *channel, bool is_exclusive,
    int64_t now_ns, int64_t now_ms)
{
    aa_uri_t uri;
    aa_publication_params_t params;
    memset(&params, 0, sizeof(params));
    if (aa_conductor_parse_channel(channel, &uri) < 0 ||
        aa_conductor_parse_publication_params(conductor, &uri, &params) < 0)
    {
        return -1;
    }
    if (AA_URI_MEDIA_UDP == uri.media)
    {
        return aa_conductor_on_add_network_publication(conductor, command, channel, &params, is_exclusive, now_ns, now_ms);
    }
    int64_t correlation_id = command->correlated.correlation_id;
    aa_ipc_publication_t *pub = NULL;
    if (!is_exclusive)
    {
        for (size_t i = 0; i < conductor->ipc_publications_count; i++)
        {
            aa_ipc_publication_t *p = conductor->ipc_publications[i];
            if (!p->is_exclusive && AA_IPC_PUBLICATION_STATE_ACTIVE == p->state && p->stream_id == command->stream_id &&
                (!params.has_session_id || params.session_id == p->session_id))
            {
                if (p->term_length != params.term_length || p->mtu_length != params.mtu_length)
                {
                    AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
                        "channel %s stream %" PRId32 ": an existing publication uses term-length=%" PRId32 " mtu=%" PRId32
                        "; a shared publication must use the same values (or use an exclusive publication)",
                        channel, command->stream_id, p->term_length, p->mtu_length);
                    return -1;
                }
                pub = p;
                break;
            }
        }
    }
    if (NULL == pub)
    {
        if (params.has_session_id && aa_conductor_session_id_in_use(conductor, command->stream_id, params.session_id))
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
                "channel %s: session-id=%" PRId32 " is already in use on stream %" PRId32, channel, params.session_id,
                command->stream_id);
            return -1;
        }
        pub = aa_conductor_create_ipc_publication(
            conductor, correlation_id, command->stream_id, channel, &params, is_exclusive, now_ns, now_ms);
        if (NULL == pub)
        {
            return -1;
        }
        for (size_t i = 0; i < conductor->subscription_links_count; i++)
        {
            aa_conductor_link_subscriber(conductor, pub, &conductor->subscription_links[i], now_ns, now_ms);
        }
    }
    if (aa_conductor_add_publication_link(conductor, correlation_id, command->correlated.client_id, pub, NULL) < 0)
    {
        if (0 == pub->refcnt)
        {
            aa_ipc_publication_begin_draining(pub, now_ns);
        }
        return -1;
    }
    aa_conductor_on_publication_ready(
        conductor, correlation_id, pub->registration_id, pub->session_id, pub->stream_id, pub->pub_lmt_counter_id,
        AA_CHANNEL_STATUS_INDICATOR_NOT_ALLOCATED, pub->log_path, pub->is_exclusive);
    return 0;
}

static void aa_conductor_remove_publication_link_at(aa_driver_conductor_t *conductor, size_t index, int64_t now_ns)
{
    aa_publication_link_t link = conductor->publication_links[index];
    conductor->publication_links[index] = conductor->publication_links[--conductor->publication_links_count];
    aa_conductor_decref_publication(conductor, &link, now_ns);
}

static int aa_conductor_on_remove_publication(
    aa_driver_conductor_t *conductor, const aa_remove_command_t *command, int64_t now_ns)
{
    for (size_t i = 0; i < conductor->publication_links_count; i++)
    {
        aa_publication_link_t *link = &conductor->publication_links[i];
        if (link->registration_id == command->registration_id && link->client_id == command->correlated.client_id)
        {
            aa_conductor_remove_publication_link_at(conductor, i, now_ns);
            aa_conductor_on_operation_success(conductor, command->correlated.correlation_id);
            return 0;
        }
    }
    AA_SET_ERR(AA_ERROR_CODE_UNKNOWN_PUBLICATION, "unknown publication registration id %" PRId64, command->registration_id);
    return -1;
}

/* ---- images and receive channel endpoints ---- */

static bool aa_conductor_link_matches_image(const aa_subscription_link_t *link, const aa_publication_image_t *image)
{
    return link->endpoint == image->endpoint && link->stream_id == image->stream_id &&
        (!link->has_session_id || link->session_id == image->session_id);
}

/* Gives a subscription a sub-pos counter on an image at join_position and tells its client. */
static void aa_conductor_link_image_subscriber(
    aa_driver_conductor_t *conductor, aa_publication_image_t *image, aa_subscription_link_t *link,
    int64_t join_position, int64_t now_ns, int64_t now_ms)
{
    if (NULL != aa_publication_image_find_subscriber(image, link->registration_id))
    {
        return;
    }
    int32_t counter_id = aa_conductor_allocate_stream_counter(
        conductor, AA_COUNTER_TYPE_SUBSCRIBER_POSITION, "sub-pos", link->registration_id, image->session_id,
        image->stream_id, link->channel, now_ms);
    if (counter_id < 0)
    {
        aa_driver_conductor_log_error(conductor, AA_ERROR_CODE_GENERIC_ERROR, aa_errmsg());
        return;
    }
    char suffix[48];
    int suffix_length = snprintf(suffix, sizeof(suffix), " @%" PRId64, join_position);
    aa_counters_manager_append_to_label(&conductor->counters, counter_id, suffix, (size_t)suffix_length);
    volatile int64_t *value = aa_counters_manager_addr(&conductor->counters, counter_id);
    aa_put_int64_release(value, join_position);
    if (aa_publication_image_add_subscriber(image, link->registration_id, link->client_id, counter_id, value, now_ns) < 0)
    {
        aa_conductor_free_counter(conductor, counter_id, now_ms);
        aa_driver_conductor_log_error(conductor, ENOMEM, aa_errmsg());
        return;
    }
    aa_conductor_send_available_image(
        conductor, image->correlation_id, image->session_id, image->stream_id, link->registration_id, counter_id,
        image->log_path, image->source_identity);
}

/* The image goes away: its subscribers are told, their counters freed, and the receiver asked to
 * let go of it (the conductor frees it once the receiver did). */
static void aa_conductor_image_begin_linger(aa_driver_conductor_t *conductor, aa_publication_image_t *image, int64_t now_ns, int64_t now_ms)
{
    if (aa_driver_receiver_proxy_remove_image(conductor->receiver, image) < 0)
    {
        aa_driver_conductor_log_error(conductor, AA_ERROR_CODE_GENERIC_ERROR, aa_errmsg());
        return; /* tried again on the next timer tick */
    }
    const char *channel = image->endpoint->channel->canonical_form;
    for (size_t i = 0; i < image->subscribers_count; i++)
    {
        aa_subscriber_position_t *s = &image->subscribers[i];
        for (size_t j = 0; j < conductor->subscription_links_count; j++)
        {
            if (conductor->subscription_links[j].registration_id == s->subscription_registration_id)
            {
                channel = conductor->subscription_links[j].channel;
                break;
            }
        }
        aa_conductor_send_unavailable_image(
            conductor, image->correlation_id, s->subscription_registration_id, image->stream_id, channel);
        aa_conductor_free_counter(conductor, s->counter_id, now_ms);
    }
    image->subscribers_count = 0;
    aa_put_int32_release(&image->is_draining, 1);
    image->state = AA_PUBLICATION_IMAGE_STATE_LINGER;
    image->time_of_last_state_change_ns = now_ns;
}

static void aa_conductor_image_begin_draining(aa_publication_image_t *image, int64_t now_ns)
{
    aa_put_int32_release(&image->is_draining, 1);
    image->state = AA_PUBLICATION_IMAGE_STATE_DRAINING;
    image->time_of_last_state_change_ns = now_ns;
}

static void aa_conductor_free_image(aa_driver_conductor_t *conductor, aa_publication_image_t *image, int64_t now_ms)
{
    aa_conductor_free_counter(conductor, image->rcv_hwm_counter_id, now_ms);
    aa_conductor_free_counter(conductor, image->rcv_pos_counter_id, now_ms);
    for (size_t i = 0; i < image->subscribers_count; i++)
    {
        aa_conductor_free_counter(conductor, image->subscribers[i].counter_id, now_ms);
    }
    conductor->bytes_mapped -= (int64_t)image->mapped.length;
    aa_put_int64_release(conductor->system_counters[AA_SYSTEM_COUNTER_BYTES_CURRENTLY_MAPPED], conductor->bytes_mapped);
    if ('\0' != image->log_path[0] && unlink(image->log_path) < 0 && ENOENT != errno)
    {
        aa_driver_conductor_count(conductor, AA_SYSTEM_COUNTER_FREE_FAILS, 1);
    }
    if (NULL != image->endpoint)
    {
        image->endpoint->image_refs--;
    }
    aa_publication_image_free(image);
}

typedef struct aa_create_image_args_stct
{
    aa_receive_channel_endpoint_t *endpoint;
    aa_setup_header_t setup;
    struct sockaddr_storage source;
    socklen_t source_length;
}
aa_create_image_args_t;

static void aa_conductor_create_publication_image(aa_driver_conductor_t *conductor, const aa_create_image_args_t *args)
{
    aa_driver_context_t *ctx = conductor->ctx;
    aa_receive_channel_endpoint_t *endpoint = args->endpoint;
    const aa_setup_header_t *setup = &args->setup;
    int64_t now_ns = aa_nano_clock();
    int64_t now_ms = aa_epoch_clock();
    if (endpoint->is_closing)
    {
        return;
    }
    for (size_t i = 0; i < conductor->images_count; i++)
    {
        aa_publication_image_t *image = conductor->images[i];
        if (image->endpoint == endpoint && image->session_id == setup->session_id &&
            image->stream_id == setup->stream_id && AA_PUBLICATION_IMAGE_STATE_ACTIVE == image->state)
        {
            return;
        }
    }
    bool has_subscriber = false;
    for (size_t i = 0; i < conductor->subscription_links_count && !has_subscriber; i++)
    {
        aa_subscription_link_t *link = &conductor->subscription_links[i];
        has_subscriber = link->endpoint == endpoint && link->stream_id == setup->stream_id &&
            (!link->has_session_id || link->session_id == setup->session_id);
    }
    if (!has_subscriber)
    {
        return;
    }

    char source[AA_UDP_ADDRESS_FORMAT_MAX_LENGTH];
    if (aa_udp_address_format(source, sizeof(source), &args->source) < 0)
    {
        snprintf(source, sizeof(source), "%s", "unknown");
    }
    int32_t window_length = aa_receiver_window_length(endpoint->params.window_length, setup->term_length);
    int32_t term_count = (int32_t)((uint32_t)setup->active_term_id - (uint32_t)setup->initial_term_id);
    if (aa_logbuffer_check_term_length(setup->term_length) < 0 ||
        aa_receiver_window_validate_mtu(setup->mtu, window_length) < 0)
    {
        char message[512];
        snprintf(message, sizeof(message), "SETUP from %s for session %" PRId32 " stream %" PRId32 " rejected: %s",
            source, setup->session_id, setup->stream_id, aa_errmsg());
        aa_driver_conductor_log_error(conductor, AA_ERROR_CODE_GENERIC_ERROR, message);
        return;
    }
    if (term_count < 0 || setup->term_offset < 0 || setup->term_offset > setup->term_length ||
        0 != (setup->term_offset % AA_LOGBUFFER_FRAME_ALIGNMENT))
    {
        char message[256];
        snprintf(message, sizeof(message),
            "SETUP from %s for session %" PRId32 " stream %" PRId32 " rejected: its position (term %" PRId32
            ", offset %" PRId32 ") is not a position of a stream starting at term %" PRId32,
            source, setup->session_id, setup->stream_id, setup->active_term_id, setup->term_offset,
            setup->initial_term_id);
        aa_driver_conductor_log_error(conductor, AA_ERROR_CODE_GENERIC_ERROR, message);
        return;
    }
    if (AA_ARRAY_ENSURE(conductor->images, aa_publication_image_t *) < 0)
    {
        aa_driver_conductor_log_error(conductor, ENOMEM, aa_errmsg());
        return;
    }

    int64_t correlation_id = aa_mpsc_rb_next_correlation_id(&conductor->to_driver);
    aa_publication_image_t *image = calloc(1, sizeof(aa_publication_image_t));
    if (NULL == image)
    {
        aa_driver_conductor_log_error(conductor, ENOMEM, "out of memory creating an image");
        return;
    }
    image->rcv_hwm_counter_id = -1;
    image->rcv_pos_counter_id = -1;
    aa_publication_image_params_t params =
    {
        .correlation_id = correlation_id,
        .session_id = setup->session_id,
        .stream_id = setup->stream_id,
        .initial_term_id = setup->initial_term_id,
        .active_term_id = setup->active_term_id,
        .term_offset = setup->term_offset,
        .term_length = setup->term_length,
        .mtu_length = setup->mtu,
        .window_length = window_length,
        .status_message_timeout_ns = ctx->status_message_timeout_ns,
        .nak_delay_ns = endpoint->params.nak_delay_ns,
        .nak_retry_delay_ratio = ctx->nak_unicast_retry_delay_ratio,
        .is_reliable = endpoint->params.is_reliable,
    };
    snprintf(image->log_path, sizeof(image->log_path), "%s/images/%" PRId64 ".logbuffer", ctx->aeron_dir, correlation_id);
    size_t log_length = aa_logbuffer_compute_log_length(setup->term_length, (int32_t)ctx->file_page_size);
    if (aa_publication_image_init(image, &params, now_ns, conductor) < 0 ||
        aa_conductor_check_storage(conductor, log_length) < 0 ||
        aa_map_new_file(&image->mapped, image->log_path, log_length, ctx->term_buffer_sparse_file) < 0)
    {
        char message[512];
        snprintf(message, sizeof(message), "creating the image of session %" PRId32 " stream %" PRId32 " from %s: %s",
            setup->session_id, setup->stream_id, source, aa_errmsg());
        aa_driver_conductor_log_error(conductor, AA_ERROR_CODE_GENERIC_ERROR, message);
        image->log_path[0] = '\0';
        aa_publication_image_free(image);
        return;
    }
    image->endpoint = endpoint;
    image->control_address = args->source;
    image->control_address_length = args->source_length;
    snprintf(image->source_identity, sizeof(image->source_identity), "%s", source);

    aa_logbuffer_init_params_t log_params =
    {
        .correlation_id = correlation_id,
        .initial_term_id = setup->initial_term_id,
        .active_term_id = setup->active_term_id,
        .term_offset = setup->term_offset,
        .term_length = setup->term_length,
        .mtu_length = setup->mtu,
        .page_size = (int32_t)ctx->file_page_size,
        .session_id = setup->session_id,
        .stream_id = setup->stream_id,
        .publication_window_length = 0,
        .receiver_window_length = window_length,
        .linger_timeout_ns = ctx->publication_linger_timeout_ns,
        .untethered_window_limit_timeout_ns = ctx->untethered_window_limit_timeout_ns,
        .untethered_resting_timeout_ns = ctx->untethered_resting_timeout_ns,
        .sparse = ctx->term_buffer_sparse_file,
        .tether = true,
        .rejoin = ctx->rejoin_stream,
        .reliable = endpoint->params.is_reliable,
        .signal_eos = true,
        .group = false,
        .spies_simulate_connection = false,
        .max_resend = AA_MAX_RESEND_DEFAULT,
    };
    aa_mapped_log_init(&image->log, image->mapped.addr, image->mapped.length, setup->term_length);
    aa_logbuffer_metadata_init(&image->log, &log_params);
    image->log.metadata->socket_rcvbuf_length = endpoint->transport.socket_rcvbuf_length;
    image->log.metadata->socket_sndbuf_length = endpoint->transport.socket_sndbuf_length;
    conductor->bytes_mapped += (int64_t)image->mapped.length;
    endpoint->image_refs++;

    const char *channel = endpoint->channel->canonical_form;
    for (size_t i = 0; i < conductor->subscription_links_count; i++)
    {
        if (conductor->subscription_links[i].endpoint == endpoint)
        {
            channel = conductor->subscription_links[i].channel;
            break;
        }
    }
    image->rcv_hwm_counter_id = aa_conductor_allocate_stream_counter(
        conductor, AA_COUNTER_TYPE_RECEIVER_HWM, "rcv-hwm", correlation_id, setup->session_id, setup->stream_id,
        channel, now_ms);
    image->rcv_pos_counter_id = image->rcv_hwm_counter_id < 0 ? -1 : aa_conductor_allocate_stream_counter(
        conductor, AA_COUNTER_TYPE_RECEIVER_POSITION, "rcv-pos", correlation_id, setup->session_id, setup->stream_id,
        channel, now_ms);
    if (image->rcv_pos_counter_id < 0 || aa_driver_receiver_proxy_add_image(conductor->receiver, image) < 0)
    {
        aa_driver_conductor_log_error(conductor, AA_ERROR_CODE_GENERIC_ERROR, aa_errmsg());
        aa_conductor_free_image(conductor, image, now_ms);
        return;
    }
    image->rcv_hwm = aa_counters_manager_addr(&conductor->counters, image->rcv_hwm_counter_id);
    image->rcv_pos = aa_counters_manager_addr(&conductor->counters, image->rcv_pos_counter_id);
    aa_put_int64_release(image->rcv_hwm, image->join_position);
    aa_put_int64_release(image->rcv_pos, image->join_position);
    conductor->images[conductor->images_count++] = image;
    aa_put_int64_release(conductor->system_counters[AA_SYSTEM_COUNTER_BYTES_CURRENTLY_MAPPED], conductor->bytes_mapped);
    if (image->mapped.allocated)
    {
        aa_prefault_add(&conductor->prefault, image->mapped.addr, image->term_length, image->join_position,
            aa_conductor_image_prefault_position, image);
    }

    for (size_t i = 0; i < conductor->subscription_links_count; i++)
    {
        aa_subscription_link_t *link = &conductor->subscription_links[i];
        if (aa_conductor_link_matches_image(link, image))
        {
            aa_conductor_link_image_subscriber(conductor, image, link, image->join_position, now_ns, now_ms);
        }
    }
}

/* Runs on the conductor: the command the receiver queued. */
static void aa_conductor_on_create_publication_image(void *agent, const void *args)
{
    aa_conductor_create_publication_image(agent, args);
}

void aa_driver_conductor_proxy_create_publication_image(
    aa_driver_conductor_t *conductor, aa_receive_channel_endpoint_t *endpoint, const aa_setup_header_t *setup,
    const struct sockaddr_storage *source, socklen_t source_length)
{
    aa_create_image_args_t args;
    memset(&args, 0, sizeof(args));
    args.endpoint = endpoint;
    args.setup = *setup;
    args.source = *source;
    args.source_length = source_length;
    if (!aa_command_queue_offer(&conductor->commands, aa_conductor_on_create_publication_image, &args, sizeof(args)))
    {
        aa_driver_conductor_count(conductor, AA_SYSTEM_COUNTER_CONDUCTOR_PROXY_FAILS, 1);
        return;
    }
    aa_doorbell_ring(aa_cnc_doorbell(conductor->cnc)); /* the conductor may be sleeping deeply */
}

/* The receive endpoint of a subscription channel: an open one with the same canonical form, else a
 * new bound socket. Takes ownership of *udp (NULL afterwards when the endpoint kept it). */
static aa_receive_channel_endpoint_t *aa_conductor_get_or_create_receive_endpoint(
    aa_driver_conductor_t *conductor, aa_udp_channel_t **udp, const char *channel, int64_t now_ms)
{
    aa_driver_context_t *ctx = conductor->ctx;
    for (size_t i = 0; i < conductor->receive_endpoints_count; i++)
    {
        aa_receive_channel_endpoint_t *endpoint = conductor->receive_endpoints[i];
        if (aa_udp_channel_equals(endpoint->channel, *udp))
        {
            if (endpoint->is_closing)
            {
                /* Closing, but its socket is still bound: take it back rather than fail to bind the
                 * port again. The receiver gets it back after the removal (its queue is in order). */
                if (aa_driver_receiver_proxy_add_endpoint(conductor->receiver, endpoint) < 0)
                {
                    return NULL;
                }
                endpoint->is_closing = false;
                aa_put_int64_release(endpoint->status, AA_CHANNEL_ENDPOINT_STATUS_ACTIVE);
            }
            return endpoint;
        }
    }
    aa_receive_channel_endpoint_params_t params =
    {
        .window_length = (int32_t)ctx->rcv_initial_window_length,
        .nak_delay_ns = ctx->nak_unicast_delay_ns,
        .is_reliable = ctx->reliable_stream,
    };
    if ((*udp)->receiver_window_length > 0)
    {
        params.window_length = (*udp)->receiver_window_length;
    }
    if (aa_uri_get_duration_ns(&(*udp)->uri, "nak-delay", &params.nak_delay_ns) < 0 ||
        aa_uri_get_bool(&(*udp)->uri, "reliable", &params.is_reliable) < 0)
    {
        return NULL;
    }
    if (aa_receiver_window_validate_initial(params.window_length, (*udp)->socket_rcvbuf_length) < 0)
    {
        AA_APPEND_ERR("channel %s: rcv-wnd", channel);
        return NULL;
    }
    if (AA_ARRAY_ENSURE(conductor->receive_endpoints, aa_receive_channel_endpoint_t *) < 0)
    {
        return NULL;
    }
    aa_receive_channel_endpoint_t *endpoint = NULL;
    aa_loss_generator_settings_t loss = aa_conductor_loss_settings(conductor);
    if (aa_receive_channel_endpoint_create(&endpoint, *udp, &params, &loss, conductor) < 0)
    {
        return NULL;
    }
    *udp = NULL;
    endpoint->status_counter_id = aa_conductor_allocate_channel_status_counter(
        conductor, AA_COUNTER_TYPE_RECEIVE_CHANNEL_STATUS, "rcv-channel", channel, now_ms);
    if (endpoint->status_counter_id < 0 || aa_driver_receiver_proxy_add_endpoint(conductor->receiver, endpoint) < 0)
    {
        aa_conductor_free_counter(conductor, endpoint->status_counter_id, now_ms);
        aa_receive_channel_endpoint_delete(endpoint);
        return NULL;
    }
    endpoint->status = aa_counters_manager_addr(&conductor->counters, endpoint->status_counter_id);
    aa_put_int64_release(endpoint->status, AA_CHANNEL_ENDPOINT_STATUS_ACTIVE);
    conductor->receive_endpoints[conductor->receive_endpoints_count++] = endpoint;
    return endpoint;
}

/* An endpoint no subscription uses any more: its images go, then the receiver lets go of it. */
static void aa_conductor_release_receive_endpoint(
    aa_driver_conductor_t *conductor, aa_receive_channel_endpoint_t *endpoint, int64_t now_ns, int64_t now_ms)
{
    if (endpoint->refcnt > 0 || endpoint->is_closing)
    {
        return;
    }
    for (size_t i = 0; i < conductor->images_count; i++)
    {
        aa_publication_image_t *image = conductor->images[i];
        if (image->endpoint == endpoint && AA_PUBLICATION_IMAGE_STATE_LINGER != image->state)
        {
            aa_conductor_image_begin_linger(conductor, image, now_ns, now_ms);
            if (AA_PUBLICATION_IMAGE_STATE_LINGER != image->state)
            {
                return; /* tried again on the next timer tick */
            }
        }
    }
    if (aa_driver_receiver_proxy_remove_endpoint(conductor->receiver, endpoint) < 0)
    {
        aa_driver_conductor_log_error(conductor, AA_ERROR_CODE_GENERIC_ERROR, aa_errmsg());
        return;
    }
    endpoint->conductor_removals++;
    endpoint->is_closing = true;
    aa_put_int64_release(endpoint->status, AA_CHANNEL_ENDPOINT_STATUS_CLOSING);
}

/* ---- subscriptions ---- */

static int aa_conductor_add_udp_subscription(
    aa_driver_conductor_t *conductor, aa_subscription_link_t *link, const char *channel, int64_t now_ms)
{
    aa_udp_channel_t *udp = NULL;
    if (aa_conductor_parse_udp_channel(conductor, channel, false, &udp) < 0)
    {
        return -1;
    }
    aa_receive_channel_endpoint_t *endpoint = aa_conductor_get_or_create_receive_endpoint(conductor, &udp, channel, now_ms);
    aa_udp_channel_delete(udp);
    if (NULL == endpoint)
    {
        return -1;
    }
    if (aa_driver_receiver_proxy_add_subscription(conductor->receiver, endpoint, link->stream_id) < 0)
    {
        aa_conductor_release_receive_endpoint(conductor, endpoint, aa_nano_clock(), now_ms);
        return -1;
    }
    endpoint->refcnt++;
    link->endpoint = endpoint;
    return 0;
}

static int aa_conductor_on_add_subscription(
    aa_driver_conductor_t *conductor, const aa_subscription_command_t *command, const char *channel, int64_t now_ns,
    int64_t now_ms)
{
    aa_uri_t uri;
    if (aa_conductor_parse_channel(channel, &uri) < 0)
    {
        return -1;
    }
    bool tether = conductor->ctx->tether_subscriptions;
    bool sparse = conductor->ctx->term_buffer_sparse_file;
    int32_t session_id = 0;
    int rc_session = aa_uri_get_int32(&uri, "session-id", &session_id);
    if (aa_uri_get_bool(&uri, "tether", &tether) < 0 || aa_uri_get_bool(&uri, "sparse", &sparse) < 0 || rc_session < 0)
    {
        return -1;
    }
    if (AA_ARRAY_ENSURE(conductor->subscription_links, aa_subscription_link_t) < 0)
    {
        return -1;
    }
    char *channel_copy = strdup(channel);
    if (NULL == channel_copy)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory adding a subscription");
        return -1;
    }
    aa_subscription_link_t link_value;
    memset(&link_value, 0, sizeof(link_value));
    link_value.registration_id = command->correlated.correlation_id;
    link_value.client_id = command->correlated.client_id;
    link_value.stream_id = command->stream_id;
    link_value.has_session_id = 1 == rc_session;
    link_value.session_id = session_id;
    link_value.is_tether = tether;
    link_value.is_sparse = sparse;
    link_value.channel = channel_copy;
    if (AA_URI_MEDIA_UDP == uri.media && aa_conductor_add_udp_subscription(conductor, &link_value, channel, now_ms) < 0)
    {
        free(channel_copy);
        return -1;
    }
    aa_subscription_link_t *link = &conductor->subscription_links[conductor->subscription_links_count++];
    *link = link_value;

    aa_subscription_ready_t response = {
        .correlation_id = command->correlated.correlation_id,
        .channel_status_indicator_id =
            NULL != link->endpoint ? link->endpoint->status_counter_id : AA_CHANNEL_STATUS_INDICATOR_NOT_ALLOCATED,
    };
    aa_conductor_transmit(conductor, AA_RESPONSE_ON_SUBSCRIPTION_READY, &response, sizeof(response));

    if (NULL != link->endpoint)
    {
        for (size_t i = 0; i < conductor->images_count; i++)
        {
            aa_publication_image_t *image = conductor->images[i];
            if (AA_PUBLICATION_IMAGE_STATE_ACTIVE == image->state && aa_conductor_link_matches_image(link, image))
            {
                aa_conductor_link_image_subscriber(
                    conductor, image, link, aa_publication_image_join_position(image), now_ns, now_ms);
            }
        }
        return 0;
    }
    for (size_t i = 0; i < conductor->ipc_publications_count; i++)
    {
        aa_ipc_publication_t *pub = conductor->ipc_publications[i];
        if (AA_IPC_PUBLICATION_STATE_ACTIVE == pub->state)
        {
            aa_conductor_link_subscriber(conductor, pub, link, now_ns, now_ms);
        }
    }
    return 0;
}

static void aa_conductor_remove_subscription_link_at(
    aa_driver_conductor_t *conductor, size_t index, int64_t now_ns, int64_t now_ms)
{
    aa_subscription_link_t *link = &conductor->subscription_links[index];
    for (size_t i = 0; i < conductor->ipc_publications_count; i++)
    {
        int32_t counter_id = aa_ipc_publication_remove_subscriber(conductor->ipc_publications[i], link->registration_id);
        aa_conductor_free_counter(conductor, counter_id, now_ms);
    }
    aa_receive_channel_endpoint_t *endpoint = link->endpoint;
    if (NULL != endpoint)
    {
        for (size_t i = 0; i < conductor->images_count; i++)
        {
            aa_publication_image_t *image = conductor->images[i];
            if (image->endpoint == endpoint)
            {
                int32_t counter_id = aa_publication_image_remove_subscriber(image, link->registration_id);
                aa_conductor_free_counter(conductor, counter_id, now_ms);
            }
        }
        if (aa_driver_receiver_proxy_remove_subscription(conductor->receiver, endpoint, link->stream_id) < 0)
        {
            aa_driver_conductor_log_error(conductor, AA_ERROR_CODE_GENERIC_ERROR, aa_errmsg());
        }
        endpoint->refcnt--;
    }
    free(link->channel);
    conductor->subscription_links[index] = conductor->subscription_links[--conductor->subscription_links_count];
    if (NULL != endpoint)
    {
        aa_conductor_release_receive_endpoint(conductor, endpoint, now_ns, now_ms);
    }
}

static int aa_conductor_on_remove_subscription(
    aa_driver_conductor_t *conductor, const aa_remove_command_t *command, int64_t now_ns, int64_t now_ms)
{
    for (size_t i = 0; i < conductor->subscription_links_count; i++)
    {
        aa_subscription_link_t *link = &conductor->subscription_links[i];
        if (link->registration_id == command->registration_id && link->client_id == command->correlated.client_id)
        {
            aa_conductor_remove_subscription_link_at(conductor, i, now_ns, now_ms);
            aa_conductor_on_operation_success(conductor, command->correlated.correlation_id);
            return 0;
        }
    }
    AA_SET_ERR(AA_ERROR_CODE_UNKNOWN_SUBSCRIPTION, "unknown subscription registration id %" PRId64, command->registration_id);
    return -1;
}

/* ---- client removal ---- */

static void aa_conductor_remove_client_at(
    aa_driver_conductor_t *conductor, size_t index, bool timed_out, int64_t now_ns, int64_t now_ms)
{
    int64_t client_id = conductor->clients[index].client_id;
    for (size_t i = conductor->publication_links_count; i-- > 0;)
    {
        if (conductor->publication_links[i].client_id == client_id)
        {
            aa_conductor_remove_publication_link_at(conductor, i, now_ns);
        }
    }
    for (size_t i = conductor->subscription_links_count; i-- > 0;)
    {
        if (conductor->subscription_links[i].client_id == client_id)
        {
            aa_conductor_remove_subscription_link_at(conductor, i, now_ns, now_ms);
        }
    }
    aa_conductor_free_counter(conductor, conductor->clients[index].heartbeat_counter_id, now_ms);
    conductor->clients[index] = conductor->clients[--conductor->clients_count];
    if (timed_out)
    {
        aa_client_timeout_t response = { .client_id = client_id };
        aa_conductor_transmit(conductor, AA_RESPONSE_ON_CLIENT_TIMEOUT, &response, sizeof(response));
        aa_get_and_add_int64(conductor->system_counters[AA_SYSTEM_COUNTER_CLIENT_TIMEOUTS], 1);
    }
}

/* ---- command dispatch ---- */

typedef struct aa_command_context_stct
{
    aa_driver_conductor_t *conductor;
    int64_t now_ns;
    int64_t now_ms;
}
aa_command_context_t;

static const char *aa_conductor_command_channel(
    const void *buffer, size_t length, size_t header_length, int32_t channel_length, char *out, size_t out_length)
{
    if (channel_length < 0 || header_length + (size_t)channel_length > length || (size_t)channel_length >= out_length)
    {
        return NULL;
    }
    memcpy(out, (const uint8_t *)buffer + header_length, (size_t)channel_length);
    out[channel_length] = '\0';
    return out;
}

static void aa_conductor_on_command(int32_t msg_type_id, const void *buffer, size_t length, void *clientd)
{
    aa_command_context_t *cc = clientd;
    aa_driver_conductor_t *conductor = cc->conductor;
    char channel[AA_URI_MAX_LENGTH + 1];
    int64_t correlation_id = 0;
    int rc = 0;
    aa_err_clear();

    if (length < sizeof(aa_correlated_command_t))
    {
        aa_driver_conductor_log_error(conductor, AA_ERROR_CODE_MALFORMED_COMMAND, "command shorter than its header");
        return;
    }
    const aa_correlated_command_t *correlated = buffer;
    correlation_id = correlated->correlation_id;
    aa_driver_client_t *client = aa_conductor_get_or_add_client(conductor, correlated->client_id, cc->now_ms);
    if (NULL == client)
    {
        aa_conductor_on_error(conductor, correlation_id, AA_ERROR_CODE_GENERIC_ERROR, aa_errmsg());
        return;
    }
    aa_put_int64_release(client->heartbeat, cc->now_ms > *client->heartbeat ? cc->now_ms : *client->heartbeat);

    switch (msg_type_id)
    {
        case AA_COMMAND_ADD_PUBLICATION:
        case AA_COMMAND_ADD_EXCLUSIVE_PUBLICATION:
        {
            const aa_publication_command_t *command = buffer;
            if (length < sizeof(*command) || NULL == aa_conductor_command_channel(
                buffer, length, sizeof(*command), command->channel_length, channel, sizeof(channel)))
            {
                AA_SET_ERR(AA_ERROR_CODE_MALFORMED_COMMAND, "%s", "malformed add publication command");
                rc = -1;
                break;
            }
            rc = aa_conductor_on_add_publication(
                conductor, command, channel, AA_COMMAND_ADD_EXCLUSIVE_PUBLICATION == msg_type_id, cc->now_ns, cc->now_ms);
            break;
        }

        case AA_COMMAND_REMOVE_PUBLICATION:
            if (length < sizeof(aa_remove_command_t))
            {
                AA_SET_ERR(AA_ERROR_CODE_MALFORMED_COMMAND, "%s", "malformed remove publication command");
                rc = -1;
                break;
            }
            rc = aa_conductor_on_remove_publication(conductor, buffer, cc->now_ns);
            break;

        case AA_COMMAND_ADD_SUBSCRIPTION:
        {
            const aa_subscription_command_t *command = buffer;
            if (length < sizeof(*command) || NULL == aa_conductor_command_channel(
                buffer, length, sizeof(*command), command->channel_length, channel, sizeof(channel)))
            {
                AA_SET_ERR(AA_ERROR_CODE_MALFORMED_COMMAND, "%s", "malformed add subscription command");
                rc = -1;
                break;
            }
            rc = aa_conductor_on_add_subscription(conductor, command, channel, cc->now_ns, cc->now_ms);
            break;
        }

        case AA_COMMAND_REMOVE_SUBSCRIPTION:
            if (length < sizeof(aa_remove_command_t))
            {
                AA_SET_ERR(AA_ERROR_CODE_MALFORMED_COMMAND, "%s", "malformed remove subscription command");
                rc = -1;
                break;
            }
            rc = aa_conductor_on_remove_subscription(conductor, buffer, cc->now_ns, cc->now_ms);
            break;

        case AA_COMMAND_CLIENT_KEEPALIVE:
            break;

        case AA_COMMAND_CLIENT_CLOSE:
            for (size_t i = 0; i < conductor->clients_count; i++)
            {
                if (conductor->clients[i].client_id == correlated->client_id)
                {
                    aa_conductor_remove_client_at(conductor, i, false, cc->now_ns, cc->now_ms);
                    break;
                }
            }
            break;

        default:
            AA_SET_ERR(AA_ERROR_CODE_UNKNOWN_COMMAND_TYPE_ID, "command type 0x%x is not supported by this driver", msg_type_id);
            rc = -1;
            break;
    }

    if (rc < 0)
    {
        int code = aa_errcode();
        aa_conductor_on_error(conductor, correlation_id, code > 0 && code <= 14 ? code : AA_ERROR_CODE_GENERIC_ERROR, aa_errmsg());
    }
}

/* ---- timers ---- */

static void aa_conductor_check_clients(aa_driver_conductor_t *conductor, int64_t now_ns, int64_t now_ms)
{
    int64_t timeout_ms = conductor->ctx->client_liveness_timeout_ns / 1000000;
    for (size_t i = conductor->clients_count; i-- > 0;)
    {
        int64_t last = aa_get_int64_acquire(conductor->clients[i].heartbeat);
        if (now_ms > last + timeout_ms)
        {
            char message[128];
            snprintf(message, sizeof(message), "client %" PRId64 " timed out after %" PRId64 " ms without a heartbeat",
                conductor->clients[i].client_id, now_ms - last);
            aa_distinct_error_log_record(&conductor->error_log, now_ms, AA_ERROR_CODE_GENERIC_ERROR, message);
            aa_conductor_remove_client_at(conductor, i, true, now_ns, now_ms);
        }
    }
}

static void aa_conductor_check_untethered(aa_driver_conductor_t *conductor, aa_ipc_publication_t *pub, int64_t now_ns, int64_t now_ms)
{
    int64_t window_limit = pub->consumer_position - pub->term_window_length + (pub->term_window_length / 4);
    for (size_t i = 0; i < pub->subscribers_count; i++)
    {
        aa_subscriber_position_t *s = &pub->subscribers[i];
        if (s->is_tether)
        {
            continue;
        }
        switch (s->state)
        {
            case AA_SUBSCRIBER_STATE_ACTIVE:
                if (aa_get_int64_acquire(s->value) > window_limit)
                {
                    s->time_of_last_update_ns = now_ns;
                }
                else if (now_ns > s->time_of_last_update_ns + pub->untethered_window_limit_timeout_ns)
                {
                    aa_conductor_on_unavailable_image(conductor, pub, s->subscription_registration_id);
                    s->state = AA_SUBSCRIBER_STATE_LINGER;
                    s->time_of_last_update_ns = now_ns;
                    aa_ipc_publication_update_connected(pub);
                }
                break;

            case AA_SUBSCRIBER_STATE_LINGER:
                if (now_ns > s->time_of_last_update_ns + pub->linger_timeout_ns)
                {
                    s->state = AA_SUBSCRIBER_STATE_RESTING;
                    s->time_of_last_update_ns = now_ns;
                }
                break;

            case AA_SUBSCRIBER_STATE_RESTING:
                if (now_ns > s->time_of_last_update_ns + pub->untethered_resting_timeout_ns)
                {
                    int64_t join = aa_ipc_publication_join_position(pub);
                    aa_put_int64_release(s->value, join);
                    s->state = AA_SUBSCRIBER_STATE_ACTIVE;
                    s->time_of_last_update_ns = now_ns;
                    aa_ipc_publication_update_connected(pub);
                    aa_conductor_on_available_image(conductor, pub, s->subscription_registration_id, s->counter_id);
                }
                break;
        }
    }
    (void)now_ms;
}

static void aa_conductor_check_publications(aa_driver_conductor_t *conductor, int64_t now_ns, int64_t now_ms)
{
    for (size_t i = conductor->ipc_publications_count; i-- > 0;)
    {
        aa_ipc_publication_t *pub = conductor->ipc_publications[i];
        switch (pub->state)
        {
            case AA_IPC_PUBLICATION_STATE_ACTIVE:
                aa_conductor_check_untethered(conductor, pub, now_ns, now_ms);
                if (aa_ipc_publication_check_for_blocked_publisher(pub, now_ns))
                {
                    aa_get_and_add_int64(conductor->system_counters[AA_SYSTEM_COUNTER_UNBLOCKED_PUBLICATIONS], 1);
                }
                break;

            case AA_IPC_PUBLICATION_STATE_DRAINING:
                if (aa_ipc_publication_is_drained(pub))
                {
                    pub->state = AA_IPC_PUBLICATION_STATE_LINGER;
                    pub->time_of_last_state_change_ns = now_ns;
                    aa_logbuffer_set_connected(pub->log.metadata, false);
                    for (size_t s = 0; s < pub->subscribers_count; s++)
                    {
                        if (AA_SUBSCRIBER_STATE_ACTIVE == pub->subscribers[s].state)
                        {
                            aa_conductor_on_unavailable_image(conductor, pub, pub->subscribers[s].subscription_registration_id);
                        }
                    }
                }
                else if (aa_ipc_publication_check_for_blocked_publisher(pub, now_ns))
                {
                    aa_get_and_add_int64(conductor->system_counters[AA_SYSTEM_COUNTER_UNBLOCKED_PUBLICATIONS], 1);
                }
                break;

            case AA_IPC_PUBLICATION_STATE_LINGER:
                if (now_ns > pub->time_of_last_state_change_ns + pub->linger_timeout_ns)
                {
                    pub->state = AA_IPC_PUBLICATION_STATE_DONE;
                    for (size_t s = 0; s < pub->subscribers_count; s++)
                    {
                        aa_conductor_free_counter(conductor, pub->subscribers[s].counter_id, now_ms);
                    }
                    pub->subscribers_count = 0;
                    aa_conductor_free_counter(conductor, pub->pub_lmt_counter_id, now_ms);
                    aa_conductor_free_counter(conductor, pub->pub_pos_counter_id, now_ms);
                    conductor->bytes_mapped -= (int64_t)pub->mapped.length;
                    aa_put_int64_release(
                        conductor->system_counters[AA_SYSTEM_COUNTER_BYTES_CURRENTLY_MAPPED], conductor->bytes_mapped);
                    if (unlink(pub->log_path) < 0 && ENOENT != errno)
                    {
                        aa_get_and_add_int64(conductor->system_counters[AA_SYSTEM_COUNTER_FREE_FAILS], 1);
                    }
                    conductor->ipc_publications[i] = conductor->ipc_publications[--conductor->ipc_publications_count];
                    aa_ipc_publication_free(pub);
                }
                break;

            case AA_IPC_PUBLICATION_STATE_DONE:
                break;
        }
    }
}

static void aa_conductor_check_network_publications(aa_driver_conductor_t *conductor, int64_t now_ns, int64_t now_ms)
{
    for (size_t i = conductor->network_publications_count; i-- > 0;)
    {
        aa_network_publication_t *pub = conductor->network_publications[i];
        switch (pub->state)
        {
            case AA_NETWORK_PUBLICATION_STATE_ACTIVE:
                if (aa_network_publication_check_for_blocked_publisher(pub, now_ns))
                {
                    aa_driver_conductor_count(conductor, AA_SYSTEM_COUNTER_UNBLOCKED_PUBLICATIONS, 1);
                }
                break;

            case AA_NETWORK_PUBLICATION_STATE_DRAINING:
                if (aa_network_publication_is_drained(pub))
                {
                    pub->state = AA_NETWORK_PUBLICATION_STATE_LINGER;
                    pub->time_of_last_state_change_ns = now_ns;
                }
                else if (aa_network_publication_check_for_blocked_publisher(pub, now_ns))
                {
                    aa_driver_conductor_count(conductor, AA_SYSTEM_COUNTER_UNBLOCKED_PUBLICATIONS, 1);
                }
                break;

            case AA_NETWORK_PUBLICATION_STATE_LINGER:
                if ((now_ns > pub->time_of_last_state_change_ns + pub->linger_timeout_ns ||
                    1 == aa_get_int32_acquire(&pub->has_received_unicast_eos)))
                {
                    if (aa_driver_sender_proxy_remove_publication(conductor->sender, pub) < 0)
                    {
                        aa_driver_conductor_log_error(conductor, AA_ERROR_CODE_GENERIC_ERROR, aa_errmsg());
                        break;
                    }
                    pub->state = AA_NETWORK_PUBLICATION_STATE_DONE;
                    pub->time_of_last_state_change_ns = now_ns;
                }
                break;

            case AA_NETWORK_PUBLICATION_STATE_DONE:
                if (1 == aa_get_int32_acquire(&pub->has_sender_released))
                {
                    aa_send_channel_endpoint_t *endpoint = pub->endpoint;
                    aa_conductor_free_network_publication_counters(conductor, pub, now_ms);
                    conductor->bytes_mapped -= (int64_t)pub->mapped.length;
                    aa_put_int64_release(
                        conductor->system_counters[AA_SYSTEM_COUNTER_BYTES_CURRENTLY_MAPPED], conductor->bytes_mapped);
                    if (unlink(pub->log_path) < 0 && ENOENT != errno)
                    {
                        aa_driver_conductor_count(conductor, AA_SYSTEM_COUNTER_FREE_FAILS, 1);
                    }
                    conductor->network_publications[i] =
                        conductor->network_publications[--conductor->network_publications_count];
                    aa_network_publication_free(pub);
                    endpoint->refcnt--;
                    aa_conductor_release_send_endpoint(conductor, endpoint);
                }
                break;
        }
    }
}

static void aa_conductor_check_send_endpoints(aa_driver_conductor_t *conductor, int64_t now_ms)
{
    for (size_t i = conductor->send_endpoints_count; i-- > 0;)
    {
        aa_send_channel_endpoint_t *endpoint = conductor->send_endpoints[i];
        if (!endpoint->is_closing)
        {
            aa_conductor_release_send_endpoint(conductor, endpoint);
        }
        else if (1 == aa_get_int32_acquire(&endpoint->has_sender_released))
        {
            aa_conductor_free_counter(conductor, endpoint->status_counter_id, now_ms);
            conductor->send_endpoints[i] = conductor->send_endpoints[--conductor->send_endpoints_count];
            aa_send_channel_endpoint_delete(endpoint);
        }
    }
}

static void aa_conductor_check_images(aa_driver_conductor_t *conductor, int64_t now_ns, int64_t now_ms)
{
    int64_t liveness_timeout_ns = conductor->ctx->image_liveness_timeout_ns;
    int64_t drain_linger_ns = 5 * conductor->ctx->status_message_timeout_ns;
    for (size_t i = conductor->images_count; i-- > 0;)
    {
        aa_publication_image_t *image = conductor->images[i];
        switch (image->state)
        {
            case AA_PUBLICATION_IMAGE_STATE_ACTIVE:
                if (0 == image->subscribers_count || 1 == aa_get_int32_acquire(&image->is_end_of_stream) ||
                    now_ns > aa_get_int64_acquire(&image->time_of_last_packet_ns) + liveness_timeout_ns)
                {
                    aa_conductor_image_begin_draining(image, now_ns);
                }
                break;

            case AA_PUBLICATION_IMAGE_STATE_DRAINING:
                if (0 == image->subscribers_count ||
                    (aa_publication_image_is_drained(image) && now_ns > image->time_of_last_state_change_ns + drain_linger_ns) ||
                    now_ns > image->time_of_last_state_change_ns + liveness_timeout_ns)
                {
                    aa_conductor_image_begin_linger(conductor, image, now_ns, now_ms);
                }
                break;

            case AA_PUBLICATION_IMAGE_STATE_LINGER:
                if (1 == aa_get_int32_acquire(&image->has_receiver_released))
                {
                    conductor->images[i] = conductor->images[--conductor->images_count];
                    aa_conductor_free_image(conductor, image, now_ms);
                }
                break;
        }
    }
}

static void aa_conductor_check_receive_endpoints(aa_driver_conductor_t *conductor, int64_t now_ns, int64_t now_ms)
{
    for (size_t i = conductor->receive_endpoints_count; i-- > 0;)
    {
        aa_receive_channel_endpoint_t *endpoint = conductor->receive_endpoints[i];
        if (!endpoint->is_closing)
        {
            aa_conductor_release_receive_endpoint(conductor, endpoint, now_ns, now_ms);
        }
        else if (endpoint->conductor_removals == aa_get_int32_acquire(&endpoint->receiver_removals) &&
            0 == endpoint->image_refs)
        {
            aa_conductor_free_counter(conductor, endpoint->status_counter_id, now_ms);
            conductor->receive_endpoints[i] = conductor->receive_endpoints[--conductor->receive_endpoints_count];
            aa_receive_channel_endpoint_delete(endpoint);
        }
    }
}

static void aa_conductor_on_timer(aa_driver_conductor_t *conductor, int64_t now_ns, int64_t now_ms)
{
    aa_conductor_check_clients(conductor, now_ns, now_ms);
    aa_conductor_check_publications(conductor, now_ns, now_ms);
    aa_conductor_check_network_publications(conductor, now_ns, now_ms);
    aa_conductor_check_send_endpoints(conductor, now_ms);
    aa_conductor_check_images(conductor, now_ns, now_ms);
    aa_conductor_check_receive_endpoints(conductor, now_ns, now_ms);

    /* A client that died between claiming and committing a command blocks the ring buffer:
     * after the client liveness timeout without progress, turn its record into padding. */
    int64_t consumer = aa_mpsc_rb_consumer_position(&conductor->to_driver);
    int64_t producer = aa_mpsc_rb_producer_position(&conductor->to_driver);
    if (producer > consumer && consumer == conductor->last_command_consumer_position)
    {
        if (now_ns > conductor->time_of_last_command_progress_ns + conductor->ctx->client_liveness_timeout_ns &&
            aa_mpsc_rb_unblock(&conductor->to_driver))
        {
            aa_get_and_add_int64(conductor->system_counters[AA_SYSTEM_COUNTER_UNBLOCKED_COMMANDS], 1);
            conductor->time_of_last_command_progress_ns = now_ns;
        }
    }
    else
    {
        conductor->last_command_consumer_position = consumer;
        conductor->time_of_last_command_progress_ns = now_ns;
    }
}

int aa_driver_conductor_do_work(void *state)
{
    aa_driver_conductor_t *conductor = state;
    int64_t now_ns = aa_nano_clock();
    int64_t now_ms = aa_epoch_clock();
    int work_count = 0;

    if (now_ms != conductor->last_heartbeat_ms)
    {
        aa_mpsc_rb_consumer_heartbeat_time(&conductor->to_driver, now_ms);
        conductor->last_heartbeat_ms = now_ms;
    }

    aa_command_context_t cc = { .conductor = conductor, .now_ns = now_ns, .now_ms = now_ms };
    work_count += (int)aa_mpsc_rb_read(&conductor->to_driver, aa_conductor_on_command, &cc, AA_COMMAND_DRAIN_LIMIT);
    work_count += aa_command_queue_drain(&conductor->commands, conductor, AA_COMMAND_DRAIN_LIMIT);

    for (size_t i = 0; i < conductor->ipc_publications_count; i++)
    {
        work_count += aa_ipc_publication_update_pub_pos_and_lmt(conductor->ipc_publications[i]);
    }
    for (size_t i = 0; i < conductor->network_publications_count; i++)
    {
        work_count += aa_network_publication_update_pub_pos_and_lmt(conductor->network_publications[i]);
    }
    for (size_t i = 0; i < conductor->images_count; i++)
    {
        work_count += aa_publication_image_update_subscriber_positions(conductor->images[i]);
    }
    work_count += aa_prefault_do_work(&conductor->prefault);

    /* Timers are housekeeping, not a sign that more work is coming: they do not count as work, so
     * an idle driver's backoff reaches its longest park instead of restarting every timer interval. */
    if (now_ns >= conductor->next_timer_ns)
    {
        conductor->next_timer_ns = now_ns + conductor->ctx->timer_interval_ns;
        aa_conductor_on_timer(conductor, now_ns, now_ms);
    }

    aa_driver_conductor_record_cycle(
        conductor, aa_nano_clock() - now_ns, conductor->ctx->conductor_cycle_threshold_ns,
        AA_SYSTEM_COUNTER_CONDUCTOR_MAX_CYCLE_TIME, AA_SYSTEM_COUNTER_CONDUCTOR_CYCLE_TIME_THRESHOLD_EXCEEDED);
    return work_count;
}

/* ---- lifecycle ---- */

int aa_driver_conductor_init(
    aa_driver_conductor_t *conductor, aa_driver_context_t *ctx, aa_driver_sender_t *sender, aa_driver_receiver_t *receiver)
{
    memset(conductor, 0, sizeof(*conductor));
    conductor->ctx = ctx;
    conductor->sender = sender;
    conductor->receiver = receiver;
    if (aa_command_queue_init(&conductor->commands, AA_COMMAND_QUEUE_CAPACITY_DEFAULT) < 0)
    {
        AA_APPEND_ERR("%s", "creating the conductor's command queue");
        return -1;
    }

    size_t counters_metadata_length = (size_t)ctx->counters_values_buffer_length * 4;
    size_t total = (size_t)ctx->to_driver_buffer_length + (size_t)ctx->to_clients_buffer_length +
        counters_metadata_length + (size_t)ctx->counters_values_buffer_length + (size_t)ctx->error_buffer_length;
    size_t cnc_length = aa_cnc_computed_length(total, (size_t)ctx->file_page_size);
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", ctx->aeron_dir, AA_CNC_FILE);
    if (aa_map_new_file(&conductor->cnc_file, path, cnc_length, false) < 0)
    {
        AA_APPEND_ERR("%s", "creating the CnC file");
        aa_command_queue_close(&conductor->commands);
        return -1;
    }
    aa_cnc_metadata_t *cnc = (aa_cnc_metadata_t *)conductor->cnc_file.addr;
    conductor->cnc = cnc;
    cnc->to_driver_buffer_length = (int32_t)ctx->to_driver_buffer_length;
    cnc->to_clients_buffer_length = (int32_t)ctx->to_clients_buffer_length;
    cnc->counters_metadata_buffer_length = (int32_t)counters_metadata_length;
    cnc->counters_values_buffer_length = (int32_t)ctx->counters_values_buffer_length;
    cnc->error_log_buffer_length = (int32_t)ctx->error_buffer_length;
    cnc->client_liveness_timeout = ctx->client_liveness_timeout_ns;
    cnc->start_timestamp = aa_epoch_clock();
    cnc->pid = getpid();

    if (aa_mpsc_rb_init(&conductor->to_driver, aa_cnc_to_driver_buffer(cnc), (size_t)cnc->to_driver_buffer_length) < 0 ||
        aa_broadcast_transmitter_init(&conductor->to_clients, aa_cnc_to_clients_buffer(cnc), (size_t)cnc->to_clients_buffer_length) < 0 ||
        aa_counters_manager_init(
            &conductor->counters, aa_cnc_counters_metadata_buffer(cnc), counters_metadata_length,
            aa_cnc_counters_values_buffer(cnc), (size_t)cnc->counters_values_buffer_length,
            ctx->counters_free_to_reuse_timeout_ns / 1000000) < 0)
    {
        aa_unmap(&conductor->cnc_file);
        aa_command_queue_close(&conductor->commands);
        return -1;
    }
    if (aa_distinct_error_log_init(&conductor->error_log, aa_cnc_error_log_buffer(cnc), (size_t)cnc->error_log_buffer_length) < 0)
    {
        aa_counters_manager_close(&conductor->counters);
        aa_unmap(&conductor->cnc_file);
        aa_command_queue_close(&conductor->commands);
        return -1;
    }

    int64_t now_ms = aa_epoch_clock();
    for (int i = 0; i < AA_SYSTEM_COUNTER_COUNT; i++)
    {
        int32_t key = i;
        const char *label = aa_system_counter_labels[i];
        int32_t id = aa_counters_manager_allocate(
            &conductor->counters, now_ms, AA_COUNTER_TYPE_SYSTEM, (const uint8_t *)&key, sizeof(key), label, strlen(label));
        if (id < 0)
        {
            aa_driver_conductor_on_close(conductor);
            return -1;
        }
        conductor->system_counters[i] = aa_counters_manager_addr(&conductor->counters, id);
    }

    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    srand((unsigned)(ts.tv_nsec ^ getpid()));
    conductor->next_session_id = (int32_t)rand();
    conductor->next_timer_ns = aa_nano_clock();
    aa_mpsc_rb_consumer_heartbeat_time(&conductor->to_driver, now_ms);
    conductor->last_heartbeat_ms = now_ms;
    aa_put_int32_release(&cnc->cnc_version, AA_CNC_VERSION);
    return 0;
}

void aa_driver_conductor_on_close(void *state)
{
    aa_driver_conductor_t *conductor = state;
    for (size_t i = 0; i < conductor->ipc_publications_count; i++)
    {
        aa_ipc_publication_t *pub = conductor->ipc_publications[i];
        aa_put_int64_release(&pub->log.metadata->end_of_stream_position, aa_ipc_publication_producer_position(pub));
        aa_doorbell_ring(aa_logbuffer_doorbell(pub->log.metadata));
        aa_logbuffer_set_connected(pub->log.metadata, false);
        unlink(pub->log_path); /* as Aeron frees a log on close: nothing is left in the directory */
        aa_ipc_publication_free(pub);
    }
    for (size_t i = 0; i < conductor->network_publications_count; i++)
    {
        aa_network_publication_t *pub = conductor->network_publications[i];
        aa_put_int64_release(&pub->log.metadata->end_of_stream_position, aa_network_publication_producer_position(pub));
        aa_doorbell_ring(aa_logbuffer_doorbell(pub->log.metadata));
        aa_logbuffer_set_connected(pub->log.metadata, false);
        unlink(pub->log_path); /* as Aeron frees a log on close: nothing is left in the directory */
        aa_network_publication_free(pub);
    }
    for (size_t i = 0; i < conductor->send_endpoints_count; i++)
    {
        aa_send_channel_endpoint_delete(conductor->send_endpoints[i]);
    }
    for (size_t i = 0; i < conductor->images_count; i++)
    {
        aa_publication_image_t *image = conductor->images[i];
        aa_put_int64_release(&image->log.metadata->end_of_stream_position, aa_get_int64_acquire(image->rcv_pos));
        aa_doorbell_ring(aa_logbuffer_doorbell(image->log.metadata));
        unlink(image->log_path); /* as Aeron frees a log on close: nothing is left in the directory */
        aa_publication_image_free(image);
    }
    for (size_t i = 0; i < conductor->receive_endpoints_count; i++)
    {
        aa_receive_channel_endpoint_delete(conductor->receive_endpoints[i]);
    }
    free(conductor->images);
    free(conductor->receive_endpoints);
    conductor->images = NULL;
    conductor->receive_endpoints = NULL;
    conductor->images_count = 0;
    conductor->receive_endpoints_count = 0;
    for (size_t i = 0; i < conductor->subscription_links_count; i++)
    {
        free(conductor->subscription_links[i].channel);
    }
    free(conductor->network_publications);
    free(conductor->send_endpoints);
    conductor->network_publications = NULL;
    conductor->send_endpoints = NULL;
    conductor->network_publications_count = 0;
    conductor->send_endpoints_count = 0;
    free(conductor->ipc_publications);
    free(conductor->publication_links);
    free(conductor->subscription_links);
    free(conductor->clients);
    conductor->ipc_publications = NULL;
    conductor->publication_links = NULL;
    conductor->subscription_links = NULL;
    conductor->clients = NULL;
    conductor->ipc_publications_count = 0;
    conductor->publication_links_count = 0;
    conductor->subscription_links_count = 0;
    conductor->clients_count = 0;
    aa_prefault_close(&conductor->prefault);
    aa_distinct_error_log_close(&conductor->error_log);
    aa_counters_manager_close(&conductor->counters);
    if (NULL != conductor->to_driver.consumer_heartbeat)
    {
        aa_cnc_mark_closed(&conductor->to_driver); /* last, as Aeron's conductor does */
    }
    aa_unmap(&conductor->cnc_file);
    aa_command_queue_close(&conductor->commands);
}
