/*
 * The sender agent: transmits the network publications of the send channel endpoints (SETUP,
 * DATA from the log up to the sender limit, heartbeats, retransmits) and reads their control
 * frames (status messages, NAKs, RTT measurements). It runs on its own thread (DEDICATED), with
 * the receiver (SHARED_NETWORK) or inside the one driver duty cycle (SHARED, INVOKER). The
 * conductor hands it publications and endpoints through its command queue and owns their memory;
 * the sender never blocks (no name lookups, no file or socket creation).
 */
#ifndef AA_DRIVER_SENDER_H
#define AA_DRIVER_SENDER_H

#include <stdint.h>
#include <stdbool.h>

#include "aa_driver_context.h"
#include "../concurrent/aa_command_queue.h"

struct aa_driver_conductor_stct;

typedef struct aa_driver_sender_stct
{
    aa_driver_context_t *ctx;
    struct aa_driver_conductor_stct *conductor;
    aa_command_queue_t commands;
    int64_t cycle_threshold_ns;
}
aa_driver_sender_t;

int aa_driver_sender_init(aa_driver_sender_t *sender, aa_driver_context_t *ctx, struct aa_driver_conductor_stct *conductor);
int aa_driver_sender_do_work(void *state);
void aa_driver_sender_on_close(void *state);

#endif
