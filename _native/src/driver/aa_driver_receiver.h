/*
 * The receiver agent: reads the receive channel endpoints (DATA, PAD, heartbeats, SETUP, RTTM),
 * inserts data into the publication images, and sends status messages and NAKs back to the
 * sources. It runs on its own thread (DEDICATED), with the sender (SHARED_NETWORK) or inside the
 * one driver duty cycle (SHARED, INVOKER). The conductor hands it endpoints and images through its
 * command queue and owns their memory; the receiver asks the conductor for new images through the
 * conductor's queue and never blocks.
 */
#ifndef AA_DRIVER_RECEIVER_H
#define AA_DRIVER_RECEIVER_H

#include <stdint.h>
#include <stdbool.h>

#include "aa_driver_context.h"
#include "../concurrent/aa_command_queue.h"

struct aa_driver_conductor_stct;

typedef struct aa_driver_receiver_stct
{
    aa_driver_context_t *ctx;
    struct aa_driver_conductor_stct *conductor;
    aa_command_queue_t commands;
    int64_t cycle_threshold_ns;
}
aa_driver_receiver_t;

int aa_driver_receiver_init(
    aa_driver_receiver_t *receiver, aa_driver_context_t *ctx, struct aa_driver_conductor_stct *conductor);
int aa_driver_receiver_do_work(void *state);
void aa_driver_receiver_on_close(void *state);

#endif
