/*
 * The conductor's publications: IPC and network (UDP), their channel parameters, session ids,
 * creation, the clients' links to them, and their timers (untethered subscribers, blocked
 * publishers, drain, linger).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aa_driver_conductor_private.h"
#include "../util/aa_error.h"

/* ---- responses ---- */

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

/* ---- publications ---- */

void aa_conductor_link_subscriber(
    aa_driver_conductor_t *conductor, aa_ipc_publication_t *pub, aa_subscription_link_t *link,
    int64_t now_ns, int64_t now_ms)
{
    if (NULL != link->endpoint || NULL != link->spy_channel || link->stream_id != pub->stream_id ||
        (link->has_session_id && link->session_id != pub->session_id))
    {
        return;
    }
    if (NULL != aa_ipc_publication_find_subscriber(pub, link->registration_id))
    {
        return;
    }
    volatile int64_t *value;
    int32_t counter_id = aa_conductor_allocate_subscriber_position(
        conductor, link, pub->session_id, pub->stream_id, aa_ipc_publication_join_position(pub), now_ms, &value);
    if (counter_id < 0)
    {
        return;
    }
    if (aa_ipc_publication_add_subscriber(
        pub, link->registration_id, link->client_id, counter_id, value, link->is_tether, now_ns) < 0)
    {
        aa_conductor_free_counter(conductor, counter_id, now_ms);
        aa_driver_conductor_log_error(conductor, ENOMEM, "out of memory adding a subscriber");
        return;
    }
    aa_conductor_on_available_image(conductor, pub, link->registration_id, counter_id);
}

void aa_conductor_link_spy(
    aa_driver_conductor_t *conductor, aa_network_publication_t *pub, aa_subscription_link_t *link,
    int64_t now_ns, int64_t now_ms)
{
    if (NULL == link->spy_channel || AA_NETWORK_PUBLICATION_STATE_ACTIVE != pub->state ||
        link->stream_id != pub->stream_id || (link->has_session_id && link->session_id != pub->session_id) ||
        !aa_udp_channel_equals(pub->endpoint->channel, link->spy_channel) ||
        NULL != aa_network_publication_find_spy(pub, link->registration_id))
    {
        return;
    }
    volatile int64_t *value;
    int32_t counter_id = aa_conductor_allocate_subscriber_position(
        conductor, link, pub->session_id, pub->stream_id, aa_network_publication_join_position(pub), now_ms, &value);
    if (counter_id < 0)
    {
        return;
    }
    if (aa_network_publication_add_spy(
        pub, link->registration_id, link->client_id, counter_id, value, link->is_tether, now_ns) < 0)
    {
        aa_conductor_free_counter(conductor, counter_id, now_ms);
        aa_driver_conductor_log_error(conductor, ENOMEM, "out of memory adding a spy");
        return;
    }
    /* a spy reads the publication's own log, over shared memory: its source is IPC (as in Aeron) */
    aa_conductor_send_available_image(
        conductor, pub->registration_id, pub->session_id, pub->stream_id, link->registration_id, counter_id,
        pub->log_path, "aeron:ipc");
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
    aa_flow_control_strategy_choice_t flow_control;  /* UDP; options point into the caller's URI */
    bool spies_simulate_connection;
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
    params->spies_simulate_connection = ctx->spies_simulate_connection;

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
    int rc_window = aa_uri_get_size(uri, "pub-wnd", &publication_window);
    if (rc_window < 0 || (is_udp && aa_uri_get_bool(uri, "ssc", &params->spies_simulate_connection) < 0))
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
    if (is_udp && aa_flow_control_strategy_select(false, aa_uri_find_param(uri, "fc"), NULL, &params->flow_control) < 0)
    {
        return -1;
    }

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

/* A new publication's first term id: the one its channel gives (init-term-id), else a random one. */
static int32_t aa_conductor_initial_term_id(const aa_publication_params_t *params, int64_t now_ns)
{
    return params->has_position ? params->initial_term_id : (int32_t)(rand() ^ (int32_t)now_ns);
}

/* The log of a new publication (IPC or network) as its channel parameters ask (an IPC channel takes
 * no ssc=: its params keep the driver's default). */
static aa_logbuffer_init_params_t aa_conductor_publication_log_params(
    const aa_driver_conductor_t *conductor, const aa_publication_params_t *params, int64_t registration_id,
    int32_t session_id, int32_t stream_id, int32_t initial_term_id)
{
    aa_logbuffer_init_params_t init =
    {
        .correlation_id = registration_id,
        .initial_term_id = initial_term_id,
        .active_term_id = params->has_position ? params->term_id : initial_term_id,
        .term_offset = params->has_position ? params->term_offset : 0,
        .term_length = params->term_length,
        .mtu_length = params->mtu_length,
        .session_id = session_id,
        .stream_id = stream_id,
        .publication_window_length = (int32_t)params->term_window_length,
        .receiver_window_length = 0,
        .linger_timeout_ns = params->linger_timeout_ns,
        .sparse = params->sparse,
        .tether = params->tether,
        .reliable = conductor->ctx->reliable_stream,
        .signal_eos = params->signal_eos,
        .group = false,
        .spies_simulate_connection = params->spies_simulate_connection,
        .max_resend = AA_MAX_RESEND_DEFAULT,
    };
    return init;
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
    pub->services = &conductor->services;
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

    int32_t initial_term_id = aa_conductor_initial_term_id(params, now_ns);
    aa_logbuffer_init_params_t init = aa_conductor_publication_log_params(
        conductor, params, registration_id, pub->session_id, stream_id, initial_term_id);
    if (aa_conductor_create_log(
        conductor, "publications", &init, pub->log_path, sizeof(pub->log_path), &pub->mapped, &pub->log) < 0)
    {
        aa_ipc_publication_free(pub);
        return NULL;
    }
    conductor->bytes_mapped += (int64_t)pub->mapped.length;
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
    int32_t initial_term_id = aa_conductor_initial_term_id(params, now_ns);
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
        .flow_control = params->flow_control,
        .spies_simulate_connection = params->spies_simulate_connection,
    };
    if (aa_network_publication_init(pub, &init, &conductor->services) < 0)
    {
        aa_network_publication_free(pub);
        return NULL;
    }
    pub->endpoint = endpoint;

    aa_logbuffer_init_params_t log_params = aa_conductor_publication_log_params(
        conductor, params, registration_id, session_id, stream_id, initial_term_id);
    if (aa_conductor_create_log(
        conductor, "publications", &log_params, pub->log_path, sizeof(pub->log_path), &pub->mapped, &pub->log) < 0)
    {
        aa_network_publication_free(pub);
        return NULL;
    }
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
                if (aa_channel_check_shared_publication(conductor->ctx, channel, p->channel) < 0)
                {
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
        for (size_t i = 0; i < conductor->subscription_links_count; i++)
        {
            aa_conductor_link_spy(conductor, pub, &conductor->subscription_links[i], now_ns, now_ms);
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

int aa_conductor_on_add_publication(
    aa_driver_conductor_t *conductor, const aa_publication_command_t *command, const char *channel, bool is_exclusive,
    int64_t now_ns, int64_t now_ms)
{
    aa_uri_t uri;
    aa_publication_params_t params;
    memset(&params, 0, sizeof(params));
    if (aa_conductor_parse_channel(channel, &uri, true) < 0)
    {
        return -1;
    }
    if (uri.is_spy)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "channel %s: a spy (aeron-spy:) only subscribes, to a network publication of this driver; publish on the "
            "channel without the prefix (aeron:udp?endpoint=host:port)", channel);
        return -1;
    }
    if (aa_conductor_parse_publication_params(conductor, &uri, &params) < 0)
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
                if (aa_channel_check_shared_publication(conductor->ctx, channel, p->channel) < 0)
                {
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

void aa_conductor_remove_publication_link_at(aa_driver_conductor_t *conductor, size_t index, int64_t now_ns)
{
    aa_publication_link_t link = conductor->publication_links[index];
    conductor->publication_links[index] = conductor->publication_links[--conductor->publication_links_count];
    aa_conductor_decref_publication(conductor, &link, now_ns);
}

int aa_conductor_on_remove_publication(
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

/* ---- timers ---- */

/* What differs between an IPC publication's untethered subscribers and a network publication's
 * untethered spies. */
typedef struct aa_untethered_ops_stct
{
    int64_t (*join_position)(void *pub);
    /* after the state changed: the image went unavailable (LINGER), or came back (ACTIVE) */
    void (*dropped)(aa_driver_conductor_t *conductor, void *pub, aa_subscriber_position_t *s);
    void (*rejoined)(aa_driver_conductor_t *conductor, void *pub, aa_subscriber_position_t *s);
}
aa_untethered_ops_t;

/* Aeron's rule for untethered subscribers: one behind the window less a quarter for the window-limit
 * timeout is dropped (its image goes unavailable and it no longer holds the publisher back), rests
 * after the linger timeout, and rejoins at the join position after the resting timeout. */
static void aa_conductor_check_untethered(
    aa_driver_conductor_t *conductor, void *pub, aa_subscriber_position_t *subscribers, size_t count,
    int64_t consumer_position, int64_t term_window_length, int64_t linger_timeout_ns, const aa_untethered_ops_t *ops,
    int64_t now_ns)
{
    aa_driver_context_t *ctx = conductor->ctx;
    int64_t window_limit = consumer_position - term_window_length + (term_window_length / 4);
    for (size_t i = 0; i < count; i++)
    {
        aa_subscriber_position_t *s = &subscribers[i];
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
                else if (now_ns > s->time_of_last_update_ns + ctx->untethered_window_limit_timeout_ns)
                {
                    s->state = AA_SUBSCRIBER_STATE_LINGER;
                    s->time_of_last_update_ns = now_ns;
                    ops->dropped(conductor, pub, s);
                }
                break;

            case AA_SUBSCRIBER_STATE_LINGER:
                if (now_ns > s->time_of_last_update_ns + linger_timeout_ns)
                {
                    s->state = AA_SUBSCRIBER_STATE_RESTING;
                    s->time_of_last_update_ns = now_ns;
                }
                break;

            case AA_SUBSCRIBER_STATE_RESTING:
                if (now_ns > s->time_of_last_update_ns + ctx->untethered_resting_timeout_ns)
                {
                    aa_put_int64_release(s->value, ops->join_position(pub));
                    s->state = AA_SUBSCRIBER_STATE_ACTIVE;
                    s->time_of_last_update_ns = now_ns;
                    ops->rejoined(conductor, pub, s);
                }
                break;
        }
    }
}

static int64_t aa_conductor_ipc_join_position(void *pub)
{
    return aa_ipc_publication_join_position(pub);
}

static void aa_conductor_ipc_subscriber_dropped(aa_driver_conductor_t *conductor, void *p, aa_subscriber_position_t *s)
{
    aa_ipc_publication_t *pub = p;
    aa_conductor_on_unavailable_image(conductor, pub, s->subscription_registration_id);
    aa_ipc_publication_update_connected(pub);
}

static void aa_conductor_ipc_subscriber_rejoined(aa_driver_conductor_t *conductor, void *p, aa_subscriber_position_t *s)
{
    aa_ipc_publication_t *pub = p;
    aa_ipc_publication_update_connected(pub);
    aa_conductor_on_available_image(conductor, pub, s->subscription_registration_id, s->counter_id);
}

static const aa_untethered_ops_t aa_conductor_ipc_untethered_ops =
{
    aa_conductor_ipc_join_position, aa_conductor_ipc_subscriber_dropped, aa_conductor_ipc_subscriber_rejoined
};

/* an untethered spy rejoins at the sender position, as in Aeron */
static int64_t aa_conductor_spy_join_position(void *pub)
{
    return aa_get_int64_acquire(((aa_network_publication_t *)pub)->snd_pos);
}

static void aa_conductor_spy_dropped(aa_driver_conductor_t *conductor, void *p, aa_subscriber_position_t *s)
{
    aa_network_publication_t *pub = p;
    aa_conductor_send_unavailable_image(
        conductor, pub->registration_id, s->subscription_registration_id, pub->stream_id, pub->channel);
}

static void aa_conductor_spy_rejoined(aa_driver_conductor_t *conductor, void *p, aa_subscriber_position_t *s)
{
    aa_network_publication_t *pub = p;
    aa_conductor_send_available_image(
        conductor, pub->registration_id, pub->session_id, pub->stream_id, s->subscription_registration_id,
        s->counter_id, pub->log_path, "aeron:ipc");
}

static const aa_untethered_ops_t aa_conductor_spy_untethered_ops =
{
    aa_conductor_spy_join_position, aa_conductor_spy_dropped, aa_conductor_spy_rejoined
};

void aa_conductor_check_publications(aa_driver_conductor_t *conductor, int64_t now_ns, int64_t now_ms)
{
    for (size_t i = conductor->ipc_publications_count; i-- > 0;)
    {
        aa_ipc_publication_t *pub = conductor->ipc_publications[i];
        switch (pub->state)
        {
            case AA_IPC_PUBLICATION_STATE_ACTIVE:
                aa_conductor_check_untethered(conductor, pub, pub->subscribers, pub->subscribers_count,
                    pub->consumer_position, pub->term_window_length, pub->linger_timeout_ns,
                    &aa_conductor_ipc_untethered_ops, now_ns);
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

void aa_conductor_check_network_publications(aa_driver_conductor_t *conductor, int64_t now_ns, int64_t now_ms)
{
    for (size_t i = conductor->network_publications_count; i-- > 0;)
    {
        aa_network_publication_t *pub = conductor->network_publications[i];
        switch (pub->state)
        {
            case AA_NETWORK_PUBLICATION_STATE_ACTIVE:
                /* a dropped spy lingers for the window-limit timeout before it rests, as in Aeron */
                aa_conductor_check_untethered(conductor, pub, pub->spies, pub->spies_count,
                    aa_get_int64_acquire(pub->snd_pos), pub->term_window_length,
                    conductor->ctx->untethered_window_limit_timeout_ns, &aa_conductor_spy_untethered_ops, now_ns);
                if (aa_network_publication_check_for_blocked_publisher(pub, now_ns))
                {
                    aa_driver_conductor_count(conductor, AA_SYSTEM_COUNTER_UNBLOCKED_PUBLICATIONS, 1);
                }
                break;

            case AA_NETWORK_PUBLICATION_STATE_DRAINING:
                /* drained once sent (or nobody listens) and the spies that are not resting read it all (as
                 * in Aeron, a spy is waited for: an archive recording through it gets the whole stream) */
                if (aa_network_publication_is_drained(pub) && aa_network_publication_spies_finished_consuming(pub))
                {
                    pub->state = AA_NETWORK_PUBLICATION_STATE_LINGER;
                    pub->time_of_last_state_change_ns = now_ns;
                    for (size_t s = 0; s < pub->spies_count; s++)
                    {
                        if (AA_SUBSCRIBER_STATE_ACTIVE == pub->spies[s].state)
                        {
                            aa_conductor_spy_dropped(conductor, pub, &pub->spies[s]);
                        }
                    }
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
                    for (size_t s = 0; s < pub->spies_count; s++)
                    {
                        aa_conductor_free_counter(conductor, pub->spies[s].counter_id, now_ms);
                    }
                    pub->spies_count = 0;
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
