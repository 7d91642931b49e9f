/*
 * Many-to-one ring buffer (client commands to the driver), layout per reference 9.2:
 * capacity (power of two) + 768-byte trailer holding tail @+128, head cache @+256, head @+384,
 * correlation counter @+512 and consumer heartbeat (epoch ms) @+640. Records: length i32,
 * msg_type_id i32, payload; 8-aligned; padding records have type -1.
 */
#ifndef AA_MPSC_RB_H
#define AA_MPSC_RB_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>

#define AA_RB_TRAILER_LENGTH 768
#define AA_RB_TAIL_POSITION_OFFSET 128
#define AA_RB_HEAD_CACHE_POSITION_OFFSET 256
#define AA_RB_HEAD_POSITION_OFFSET 384
#define AA_RB_CORRELATION_COUNTER_OFFSET 512
#define AA_RB_CONSUMER_HEARTBEAT_OFFSET 640
#define AA_RB_RECORD_HEADER_LENGTH 8
#define AA_RB_ALIGNMENT 8
#define AA_RB_PADDING_MSG_TYPE_ID (-1)

typedef void (*aa_rb_handler_t)(int32_t msg_type_id, const void *buffer, size_t length, void *clientd);

/* The payload of a record that no producer of ours writes (docs/security.md, "The CnC file"): the
 * consumer skips it and tells the handler set with aa_mpsc_rb_on_invalid. */
#define AA_RB_NO_CLIENT_ID INT64_MIN
typedef struct aa_rb_invalid_record_stct
{
    int64_t position;          /* of the record's header */
    int32_t length;            /* as the header says */
    int32_t msg_type_id;       /* as the header says (0 where the header itself is impossible) */
    int64_t client_id;         /* the payload's first 8 bytes (every command starts with its client id), or
                                * AA_RB_NO_CLIENT_ID where the record is too short or lies outside the buffer */
    int64_t skipped_bytes;     /* how far the consumer moved past it */
    const char *reason;        /* what is wrong, and what the consumer did */
}
aa_rb_invalid_record_t;

typedef void (*aa_rb_invalid_handler_t)(const aa_rb_invalid_record_t *record, void *clientd);

typedef struct aa_mpsc_rb_stct
{
    uint8_t *buffer;
    size_t capacity;
    size_t max_message_length;
    volatile int64_t *tail;
    volatile int64_t *head_cache;
    volatile int64_t *head;
    volatile int64_t *correlation_counter;
    volatile int64_t *consumer_heartbeat;
    /* the consumer's own copy of its position: a producer that writes the shared head cannot move it */
    int64_t consumer_head;
    aa_rb_invalid_handler_t on_invalid;
    void *on_invalid_clientd;
}
aa_mpsc_rb_t;

/* `length` = capacity + AA_RB_TRAILER_LENGTH; capacity must be a power of two. */
int aa_mpsc_rb_init(aa_mpsc_rb_t *rb, void *buffer, size_t length);

/* Returns 0 when written, -1 when full or msg too long (error set), never blocks. */
int aa_mpsc_rb_write(aa_mpsc_rb_t *rb, int32_t msg_type_id, const void *msg, size_t length);

/* Claim space for a record; returns the payload index or -1. commit/abort take that index. */
int32_t aa_mpsc_rb_try_claim(aa_mpsc_rb_t *rb, int32_t msg_type_id, size_t length);
void aa_mpsc_rb_commit(aa_mpsc_rb_t *rb, int32_t index);
void aa_mpsc_rb_abort(aa_mpsc_rb_t *rb, int32_t index);

/* Consumer (single thread): read up to message_count_limit records, zeroing consumed space. Every
 * record is checked at its boundary before the handler sees it: a header whose length is below the
 * header's, crosses the buffer's end or reaches past the producers' tail is impossible, and the
 * consumer skips to the tail (zeroing what it skips; a tail that is itself impossible is taken back
 * to the consumer's position); a record of a type below 1 (not padding) or longer than a producer
 * may write is skipped by its length. Each is reported to the on_invalid handler. */
size_t aa_mpsc_rb_read(aa_mpsc_rb_t *rb, aa_rb_handler_t handler, void *clientd, size_t message_count_limit);

/* Consumer side: who hears of invalid records (NULL: nobody; they are skipped all the same). */
void aa_mpsc_rb_on_invalid(aa_mpsc_rb_t *rb, aa_rb_invalid_handler_t handler, void *clientd);

int64_t aa_mpsc_rb_next_correlation_id(aa_mpsc_rb_t *rb);
void aa_mpsc_rb_consumer_heartbeat_time(aa_mpsc_rb_t *rb, int64_t now_ms);
int64_t aa_mpsc_rb_consumer_heartbeat_time_value(aa_mpsc_rb_t *rb);
int64_t aa_mpsc_rb_producer_position(aa_mpsc_rb_t *rb);
int64_t aa_mpsc_rb_consumer_position(aa_mpsc_rb_t *rb);
size_t aa_mpsc_rb_size(aa_mpsc_rb_t *rb);

/* Consumer side: if a producer died between claim and commit, turn its record into padding so the
 * consumer can move on. Returns true if something was unblocked. */
bool aa_mpsc_rb_unblock(aa_mpsc_rb_t *rb);

#endif
