/*
 * The conductor's IPC publications: creation, linking IPC subscribers (responses for their images),
 * and their timers (untethered subscribers, blocked publishers, drain, linger, cleaning up).
 */

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver/aa_driver_conductor_private.h"
#include "util/aa_error.h"

/* ---- responses ---- */

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
        conductor, pub->registration_id, subscription_registration_id, pub->stream_id, pub->channel->text);
}

/* ---- publications ---- */

static int aa_conductor_ipc_add_subscriber(
    void *pub, const aa_subscription_link_t *link, int32_t counter_id, volatile int64_t *value, int64_t now_ns)
{
    return aa_ipc_publication_add_subscriber(
        pub, link->registration_id, link->client_id, counter_id, value, link->is_tether, now_ns);
}

void aa_conductor_link_subscriber(
    aa_driver_conductor_t *conductor, aa_ipc_publication_t *pub, aa_subscription_link_t *link,
    int64_t now_ns, int64_t now_ms)
{
    if (NULL != link->endpoint || NULL != link->spy_channel || link->stream_id != pub->stream_id ||
        !aa_conductor_link_matches_session(link, pub->session_id))
    {
        return;
    }
    if (0 != pub->reject_cool_down_deadline_ns || NULL != aa_ipc_publication_find_subscriber(pub, link->registration_id))
    {
        return;   /* linked already, or a rejected publication cooling down (aeron-wave3.md 4.2) */
    }
    const aa_conductor_log_reader_t reader =
    {
        pub, aa_conductor_ipc_add_subscriber, "subscriber", pub->registration_id, pub->session_id, pub->stream_id,
        pub->log_path, "aeron:ipc"
    };
    aa_conductor_link_log_reader(conductor, &reader, link, aa_ipc_publication_join_position(pub), now_ns, now_ms);
}

/* The positions the driver's mappings of logs are kept populated ahead of (aa_prefault.h): the
 * sender reads behind the producer; the receiver writes up to its high-water mark; cleaning follows
 * behind the producer of an IPC log. */
static int64_t aa_conductor_ipc_publication_prefault_position(const void *pub)
{
    return aa_ipc_publication_producer_position((aa_ipc_publication_t *)pub);
}

static aa_ipc_publication_t *aa_conductor_create_ipc_publication(
    aa_driver_conductor_t *conductor, int64_t registration_id, int32_t stream_id, const aa_uri_t *uri,
    const aa_publication_params_t *params, bool is_exclusive, int64_t now_ns, int64_t now_ms)
{
    aa_driver_context_t *ctx = conductor->ctx;
    const char *channel = uri->text;
    aa_ipc_publication_t *pub = aa_conductor_new_publication(sizeof(aa_ipc_publication_t), offsetof(aa_ipc_publication_t, channel), uri);
    if (NULL == pub)
    {
        return NULL;
    }
    pub->pub_lmt_counter_id = -1;
    pub->pub_pos_counter_id = -1;
    pub->services = &conductor->services;
    pub->registration_id = registration_id;
    pub->stream_id = stream_id;
    pub->is_exclusive = is_exclusive;
    pub->session_id = params->has_session_id ? params->session_id : aa_conductor_next_session_id(conductor, AA_SESSION_SCOPE_IPC, NULL, stream_id);
    pub->term_length = params->term_length;
    pub->mtu_length = params->mtu_length;
    pub->position_bits_to_shift = aa_position_bits_to_shift(params->term_length);
    pub->unblock_timeout_ns = ctx->publication_unblock_timeout_ns;
    pub->linger_timeout_ns = params->linger_timeout_ns;
    pub->untethered = params->untethered;
    pub->term_window_length = params->term_window_length;
    pub->response_correlation_id = params->response_correlation_id;

    int32_t initial_term_id = aa_conductor_initial_term_id(params, now_ns);
    aa_logbuffer_init_params_t init = aa_conductor_publication_log_params(
        conductor, params, registration_id, pub->session_id, stream_id, initial_term_id);
    init.type = is_exclusive ? 1 : 0;
    if (aa_conductor_create_log(
        conductor, "publications", &init, pub->log_path, sizeof(pub->log_path), &pub->mapped, &pub->log) < 0)
    {
        aa_ipc_publication_free(pub);
        return NULL;
    }
    conductor->bytes_mapped += (int64_t)pub->mapped.length;
    pub->initial_term_id = initial_term_id;
    /* as Aeron's C driver: the response id in the log, is_response for UDP only (reference wave3 1.3) */
    pub->log.metadata->response_correlation_id = params->response_correlation_id;

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

aa_ipc_publication_t *aa_conductor_add_ipc_publication(
    aa_driver_conductor_t *conductor, int64_t registration_id, int32_t stream_id, const aa_uri_t *uri,
    const aa_publication_params_t *params, bool is_exclusive, int64_t now_ns, int64_t now_ms)
{
    aa_ipc_publication_t *pub = aa_conductor_create_ipc_publication(
        conductor, registration_id, stream_id, uri, params, is_exclusive, now_ns, now_ms);
    if (NULL != pub)
    {
        aa_conductor_update_ipc_response_subscription(conductor, pub);
    }
    for (size_t i = 0; NULL != pub && i < conductor->subscription_links_count; i++)
    {
        aa_conductor_link_subscriber(conductor, pub, &conductor->subscription_links[i], now_ns, now_ms);
    }
    return pub;
}

/* ---- timers ---- */

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

void aa_conductor_ipc_publication_reject(
    aa_driver_conductor_t *conductor, aa_ipc_publication_t *pub, const char *reason, size_t reason_length,
    int64_t now_ns, int64_t now_ms)
{
    /* the publisher hears of it as of an ERR frame: no receiver, no group tag, the loopback address */
    aa_publication_error_t error;
    memset(&error, 0, sizeof(error));
    error.registration_id = pub->registration_id;
    error.destination_registration_id = -1;
    error.session_id = pub->session_id;
    error.stream_id = pub->stream_id;
    error.receiver_id = -1;
    error.group_tag = -1;
    error.address_type = AA_PUBLICATION_ERROR_ADDRESS_TYPE_IPV4;
    error.address[0] = 127;
    error.address[3] = 1;
    error.error_code = AA_ERROR_CODE_IMAGE_REJECTED;
    error.error_message_length = (int32_t)reason_length;
    aa_conductor_send_publication_error(conductor, &error, (const uint8_t *)reason);
    if (0 == pub->reject_cool_down_deadline_ns)
    {
        for (size_t s = 0; s < pub->subscribers_count; s++)
        {
            if (AA_SUBSCRIBER_STATE_ACTIVE == pub->subscribers[s].state)
            {
                aa_conductor_on_unavailable_image(conductor, pub, pub->subscribers[s].subscription_registration_id);
            }
            aa_conductor_free_counter(conductor, pub->subscribers[s].counter_id, now_ms);
        }
        pub->subscribers_count = 0;
        aa_ipc_publication_update_connected(pub);
    }
    /* re-linked once the cool-down (of image liveness length) passes, restarted by another reject */
    pub->reject_cool_down_deadline_ns = now_ns + conductor->ctx->image_liveness_timeout_ns;
}

/* Revoked (aeron-wave3.md 4.1): the stream ends where the publisher is, at once; every subscriber's
 * image goes unavailable, and the publication lingers without draining. */
static void aa_conductor_ipc_publication_revoke(aa_driver_conductor_t *conductor, aa_ipc_publication_t *pub, int64_t now_ns)
{
    aa_logbuffer_end_stream_at(pub->log.metadata, pub->pub_lmt, aa_ipc_publication_producer_position(pub));
    pub->state = AA_IPC_PUBLICATION_STATE_LINGER;
    pub->time_of_last_state_change_ns = now_ns;
    aa_logbuffer_set_connected(pub->log.metadata, false);
    aa_driver_conductor_count(conductor, AA_SYSTEM_COUNTER_PUBLICATIONS_REVOKED, 1);
    for (size_t s = 0; s < pub->subscribers_count; s++)
    {
        if (AA_SUBSCRIBER_STATE_ACTIVE == pub->subscribers[s].state)
        {
            aa_conductor_on_unavailable_image(conductor, pub, pub->subscribers[s].subscription_registration_id);
        }
    }
}

void aa_conductor_check_publications(aa_driver_conductor_t *conductor, int64_t now_ns, int64_t now_ms)
{
    for (size_t i = conductor->ipc_publications_count; i-- > 0;)
    {
        aa_ipc_publication_t *pub = conductor->ipc_publications[i];
        switch (pub->state)
        {
            case AA_IPC_PUBLICATION_STATE_ACTIVE:
                if (aa_logbuffer_is_publication_revoked(pub->log.metadata))
                {
                    aa_conductor_ipc_publication_revoke(conductor, pub, now_ns);
                    break;
                }
                if (0 != pub->reject_cool_down_deadline_ns && now_ns >= pub->reject_cool_down_deadline_ns)
                {
                    /* the cool-down of a reject passed: every matching subscription links again */
                    pub->reject_cool_down_deadline_ns = 0;
                    for (size_t l = 0; l < conductor->subscription_links_count; l++)
                    {
                        aa_conductor_link_subscriber(conductor, pub, &conductor->subscription_links[l], now_ns, now_ms);
                    }
                }
                aa_conductor_check_untethered(conductor, pub, pub->subscribers, pub->subscribers_count,
                    pub->consumer_position, pub->term_window_length, &pub->untethered,
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
                    aa_conductor_remove_log(conductor, pub->mapped.length, pub->log_path);
                    conductor->ipc_publications[i] = conductor->ipc_publications[--conductor->ipc_publications_count];
                    aa_ipc_publication_free(pub);
                }
                break;

            case AA_IPC_PUBLICATION_STATE_DONE:
                break;
        }
    }
}
