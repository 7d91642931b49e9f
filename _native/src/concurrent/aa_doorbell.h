/*
 * A doorbell: lets an idle agent sleep long and still wake at once when another thread or process
 * hands it work. The sleeper counts itself in `sleepers`, does one more duty cycle, then waits on
 * `sequence` (a futex, shared between processes when the doorbell lives in a shared mapping such as
 * the CnC header). Whoever hands it work (a command, a back-pressured offer) rings: a fence and one
 * load when nobody sleeps, a futex wake when somebody does. Nothing is lost in between: a ring that
 * saw no sleeper came before the sleeper's extra duty cycle, which then sees the work.
 */
#ifndef AA_DOORBELL_H
#define AA_DOORBELL_H

#include <stdint.h>

typedef struct aa_doorbell_stct
{
    volatile int32_t sequence;
    volatile int32_t sleepers;
}
aa_doorbell_t;

/* Wake every sleeper, if there is one. Call after publishing the work. */
void aa_doorbell_ring(aa_doorbell_t *doorbell);
/* Count the caller as a sleeper and return the sequence to wait on (then do one more duty cycle). */
int32_t aa_doorbell_prepare(aa_doorbell_t *doorbell);
/* Wait until rung (the sequence moves on from `sequence`) or `timeout_ns` passes; uncounts the caller. */
void aa_doorbell_wait(aa_doorbell_t *doorbell, int32_t sequence, int64_t timeout_ns);
/* Uncount a caller that prepared but found work instead of waiting. */
void aa_doorbell_cancel(aa_doorbell_t *doorbell);

#endif
