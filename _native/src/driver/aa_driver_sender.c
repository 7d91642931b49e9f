#include <string.h>

#include "aa_driver_sender.h"
#include "aa_driver_conductor.h"
#include "../util/aa_clock.h"
#include "../util/aa_error.h"

#define AA_SENDER_COMMAND_DRAIN_LIMIT 10

int aa_driver_sender_init(aa_driver_sender_t *sender, aa_driver_context_t *ctx, aa_driver_conductor_t *conductor)
{
    memset(sender, 0, sizeof(*sender));
    sender->ctx = ctx;
    sender->conductor = conductor;
    sender->cycle_threshold_ns = ctx->sender_cycle_threshold_ns;
    if (aa_command_queue_init(&sender->commands, AA_COMMAND_QUEUE_CAPACITY_DEFAULT) < 0)
    {
        AA_APPEND_ERR("%s", "creating the sender's command queue");
        return -1;
    }
    return 0;
}

int aa_driver_sender_do_work(void *state)
{
    aa_driver_sender_t *sender = state;
    int64_t now_ns = aa_nano_clock();
    int work_count = aa_command_queue_drain(&sender->commands, sender, AA_SENDER_COMMAND_DRAIN_LIMIT);

    aa_driver_conductor_record_cycle(
        sender->conductor, aa_nano_clock() - now_ns, sender->cycle_threshold_ns,
        AA_SYSTEM_COUNTER_SENDER_MAX_CYCLE_TIME, AA_SYSTEM_COUNTER_SENDER_CYCLE_TIME_THRESHOLD_EXCEEDED);
    return work_count;
}

void aa_driver_sender_on_close(void *state)
{
    aa_driver_sender_t *sender = state;
    aa_command_queue_close(&sender->commands);
}
