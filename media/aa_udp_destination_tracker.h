/*
 * The destinations of a multi-destination-cast (MDC) send channel endpoint (reference 7.3): where
 * each DATA, SETUP, heartbeat and retransmit of its publications is sent, one unicast copy each.
 *
 * Dynamic control mode (control=host:port|control-mode=dynamic): a receiver becomes a destination
 * with its first status message to the control address. Destinations are keyed by the receiver id
 * of the SM (as Aeron does); a known receiver whose SMs now come from another address is sent to at
 * that address. A destination without an SM for the destination timeout (5 s by default, the
 * driver's AERON_MDC_DESTINATION_TIMEOUT) is dropped. At most max_dynamic destinations are kept
 * (AERON_MDC_MAX_DESTINATIONS, docs/security.md, Network: senders): an SM from a new receiver when
 * that many are live is refused (the caller counts it), so nobody multiplies what the endpoint
 * sends by adding receivers.
 * Manual control mode (control-mode=manual): the application adds and removes destinations by
 * address (add_destination / remove_destination); they never time out. Their SMs only refresh them.
 *
 * Sender only, sans I/O: the sender changes the table on the conductor's commands and on status
 * messages, and sends through it. Removal rebuilds the table in order, so pruning several expired
 * destinations at once never drops a live one (reference 12, item 2).
 */
#ifndef AA_UDP_DESTINATION_TRACKER_H
#define AA_UDP_DESTINATION_TRACKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Reference 11: endpoint/destination inactivity (MDC timeout). */
#define AA_UDP_DESTINATION_TIMEOUT_DEFAULT_NS (5 * 1000 * 1000 * 1000LL)
/* Ours: dynamic destinations an endpoint sends to at most (docs/security.md, Network: senders). */
#define AA_UDP_DESTINATION_MAX_DYNAMIC_DEFAULT 64

typedef struct aa_udp_destination_stct
{
    struct sockaddr_storage address;
    socklen_t address_length;
    int64_t receiver_id;
    bool has_receiver_id;              /* manual destinations learn theirs from their first SM */
    int64_t time_of_last_activity_ns;
    int64_t registration_id;           /* manual: the add_destination's correlation id; dynamic: -1 */
}
aa_udp_destination_t;

typedef struct aa_udp_destination_tracker_stct
{
    aa_udp_destination_t *destinations;
    size_t count;
    size_t capacity;
    bool is_manual;
    int64_t destination_timeout_ns;
    size_t max_dynamic;                /* dynamic: the cap on destinations (init: the default) */
}
aa_udp_destination_tracker_t;

/* timeout_ns <= 0: the default. */
void aa_udp_destination_tracker_init(aa_udp_destination_tracker_t *tracker, bool is_manual, int64_t timeout_ns);
void aa_udp_destination_tracker_close(aa_udp_destination_tracker_t *tracker);

/* A status message from receiver_id at address. Dynamic: refreshes that receiver (and moves it to
 * address) or adds it; manual: refreshes the destination at address, if any. Returns 1 when a
 * destination was added, 0 otherwise, 2 when a new one was refused (max_dynamic destinations live),
 * -1 (ENOMEM, error set) when one could not be. */
#define AA_UDP_DESTINATION_REFUSED 2
int aa_udp_destination_tracker_on_status_message(
    aa_udp_destination_tracker_t *tracker, int64_t receiver_id, const struct sockaddr_storage *address,
    socklen_t address_length, int64_t now_ns);

/* Dynamic: drops the destinations without an SM for the timeout; returns how many. Manual: 0. */
int aa_udp_destination_tracker_check_timeouts(aa_udp_destination_tracker_t *tracker, int64_t now_ns);

/* Manual: adds a destination (an address already there is refreshed instead of added twice).
 * Returns 0, or -1 (ENOMEM) with the error set. */
int aa_udp_destination_tracker_add(
    aa_udp_destination_tracker_t *tracker, const struct sockaddr_storage *address, socklen_t address_length,
    int64_t registration_id, int64_t now_ns);
/* Manual: removes the destination at address; returns 1 when one was removed, 0 when none matched. */
int aa_udp_destination_tracker_remove(aa_udp_destination_tracker_t *tracker, const struct sockaddr_storage *address);
/* Re-resolution: the destination at old_address moved to new_address (its registration kept). 1 when found. */
int aa_udp_destination_tracker_replace(
    aa_udp_destination_tracker_t *tracker, const struct sockaddr_storage *old_address,
    const struct sockaddr_storage *new_address, int64_t now_ns);

#endif
