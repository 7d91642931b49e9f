#include <string.h>

#include "aa_driver_receiver.h"
#include "aa_driver_conductor.h"
#include "../util/aa_clock.h"
#include "../util/aa_error.h"

#define AA_RECEIVER_COMMAND_DRAIN_LIMIT 10

int aa_driver_receiver_init(aa_driver_receiver_t *receiver, aa_driver_context_t *ctx, aa_driver_conductor_t *conductor)
{
    memset(receiver, 0, sizeof(*receiver));
    receiver->ctx = ctx;
    receiver->conductor = conductor;
    receiver->cycle_threshold_ns = ctx->receiver_cycle_threshold_ns;
    if (aa_command_queue_init(&receiver->commands, AA_COMMAND_QUEUE_CAPACITY_DEFAULT) < 0)
    {
        AA_APPEND_ERR("%s", "creating the receiver's command queue");
        return -1;
    }
    return 0;
}

int aa_driver_receiver_do_work(void *state)
{
    aa_driver_receiver_t *receiver = state;
    int64_t now_ns = aa_nano_clock();
    int work_count = aa_command_queue_drain(&receiver->commands, receiver, AA_RECEIVER_COMMAND_DRAIN_LIMIT);

    aa_driver_conductor_record_cycle(
        receiver->conductor, aa_nano_clock() - now_ns, receiver->cycle_threshold_ns,
        AA_SYSTEM_COUNTER_RECEIVER_MAX_CYCLE_TIME, AA_SYSTEM_COUNTER_RECEIVER_CYCLE_TIME_THRESHOLD_EXCEEDED);
    return work_count;
}

void aa_driver_receiver_on_close(void *state)
{
    aa_driver_receiver_t *receiver = state;
    aa_command_queue_close(&receiver->commands);
}
