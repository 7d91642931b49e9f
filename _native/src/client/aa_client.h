/*
 * The client library: a client conductor (on its own thread, or invoked by the application)
 * talks to the driver through the CnC file; publications append to log buffers directly; images
 * read them directly. The conductor owns all registration state under the client lock; offer and
 * poll never take it.
 */
#ifndef AA_CLIENT_H
#define AA_CLIENT_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "agent/aa_agent.h"
#include "concurrent/aa_broadcast.h"
#include "concurrent/aa_counters.h"
#include "concurrent/aa_mpsc_rb.h"
#include "protocols/aa_cnc.h"
#include "logbuffer/aa_logbuffer.h"
#include "logbuffer/aa_term.h"
#include "util/aa_array.h"
#include "util/aa_clock.h"
#include "util/aa_fs.h"
#include "util/aa_prefault.h"


typedef struct aa_client_stct aa_client_t;
typedef struct aa_subscription_stct aa_subscription_t;

typedef struct aa_publication_stct
{
    aa_client_t *client;
    int64_t registration_id;
    int64_t original_registration_id;
    int32_t stream_id;
    int32_t session_id;
    char *channel;
    bool is_exclusive;
    aa_mapped_file_t mapped;
    aa_mapped_log_t log;
    volatile int64_t *position_limit;
    int32_t position_limit_counter_id;
    int32_t channel_status_id; /* the endpoint's snd-channel counter, -1 for IPC */
    int32_t max_message_length;
    int32_t max_payload_length;
    int32_t position_bits_to_shift;
    int32_t initial_term_id;
    int32_t term_length;
    int64_t max_possible_position;
    volatile int32_t is_closed;
    bool revoke_on_close;   /* exclusive publications: close revokes (aeron-wave3.md 4.1) */
    /* exclusive publications only: single-writer state */
    int32_t term_offset;
    int32_t term_id;
    int32_t active_partition_index;
    int64_t term_begin_position;
    /* async waiting: the client conductor writes to notify_fd once the limit passes parked_position */
    int notify_fd;
    volatile int32_t parked;
    volatile int64_t parked_position;
}
aa_publication_t;

typedef struct aa_buffer_claim_stct
{
    uint8_t *frame;
    uint8_t *data;
    size_t length;
    void *doorbell; /* the log's aa_doorbell_t, rung on commit */
}
aa_buffer_claim_t;

typedef struct aa_image_stct
{
    aa_subscription_t *subscription;
    int64_t correlation_id;
    int32_t session_id;
    int32_t stream_id;
    int32_t subscriber_position_id;
    volatile int64_t *subscriber_position;
    aa_mapped_file_t mapped;
    aa_mapped_log_t log;
    int32_t position_bits_to_shift;
    int32_t initial_term_id;
    int32_t term_length;
    int32_t mtu_length;
    int64_t join_position;
    char source_identity[128];
    volatile int32_t is_closed;
    int64_t final_position;
    /* the log's end of stream position when the image closed: the mapping is let go of after the
     * client's resource linger, and an image's owner may ask later (an event not yet taken, say) */
    int64_t closed_end_of_stream_position;
    bool closed_is_publication_revoked;
    int64_t retire_deadline_ns;
    uint8_t *assembly;
    size_t assembly_capacity;
    size_t assembly_length;
    int32_t assembly_next_offset;
    int64_t assembly_reserved_value;
    bool assembling;
    /* the furthest subscriber position before the last move back (aa_image_set_position) */
    int64_t rewind_high_water;
    /* async waiting on this image alone (a per-image view): signalled on data, end of stream or closure */
    volatile int32_t parked;
}
aa_image_t;

typedef struct aa_image_list_stct
{
    size_t count;
    aa_image_t *images[];
}
aa_image_list_t;

typedef struct aa_image_event_stct
{
    int32_t type;
    aa_image_t *image;
}
aa_image_event_t;

struct aa_subscription_stct
{
    aa_client_t *client;
    int64_t registration_id;
    int32_t stream_id;
    int32_t channel_status_id; /* the endpoint's rcv-channel counter, -1 for IPC and spies */
    char *channel;
    aa_image_list_t *volatile images;
    size_t round_robin_index;
    volatile int32_t is_closed;
    /* retired images: unmapped after the resource linger, freed with the subscription */
    aa_image_t **retired;
    size_t retired_count;
    size_t retired_capacity;
    /* image availability events for the polling thread: a ring (events_capacity, a power of two)
     * that grows, under the client lock, on an image event that would not fit, so none is dropped;
     * it always has room for the events waiting plus an unavailable event per image in the list
     * (aa_subscription_reserve_events). Taken under the client lock; events_head and events_tail
     * are also read without it, to see whether any wait. */
    aa_image_event_t *events;
    size_t events_capacity;
    volatile int64_t events_head;
    volatile int64_t events_tail;
    /* async waiting: once parked, the client conductor writes to notify_fd when data, an image
     * event or closure is there to be seen; it also writes on every image event */
    int notify_fd;
    volatile int32_t parked;
};

/* The images a subscription poll reads (a list is replaced, never changed, as images come and go)
 * and *start, where this poll begins in it: the next image each poll, round robin. NULL when there is
 * no image. */
static inline aa_image_list_t *aa_subscription_poll_order(aa_subscription_t *sub, size_t *start)
{
    aa_image_list_t *list = __atomic_load_n(&sub->images, __ATOMIC_ACQUIRE);
    if (0 == list->count)
    {
        return NULL;
    }
    *start = sub->round_robin_index++ % list->count;
    return list;
}

/* A counter this client added (ADD_COUNTER); the driver owns the record and frees it when the
 * client removes it, closes or times out (ON_UNAVAILABLE_COUNTER marks it closed). */
typedef struct aa_counter_stct
{
    aa_client_t *client;
    int64_t registration_id;
    int32_t counter_id;
    int32_t type_id;
    volatile int64_t *value;
    volatile int32_t is_closed;
    bool is_static;     /* ADD_STATIC_COUNTER's: closing it sends no REMOVE_COUNTER */
}
aa_counter_t;

typedef struct aa_registration_stct
{
    int64_t correlation_id;
    int32_t type;
    int32_t status;          /* 0 pending, 1 done, -1 error */
    int32_t error_code;
    char *error_message;
    int64_t deadline_ms;
    int32_t stream_id;
    char *channel;
    void *resource;
    int64_t static_registration_id; /* ADD_STATIC_COUNTER: the counter's registration id */
    int32_t session_id;             /* GET_NEXT_AVAILABLE_SESSION_ID: the answer */
}
aa_registration_t;

typedef struct aa_lingering_stct
{
    void *resource;
    int32_t kind;
    int64_t deadline_ns;
}
aa_lingering_t;

struct aa_client_stct
{
    char aeron_dir[PATH_MAX];
    aa_mapped_file_t cnc_file;
    aa_cnc_metadata_t *cnc;
    aa_mpsc_rb_t to_driver;
    aa_broadcast_receiver_t to_clients;
    aa_counters_reader_t counters;
    int64_t client_id;
    int64_t driver_timeout_ms;
    int64_t keepalive_interval_ns;
    int64_t resource_linger_ns;
    aa_clock_t clock;          /* every timer's clock (aa_client_connect_with_clock); read-only after connect */
    pthread_mutex_t lock;
    aa_agent_runner_t runner;
    bool use_invoker;
    bool runner_started;
    volatile int32_t state;
    char state_message[768];
    int32_t heartbeat_counter_id;
    int64_t time_of_last_keepalive_ns;
    int64_t time_of_last_service_ns;

    aa_registration_t *registrations;
    size_t registrations_count;
    size_t registrations_capacity;
    aa_publication_t **publications;
    size_t publications_count;
    size_t publications_capacity;
    aa_subscription_t **subscriptions;
    size_t subscriptions_count;
    size_t subscriptions_capacity;
    aa_lingering_t *lingering;
    size_t lingering_count;
    size_t lingering_capacity;
    /* new log mappings populated a chunk per duty cycle, so offers and polls take no page faults */
    aa_prefault_t prefault;

    /* async waiting: the idle conductor sleeps on the doorbells of every log an async waiter may
     * wait on (those with a notify fd), armed by the waiter as it parks; doorbells_watched says
     * it does, so a park needs no wake-up. Otherwise (too many logs, no futex_waitv) a park bumps
     * wake_word (a private futex) to wake it, as does a change to the set of such logs. */
    volatile int32_t parked_count;
    volatile int32_t wake_word;
    /* registrations that wait for the driver's answer (recounted after each duty cycle): while there
     * are any and the driver does not ring the clients' doorbell (Aeron's driver, or no
     * futex_waitv), the idle conductor sleeps AA_CLIENT_AWAIT_SLEEP_NS instead of its long sleep, so
     * the answer is handled in well under a millisecond (Aeron's awaitResponse polls every
     * millisecond), not a sleep later */
    volatile int32_t awaiting_responses;
    volatile int32_t doorbells_watched;
    /* after waking a waiter the idle conductor stays awake (yielding) for an adaptive window of
     * up to wake_spin_max_ns, so the next wake-up of a request/response exchange finds its CPU
     * running instead of halted (on a VM a halted vCPU takes tens of microseconds to wake) */
    volatile int64_t wake_spin_max_ns;
    int64_t wake_spin_ns;
    int64_t wake_spin_until_ns;
    int64_t wake_spin_last_signal_ns;

    /* ON_PUBLICATION_ERROR of its publications (aa_client_take_publication_errors): a ring */
    struct aa_publication_error_info_stct *publication_errors;   /* aeron_async.h */
    int64_t publication_errors_head;
    int64_t publication_errors_tail;
    int64_t publication_errors_dropped;

    /* counters this client added (aa_client_counters.c) */
    aa_counter_t **added_counters;
    size_t added_counters_count;
    size_t added_counters_capacity;
};

/* ---- inside the client library: what aa_client.c shares with aa_client_counters.c,
 * aa_client_responses.c and aa_client_waiters.c ---- */
#define AA_LINGER_PUBLICATION 1
#define AA_LINGER_IMAGE_LIST 2
#define AA_LINGER_IMAGE 3
#define AA_LINGER_SUBSCRIPTION 4
#define AA_LINGER_COUNTER 5

/* ON_PUBLICATION_ERROR (aa_client_responses.c), with the client lock held. */
void aa_client_on_publication_error(aa_client_t *client, const uint8_t *buffer, size_t length);

#define AA_GROW(c, name) aa_array_ensure_capacity((void **)&(c)->name, &(c)->name##_capacity, (c)->name##_count, sizeof(*(c)->name))

/* All of these expect the client lock held, except aa_client_async_poll and
 * aa_client_registration_begin, which take it. */
void aa_client_set_error_from_state(aa_client_t *client);
int aa_client_linger(aa_client_t *client, void *resource, int32_t kind);
int aa_client_send(aa_client_t *client, int32_t msg_type_id, const void *msg, size_t length);
int aa_client_send_remove(aa_client_t *client, int32_t msg_type_id, int64_t registration_id);
/* A request the driver answers by correlation id (add publication, subscription, counter, destination),
 * in two steps around writing it. begin takes the client lock, checks the client is active, makes room
 * for the registration and returns the request's correlation id; on failure (-1) the lock is released.
 * send fills the request's correlated header (every such request begins with one), sends it, records
 * it awaited until the driver timeout (channel: owned, may be NULL), releases the lock and returns
 * correlation_id; when the send fails it frees channel, releases the lock and returns -1. A caller that
 * fails between them releases the lock itself. */
int64_t aa_client_registration_begin(aa_client_t *client);
int64_t aa_client_registration_send(
    aa_client_t *client, int64_t correlation_id, int32_t type, void *request, size_t length, int32_t stream_id,
    char *channel);
aa_registration_t *aa_client_find_registration(aa_client_t *client, int64_t correlation_id);
void aa_client_registration_failed(aa_registration_t *r, int32_t code, const char *message, size_t length);
/* The driver's CnC file holds what no driver writes (what: which record, which field): the client
 * stops (AA_CLIENT_STATE_DRIVER_CORRUPT), its resources closed, its waiters failed. */
void aa_client_driver_corrupt(aa_client_t *client, const char *what);
/* Whether counter_id lies in the driver's counters buffer. */
bool aa_client_counter_id_valid(aa_client_t *client, int32_t counter_id);
int aa_client_async_poll(aa_client_t *client, int64_t correlation_id, void **resource);
void aa_client_on_counter_ready(aa_client_t *client, const uint8_t *buffer, size_t length);
void aa_client_on_static_counter(aa_client_t *client, const uint8_t *buffer, size_t length);
void aa_client_on_next_session_id(aa_client_t *client, const uint8_t *buffer, size_t length);
void aa_client_on_unavailable_counter(aa_client_t *client, const uint8_t *buffer, size_t length);

/* aa_client.c: lingering resources' mappings, and where prefaulting a new log starts */
int64_t aa_client_publication_prefault_position(const void *pub);
int64_t aa_client_image_prefault_position(const void *image);
void aa_client_free_image_mapping(aa_image_t *image);
void aa_client_free_publication(aa_publication_t *pub);

/* aa_client_responses.c */
void aa_client_notify(int fd);
void aa_client_on_response(int32_t msg_type_id, const void *buffer, size_t length, void *clientd);

/* aa_client_waiters.c: the client idle strategy's state, and what the conductor's duty cycle calls */
typedef struct aa_client_idle_state_stct
{
    aa_client_t *client;
    bool waitv_unsupported;
    aa_doorbell_set_t doorbells;
}
aa_client_idle_state_t;

bool aa_client_unpark(volatile int32_t *parked, aa_client_t *client);
int aa_client_check_waiters(aa_client_t *client);
void aa_client_wake_spin_on_signal(aa_client_t *client);
/* Ends the idle conductor's sleep (a private futex word it sleeps on). */
void aa_client_wake(aa_client_t *client);
void aa_client_idle(void *state, int work_count);
int aa_client_idle_init(void **state, const char *args);

/* aa_publication.c: a block of whole frames written in place, for a writer that would otherwise copy
 * it twice (the archive's replayer reads segment bytes straight into the term). block_space: where
 * the block goes at an exclusive publication's position and how many bytes it may take (to the
 * position limit and the term's end), or NULL with *status BACK_PRESSURED, ADMIN_ACTION,
 * NOT_CONNECTED, CLOSED or ERROR. The writer fills the space from byte 32 on and leaves the first
 * frame's header (still zeros, so no reader passes it) to commit_block, which checks it as
 * offer_block does, stores it (its length word last) and returns the new position or a status;
 * bytes written past `length` must be zeroed again by the writer before it commits. */
uint8_t *aa_publication_block_space(aa_publication_t *pub, int32_t *length, int64_t *status);
int64_t aa_publication_commit_block(aa_publication_t *pub, const uint8_t *header, size_t length);

/* aa_cnc_reader.c: the distinct-error log's next record (concurrent/aa_error_log.h) in a buffer of
 * capacity bytes that a writer may still be filling (the CnC file's, an archive mark file's): 1 with
 * *record filled and *offset moved past it, 0 at the end. */
struct aa_error_record_stct;
int aa_error_log_next_record(const uint8_t *buffer, size_t capacity, size_t *offset, struct aa_error_record_stct *record);

#endif
