/*
 * The message-path functions, as one table for the CPython fast path (_native/python/aa_speedups.c).
 *
 * The cffi module owns the native core; the fast-path extension is pure CPython glue (Message
 * objects, argument parsing, no GIL round trip per call) and reaches the core only through this
 * table, whose address Python passes it once at import. One copy of the code and of its
 * thread-local error state, whichever module calls.
 */
#ifndef AA_FASTPATH_H
#define AA_FASTPATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aeron_async.h"

#define AA_FASTPATH_API_VERSION 2

typedef struct aa_fastpath_api_stct
{
    int32_t version;
    int32_t size;
    int64_t (*publication_offer)(aa_publication_t *pub, const uint8_t *buffer, size_t length, int64_t reserved_value);
    int64_t (*publication_offer_batch)(
        aa_publication_t *pub, const aa_iovec_t *messages, size_t count, int64_t reserved_value, size_t *accepted);
    int32_t (*subscription_poll_messages)(
        aa_subscription_t *sub, uint8_t *out, size_t out_capacity, aa_message_t *messages, int32_t max_messages,
        int32_t fragment_limit, size_t *required);
    int32_t (*image_poll_messages)(
        aa_image_t *image, uint8_t *out, size_t out_capacity, size_t *out_used, aa_message_t *messages,
        int32_t max_messages, int32_t fragment_limit, size_t *required);
    bool (*subscription_has_image_events)(aa_subscription_t *sub);
    bool (*subscription_is_closed)(aa_subscription_t *sub);
    /* the fragment-handler polls (aa_image_poll.c) */
    int32_t (*subscription_controlled_poll)(
        aa_subscription_t *sub, aa_poll_handler_t handler, void *clientd, int32_t fragment_limit);
    int32_t (*image_bounded_controlled_poll)(
        aa_image_t *image, aa_poll_handler_t handler, void *clientd, int64_t limit_position, int32_t fragment_limit);
    int64_t (*subscription_block_poll)(
        aa_subscription_t *sub, aa_block_handler_t handler, void *clientd, int32_t block_length_limit);
    int64_t (*image_block_poll)(aa_image_t *image, aa_block_handler_t handler, void *clientd, int32_t block_length_limit);
}
aa_fastpath_api_t;

#endif
