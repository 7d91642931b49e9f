/*
 * The conductor's publications: ADD_PUBLICATION top down (aa_conductor_on_add_publication), and what
 * IPC and network publications share: the channel parameters (read from the parsed channel, the log
 * they ask for), sharing a publication, session ids, the clients' links (add, remove, the READY
 * response) and Aeron's rule for untethered subscribers. The IPC and network publications themselves
 * live in aa_driver_conductor_ipc_publications.c and aa_driver_conductor_network_publications.c.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver/aa_driver_conductor_private.h"
#include "util/aa_error.h"

/* ---- responses ---- */

void aa_conductor_on_publication_ready(
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

/* ---- session ids ---- */

/* Whether a publication of the stream in scope holds session_id; the scopes are Aeron's (its session clash
 * checks and aeron_driver_conductor_speculate_next_session_id): an IPC publication's id is unique among
 * the active or draining IPC publications of its stream, a network publication's among those of its
 * stream on its send endpoint (two channels may carry one session id), and a GET_NEXT_AVAILABLE_SESSION_ID
 * request's among every publication of the stream. */
bool aa_conductor_session_id_in_use(
    aa_driver_conductor_t *conductor, aa_session_scope_t scope, const aa_send_channel_endpoint_t *endpoint,
    int32_t stream_id, int32_t session_id)
{
    if (AA_SESSION_SCOPE_NETWORK != scope)
    {
        for (size_t i = 0; i < conductor->ipc_publications_count; i++)
        {
            aa_ipc_publication_t *p = conductor->ipc_publications[i];
            if (p->stream_id == stream_id && p->session_id == session_id && (AA_SESSION_SCOPE_ALL == scope ||
                AA_IPC_PUBLICATION_STATE_ACTIVE == p->state || AA_IPC_PUBLICATION_STATE_DRAINING == p->state))
            {
                return true;
            }
        }
    }
    if (AA_SESSION_SCOPE_IPC != scope)
    {
        for (size_t i = 0; i < conductor->network_publications_count; i++)
        {
            aa_network_publication_t *p = conductor->network_publications[i];
            if (p->ids.stream_id == stream_id && p->ids.session_id == session_id &&
                (AA_SESSION_SCOPE_ALL == scope || p->endpoint == endpoint))
            {
                return true;
            }
        }
    }
    return false;
}

/* The driver's next session id, as Aeron's: one counter for the whole driver (random at start), stepping
 * past the reserved range (AERON_PUBLICATION_RESERVED_SESSION_ID_LOW..HIGH) and past the ids in use in
 * the scope; each id handed out moves it on by one, so consecutive requests get consecutive ids. */
int32_t aa_conductor_next_session_id(
    aa_driver_conductor_t *conductor, aa_session_scope_t scope, const aa_send_channel_endpoint_t *endpoint,
    int32_t stream_id)
{
    int32_t low = conductor->ctx->publication_reserved_session_id_low;
    int32_t high = conductor->ctx->publication_reserved_session_id_high;
    for (;;)
    {
        int32_t candidate = conductor->next_session_id;
        if (candidate >= low && candidate <= high)
        {
            candidate = (int32_t)((uint32_t)high + 1);
        }
        conductor->next_session_id = (int32_t)((uint32_t)candidate + 1);
        if (!aa_conductor_session_id_in_use(conductor, scope, endpoint, stream_id, candidate))
        {
            return candidate;
        }
    }
}

/* GET_NEXT_AVAILABLE_SESSION_ID (Aeron's Aeron.nextSessionId): the next id no publication of the stream
 * holds, answered with ON_NEXT_AVAILABLE_SESSION_ID. */
int aa_conductor_on_next_session_id(aa_driver_conductor_t *conductor, const uint8_t *buffer, size_t length)
{
    const aa_next_session_id_command_t *command = (const aa_next_session_id_command_t *)buffer;
    if (length < sizeof(*command))
    {
        AA_SET_ERR(AA_ERROR_CODE_MALFORMED_COMMAND,
            "malformed get next available session id command (%zu bytes, %zu expected)", length, sizeof(*command));
        return -1;
    }
    aa_next_session_id_response_t response =
    {
        .correlation_id = command->correlated.correlation_id,
        .next_session_id = aa_conductor_next_session_id(conductor, AA_SESSION_SCOPE_ALL, NULL, command->stream_id)
    };
    aa_conductor_transmit(conductor, AA_RESPONSE_ON_NEXT_AVAILABLE_SESSION_ID, &response, sizeof(response));
    return 0;
}

/* A publication's explicit session-id= taken in its scope: Aeron's words, then the fix. A session-id=tag:<n>
 * copies that publication's id on purpose (docs/configuration.md, Channel parameters), so it is not checked. */
int aa_conductor_check_session_clash(
    aa_driver_conductor_t *conductor, aa_session_scope_t scope, const aa_send_channel_endpoint_t *endpoint,
    int32_t stream_id, const aa_uri_t *uri, const aa_publication_params_t *params)
{
    if (params->has_session_id && !params->is_session_id_from_tag &&
        aa_conductor_session_id_in_use(conductor, scope, endpoint, stream_id, params->session_id))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "existing publication has clashing sessionId=%" PRId32 " for streamId=%" PRId32 " channel=%s. "
            "Another publication of the stream on %s holds it: give another session-id, or none for one the driver "
            "picks", params->session_id, stream_id, uri->text,
            AA_SESSION_SCOPE_IPC == scope ? "aeron:ipc" : "this send endpoint");
        return -1;
    }
    return 0;
}

/* ---- channel parameters ---- */

/* How far a publisher may run ahead: term/2 unless configured (0 = term/2), never above term/2. */
static int64_t aa_conductor_term_window_length(int64_t configured, int32_t term_length)
{
    int64_t half = term_length / 2;
    return 0 == configured ? half : (configured < half ? configured : half);
}

/* The network publication whose entity tag session-id=tag:<n> names, or NULL with Aeron's error. */
static const aa_network_publication_t *aa_conductor_find_network_publication_by_tag(
    aa_driver_conductor_t *conductor, const char *session_text)
{
    char *end = NULL;
    errno = 0;
    long long tag = strtoll(session_text + 4, &end, 10);
    if (0 != errno || end == session_text + 4 || '\0' != *end)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL, "could not parse session-id=%s as int64_t in URI; give "
            "session-id=tag:<entity tag of a network publication>", session_text);
        return NULL;
    }
    for (size_t i = 0; i < conductor->network_publications_count; i++)
    {
        const aa_network_publication_t *p = conductor->network_publications[i];
        aa_uri_tags_t tags;
        if (AA_NETWORK_PUBLICATION_STATE_ACTIVE == p->state && 1 == aa_uri_get_tags(p->channel, &tags) &&
            tags.has_entity_tag && tags.entity_tag == tag)
        {
            return p;
        }
    }
    AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL, "session-id=%s must reference a network publication; no active "
        "network publication of this driver has entity tag %lld (tags=<channel tag>,%lld)", session_text, tag, tag);
    return NULL;
}

/* A stream's untethered timeouts from its channel, else the driver's; each above the timer interval,
 * which checks them (Java's rule and words, Configuration.validateUntetheredTimeouts; aeron-wave3.md 5). */
int aa_conductor_parse_untethered_timeouts(
    aa_driver_conductor_t *conductor, const aa_uri_t *uri, aa_untethered_timeouts_t *timeouts)
{
    aa_driver_context_t *ctx = conductor->ctx;
    timeouts->window_limit_ns = ctx->untethered_window_limit_timeout_ns;
    timeouts->linger_ns = -1;
    timeouts->resting_ns = ctx->untethered_resting_timeout_ns;
    static const struct
    {
        const char *param;
        const char *java_name;
        size_t offset;
    }
    fields[] =
    {
        { "untethered-window-limit-timeout", "untetheredWindowLimitTimeoutNs", offsetof(aa_untethered_timeouts_t, window_limit_ns) },
        { "untethered-linger-timeout", "untetheredLingerTimeoutNs", offsetof(aa_untethered_timeouts_t, linger_ns) },
        { "untethered-resting-timeout", "untetheredRestingTimeoutNs", offsetof(aa_untethered_timeouts_t, resting_ns) },
    };
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
    {
        int64_t *value = (int64_t *)((uint8_t *)timeouts + fields[i].offset);
        int rc = aa_uri_get_duration_ns(uri, fields[i].param, value);
        if (rc < 0)
        {
            return -1;
        }
        if (1 == rc && *value <= ctx->timer_interval_ns)
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
                "%s=%" PRId64 " <= timerIntervalNs=%" PRId64 ": channel parameter %s must be longer than the driver's "
                "timer interval (AERON_TIMER_INTERVAL), which checks it", fields[i].java_name, *value,
                ctx->timer_interval_ns, fields[i].param);
            return -1;
        }
    }
    if (timeouts->linger_ns < 0)
    {
        /* unset: the driver's, which is unset too unless AERON_UNTETHERED_LINGER_TIMEOUT says otherwise */
        timeouts->linger_ns = ctx->untethered_linger_timeout_ns > 0 ?
            ctx->untethered_linger_timeout_ns : timeouts->window_limit_ns;
    }
    return 0;
}

static int aa_conductor_parse_publication_params(
    aa_driver_conductor_t *conductor, const aa_uri_t *uri, aa_publication_params_t *params)
{
    aa_driver_context_t *ctx = conductor->ctx;
    bool is_udp = AA_URI_MEDIA_UDP == uri->media;
    int64_t term_length = is_udp ? ctx->term_buffer_length : ctx->ipc_term_buffer_length;
    int64_t mtu = is_udp ? ctx->mtu_length : ctx->ipc_mtu_length;
    aa_uri_tags_t tags;
    if (aa_uri_get_tags(uri, &tags) < 0)
    {
        return -1;
    }
    params->entity_tag = tags.has_entity_tag ? tags.entity_tag : -1;
    /* session-id=tag:<n> (reference wave 3, section 2, the C driver): the session id, mtu and term length of
     * the network publication with entity tag n; term-length= and mtu= may still say otherwise */
    const char *session_text = aa_uri_find_param(uri, "session-id");
    if (NULL != session_text && 0 == strncmp(session_text, "tag:", 4))
    {
        const aa_network_publication_t *tagged = aa_conductor_find_network_publication_by_tag(conductor, session_text);
        if (NULL == tagged)
        {
            return -1;
        }
        params->is_session_id_from_tag = true;
        params->session_id = tagged->ids.session_id;
        term_length = tagged->ids.term_length;
        mtu = tagged->ids.mtu_length;
    }
    params->linger_timeout_ns = ctx->publication_linger_timeout_ns;
    params->sparse = ctx->term_buffer_sparse_file;
    params->signal_eos = true;
    params->tether = ctx->tether_subscriptions;
    params->spies_simulate_connection = ctx->spies_simulate_connection;
    if (aa_uri_get_response_correlation_id(uri, &params->response_correlation_id) < 0)
    {
        return -1;
    }
    params->is_response_control_mode = aa_uri_is_response_control_mode(uri);
    if (is_udp && params->is_response_control_mode &&
        AA_URI_RESPONSE_CORRELATION_ID_PROTOTYPE == params->response_correlation_id)
    {
        /* a prototype only keeps the send endpoint open and never sends (reference wave3 1.4) */
        term_length = AA_RESPONSE_PROTOTYPE_TERM_LENGTH;
    }

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
    if (aa_conductor_parse_untethered_timeouts(conductor, uri, &params->untethered) < 0)
    {
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

    if (params->is_session_id_from_tag)
    {
        params->has_session_id = true;
    }
    else
    {
        int rc_session = aa_uri_get_int32(uri, "session-id", &params->session_id);
        if (rc_session < 0)
        {
            return -1;
        }
        params->has_session_id = 1 == rc_session;
    }
    if (is_udp && aa_flow_control_strategy_select_with_defaults(
        false, aa_uri_find_param(uri, "fc"), ctx->unicast_flow_control_strategy, NULL, &params->flow_control) < 0)
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
void *aa_conductor_new_publication(size_t size, size_t channel_offset, const aa_uri_t *uri)
{
    uint8_t *pub = calloc(1, size);
    aa_uri_t *channel = malloc(sizeof(aa_uri_t));
    if (NULL == pub || NULL == channel)
    {
        free(pub);
        free(channel);
        AA_SET_ERR(ENOMEM, "%s", "out of memory creating a publication");
        return NULL;
    }
    *channel = *uri;
    *(aa_uri_t **)(pub + channel_offset) = channel;
    return pub;
}

int32_t aa_conductor_initial_term_id(const aa_publication_params_t *params, int64_t now_ns)
{
    return params->has_position ? params->initial_term_id : (int32_t)(rand() ^ (int32_t)now_ns);
}

/* The log of a new publication (IPC or network) as its channel parameters ask (an IPC channel takes
 * no ssc=: its params keep the driver's default). */
aa_logbuffer_init_params_t aa_conductor_publication_log_params(
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
        .untethered_window_limit_timeout_ns = params->untethered.window_limit_ns,
        .untethered_resting_timeout_ns = params->untethered.resting_ns,
        .untethered_linger_timeout_ns = params->untethered.linger_ns,
        .type = 0,
        .sparse = params->sparse,
        .tether = params->tether,
        .reliable = conductor->ctx->reliable_stream,
        .signal_eos = params->signal_eos,
        .group = false,
        .spies_simulate_connection = params->spies_simulate_connection,
        .max_resend = AA_MAX_RESEND_DEFAULT,
        .entity_tag = params->entity_tag,
    };
    return init;
}

/* ---- links ---- */

static void aa_conductor_decref_publication(aa_driver_conductor_t *conductor, aa_publication_link_t *link, int64_t now_ns)
{
    (void)conductor;
    aa_ipc_publication_t *pub = link->publication;
    aa_network_publication_t *network = link->network_publication;
    /* a revoked publication does not drain: its next timer tick takes it to LINGER (aeron-wave3.md 4.1) */
    if (NULL != pub && --pub->refcnt <= 0 && AA_IPC_PUBLICATION_STATE_ACTIVE == pub->state &&
        !aa_logbuffer_is_publication_revoked(pub->log.metadata))
    {
        aa_ipc_publication_begin_draining(pub, now_ns);
    }
    if (NULL != network && --network->refcnt <= 0 && AA_NETWORK_PUBLICATION_STATE_ACTIVE == network->state &&
        !aa_logbuffer_is_publication_revoked(network->log.metadata))
    {
        aa_network_publication_begin_draining(network, now_ns);
    }
}

int aa_conductor_add_publication_link(
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

/* A multicast or multi-destination-cast channel has group semantics (reference 4.4, 5, 7.3): the driver's
 * multicast flow control unless fc= names one, a pool of max-resend= retransmit actions (else
 * AERON_MAX_RESEND), SETUP with the GROUP flag and the channel's TTL. The flow control's options stay
 * valid: they point into the command's parsed channel (fc=) or into the registry (the default). */
static int aa_conductor_apply_group_params(
    aa_driver_conductor_t *conductor, const aa_udp_channel_t *udp, aa_publication_params_t *params)
{
    /* multi-destination-cast (reference 7.3) has group semantics as multicast has, without a TTL */
    const bool is_mdc = AA_UDP_CHANNEL_CONTROL_MODE_DYNAMIC == udp->control_mode ||
        AA_UDP_CHANNEL_CONTROL_MODE_MANUAL == udp->control_mode;
    params->has_group_semantics = udp->is_multicast || is_mdc;
    params->max_resend = conductor->ctx->max_resend;
    params->multicast_ttl = udp->is_multicast ? udp->multicast_ttl : 0;
    if (!params->has_group_semantics)
    {
        return 0;
    }
    if (aa_uri_get_int32(&udp->uri, "max-resend", &params->max_resend) < 0)
    {
        return -1;
    }
    if (NULL == aa_uri_find_param(&udp->uri, "fc") &&
        aa_flow_control_strategy_select(true, NULL, conductor->ctx->multicast_flow_control_strategy,
            &params->flow_control) < 0)
    {
        AA_APPEND_ERR("%s", "AERON_MULTICAST_FLOW_CONTROL_STRATEGY");
        return -1;
    }
    return 0;
}

/* The live publication a non-exclusive one joins: not exclusive, the same stream, the same channel
 * (IPC; UDP: the send endpoint the channel shares, by tag or canonical form), session-id= when given
 * and an equal response-correlation-id. Sets *ipc or *network (neither: none to join) and returns 0,
 * or -1 when the channel asks for other settings than the publication keeps: term-length and mtu as
 * resolved, the rest compared on both parsed channels. */
static int aa_conductor_find_shared_publication(
    aa_driver_conductor_t *conductor, int32_t stream_id, const aa_uri_t *uri, const aa_publication_params_t *params,
    const aa_udp_channel_t *udp, aa_ipc_publication_t **ipc, aa_network_publication_t **network)
{
    aa_send_channel_endpoint_t *endpoint = NULL;
    if (NULL != udp && aa_conductor_find_send_endpoint(conductor, udp, &endpoint) < 0)
    {
        return -1;
    }
    int32_t term_length = 0;
    int32_t mtu_length = 0;
    const aa_uri_t *existing = NULL;
    for (size_t i = 0; NULL == udp && i < conductor->ipc_publications_count; i++)
    {
        aa_ipc_publication_t *p = conductor->ipc_publications[i];
        if (!p->is_exclusive && AA_IPC_PUBLICATION_STATE_ACTIVE == p->state && p->stream_id == stream_id &&
            (!params->has_session_id || params->session_id == p->session_id) &&
            p->response_correlation_id == params->response_correlation_id)
        {
            *ipc = p;
            term_length = p->term_length;
            mtu_length = p->mtu_length;
            existing = p->channel;
            break;
        }
    }
    for (size_t i = 0; NULL != udp && i < conductor->network_publications_count; i++)
    {
        aa_network_publication_t *p = conductor->network_publications[i];
        if (!p->is_exclusive && AA_NETWORK_PUBLICATION_STATE_ACTIVE == p->state && p->ids.stream_id == stream_id &&
            NULL != endpoint && p->endpoint == endpoint &&
            (!params->has_session_id || params->session_id == p->ids.session_id) &&
            p->response_correlation_id == params->response_correlation_id)
        {
            *network = p;
            term_length = p->ids.term_length;
            mtu_length = p->ids.mtu_length;
            existing = p->channel;
            break;
        }
    }
    if (NULL == existing)
    {
        return 0;
    }
    if (term_length != params->term_length || mtu_length != params->mtu_length)
    {
        /* Aeron's words (aeron_confirm_publication_match), then the channels and the fix */
        bool is_mtu = mtu_length != params->mtu_length;
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "existing publication has different '%s': existing=%" PRId32 " requested=%" PRId32 ". Channel %s stream %"
            PRId32 " shares the publication of channel %s, which uses term-length=%" PRId32 " mtu=%" PRId32 ": give "
            "the same values (or use an exclusive publication)", is_mtu ? "mtu" : "term-length",
            is_mtu ? mtu_length : term_length, is_mtu ? params->mtu_length : params->term_length, uri->text, stream_id,
            existing->text, term_length, mtu_length);
        return -1;
    }
    return aa_channel_check_shared_publication(conductor->ctx, uri, existing);
}

/*
 * ADD_PUBLICATION and ADD_EXCLUSIVE_PUBLICATION, top down. The channel was parsed once, when the
 * command was taken (aa_driver_conductor.c; a command that waited for its names carries that parse);
 * every step reads it:
 *   1. what this driver applies of it (aa_channel_support), then its parameters with the driver's
 *      defaults (here);
 *   2. UDP: the channel resolved from the same parse and checked for what this driver carries
 *      (aa_conductor_udp_channel, aa_driver_conductor_endpoints.c), then its group settings (here);
 *   3. the publication to share, whose settings the channel must repeat (here);
 *   4. else a new one: aa_conductor_add_ipc_publication (aa_driver_conductor_ipc_publications.c), or
 *      aa_conductor_add_network_publication (aa_driver_conductor_network_publications.c) on the send
 *      endpoint of the channel's canonical form (aa_driver_conductor_endpoints.c);
 *   5. the client's link and the READY answer (here).
 */
int aa_conductor_on_add_publication(
    aa_driver_conductor_t *conductor, const aa_publication_command_t *command, const aa_uri_t *uri, bool is_exclusive,
    int64_t now_ns, int64_t now_ms)
{
    if (aa_channel_check_applied(uri, true) < 0 || aa_conductor_check_ipc_control_mode(uri) < 0)
    {
        return -1;
    }
    if (uri->is_spy)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "channel %s: a spy (aeron-spy:) only subscribes, to a network publication of this driver; publish on the "
            "channel without the prefix (aeron:udp?endpoint=host:port)", uri->text);
        return -1;
    }
    aa_publication_params_t params;
    memset(&params, 0, sizeof(params));
    if (aa_conductor_parse_publication_params(conductor, uri, &params) < 0)
    {
        return -1;
    }
    aa_udp_channel_t *udp = NULL;
    if (AA_URI_MEDIA_UDP == uri->media && (aa_conductor_udp_channel(conductor, uri, true, &udp) < 0 ||
        aa_conductor_apply_group_params(conductor, udp, &params) < 0))
    {
        aa_udp_channel_delete(udp);
        return -1;
    }

    aa_publication_image_t *response_image = NULL;
    if (aa_conductor_resolve_response_publication(conductor, uri, &params, &response_image) < 0)
    {
        aa_udp_channel_delete(udp);
        return -1;
    }

    int64_t correlation_id = command->correlated.correlation_id;
    int32_t stream_id = command->stream_id;
    aa_ipc_publication_t *ipc = NULL;
    aa_network_publication_t *network = NULL;
    int rc = is_exclusive ? 0 :
        aa_conductor_find_shared_publication(conductor, stream_id, uri, &params, udp, &ipc, &network);
    if (0 == rc && NULL == ipc && NULL == network)
    {
        if (NULL == udp && aa_conductor_check_session_clash(
            conductor, AA_SESSION_SCOPE_IPC, NULL, stream_id, uri, &params) < 0)
        {
            rc = -1;
        }
        else if (NULL == udp)
        {
            ipc = aa_conductor_add_ipc_publication(
                conductor, correlation_id, stream_id, uri, &params, is_exclusive, now_ns, now_ms);
            rc = NULL == ipc ? -1 : 0;
        }
        else
        {
            network = aa_conductor_add_network_publication(
                conductor, correlation_id, stream_id, uri, &params, &udp, is_exclusive, now_ns, now_ms);
            rc = NULL == network ? -1 : 0;
        }
    }
    aa_udp_channel_delete(udp);
    if (rc < 0)
    {
        return -1;
    }

    if (aa_conductor_add_publication_link(conductor, correlation_id, command->correlated.client_id, ipc, network) < 0)
    {
        if (NULL != ipc && 0 == ipc->refcnt)
        {
            aa_ipc_publication_begin_draining(ipc, now_ns);
        }
        if (NULL != network && 0 == network->refcnt)
        {
            aa_network_publication_begin_draining(network, now_ns);
        }
        return -1;
    }
    if (NULL != ipc)
    {
        aa_conductor_on_publication_ready(
            conductor, correlation_id, ipc->registration_id, ipc->session_id, ipc->stream_id, ipc->pub_lmt_counter_id,
            AA_CHANNEL_STATUS_INDICATOR_NOT_ALLOCATED, ipc->log_path, ipc->is_exclusive);
    }
    else
    {
        if (NULL != response_image)
        {
            aa_conductor_link_response_image(response_image, network->ids.session_id);
        }
        aa_conductor_on_publication_ready(
            conductor, correlation_id, network->registration_id, network->ids.session_id, network->ids.stream_id,
            network->pub_lmt_counter_id, network->endpoint->status_counter_id, network->log_path, network->is_exclusive);
    }
    return 0;
}

void aa_conductor_remove_publication_link_at(aa_driver_conductor_t *conductor, size_t index, int64_t now_ns)
{
    aa_publication_link_t link = conductor->publication_links[index];
    conductor->publication_links[index] = conductor->publication_links[--conductor->publication_links_count];
    aa_conductor_decref_publication(conductor, &link, now_ns);
}

int aa_conductor_on_remove_publication(
    aa_driver_conductor_t *conductor, const aa_remove_command_t *command, uint64_t flags, int64_t now_ns)
{
    for (size_t i = 0; i < conductor->publication_links_count; i++)
    {
        aa_publication_link_t *link = &conductor->publication_links[i];
        if (link->registration_id == command->registration_id && link->client_id == command->correlated.client_id)
        {
            if (0 != (flags & AA_REMOVE_PUBLICATION_FLAG_REVOKE))
            {
                /* revoke before the link goes, so the last link's removal does not drain (aeron-wave3.md 4.1) */
                aa_logbuffer_metadata_t *metadata = NULL != link->publication ?
                    link->publication->log.metadata : link->network_publication->log.metadata;
                aa_logbuffer_set_publication_revoked(metadata);
            }
            aa_conductor_remove_publication_link_at(conductor, i, now_ns);
            aa_conductor_on_operation_success(conductor, command->correlated.correlation_id);
            return 0;
        }
    }
    AA_SET_ERR(AA_ERROR_CODE_UNKNOWN_PUBLICATION, "unknown publication registration id %" PRId64, command->registration_id);
    return -1;
}

/* ---- timers ---- */

/* Aeron's rule for untethered subscribers: one behind the window less a quarter for the window-limit
 * timeout is dropped (its image goes unavailable and it no longer holds the publisher back), rests
 * after the linger timeout, and rejoins at the join position after the resting timeout. */
void aa_conductor_check_untethered(
    aa_driver_conductor_t *conductor, void *pub, aa_subscriber_position_t *subscribers, size_t count,
    int64_t consumer_position, int64_t term_window_length, const aa_untethered_timeouts_t *timeouts,
    const aa_untethered_ops_t *ops, int64_t now_ns)
{
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
                else if (now_ns > s->time_of_last_update_ns + timeouts->window_limit_ns)
                {
                    s->state = AA_SUBSCRIBER_STATE_LINGER;
                    s->time_of_last_update_ns = now_ns;
                    ops->dropped(conductor, pub, s);
                }
                break;

            case AA_SUBSCRIBER_STATE_LINGER:
                if (now_ns > s->time_of_last_update_ns + timeouts->linger_ns)
                {
                    s->state = AA_SUBSCRIBER_STATE_RESTING;
                    s->time_of_last_update_ns = now_ns;
                }
                break;

            case AA_SUBSCRIBER_STATE_RESTING:
                if (now_ns > s->time_of_last_update_ns + timeouts->resting_ns)
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
