/*
 * The receivers a network publication honours NAKs from (docs/security.md, Network: senders), sans I/O.
 *
 * A receiver is known by the address its status messages come from (a receiver sends its SMs and
 * NAKs from one socket), with what its last SM said: the consumption position and the receiver
 * window (capped at termLength / 2, the most a receiver window may be). A NAK is honoured only from
 * a known receiver whose last SM is no older than the timeout (the publication connection timeout),
 * only for data from that position up to snd-pos (aa_retransmit_handler_on_nak_bounded), and only
 * within the receiver's retransmit budget: per budget interval (the retransmit linger, at least
 * 1 ms) a receiver may cause at most its window in resent bytes. So whatever the NAK rate, resent
 * bytes stay at most the sum of the known receivers' windows per interval.
 *
 * The table holds at most max_count receivers (AERON_SENDER_MAX_RECEIVERS); when it is full, expired
 * receivers make room, else a new one is refused (the caller counts it). Lookups are a scan of the
 * table that tries the last receiver found first (a unicast publication has one receiver).
 * Sender only; every call takes now_ns and reads no clock.
 */
#ifndef AA_RETRANSMIT_RECEIVERS_H
#define AA_RETRANSMIT_RECEIVERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define AA_RETRANSMIT_RECEIVERS_MAX_COUNT_DEFAULT 1024
#define AA_RETRANSMIT_RECEIVERS_MIN_BUDGET_INTERVAL_NS (1000 * 1000LL)

typedef struct aa_retransmit_receiver_stct
{
    struct sockaddr_storage address;
    socklen_t address_length;
    int64_t receiver_id;                /* several receivers may share an address (multicast on one host, a NAT) */
    int64_t position;                   /* the last SM's consumption position */
    int32_t window;                     /* the last SM's receiver window, at most termLength / 2 */
    int64_t time_of_last_sm_ns;
    int64_t budget_interval_start_ns;
    int64_t budget_used;                /* resent bytes charged in the current interval */
    bool has_reported_error;            /* its first ERR frame reached the publication's clients */
}
aa_retransmit_receiver_t;

typedef struct aa_retransmit_receivers_stct
{
    aa_retransmit_receiver_t *receivers;
    size_t count;
    size_t capacity;
    size_t max_count;
    size_t last_found;
    int64_t timeout_ns;
    int64_t budget_interval_ns;
    int32_t max_window;
}
aa_retransmit_receivers_t;

typedef enum aa_retransmit_receivers_sm_result_enum
{
    AA_RETRANSMIT_RECEIVERS_NO_MEMORY = -1,   /* error set */
    AA_RETRANSMIT_RECEIVERS_REFRESHED = 0,
    AA_RETRANSMIT_RECEIVERS_ADDED,
    AA_RETRANSMIT_RECEIVERS_REFUSED           /* the table is full of live receivers */
}
aa_retransmit_receivers_sm_result_t;

/* max_count 0: the default; budget_interval_ns is raised to the minimum (1 ms). Allocates nothing. */
void aa_retransmit_receivers_init(
    aa_retransmit_receivers_t *receivers, size_t max_count, int64_t timeout_ns, int64_t budget_interval_ns,
    int32_t term_length);
void aa_retransmit_receivers_close(aa_retransmit_receivers_t *receivers);

/* A status message (not SEND_SETUP) from address: adds or refreshes its receiver. */
aa_retransmit_receivers_sm_result_t aa_retransmit_receivers_on_status_message(
    aa_retransmit_receivers_t *receivers, const struct sockaddr_storage *address, socklen_t address_length,
    int64_t receiver_id, int64_t position, int32_t window, int64_t now_ns);

/* The live receiver at address, or NULL (unknown, or no SM within the timeout). */
aa_retransmit_receiver_t *aa_retransmit_receivers_find(
    aa_retransmit_receivers_t *receivers, const struct sockaddr_storage *address, int64_t now_ns);

/* What the receiver's budget has left now (a new interval starts when the last one ended). */
int64_t aa_retransmit_receivers_budget(
    const aa_retransmit_receivers_t *receivers, aa_retransmit_receiver_t *receiver, int64_t now_ns);

static inline void aa_retransmit_receivers_charge(aa_retransmit_receiver_t *receiver, int64_t bytes)
{
    receiver->budget_used += bytes;
}

#endif
