/* The message-path table handed to the CPython fast path (see aa_fastpath.h). */
#include "aa_fastpath.h"

static const aa_fastpath_api_t aa_fastpath_table =
{
    .version = AA_FASTPATH_API_VERSION,
    .size = (int32_t)sizeof(aa_fastpath_api_t),
    .publication_offer = aa_publication_offer,
    .publication_offer_batch = aa_publication_offer_batch,
    .subscription_poll_messages = aa_subscription_poll_messages,
    .image_poll_messages = aa_image_poll_messages,
    .subscription_has_image_events = aa_subscription_has_image_events,
    .subscription_is_closed = aa_subscription_is_closed,
    .subscription_controlled_poll = aa_subscription_controlled_poll,
    .image_bounded_controlled_poll = aa_image_bounded_controlled_poll,
    .subscription_block_poll = aa_subscription_block_poll,
    .image_block_poll = aa_image_block_poll,
};

const void *aa_fastpath_api(void)
{
    return &aa_fastpath_table;
}
