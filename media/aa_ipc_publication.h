/*
 * IPC publications: a log buffer in shared memory that publishers append to and subscribers read
 * directly. The driver conductor owns this state: it sets the publisher limit from subscriber
 * positions (tethering), cleans terms behind the slowest subscriber, unblocks a publisher that
 * died mid-claim, and walks the lifecycle ACTIVE -> DRAINING -> LINGER -> DONE.
 */
#ifndef AA_IPC_PUBLICATION_H
#define AA_IPC_PUBLICATION_H

#include <stdint.h>
#include <stdbool.h>
#include <limits.h>

#include "media/aa_media_services.h"
#include "logbuffer/aa_logbuffer.h"
#include "uri/aa_uri.h"
#include "util/aa_fs.h"

typedef enum aa_ipc_publication_state_enum
{
    AA_IPC_PUBLICATION_STATE_ACTIVE,
    AA_IPC_PUBLICATION_STATE_DRAINING,
    AA_IPC_PUBLICATION_STATE_LINGER,
    AA_IPC_PUBLICATION_STATE_DONE
}
aa_ipc_publication_state_t;

typedef enum aa_subscriber_state_enum
{
    AA_SUBSCRIBER_STATE_ACTIVE,
    AA_SUBSCRIBER_STATE_LINGER,
    AA_SUBSCRIBER_STATE_RESTING
}
aa_subscriber_state_t;

/* A stream's untethered timeouts (aeron-wave3.md 5): per stream, from the channel of the publication
 * (IPC subscribers, spies), else the driver's. */
typedef struct aa_untethered_timeouts_stct
{
    int64_t window_limit_ns;   /* behind the window this long: dropped (LINGER) */
    int64_t linger_ns;         /* then lingering this long: RESTING */
    int64_t resting_ns;        /* then resting this long: rejoins (ACTIVE) */
}
aa_untethered_timeouts_t;

typedef struct aa_subscriber_position_stct
{
    int64_t subscription_registration_id;
    int64_t client_id;
    int32_t counter_id;
    volatile int64_t *value;
    bool is_tether;
    aa_subscriber_state_t state;
    int64_t time_of_last_update_ns;
}
aa_subscriber_position_t;

/* The arrays of subscriber positions the conductor keeps (an IPC publication's subscribers, a network
 * publication's spies, an image's subscribers). add appends an active one, growing the array: 0, or
 * -1 (ENOMEM) with the array as it was. find returns the one of a subscription, or NULL. remove takes
 * it out (the last one takes its place) and returns its counter id, or -1 when none matched. */
int aa_subscriber_positions_add(
    aa_subscriber_position_t **positions, size_t *count, size_t *capacity, int64_t subscription_registration_id,
    int64_t client_id, int32_t counter_id, volatile int64_t *value, bool is_tether, int64_t now_ns);
aa_subscriber_position_t *aa_subscriber_positions_find(
    aa_subscriber_position_t *positions, size_t count, int64_t subscription_registration_id);
int32_t aa_subscriber_positions_remove(
    aa_subscriber_position_t *positions, size_t *count, int64_t subscription_registration_id);

/* A publisher that died between claiming and committing, for an IPC or a network publication: once
 * the position its consumers wait at (subscribers' or the sender's) has stood still since
 * *time_of_last_change_ns for longer than unblock_timeout_ns, unblocks the log there and restarts
 * the wait. Returns true when the unblocker acted. */
bool aa_publication_unblock_when_stuck(
    aa_mapped_log_t *log, int64_t position, int32_t initial_term_id, int32_t position_bits_to_shift,
    int64_t unblock_timeout_ns, int64_t *time_of_last_change_ns, int64_t now_ns);

typedef struct aa_ipc_publication_stct
{
    int64_t registration_id;
    int64_t response_correlation_id;   /* response-correlation-id= (-1: none; reference wave3 1.3) */
    int32_t session_id;
    int32_t stream_id;
    bool is_exclusive;
    aa_uri_t *channel;   /* the channel parsed when the publication was added (its own copy; text: as given) */
    char log_path[PATH_MAX];
    aa_mapped_file_t mapped;
    aa_mapped_log_t log;
    const aa_media_services_t *services;  /* counters, error log, pre-faulting */

    int32_t pub_lmt_counter_id;
    int32_t pub_pos_counter_id;
    volatile int64_t *pub_lmt;
    volatile int64_t *pub_pos;

    int32_t position_bits_to_shift;
    int32_t initial_term_id;
    int32_t term_length;
    int32_t mtu_length;
    int64_t term_window_length;
    int64_t start_position;
    int64_t consumer_position;
    int64_t last_consumer_position;
    int64_t time_of_last_consumer_position_change_ns;
    int64_t clean_position;
    int64_t unblock_timeout_ns;
    int64_t linger_timeout_ns;
    aa_untethered_timeouts_t untethered;

    aa_ipc_publication_state_t state;
    int64_t time_of_last_state_change_ns;
    int32_t refcnt;
    /* rejected (aeron-wave3.md 4.2): no subscriber links until then; 0 when not cooling down */
    int64_t reject_cool_down_deadline_ns;

    aa_subscriber_position_t *subscribers;
    size_t subscribers_count;
    size_t subscribers_capacity;
}
aa_ipc_publication_t;

int64_t aa_ipc_publication_producer_position(aa_ipc_publication_t *pub);

/* Join position for a new subscriber: the slowest active subscriber, else the consumer position. */
int64_t aa_ipc_publication_join_position(aa_ipc_publication_t *pub);

/* Every duty cycle: sample the producer position, move the publisher limit, clean behind the
 * slowest subscriber. Returns the work count. */
int aa_ipc_publication_update_pub_pos_and_lmt(aa_ipc_publication_t *pub);

/* Unblock a publisher that died between claiming and committing; returns true when it acted. */
bool aa_ipc_publication_check_for_blocked_publisher(aa_ipc_publication_t *pub, int64_t now_ns);

/* All active subscribers have consumed everything published (or there are none). */
bool aa_ipc_publication_is_drained(aa_ipc_publication_t *pub);

int aa_ipc_publication_add_subscriber(
    aa_ipc_publication_t *pub, int64_t subscription_registration_id, int64_t client_id, int32_t counter_id,
    volatile int64_t *value, bool is_tether, int64_t now_ns);
/* Removes and returns the subscriber's counter id (or -1 if none matched). */
int32_t aa_ipc_publication_remove_subscriber(aa_ipc_publication_t *pub, int64_t subscription_registration_id);
aa_subscriber_position_t *aa_ipc_publication_find_subscriber(aa_ipc_publication_t *pub, int64_t subscription_registration_id);

/* Sets or clears is_connected in the log metadata from the active subscriber count. */
void aa_ipc_publication_update_connected(aa_ipc_publication_t *pub);

/* Begins draining: the publisher limit stops at the producer position, which also becomes the
 * end-of-stream position subscribers will see once they reach it. */
void aa_ipc_publication_begin_draining(aa_ipc_publication_t *pub, int64_t now_ns);

void aa_ipc_publication_free(aa_ipc_publication_t *pub);

#endif
