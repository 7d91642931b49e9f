/*
 * A publication image's subscriber positions as the conductor publishes them for the receiver, with
 * untethered subscribers (aeron-wave3.md 5): a lingering one still paces the stream (the minimum position
 * its status messages advertise), a resting one does not; a new or rejoining one joins where the active
 * ones are; draining waits for the active ones only.
 */
#include <stdlib.h>

#include "aa_test.h"
#include "media/aa_publication_image.h"

static void should_leave_resting_untethered_subscribers_out_of_the_positions(void)
{
    aa_publication_image_t *image = calloc(1, sizeof(aa_publication_image_t));
    AA_CHECK(NULL != image);
    volatile int64_t rcv_pos = 4096, fast_pos = 4096, slow_pos = 1024;
    image->rcv_pos = &rcv_pos;
    AA_CHECK(0 == aa_publication_image_add_subscriber(image, 77, 1, 3, &fast_pos, true, 0));
    AA_CHECK(0 == aa_publication_image_add_subscriber(image, 78, 1, 4, &slow_pos, false, 0));
    aa_publication_image_update_subscriber_positions(image);
    AA_CHECK_EQ(1024, image->min_subscriber_position);
    AA_CHECK_EQ(4096, image->max_subscriber_position);
    AA_CHECK_EQ(1024, aa_publication_image_join_position(image));
    AA_CHECK(!aa_publication_image_is_drained(image));

    aa_subscriber_position_t *slow = aa_publication_image_find_subscriber(image, 78);
    slow->state = AA_SUBSCRIBER_STATE_LINGER;
    aa_publication_image_update_subscriber_positions(image);
    AA_CHECK_EQ(1024, image->min_subscriber_position);     /* still paces the stream */
    AA_CHECK_EQ(4096, aa_publication_image_join_position(image));
    AA_CHECK(aa_publication_image_is_drained(image));

    slow->state = AA_SUBSCRIBER_STATE_RESTING;
    aa_publication_image_update_subscriber_positions(image);
    AA_CHECK_EQ(4096, image->min_subscriber_position);

    /* every one resting: the stream runs on at what was received */
    aa_publication_image_find_subscriber(image, 77)->state = AA_SUBSCRIBER_STATE_RESTING;
    rcv_pos = 8192;
    aa_publication_image_update_subscriber_positions(image);
    AA_CHECK_EQ(8192, image->min_subscriber_position);
    AA_CHECK_EQ(8192, image->max_subscriber_position);
    free(image->subscribers);
    free(image);
}

int main(void)
{
    AA_RUN(should_leave_resting_untethered_subscribers_out_of_the_positions);
    return 0;
}
