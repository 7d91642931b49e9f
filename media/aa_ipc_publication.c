#include <stdlib.h>
#include <string.h>

#include "media/aa_ipc_publication.h"
#include "logbuffer/aa_term.h"
#include "util/aa_array.h"

int64_t aa_ipc_publication_producer_position(aa_ipc_publication_t *pub)
{
    return aa_logbuffer_producer_position(&pub->log);
}

/* The least and the greatest position of the active subscribers; false when none is active. */
static bool aa_ipc_publication_active_range(const aa_ipc_publication_t *pub, int64_t *min, int64_t *max)
{
    bool found = false;
    for (size_t i = 0; i < pub->subscribers_count; i++)
    {
        const aa_subscriber_position_t *s = &pub->subscribers[i];
        if (AA_SUBSCRIBER_STATE_ACTIVE == s->state)
        {
            int64_t p = aa_get_int64_acquire(s->value);
            *min = found && *min < p ? *min : p;
            *max = found && *max > p ? *max : p;
            found = true;
        }
    }
    return found;
}

int64_t aa_ipc_publication_join_position(aa_ipc_publication_t *pub)
{
    int64_t min_sub_pos, max_sub_pos;
    return aa_ipc_publication_active_range(pub, &min_sub_pos, &max_sub_pos) ? min_sub_pos : pub->consumer_position;
}

int aa_ipc_publication_update_pub_pos_and_lmt(aa_ipc_publication_t *pub)
{
    int work_count = 0;
    int64_t producer_position = aa_ipc_publication_producer_position(pub);
    aa_put_int64_release(pub->pub_pos, producer_position);

    if (AA_IPC_PUBLICATION_STATE_ACTIVE != pub->state)
    {
        return 0;
    }

    int64_t min_sub_pos, max_sub_pos;
    bool has_active = aa_ipc_publication_active_range(pub, &min_sub_pos, &max_sub_pos);

    int64_t current_limit = aa_get_int64_volatile(pub->pub_lmt);
    if (has_active)
    {
        int64_t max_position = aa_max_possible_position(pub->term_length);
        int64_t proposed = min_sub_pos + pub->term_window_length;
        proposed = proposed < max_position ? proposed : max_position;
        if (proposed > current_limit)
        {
            aa_put_int64_release(pub->pub_lmt, proposed);
            aa_doorbell_ring(aa_logbuffer_doorbell(pub->log.metadata));
            /* Work only when the publisher had used 3/4 of its window: then the next move matters
             * soon, and the conductor stays quick. A limit that moves far ahead of the publisher is
             * bookkeeping: counting it would keep the conductor spinning for as long as messages
             * flow, taking a core from the clients on a small machine. (A publisher that does reach
             * its limit rings the driver's doorbell.) */
            if (producer_position + (pub->term_window_length >> 2) >= current_limit)
            {
                work_count = 1;
            }
        }
        aa_mapped_log_clean_to(
            &pub->log, &pub->clean_position, min_sub_pos - pub->term_length,
            pub->term_length, pub->position_bits_to_shift);
        pub->consumer_position = max_sub_pos > pub->consumer_position ? max_sub_pos : pub->consumer_position;
    }
    else if (current_limit > pub->consumer_position)
    {
        aa_put_int64_release(pub->pub_lmt, pub->consumer_position);
        work_count = 1;
    }
    return work_count;
}

bool aa_ipc_publication_check_for_blocked_publisher(aa_ipc_publication_t *pub, int64_t now_ns)
{
    int64_t producer_position = aa_ipc_publication_producer_position(pub);
    int64_t consumer_position, max_sub_pos;
    if (!aa_ipc_publication_active_range(pub, &consumer_position, &max_sub_pos))
    {
        consumer_position = INT64_MAX;
    }
    if (INT64_MAX == consumer_position || producer_position <= consumer_position ||
        consumer_position != pub->last_consumer_position)
    {
        pub->last_consumer_position = INT64_MAX == consumer_position ? producer_position : consumer_position;
        pub->time_of_last_consumer_position_change_ns = now_ns;
        return false;
    }
    return aa_publication_unblock_when_stuck(&pub->log, consumer_position, pub->initial_term_id,
        pub->position_bits_to_shift, pub->unblock_timeout_ns, &pub->time_of_last_consumer_position_change_ns, now_ns);
}

bool aa_publication_unblock_when_stuck(
    aa_mapped_log_t *log, int64_t position, int32_t initial_term_id, int32_t position_bits_to_shift,
    int64_t unblock_timeout_ns, int64_t *time_of_last_change_ns, int64_t now_ns)
{
    if (now_ns <= *time_of_last_change_ns + unblock_timeout_ns)
    {
        return false;
    }
    aa_term_unblocker_status_t status = aa_term_unblocker_unblock_at(
        log, position, initial_term_id, position_bits_to_shift);
    *time_of_last_change_ns = now_ns;
    return AA_TERM_UNBLOCKER_STATUS_NO_ACTION != status;
}

bool aa_ipc_publication_is_drained(aa_ipc_publication_t *pub)
{
    int64_t producer_position = aa_ipc_publication_producer_position(pub);
    for (size_t i = 0; i < pub->subscribers_count; i++)
    {
        aa_subscriber_position_t *s = &pub->subscribers[i];
        if (AA_SUBSCRIBER_STATE_ACTIVE == s->state && aa_get_int64_acquire(s->value) < producer_position)
        {
            return false;
        }
    }
    return true;
}

int aa_subscriber_positions_add(
    aa_subscriber_position_t **positions, size_t *count, size_t *capacity, int64_t subscription_registration_id,
    int64_t client_id, int32_t counter_id, volatile int64_t *value, bool is_tether, int64_t now_ns)
{
    if (aa_array_ensure_capacity((void **)positions, capacity, *count, sizeof(aa_subscriber_position_t)) < 0)
    {
        return -1;
    }
    (*positions)[(*count)++] = (aa_subscriber_position_t)
    {
        .subscription_registration_id = subscription_registration_id,
        .client_id = client_id,
        .counter_id = counter_id,
        .value = value,
        .is_tether = is_tether,
        .state = AA_SUBSCRIBER_STATE_ACTIVE,
        .time_of_last_update_ns = now_ns,
    };
    return 0;
}

aa_subscriber_position_t *aa_subscriber_positions_find(
    aa_subscriber_position_t *positions, size_t count, int64_t subscription_registration_id)
{
    for (size_t i = 0; i < count; i++)
    {
        if (positions[i].subscription_registration_id == subscription_registration_id)
        {
            return &positions[i];
        }
    }
    return NULL;
}

int32_t aa_subscriber_positions_remove(
    aa_subscriber_position_t *positions, size_t *count, int64_t subscription_registration_id)
{
    aa_subscriber_position_t *s = aa_subscriber_positions_find(positions, *count, subscription_registration_id);
    if (NULL == s)
    {
        return -1;
    }
    int32_t counter_id = s->counter_id;
    *s = positions[--(*count)];
    return counter_id;
}

int aa_ipc_publication_add_subscriber(
    aa_ipc_publication_t *pub, int64_t subscription_registration_id, int64_t client_id, int32_t counter_id,
    volatile int64_t *value, bool is_tether, int64_t now_ns)
{
    if (aa_subscriber_positions_add(
        &pub->subscribers, &pub->subscribers_count, &pub->subscribers_capacity, subscription_registration_id,
        client_id, counter_id, value, is_tether, now_ns) < 0)
    {
        return -1;
    }
    /* the limit moves before the publication reads connected, so a publisher that sees it connected
     * can offer at once (Aeron's driver moves it on its next duty cycle, after connecting) */
    (void)aa_ipc_publication_update_pub_pos_and_lmt(pub);
    aa_ipc_publication_update_connected(pub);
    return 0;
}

aa_subscriber_position_t *aa_ipc_publication_find_subscriber(aa_ipc_publication_t *pub, int64_t subscription_registration_id)
{
    return aa_subscriber_positions_find(pub->subscribers, pub->subscribers_count, subscription_registration_id);
}

int32_t aa_ipc_publication_remove_subscriber(aa_ipc_publication_t *pub, int64_t subscription_registration_id)
{
    for (size_t i = 0; i < pub->subscribers_count; i++)
    {
        if (pub->subscribers[i].subscription_registration_id == subscription_registration_id)
        {
            int32_t counter_id = pub->subscribers[i].counter_id;
            memmove(&pub->subscribers[i], &pub->subscribers[i + 1],
                (pub->subscribers_count - i - 1) * sizeof(aa_subscriber_position_t));
            pub->subscribers_count--;
            aa_ipc_publication_update_connected(pub);
            return counter_id;
        }
    }
    return -1;
}

void aa_ipc_publication_update_connected(aa_ipc_publication_t *pub)
{
    int32_t active = 0;
    for (size_t i = 0; i < pub->subscribers_count; i++)
    {
        if (AA_SUBSCRIBER_STATE_ACTIVE == pub->subscribers[i].state)
        {
            active++;
        }
    }
    aa_put_int32_release(&pub->log.metadata->active_transport_count, active);
    aa_logbuffer_set_connected(pub->log.metadata, active > 0 && AA_IPC_PUBLICATION_STATE_ACTIVE == pub->state);
}

void aa_ipc_publication_begin_draining(aa_ipc_publication_t *pub, int64_t now_ns)
{
    int64_t producer_position = aa_ipc_publication_producer_position(pub);
    pub->state = AA_IPC_PUBLICATION_STATE_DRAINING;
    pub->time_of_last_state_change_ns = now_ns;
    aa_logbuffer_end_stream_at(pub->log.metadata, pub->pub_lmt, producer_position);
    pub->last_consumer_position = INT64_MIN;
    pub->time_of_last_consumer_position_change_ns = now_ns;
}

void aa_ipc_publication_free(aa_ipc_publication_t *pub)
{
    if (NULL != pub)
    {
        aa_media_services_forget_mapping(pub->services, &pub->mapped);
        aa_unmap(&pub->mapped);
        free(pub->subscribers);
        free(pub->channel);
        free(pub);
    }
}
