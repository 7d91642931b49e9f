#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "protocols/aa_retransmit_receivers.h"
#include "util/aa_array.h"
#include "util/aa_error.h"
#include "util/aa_udp_address.h"

void aa_retransmit_receivers_init(
    aa_retransmit_receivers_t *receivers, size_t max_count, int64_t timeout_ns, int64_t budget_interval_ns,
    int32_t term_length)
{
    memset(receivers, 0, sizeof(*receivers));
    receivers->max_count = 0 == max_count ? AA_RETRANSMIT_RECEIVERS_MAX_COUNT_DEFAULT : max_count;
    receivers->timeout_ns = timeout_ns;
    receivers->budget_interval_ns = budget_interval_ns > AA_RETRANSMIT_RECEIVERS_MIN_BUDGET_INTERVAL_NS ?
        budget_interval_ns : AA_RETRANSMIT_RECEIVERS_MIN_BUDGET_INTERVAL_NS;
    receivers->max_window = term_length / 2;
}

void aa_retransmit_receivers_close(aa_retransmit_receivers_t *receivers)
{
    free(receivers->receivers);
    receivers->receivers = NULL;
    receivers->count = 0;
    receivers->capacity = 0;
}

static bool aa_retransmit_receiver_is_live(
    const aa_retransmit_receivers_t *receivers, const aa_retransmit_receiver_t *receiver, int64_t now_ns)
{
    return now_ns - receiver->time_of_last_sm_ns <= receivers->timeout_ns;
}

/* The receiver (address, receiver id), live or not. */
static aa_retransmit_receiver_t *aa_retransmit_receivers_lookup(
    aa_retransmit_receivers_t *receivers, const struct sockaddr_storage *address, int64_t receiver_id)
{
    if (receivers->last_found < receivers->count &&
        receivers->receivers[receivers->last_found].receiver_id == receiver_id &&
        aa_udp_address_equals(&receivers->receivers[receivers->last_found].address, address))
    {
        return &receivers->receivers[receivers->last_found];
    }
    for (size_t i = 0; i < receivers->count; i++)
    {
        if (receivers->receivers[i].receiver_id == receiver_id &&
            aa_udp_address_equals(&receivers->receivers[i].address, address))
        {
            receivers->last_found = i;
            return &receivers->receivers[i];
        }
    }
    return NULL;
}

/* Drops the receivers whose last SM is older than the timeout, keeping the others in order. */
static void aa_retransmit_receivers_drop_expired(aa_retransmit_receivers_t *receivers, int64_t now_ns)
{
    size_t kept = 0;
    for (size_t i = 0; i < receivers->count; i++)
    {
        if (aa_retransmit_receiver_is_live(receivers, &receivers->receivers[i], now_ns))
        {
            if (kept != i)
            {
                receivers->receivers[kept] = receivers->receivers[i];
            }
            kept++;
        }
    }
    receivers->count = kept;
    receivers->last_found = 0;
}

aa_retransmit_receivers_sm_result_t aa_retransmit_receivers_on_status_message(
    aa_retransmit_receivers_t *receivers, const struct sockaddr_storage *address, socklen_t address_length,
    int64_t receiver_id, int64_t position, int32_t window, int64_t now_ns)
{
    int32_t capped_window = window < 0 ? 0 : (window > receivers->max_window ? receivers->max_window : window);
    aa_retransmit_receiver_t *receiver = aa_retransmit_receivers_lookup(receivers, address, receiver_id);
    if (NULL != receiver)
    {
        if (!aa_retransmit_receiver_is_live(receivers, receiver, now_ns))
        {
            /* back after a silence: a fresh budget */
            receiver->budget_interval_start_ns = now_ns;
            receiver->budget_used = 0;
        }
        receiver->position = position;
        receiver->window = capped_window;
        receiver->time_of_last_sm_ns = now_ns;
        return AA_RETRANSMIT_RECEIVERS_REFRESHED;
    }
    if (receivers->count >= receivers->max_count)
    {
        aa_retransmit_receivers_drop_expired(receivers, now_ns);
        if (receivers->count >= receivers->max_count)
        {
            return AA_RETRANSMIT_RECEIVERS_REFUSED;
        }
    }
    if (aa_array_ensure_capacity(
        (void **)&receivers->receivers, &receivers->capacity, receivers->count, sizeof(aa_retransmit_receiver_t)) < 0)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory tracking a publication's receiver");
        return AA_RETRANSMIT_RECEIVERS_NO_MEMORY;
    }
    receiver = &receivers->receivers[receivers->count];
    memset(receiver, 0, sizeof(*receiver));
    receiver->address = *address;
    receiver->address_length = address_length;
    receiver->receiver_id = receiver_id;
    receiver->position = position;
    receiver->window = capped_window;
    receiver->time_of_last_sm_ns = now_ns;
    receiver->budget_interval_start_ns = now_ns;
    receivers->last_found = receivers->count;
    receivers->count++;
    return AA_RETRANSMIT_RECEIVERS_ADDED;
}

aa_retransmit_receiver_t *aa_retransmit_receivers_find(
    aa_retransmit_receivers_t *receivers, const struct sockaddr_storage *address, int64_t now_ns)
{
    /* NAKs and ERR frames name no receiver id: of the live receivers at the address, the one furthest behind,
     * whose loss the NAK can be (receivers behind one address: multicast on one host, a NAT) */
    aa_retransmit_receiver_t *found = NULL;
    for (size_t i = 0; i < receivers->count; i++)
    {
        aa_retransmit_receiver_t *receiver = &receivers->receivers[i];
        if (aa_udp_address_equals(&receiver->address, address) && aa_retransmit_receiver_is_live(receivers, receiver, now_ns) &&
            (NULL == found || receiver->position < found->position))
        {
            found = receiver;
        }
    }
    return found;
}

int64_t aa_retransmit_receivers_budget(
    const aa_retransmit_receivers_t *receivers, aa_retransmit_receiver_t *receiver, int64_t now_ns)
{
    if (now_ns - receiver->budget_interval_start_ns >= receivers->budget_interval_ns)
    {
        receiver->budget_interval_start_ns = now_ns;
        receiver->budget_used = 0;
    }
    int64_t left = (int64_t)receiver->window - receiver->budget_used;
    return left > 0 ? left : 0;
}
