#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "media/aa_udp_destination_tracker.h"
#include "media/aa_udp_channel.h"
#include "util/aa_array.h"
#include "util/aa_error.h"

void aa_udp_destination_tracker_init(aa_udp_destination_tracker_t *tracker, bool is_manual, int64_t timeout_ns)
{
    memset(tracker, 0, sizeof(*tracker));
    tracker->is_manual = is_manual;
    tracker->destination_timeout_ns = timeout_ns > 0 ? timeout_ns : AA_UDP_DESTINATION_TIMEOUT_DEFAULT_NS;
    tracker->max_dynamic = AA_UDP_DESTINATION_MAX_DYNAMIC_DEFAULT;
}

void aa_udp_destination_tracker_close(aa_udp_destination_tracker_t *tracker)
{
    free(tracker->destinations);
    tracker->destinations = NULL;
    tracker->count = 0;
    tracker->capacity = 0;
}

static aa_udp_destination_t *aa_udp_destination_tracker_append(
    aa_udp_destination_tracker_t *tracker, const struct sockaddr_storage *address, socklen_t address_length,
    int64_t now_ns)
{
    if (aa_array_ensure_capacity(
        (void **)&tracker->destinations, &tracker->capacity, tracker->count, sizeof(aa_udp_destination_t)) < 0)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory adding a multi-destination-cast destination");
        return NULL;
    }
    aa_udp_destination_t *destination = &tracker->destinations[tracker->count++];
    memset(destination, 0, sizeof(*destination));
    destination->address = *address;
    destination->address_length = address_length;
    destination->time_of_last_activity_ns = now_ns;
    destination->registration_id = -1;
    return destination;
}

int aa_udp_destination_tracker_on_status_message(
    aa_udp_destination_tracker_t *tracker, int64_t receiver_id, const struct sockaddr_storage *address,
    socklen_t address_length, int64_t now_ns)
{
    if (tracker->is_manual)
    {
        for (size_t i = 0; i < tracker->count; i++)
        {
            aa_udp_destination_t *destination = &tracker->destinations[i];
            if (aa_udp_address_equals(&destination->address, address))
            {
                destination->receiver_id = receiver_id;
                destination->has_receiver_id = true;
                destination->time_of_last_activity_ns = now_ns;
            }
        }
        return 0;
    }
    for (size_t i = 0; i < tracker->count; i++)
    {
        aa_udp_destination_t *destination = &tracker->destinations[i];
        if (destination->receiver_id == receiver_id)
        {
            destination->time_of_last_activity_ns = now_ns;
            if (!aa_udp_address_equals(&destination->address, address))
            {
                destination->address = *address;
                destination->address_length = address_length;
            }
            return 0;
        }
    }
    if (tracker->count >= tracker->max_dynamic)
    {
        /* expired ones make room first (the sender drops them every duty cycle anyway) */
        aa_udp_destination_tracker_check_timeouts(tracker, now_ns);
        if (tracker->count >= tracker->max_dynamic)
        {
            return AA_UDP_DESTINATION_REFUSED;
        }
    }
    aa_udp_destination_t *destination = aa_udp_destination_tracker_append(tracker, address, address_length, now_ns);
    if (NULL == destination)
    {
        return -1;
    }
    destination->receiver_id = receiver_id;
    destination->has_receiver_id = true;
    return 1;
}

int aa_udp_destination_tracker_check_timeouts(aa_udp_destination_tracker_t *tracker, int64_t now_ns)
{
    if (tracker->is_manual)
    {
        return 0;
    }
    size_t kept = 0;
    for (size_t i = 0; i < tracker->count; i++)
    {
        if (now_ns - tracker->destinations[i].time_of_last_activity_ns <= tracker->destination_timeout_ns)
        {
            if (kept != i)
            {
                tracker->destinations[kept] = tracker->destinations[i];
            }
            kept++;
        }
    }
    int removed = (int)(tracker->count - kept);
    tracker->count = kept;
    return removed;
}

int aa_udp_destination_tracker_add(
    aa_udp_destination_tracker_t *tracker, const struct sockaddr_storage *address, socklen_t address_length,
    int64_t registration_id, int64_t now_ns)
{
    for (size_t i = 0; i < tracker->count; i++)
    {
        if (aa_udp_address_equals(&tracker->destinations[i].address, address))
        {
            tracker->destinations[i].time_of_last_activity_ns = now_ns;
            tracker->destinations[i].registration_id = registration_id;
            return 0;
        }
    }
    aa_udp_destination_t *destination = aa_udp_destination_tracker_append(tracker, address, address_length, now_ns);
    if (NULL == destination)
    {
        return -1;
    }
    destination->registration_id = registration_id;
    return 0;
}

int aa_udp_destination_tracker_remove(aa_udp_destination_tracker_t *tracker, const struct sockaddr_storage *address)
{
    size_t kept = 0;
    for (size_t i = 0; i < tracker->count; i++)
    {
        if (!aa_udp_address_equals(&tracker->destinations[i].address, address))
        {
            if (kept != i)
            {
                tracker->destinations[kept] = tracker->destinations[i];
            }
            kept++;
        }
    }
    int removed = tracker->count != kept ? 1 : 0;
    tracker->count = kept;
    return removed;
}

int aa_udp_destination_tracker_replace(
    aa_udp_destination_tracker_t *tracker, const struct sockaddr_storage *old_address,
    const struct sockaddr_storage *new_address, int64_t now_ns)
{
    for (size_t i = 0; i < tracker->count; i++)
    {
        aa_udp_destination_t *d = &tracker->destinations[i];
        if (aa_udp_address_equals(&d->address, old_address))
        {
            d->address = *new_address;
            d->address_length = aa_udp_address_length(new_address);
            d->has_receiver_id = false;    /* a new receiver there: learnt from its first SM */
            d->time_of_last_activity_ns = now_ns;
            return 1;
        }
    }
    return 0;
}
