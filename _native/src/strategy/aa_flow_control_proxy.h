/*
 * Flow control strategies that run off the sender thread (strategies written in Python): a native
 * proxy strategy that the sender calls like any other, and a host per driver that a worker thread
 * (aeron_async's, one per driver in the process that hosts it) drains.
 *
 * The sender never waits for the worker. Each proxy callback copies its event (a status message's
 * receiver id, consumption position, window, group tag, flags and source address; an idle tick, at
 * most one per AA_FLOW_CONTROL_PROXY_IDLE_INTERVAL_NS; a SETUP sent; an ERR or a SEND_SETUP
 * request from a receiver) into the publication's single-producer/single-consumer ring, rings the
 * host's doorbell (a fence and a load; a futex wake only while the worker sleeps) and returns the
 * last sender limit the strategy published (an atomic), or the current limit while it has published
 * none: a new publication sends nothing until its strategy allowed it. has_required_receivers is
 * likewise the last answer (false until the first one), so the publication connects at the first
 * status message after the strategy said its receivers are there.
 *
 * Queue full: nothing blocks and nothing allocates. A status message or ERR is kept in a small
 * table of pending events keyed by receiver (a newer one from the same receiver replaces the older:
 * only its latest position matters), a SETUP as one pending flag, an idle tick is skipped (another
 * comes); the pending ones enter the ring at the next callback with room. What the table cannot hold
 * is dropped and counted (events_dropped).
 *
 * A strategy that fails (the worker calls aa_flow_control_proxy_host_fail) is replaced: the worker
 * logs the message in the driver's error log, builds the strategy registered as "min" (looked up by
 * name at that moment; "unicast" if no "min" is registered, which the log says) with the
 * publication's parameters and the g:/t: options it was given, and publishes it; from its next
 * callback the sender calls that strategy instead and queues nothing more.
 *
 * Without a host (params.proxy_host NULL: the channel checks build a strategy once to check its
 * options) the proxy only checks its options; its events go nowhere and the limit stays.
 *
 * Threads: the proxy callbacks run on the sender; supplier and fini on the conductor; the host
 * functions below on the worker (poll, answer, fail, wait) and any thread (attach). A host mutex
 * guards the host's list of proxies (conductor and worker), never taken by the sender.
 */
#ifndef AA_FLOW_CONTROL_PROXY_H
#define AA_FLOW_CONTROL_PROXY_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "concurrent/aa_doorbell.h"
#include "protocols/aa_flow_control.h"

#define AA_FLOW_CONTROL_PROXY_RING_CAPACITY 256
#define AA_FLOW_CONTROL_PROXY_PENDING_CAPACITY 32
#define AA_FLOW_CONTROL_PROXY_IDLE_INTERVAL_NS (10 * 1000 * 1000LL)
/* The sender limit before the strategy's first answer. */
#define AA_FLOW_CONTROL_PROXY_NO_ANSWER INT64_MIN

/* CDEF BEGIN */

/* Event types (aa_flow_control_proxy_event_t.type). */
#define AA_FLOW_CONTROL_PROXY_EVENT_CREATE 1
#define AA_FLOW_CONTROL_PROXY_EVENT_STATUS_MESSAGE 2
#define AA_FLOW_CONTROL_PROXY_EVENT_IDLE 3
#define AA_FLOW_CONTROL_PROXY_EVENT_SETUP 4
#define AA_FLOW_CONTROL_PROXY_EVENT_ERROR 5
#define AA_FLOW_CONTROL_PROXY_EVENT_TRIGGER_SEND_SETUP 6
#define AA_FLOW_CONTROL_PROXY_EVENT_CLOSE 7


/* Options a registration accepts (the reference grammar, checked when the publication is created). */
#define AA_FLOW_CONTROL_PROXY_OPTION_GROUP 1            /* g:<tag>[/<min size>] */
#define AA_FLOW_CONTROL_PROXY_OPTION_TIMEOUT 2          /* t:<duration> */
#define AA_FLOW_CONTROL_PROXY_OPTION_GROUP_TAG_REQUIRED 4 /* g:<tag> must name a tag */
/* The strategy reports how many receivers it tracks (answer's receiver_count): the publication gets
 * an fc-receivers counter, which the fallback min then keeps. */
#define AA_FLOW_CONTROL_PROXY_OPTION_TRACKS_RECEIVERS 8

#define AA_FLOW_CONTROL_PROXY_SOURCE_LENGTH 64

/* One event, as the worker receives it. */
typedef struct aa_flow_control_proxy_event_stct
{
    int64_t instance_id;
    int32_t type;
    int32_t flags;          /* STATUS_MESSAGE: the SM's flags (0x40 EOS); IDLE: 1 at end of stream */
    int64_t now_ns;
    int64_t receiver_id;    /* STATUS_MESSAGE, ERROR, TRIGGER_SEND_SETUP */
    int64_t position;       /* STATUS_MESSAGE: consumption position; IDLE, SETUP: snd-pos */
    int64_t sender_limit;   /* snd-lmt when the event happened */
    int64_t group_tag;      /* when has_group_tag */
    int32_t window;         /* STATUS_MESSAGE: receiver window; ERROR: error code */
    int32_t has_group_tag;
    char source[AA_FLOW_CONTROL_PROXY_SOURCE_LENGTH]; /* "ip:port" ("[ip6]:port"); "" when unknown */
}
aa_flow_control_proxy_event_t;

/* What a strategy instance was created with (aa_flow_control_proxy_host_describe). */
typedef struct aa_flow_control_proxy_info_stct
{
    int64_t instance_id;
    int64_t registration_id;
    int32_t stream_id;
    int32_t initial_term_id;
    int32_t term_length;
    int32_t group_min_size;
    int64_t group_tag;
    int64_t receiver_timeout_ns;
    int64_t events_dropped;
    int64_t events_coalesced;
    bool has_failed;
    char name[64];
    char options[256];
}
aa_flow_control_proxy_info_t;

typedef struct aa_flow_control_proxy_host_stct aa_flow_control_proxy_host_t;

/* Registers a proxied strategy under name: its publications queue their events to the host of the
 * driver that creates them. options: AA_FLOW_CONTROL_PROXY_OPTION_*; retransmit_multiple: the
 * receiver windows one retransmit may resend (Aeron: 16 for min/tagged, 4 for max). */
int aa_flow_control_proxy_register(
    const char *name, int32_t retransmit_multiple, int32_t options, const char *description);

/* Whether a worker serves the host: without one, creating a proxied strategy fails. */
void aa_flow_control_proxy_host_attach(aa_flow_control_proxy_host_t *host, bool attached);
/* Copies up to capacity events (CREATE first for a new instance, CLOSE for a released one) and
 * returns how many. */
int aa_flow_control_proxy_host_poll(
    aa_flow_control_proxy_host_t *host, aa_flow_control_proxy_event_t *events, int32_t capacity);
/* Sleeps until an event may be waiting or timeout_ns passed. Returns 1 when events wait, else 0. */
int aa_flow_control_proxy_host_wait(aa_flow_control_proxy_host_t *host, int64_t timeout_ns);
/* Wakes a waiting worker (to stop it). */
void aa_flow_control_proxy_host_wake(aa_flow_control_proxy_host_t *host);
/* Publishes an instance's answers: sender_limit (AA_FLOW_CONTROL_PROXY_NO_ANSWER: none yet),
 * has_required_receivers and receiver_count (stored in the fc-receivers counter; < 0: none). 0, or
 * -1 when the instance is gone (closed meanwhile: not an error to report). */
int aa_flow_control_proxy_host_answer(
    aa_flow_control_proxy_host_t *host, int64_t instance_id, int64_t sender_limit, bool has_required_receivers,
    int64_t receiver_count);
/* The strategy failed: logs message in the driver's error log and replaces it with min (see above). */
int aa_flow_control_proxy_host_fail(aa_flow_control_proxy_host_t *host, int64_t instance_id, const char *message);
/* Writes message in the driver's error log (a strategy's error that needs no fallback). */
void aa_flow_control_proxy_host_log_error(aa_flow_control_proxy_host_t *host, const char *message);
int aa_flow_control_proxy_host_describe(
    aa_flow_control_proxy_host_t *host, int64_t instance_id, aa_flow_control_proxy_info_t *info);

/* CDEF END */

typedef struct aa_flow_control_proxy_stct aa_flow_control_proxy_t;

/* One per driver (the conductor's); handed to suppliers through the flow control params' host. */
struct aa_flow_control_proxy_host_stct
{
    pthread_mutex_t mutex;
    aa_doorbell_t doorbell;
    aa_flow_control_proxy_t **proxies;
    size_t proxies_count;
    size_t proxies_capacity;
    int64_t *closed_ids;        /* closed since the worker's last poll */
    size_t closed_count;
    size_t closed_capacity;
    int64_t next_instance_id;
    volatile int32_t worker_attached;
    void (*log_error)(void *clientd, int32_t code, const char *message);
    void *log_error_clientd;
};

int aa_flow_control_proxy_host_init(
    aa_flow_control_proxy_host_t *host, void (*log_error)(void *clientd, int32_t code, const char *message),
    void *log_error_clientd);
/* After every proxy of the host was released. */
void aa_flow_control_proxy_host_close(aa_flow_control_proxy_host_t *host);

#endif
