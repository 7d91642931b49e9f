/*
 * The conductor's network (UDP) publications and their spies: creation on a send endpoint (log,
 * counters, the sender), linking spies, and their timers (untethered spies, blocked publishers,
 * drain, linger, handing back to the sender).
 */

#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#include "driver/aa_driver_conductor_private.h"
#include "util/aa_error.h"

/* ---- publications ---- */

static int aa_conductor_add_spy(
    void *pub, const aa_subscription_link_t *link, int32_t counter_id, volatile int64_t *value, int64_t now_ns)
{
    return aa_network_publication_add_spy(
        pub, link->registration_id, link->client_id, counter_id, value, link->is_tether, now_ns);
}

void aa_conductor_link_spy(
    aa_driver_conductor_t *conductor, aa_network_publication_t *pub, aa_subscription_link_t *link,
    int64_t now_ns, int64_t now_ms)
{
    if (NULL == link->spy_channel || AA_NETWORK_PUBLICATION_STATE_ACTIVE != pub->state ||
        link->stream_id != pub->ids.stream_id || NULL != aa_network_publication_find_spy(pub, link->registration_id))
    {
        return;
    }
    /* aeron-spy:aeron:udp?tags=T reads every publication of the stream whose send channel has tag T, whatever
     * its canonical form and session (reference wave 3, section 2; Aeron's spy_subscription_link_matches) */
    const aa_udp_channel_t *sent_on = pub->endpoint->channel;
    const bool is_same_channel_tag = link->spy_channel->has_tag && sent_on->has_tag &&
        link->spy_channel->tag_id == sent_on->tag_id;
    if (!is_same_channel_tag && ((link->has_session_id && link->session_id != pub->ids.session_id) ||
        !aa_udp_channel_equals(sent_on, link->spy_channel)))
    {
        return;
    }
    /* a spy reads the publication's own log, over shared memory: its source is IPC (as in Aeron) */
    const aa_conductor_log_reader_t reader =
    {
        pub, aa_conductor_add_spy, "spy", pub->registration_id, pub->ids.session_id, pub->ids.stream_id, pub->log_path,
        "aeron:ipc"
    };
    aa_conductor_link_log_reader(conductor, &reader, link, aa_network_publication_join_position(pub), now_ns, now_ms);
}

/* the sender reads behind the producer (aa_prefault.h) */
static int64_t aa_conductor_network_publication_prefault_position(const void *pub)
{
    return aa_network_publication_producer_position((aa_network_publication_t *)pub);
}

static void aa_conductor_free_network_publication_counters(
    aa_driver_conductor_t *conductor, aa_network_publication_t *pub, int64_t now_ms)
{
    aa_conductor_free_counter(conductor, pub->pub_lmt_counter_id, now_ms);
    aa_conductor_free_counter(conductor, pub->pub_pos_counter_id, now_ms);
    aa_conductor_free_counter(conductor, pub->snd_pos_counter_id, now_ms);
    aa_conductor_free_counter(conductor, pub->snd_lmt_counter_id, now_ms);
    aa_conductor_free_counter(conductor, pub->snd_bpe_counter_id, now_ms);
    aa_conductor_free_counter(conductor, pub->fc_receivers_counter_id, now_ms);
}

static aa_network_publication_t *aa_conductor_create_network_publication(
    aa_driver_conductor_t *conductor, int64_t registration_id, int32_t stream_id, const aa_uri_t *uri,
    const aa_publication_params_t *params, aa_send_channel_endpoint_t *endpoint, bool is_exclusive, int64_t now_ns,
    int64_t now_ms)
{
    aa_driver_context_t *ctx = conductor->ctx;
    const char *channel = uri->text;
    aa_network_publication_t *pub = aa_conductor_new_publication(sizeof(aa_network_publication_t), offsetof(aa_network_publication_t, channel), uri);
    if (NULL == pub)
    {
        return NULL;
    }
    pub->pub_lmt_counter_id = -1;
    pub->pub_pos_counter_id = -1;
    pub->snd_pos_counter_id = -1;
    pub->snd_lmt_counter_id = -1;
    pub->snd_bpe_counter_id = -1;
    pub->fc_receivers_counter_id = -1;
    int32_t session_id = params->has_session_id ? params->session_id : aa_conductor_next_session_id(conductor, AA_SESSION_SCOPE_NETWORK, endpoint, stream_id);
    int32_t initial_term_id = aa_conductor_initial_term_id(params, now_ns);
    aa_network_publication_params_t init =
    {
        .registration_id = registration_id,
        .ids.session_id = session_id,
        .ids.stream_id = stream_id,
        .ids.initial_term_id = initial_term_id,
        .ids.term_length = params->term_length,
        .ids.mtu_length = params->mtu_length,
        .term_window_length = params->term_window_length,
        .linger_timeout_ns = params->linger_timeout_ns,
        .unblock_timeout_ns = ctx->publication_unblock_timeout_ns,
        .connection_timeout_ns = ctx->publication_connection_timeout_ns,
        .retransmit_delay_ns = ctx->retransmit_unicast_delay_ns,
        .retransmit_linger_ns = ctx->retransmit_unicast_linger_ns,
        .max_receivers = ctx->sender_max_receivers,
        .has_group_semantics = params->has_group_semantics,
        .max_resend = params->max_resend,
        .multicast_ttl = params->multicast_ttl,
        .is_exclusive = is_exclusive,
        .signal_eos = params->signal_eos,
        .flow_control = params->flow_control,
        .flow_control_receiver_timeout_ns = ctx->flow_control_receiver_timeout_ns,
        .flow_control_group_min_size = ctx->flow_control_group_min_size,
        .flow_control_group_tag = ctx->flow_control_group_tag,
        .spies_simulate_connection = params->spies_simulate_connection,
        .response_correlation_id = params->response_correlation_id,
        .is_response = params->is_response_control_mode,
    };
    if (aa_network_publication_init(pub, &init, &conductor->services) < 0)
    {
        aa_network_publication_free(pub);
        return NULL;
    }
    pub->endpoint = endpoint;
    pub->untethered = params->untethered;

    aa_logbuffer_init_params_t log_params = aa_conductor_publication_log_params(
        conductor, params, registration_id, session_id, stream_id, initial_term_id);
    log_params.type = is_exclusive ? 1 : 0;
    log_params.group = params->has_group_semantics;
    if (params->has_group_semantics)
    {
        log_params.max_resend = params->max_resend;
    }
    if (aa_conductor_create_log(
        conductor, "publications", &log_params, pub->log_path, sizeof(pub->log_path), &pub->mapped, &pub->log) < 0)
    {
        aa_network_publication_free(pub);
        return NULL;
    }
    pub->log.metadata->response_correlation_id = params->response_correlation_id;
    pub->log.metadata->is_response = params->is_response_control_mode ? 1 : 0;
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
    if (pub->flow_control->tracks_receivers)
    {
        /* fc-receivers (type 17), as Aeron's min and tagged flow control keep one */
        pub->fc_receivers_counter_id = aa_conductor_allocate_stream_counter(
            conductor, AA_COUNTER_TYPE_FC_RECEIVERS, "fc-receivers", registration_id, session_id, stream_id, channel,
            now_ms);
        if (pub->fc_receivers_counter_id < 0)
        {
            aa_conductor_free_network_publication_counters(conductor, pub, now_ms);
            unlink(pub->log_path);
            aa_network_publication_free(pub);
            return NULL;
        }
        pub->flow_control->receivers_counter =
            aa_counters_manager_addr(&conductor->counters, pub->fc_receivers_counter_id);
        aa_put_int64_release(pub->flow_control->receivers_counter, 0);
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
        aa_prefault_add(&conductor->prefault, pub->mapped.addr, pub->ids.term_length, start_position,
            aa_conductor_network_publication_prefault_position, pub);
    }
    aa_put_int64_release(conductor->system_counters[AA_SYSTEM_COUNTER_BYTES_CURRENTLY_MAPPED], conductor->bytes_mapped);
    conductor->network_publications[conductor->network_publications_count++] = pub;
    return pub;
}

aa_network_publication_t *aa_conductor_add_network_publication(
    aa_driver_conductor_t *conductor, int64_t registration_id, int32_t stream_id, const aa_uri_t *uri,
    const aa_publication_params_t *params, aa_udp_channel_t **udp, bool is_exclusive, int64_t now_ns, int64_t now_ms)
{
    aa_send_channel_endpoint_t *endpoint = aa_conductor_get_or_create_send_endpoint(
        conductor, udp, registration_id, now_ms);
    if (NULL == endpoint)
    {
        return NULL;
    }
    if (aa_conductor_check_session_clash(conductor, AA_SESSION_SCOPE_NETWORK, endpoint, stream_id, uri, params) < 0)
    {
        aa_conductor_release_send_endpoint(conductor, endpoint);
        return NULL;
    }
    aa_network_publication_t *pub = aa_conductor_create_network_publication(
        conductor, registration_id, stream_id, uri, params, endpoint, is_exclusive, now_ns, now_ms);
    if (NULL == pub)
    {
        aa_conductor_release_send_endpoint(conductor, endpoint);
        return NULL;
    }
    for (size_t i = 0; i < conductor->subscription_links_count; i++)
    {
        aa_conductor_link_spy(conductor, pub, &conductor->subscription_links[i], now_ns, now_ms);
    }
    return pub;
}

/* ---- timers ---- */

/* an untethered spy rejoins at the sender position, as in Aeron */
static int64_t aa_conductor_spy_join_position(void *pub)
{
    return aa_get_int64_acquire(((aa_network_publication_t *)pub)->snd_pos);
}

static void aa_conductor_spy_dropped(aa_driver_conductor_t *conductor, void *p, aa_subscriber_position_t *s)
{
    aa_network_publication_t *pub = p;
    aa_conductor_send_unavailable_image(
        conductor, pub->registration_id, s->subscription_registration_id, pub->ids.stream_id, pub->channel->text);
}

static void aa_conductor_spy_rejoined(aa_driver_conductor_t *conductor, void *p, aa_subscriber_position_t *s)
{
    aa_network_publication_t *pub = p;
    aa_conductor_send_available_image(
        conductor, pub->registration_id, pub->ids.session_id, pub->ids.stream_id, s->subscription_registration_id,
        s->counter_id, pub->log_path, "aeron:ipc");
}

static const aa_untethered_ops_t aa_conductor_spy_untethered_ops =
{
    aa_conductor_spy_join_position, aa_conductor_spy_dropped, aa_conductor_spy_rejoined
};

void aa_conductor_check_network_publications(aa_driver_conductor_t *conductor, int64_t now_ns, int64_t now_ms)
{
    for (size_t i = conductor->network_publications_count; i-- > 0;)
    {
        aa_network_publication_t *pub = conductor->network_publications[i];
        switch (pub->state)
        {
            case AA_NETWORK_PUBLICATION_STATE_ACTIVE:
                if (aa_logbuffer_is_publication_revoked(pub->log.metadata))
                {
                    /* aeron-wave3.md 4.1: the end of stream at the producer, heartbeats with REVOKED, the
                     * spies' images gone, LINGER without draining */
                    aa_network_publication_revoke(pub, now_ns);
                    aa_driver_conductor_count(conductor, AA_SYSTEM_COUNTER_PUBLICATIONS_REVOKED, 1);
                    for (size_t s = 0; s < pub->spies_count; s++)
                    {
                        if (AA_SUBSCRIBER_STATE_ACTIVE == pub->spies[s].state)
                        {
                            aa_conductor_spy_dropped(conductor, pub, &pub->spies[s]);
                        }
                    }
                    break;
                }
                aa_conductor_check_untethered(conductor, pub, pub->spies, pub->spies_count,
                    aa_get_int64_acquire(pub->snd_pos), pub->term_window_length, &pub->untethered,
                    &aa_conductor_spy_untethered_ops, now_ns);
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
                    aa_conductor_remove_log(conductor, pub->mapped.length, pub->log_path);
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
