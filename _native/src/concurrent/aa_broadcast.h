/*
 * Broadcast buffer (driver responses to all clients), layout per reference 9.2: capacity (power of
 * two) + 128-byte trailer with tail-intent @0, tail @8, latest @16. Records as in the ring buffer
 * (length i32, msg_type_id i32, payload, 8-aligned, padding type -1). One transmitter; any number
 * of receivers, each of which may be lapped (and then continues from the latest record).
 */
#ifndef AA_BROADCAST_H
#define AA_BROADCAST_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>

#include "concurrent/aa_mpsc_rb.h"

#define AA_BROADCAST_BUFFER_TRAILER_LENGTH 128
#define AA_BROADCAST_TAIL_INTENT_COUNTER_OFFSET 0
#define AA_BROADCAST_TAIL_COUNTER_OFFSET 8
#define AA_BROADCAST_LATEST_COUNTER_OFFSET 16

typedef struct aa_broadcast_transmitter_stct
{
    uint8_t *buffer;
    size_t capacity;
    size_t max_message_length;
    volatile int64_t *tail_intent;
    volatile int64_t *tail;
    volatile int64_t *latest;
}
aa_broadcast_transmitter_t;

int aa_broadcast_transmitter_init(aa_broadcast_transmitter_t *t, void *buffer, size_t length);
int aa_broadcast_transmitter_transmit(aa_broadcast_transmitter_t *t, int32_t msg_type_id, const void *msg, size_t length);

typedef struct aa_broadcast_receiver_stct
{
    uint8_t *buffer;
    size_t capacity;
    size_t mask;
    volatile int64_t *tail_intent;
    volatile int64_t *tail;
    volatile int64_t *latest;
    size_t record_offset;
    int64_t cursor;
    int64_t next_record;
    int64_t lapped_count;
    uint8_t *scratch;
    size_t scratch_capacity;
}
aa_broadcast_receiver_t;

/* Allocates a scratch buffer of the maximum message length (freed by close). */
int aa_broadcast_receiver_init(aa_broadcast_receiver_t *r, void *buffer, size_t length);
void aa_broadcast_receiver_close(aa_broadcast_receiver_t *r);

/* Copying receive: each available record is checked (its length, type and extent: what a transmitter
 * writes), copied out, validated against lapping, then handed to the handler. Returns the number of
 * records delivered (0 if none), or -1 (AA_ERROR_CODE_DRIVER_CORRUPT set) when a record that was
 * not lapped cannot have come from a transmitter: the buffer is not the driver's any more. */
int aa_broadcast_receiver_receive(aa_broadcast_receiver_t *r, aa_rb_handler_t handler, void *clientd);

/* Whether a record was transmitted that this receiver has not received yet (a look, no receive). */
static inline bool aa_broadcast_receiver_has_pending(aa_broadcast_receiver_t *r)
{
    return __atomic_load_n(r->tail, __ATOMIC_ACQUIRE) > r->next_record;
}

#endif
