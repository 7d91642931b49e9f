/* Retransmit handler (reference 4.4): NAK validation, sizing, dedupe, unicast replacement, group
 * pool and overflow, delay and linger timers, the resend window, and the bounds a publication
 * gives a receiver's NAK (docs/security.md, Network: senders); all with a fixed clock. */
#include <string.h>

#include "aa_test.h"
#include "protocols/aa_retransmit_handler.h"
#include "logbuffer/aa_logbuffer.h"
#include "util/aa_error.h"

#define TERM (64 * 1024)
#define MS (1000 * 1000LL)
#define INITIAL_TERM_ID 100

typedef struct
{
    int count;
    int32_t term_id[64];
    int32_t term_offset[64];
    size_t length[64];
}
resends_t;

static void on_resend(void *clientd, int32_t term_id, int32_t term_offset, size_t length)
{
    resends_t *r = (resends_t *)clientd;
    AA_CHECK(r->count < 64);
    r->term_id[r->count] = term_id;
    r->term_offset[r->count] = term_offset;
    r->length[r->count] = length;
    r->count++;
}

/* The sender position well ahead of everything the tests NAK (term 101 at 32 KiB). */
static int64_t snd_pos(void)
{
    return aa_compute_position(INITIAL_TERM_ID + 1, TERM / 2, aa_position_bits_to_shift(TERM), INITIAL_TERM_ID);
}

static void unicast(aa_retransmit_handler_t *h)
{
    aa_retransmit_handler_params_t p;
    aa_retransmit_handler_params_default(&p, TERM, INITIAL_TERM_ID);
    AA_CHECK_EQ(aa_retransmit_handler_init(h, &p), 0);
}

static void should_compute_the_retransmission_estimate(void)
{
    /* 16 MiB term: min(128 KiB, 8 MiB) x 16 = 2 MiB; x 4 (max flow control) = 512 KiB. */
    AA_CHECK_EQ(aa_retransmit_handler_max_retransmission_length(16 * 1024 * 1024, 16), 2 * 1024 * 1024);
    AA_CHECK_EQ(aa_retransmit_handler_max_retransmission_length(16 * 1024 * 1024, 4), 512 * 1024);
    /* 64 KiB term: min(128 KiB, 32 KiB) x 16 = 512 KiB. */
    AA_CHECK_EQ(aa_retransmit_handler_max_retransmission_length(TERM, 16), 512 * 1024);

    aa_retransmit_handler_params_t p;
    aa_retransmit_handler_params_default(&p, 16 * 1024 * 1024, 0);
    AA_CHECK_EQ(p.delay_ns, 0);
    AA_CHECK_EQ(p.linger_ns, 10 * MS);
    AA_CHECK_EQ(p.max_resend, 16);
    AA_CHECK(!p.has_group_semantics);
    AA_CHECK_EQ(p.max_retransmission_length, 2 * 1024 * 1024);
}

static void should_resend_unicast_nak_immediately_then_linger(void)
{
    aa_retransmit_handler_t h;
    unicast(&h);
    AA_CHECK_EQ(h.action_count, 1);
    resends_t r = { 0 };
    int64_t t = 1000 * MS;

    AA_CHECK_EQ(aa_retransmit_handler_on_nak(&h, 101, 1024, 1408, snd_pos(), t, on_resend, &r), AA_RETRANSMIT_NAK_RESENT);
    AA_CHECK_EQ(r.count, 1);
    AA_CHECK_EQ(r.term_id[0], 101);
    AA_CHECK_EQ(r.term_offset[0], 1024);
    AA_CHECK_EQ(r.length[0], 1408);
    AA_CHECK_EQ(aa_retransmit_handler_active_count(&h), 1);

    /* Offsets inside [1024, 1024 + 1408) of term 101 are duplicates while the action lingers. */
    AA_CHECK_EQ(aa_retransmit_handler_on_nak(&h, 101, 1024, 1408, snd_pos(), t + 1, on_resend, &r), AA_RETRANSMIT_NAK_DUPLICATE);
    AA_CHECK_EQ(aa_retransmit_handler_on_nak(&h, 101, 1056, 32, snd_pos(), t + 2, on_resend, &r), AA_RETRANSMIT_NAK_DUPLICATE);
    AA_CHECK_EQ(aa_retransmit_handler_on_nak(&h, 101, 1024 + 1376, 1, snd_pos(), t + 3, on_resend, &r), AA_RETRANSMIT_NAK_DUPLICATE);
    AA_CHECK_EQ(r.count, 1);

    /* Linger 10 ms, then the action is free and the same NAK is resent again. */
    AA_CHECK_EQ(aa_retransmit_handler_process_timeouts(&h, t + 10 * MS - 1, snd_pos(), on_resend, &r), 0);
    AA_CHECK_EQ(aa_retransmit_handler_active_count(&h), 1);
    AA_CHECK_EQ(aa_retransmit_handler_on_nak(&h, 101, 1024, 1408, snd_pos(), t + 10 * MS - 1, on_resend, &r), AA_RETRANSMIT_NAK_DUPLICATE);
    AA_CHECK_EQ(aa_retransmit_handler_process_timeouts(&h, t + 10 * MS, snd_pos(), on_resend, &r), 0);
    AA_CHECK_EQ(aa_retransmit_handler_active_count(&h), 0);
    AA_CHECK_EQ(aa_retransmit_handler_on_nak(&h, 101, 1024, 1408, snd_pos(), t + 10 * MS, on_resend, &r), AA_RETRANSMIT_NAK_RESENT);
    AA_CHECK_EQ(r.count, 2);
    aa_retransmit_handler_fini(&h);
}

static void should_replace_the_unicast_action_for_a_new_range(void)
{
    aa_retransmit_handler_t h;
    unicast(&h);
    resends_t r = { 0 };
    int64_t t = 0;

    AA_CHECK_EQ(aa_retransmit_handler_on_nak(&h, 101, 1024, 1408, snd_pos(), t, on_resend, &r), AA_RETRANSMIT_NAK_RESENT);
    /* Just past the range, or the same offset in another term: not a duplicate; unicast replaces. */
    AA_CHECK_EQ(aa_retransmit_handler_on_nak(&h, 101, 1024 + 1408, 64, snd_pos(), t + 1, on_resend, &r), AA_RETRANSMIT_NAK_RESENT);
    AA_CHECK_EQ(r.term_offset[1], 1024 + 1408);
    AA_CHECK_EQ(r.length[1], 64);
    /* Term 100 lies below the resend window here: refused, and the action is left as it was. */
    AA_CHECK_EQ(aa_retransmit_handler_on_nak(&h, 100, 1024 + 1408, 64, snd_pos(), t + 2, on_resend, &r), AA_RETRANSMIT_NAK_OUTSIDE_WINDOW);
    AA_CHECK_EQ(h.actions[0].term_id, 101);
    AA_CHECK_EQ(h.actions[0].term_offset, 1024 + 1408);
    AA_CHECK_EQ(aa_retransmit_handler_active_count(&h), 1);
    /* The first range is no longer tracked, so it is resent at once (no waiting out its linger). */
    AA_CHECK_EQ(aa_retransmit_handler_on_nak(&h, 101, 1024, 1408, snd_pos(), t + 3, on_resend, &r), AA_RETRANSMIT_NAK_RESENT);
    AA_CHECK_EQ(r.count, 3);
    aa_retransmit_handler_fini(&h);
}

static void should_use_a_pool_for_group_semantics_and_overflow(void)
{
    aa_retransmit_handler_params_t p;
    aa_retransmit_handler_params_default(&p, TERM, INITIAL_TERM_ID);
    p.has_group_semantics = true;
    aa_retransmit_handler_t h;
    AA_CHECK_EQ(aa_retransmit_handler_init(&h, &p), 0);
    AA_CHECK_EQ(h.action_count, 16);
    resends_t r = { 0 };

    for (int i = 0; i < 16; i++)
    {
        AA_CHECK_EQ(aa_retransmit_handler_on_nak(&h, 101, i * 1024, 512, snd_pos(), i, on_resend, &r), AA_RETRANSMIT_NAK_RESENT);
    }
    AA_CHECK_EQ(r.count, 16);
    AA_CHECK_EQ(aa_retransmit_handler_active_count(&h), 16);
    /* Every range is deduped; a 17th range finds no free action. */
    for (int i = 0; i < 16; i++)
    {
        AA_CHECK_EQ(aa_retransmit_handler_on_nak(&h, 101, i * 1024 + 480, 32, snd_pos(), 100, on_resend, &r), AA_RETRANSMIT_NAK_DUPLICATE);
    }
    AA_CHECK_EQ(aa_retransmit_handler_on_nak(&h, 101, 16 * 1024, 512, snd_pos(), 100, on_resend, &r), AA_RETRANSMIT_NAK_POOL_OVERFLOW);
    AA_CHECK_EQ(r.count, 16);

    /* Linger ends for all (armed at t = 0..15): slots come back. */
    AA_CHECK_EQ(aa_retransmit_handler_process_timeouts(&h, 10 * MS + 7, snd_pos(), on_resend, &r), 0);
    AA_CHECK_EQ(aa_retransmit_handler_active_count(&h), 8);
    AA_CHECK_EQ(aa_retransmit_handler_on_nak(&h, 101, 16 * 1024, 512, snd_pos(), 10 * MS + 7, on_resend, &r), AA_RETRANSMIT_NAK_RESENT);
    AA_CHECK_EQ(r.count, 17);
    aa_retransmit_handler_fini(&h);

    /* max-resend=2. */
    p.max_resend = 2;
    AA_CHECK_EQ(aa_retransmit_handler_init(&h, &p), 0);
    AA_CHECK_EQ(h.action_count, 2);
    AA_CHECK_EQ(aa_retransmit_handler_on_nak(&h, 101, 0, 32, snd_pos(), 0, on_resend, &r), AA_RETRANSMIT_NAK_RESENT);
    AA_CHECK_EQ(aa_retransmit_handler_on_nak(&h, 101, 64, 32, snd_pos(), 0, on_resend, &r), AA_RETRANSMIT_NAK_RESENT);
    AA_CHECK_EQ(aa_retransmit_handler_on_nak(&h, 101, 128, 32, snd_pos(), 0, on_resend, &r), AA_RETRANSMIT_NAK_POOL_OVERFLOW);
    aa_retransmit_handler_fini(&h);
}

static void should_delay_then_resend_then_linger(void)
{
    aa_retransmit_handler_params_t p;
    aa_retransmit_handler_params_default(&p, TERM, INITIAL_TERM_ID);
    p.has_group_semantics = true;
    p.delay_ns = 2 * MS;
    p.linger_ns = 5 * MS;
    aa_retransmit_handler_t h;
    AA_CHECK_EQ(aa_retransmit_handler_init(&h, &p), 0);
    resends_t r = { 0 };
    int64_t t = 50 * MS;

    AA_CHECK_EQ(aa_retransmit_handler_on_nak(&h, 101, 2048, 100, snd_pos(), t, on_resend, &r), AA_RETRANSMIT_NAK_DELAYED);
    AA_CHECK_EQ(r.count, 0);
    /* Duplicates are suppressed while delayed too. */
    AA_CHECK_EQ(aa_retransmit_handler_on_nak(&h, 101, 2080, 32, snd_pos(), t + 1, on_resend, &r), AA_RETRANSMIT_NAK_DUPLICATE);
    AA_CHECK_EQ(aa_retransmit_handler_process_timeouts(&h, t + 2 * MS - 1, snd_pos(), on_resend, &r), 0);
    AA_CHECK_EQ(r.count, 0);
    AA_CHECK_EQ(aa_retransmit_handler_process_timeouts(&h, t + 2 * MS, snd_pos(), on_resend, &r), 1);
    AA_CHECK_EQ(r.count, 1);
    AA_CHECK_EQ(r.term_offset[0], 2048);
    AA_CHECK_EQ(r.length[0], 100);
    /* Lingering 5 ms from the resend. */
    AA_CHECK_EQ(aa_retransmit_handler_on_nak(&h, 101, 2048, 100, snd_pos(), t + 6 * MS, on_resend, &r), AA_RETRANSMIT_NAK_DUPLICATE);
    AA_CHECK_EQ(aa_retransmit_handler_process_timeouts(&h, t + 7 * MS - 1, snd_pos(), on_resend, &r), 0);
    AA_CHECK_EQ(aa_retransmit_handler_active_count(&h), 1);
    AA_CHECK_EQ(aa_retransmit_handler_process_timeouts(&h, t + 7 * MS, snd_pos(), on_resend, &r), 0);
    AA_CHECK_EQ(aa_retransmit_handler_active_count(&h), 0);
    AA_CHECK_EQ(r.count, 1);
    aa_retransmit_handler_fini(&h);
}

static void should_clamp_length_to_estimate_and_term_end(void)
{
    aa_retransmit_handler_params_t p;
    aa_retransmit_handler_params_default(&p, TERM, INITIAL_TERM_ID);
    p.max_retransmission_length = 4096;
    aa_retransmit_handler_t h;
    AA_CHECK_EQ(aa_retransmit_handler_init(&h, &p), 0);
    resends_t r = { 0 };

    AA_CHECK_EQ(aa_retransmit_handler_on_nak(&h, 101, 0, 10000, snd_pos(), 0, on_resend, &r), AA_RETRANSMIT_NAK_RESENT);
    AA_CHECK_EQ(r.length[0], 4096);
    /* The action covers only what was resent: 4096 is outside it. */
    AA_CHECK_EQ(aa_retransmit_handler_on_nak(&h, 101, 4096, 64, snd_pos(), 1, on_resend, &r), AA_RETRANSMIT_NAK_RESENT);
    /* Near the term end (snd-pos now in term 102): only the 64 bytes left in the term. */
    int64_t later = aa_compute_position(102, 4096, aa_position_bits_to_shift(TERM), INITIAL_TERM_ID);
    AA_CHECK_EQ(aa_retransmit_handler_on_nak(&h, 101, TERM - 64, 1000, later, 2, on_resend, &r), AA_RETRANSMIT_NAK_RESENT);
    AA_CHECK_EQ(r.length[2], 64);
    aa_retransmit_handler_fini(&h);
}

static void should_resend_only_inside_the_resend_window(void)
{
    aa_retransmit_handler_t h;
    unicast(&h);
    resends_t r = { 0 };
    int32_t bits = aa_position_bits_to_shift(TERM);
    /* snd-pos at term 103 offset 1024: window bottom = pos - 32 KiB - 8 KiB (max message = term / 8). */
    int64_t sender = aa_compute_position(103, 1024, bits, INITIAL_TERM_ID);
    int64_t bottom = sender - TERM / 2 - TERM / 8;
    int32_t bottom_term = aa_compute_term_id_from_position(bottom, bits, INITIAL_TERM_ID);
    int32_t bottom_offset = aa_compute_term_offset_from_position(bottom, bits);
    AA_CHECK_EQ(bottom_term, 102);
    AA_CHECK_EQ(bottom_offset, TERM - 40 * 1024 + 1024);

    /* At the bottom: resent. One frame below: outside, and no action is taken for it. */
    AA_CHECK_EQ(aa_retransmit_handler_on_nak(&h, 102, bottom_offset, 64, sender, 0, on_resend, &r), AA_RETRANSMIT_NAK_RESENT);
    AA_CHECK_EQ(aa_retransmit_handler_on_nak(&h, 102, bottom_offset - 32, 32, sender, 1, on_resend, &r), AA_RETRANSMIT_NAK_OUTSIDE_WINDOW);
    AA_CHECK_EQ(r.count, 1);
    AA_CHECK_EQ(aa_retransmit_handler_active_count(&h), 1);
    AA_CHECK_EQ(h.actions[0].term_offset, bottom_offset);

    /* At or beyond snd-pos: nothing was sent there yet. */
    AA_CHECK_EQ(aa_retransmit_handler_on_nak(&h, 103, 1024, 64, sender, 3, on_resend, &r), AA_RETRANSMIT_NAK_OUTSIDE_WINDOW);
    AA_CHECK_EQ(aa_retransmit_handler_on_nak(&h, 104, 0, 64, sender, 4, on_resend, &r), AA_RETRANSMIT_NAK_OUTSIDE_WINDOW);
    /* Term ids before the initial term (negative positions) or far ahead are outside too. */
    AA_CHECK_EQ(aa_retransmit_handler_on_nak(&h, INITIAL_TERM_ID - 1, 0, 64, sender, 5, on_resend, &r), AA_RETRANSMIT_NAK_OUTSIDE_WINDOW);
    AA_CHECK_EQ(aa_retransmit_handler_on_nak(&h, INT32_MIN, 0, 64, sender, 5, on_resend, &r), AA_RETRANSMIT_NAK_OUTSIDE_WINDOW);
    AA_CHECK_EQ(r.count, 1);

    /* A range crossing snd-pos is trimmed to end there. */
    AA_CHECK_EQ(aa_retransmit_handler_on_nak(&h, 103, 512, 4096, sender, 6, on_resend, &r), AA_RETRANSMIT_NAK_RESENT);
    AA_CHECK_EQ(r.count, 2);
    AA_CHECK_EQ(r.term_offset[1], 512);
    AA_CHECK_EQ(r.length[1], 512);

    /* A delayed resend checks the window when it fires, against the snd-pos of that moment. */
    aa_retransmit_handler_fini(&h);
    aa_retransmit_handler_params_t p;
    aa_retransmit_handler_params_default(&p, TERM, INITIAL_TERM_ID);
    p.delay_ns = 1 * MS;
    AA_CHECK_EQ(aa_retransmit_handler_init(&h, &p), 0);
    AA_CHECK_EQ(aa_retransmit_handler_on_nak(&h, 102, bottom_offset, 64, sender, 0, on_resend, &r), AA_RETRANSMIT_NAK_DELAYED);
    AA_CHECK_EQ(aa_retransmit_handler_process_timeouts(&h, 1 * MS, sender + 32, on_resend, &r), 0);
    AA_CHECK_EQ(r.count, 2);
    aa_retransmit_handler_fini(&h);
}

static void should_reject_invalid_naks_and_parameters(void)
{
    aa_retransmit_handler_t h;
    unicast(&h);
    resends_t r = { 0 };
    AA_CHECK_EQ(aa_retransmit_handler_on_nak(&h, 101, -32, 64, snd_pos(), 0, on_resend, &r), AA_RETRANSMIT_NAK_INVALID);
    AA_CHECK_EQ(aa_retransmit_handler_on_nak(&h, 101, TERM - 31, 64, snd_pos(), 0, on_resend, &r), AA_RETRANSMIT_NAK_INVALID);
    /* not on the 32-byte frame alignment: no frame starts there */
    AA_CHECK_EQ(aa_retransmit_handler_on_nak(&h, 101, 1040, 64, snd_pos(), 0, on_resend, &r), AA_RETRANSMIT_NAK_INVALID);
    AA_CHECK_EQ(aa_retransmit_handler_on_nak(&h, 101, TERM, 64, snd_pos(), 0, on_resend, &r), AA_RETRANSMIT_NAK_INVALID);
    AA_CHECK_EQ(aa_retransmit_handler_on_nak(&h, 101, 0, 0, snd_pos(), 0, on_resend, &r), AA_RETRANSMIT_NAK_INVALID);
    AA_CHECK_EQ(aa_retransmit_handler_on_nak(&h, 101, 0, -5, snd_pos(), 0, on_resend, &r), AA_RETRANSMIT_NAK_INVALID);
    AA_CHECK_EQ(aa_retransmit_handler_active_count(&h), 0);
    /* termLength - 32 itself is valid. */
    int64_t later = aa_compute_position(102, 1024, aa_position_bits_to_shift(TERM), INITIAL_TERM_ID);
    AA_CHECK_EQ(aa_retransmit_handler_on_nak(&h, 101, TERM - 32, 64, later, 0, on_resend, &r), AA_RETRANSMIT_NAK_RESENT);
    AA_CHECK_EQ(r.length[0], 32);
    AA_CHECK_EQ(r.count, 1);
    aa_retransmit_handler_fini(&h);

    aa_retransmit_handler_params_t p;
    aa_retransmit_handler_params_default(&p, TERM, 0);
    p.has_group_semantics = true;
    p.max_resend = 257;
    AA_CHECK_EQ(aa_retransmit_handler_init(&h, &p), -1);
    AA_CHECK_EQ(aa_errcode(), AA_ERROR_CODE_CONFIGURATION);
    p.max_resend = -1;
    AA_CHECK_EQ(aa_retransmit_handler_init(&h, &p), -1);
    p.max_resend = 256;
    AA_CHECK_EQ(aa_retransmit_handler_init(&h, &p), 0);
    AA_CHECK_EQ(h.action_count, 256);
    aa_retransmit_handler_fini(&h);
    p.max_resend = 16;
    p.linger_ns = -1;
    AA_CHECK_EQ(aa_retransmit_handler_init(&h, &p), -1);
    aa_retransmit_handler_params_default(&p, TERM + 32, 0);
    AA_CHECK_EQ(aa_retransmit_handler_init(&h, &p), -1);
    /* fini after a failed init is harmless. */
    aa_retransmit_handler_fini(&h);
}

/* docs/security.md, Network: senders: the bounds a publication gives one receiver's NAK. */
static void should_clamp_to_the_bounds_and_cut_at_active_ranges(void)
{
    aa_retransmit_handler_params_t p;
    aa_retransmit_handler_params_default(&p, TERM, INITIAL_TERM_ID);
    p.has_group_semantics = true;
    aa_retransmit_handler_t h;
    AA_CHECK_EQ(aa_retransmit_handler_init(&h, &p), 0);
    resends_t r = { 0 };
    int32_t bits = aa_position_bits_to_shift(TERM);
    int64_t term_101 = aa_compute_position(101, 0, bits, INITIAL_TERM_ID);
    aa_retransmit_nak_armed_t armed;

    /* the receiver reported position term 101 + 4096: a NAK from 1024 starts there */
    aa_retransmit_nak_bounds_t bounds = { term_101 + 4096, INT64_MAX };
    AA_CHECK_EQ(aa_retransmit_handler_on_nak_bounded(&h, 101, 1024, 8192, snd_pos(), &bounds, 0, on_resend, &r, &armed),
        AA_RETRANSMIT_NAK_RESENT);
    AA_CHECK_EQ(r.term_offset[0], 4096);
    AA_CHECK_EQ(r.length[0], 1024 + 8192 - 4096);
    AA_CHECK_EQ(armed.position, term_101 + 4096);
    AA_CHECK(!armed.is_budget_limited);
    /* entirely below what the receiver reported: refused, nothing armed */
    AA_CHECK_EQ(aa_retransmit_handler_on_nak_bounded(&h, 101, 0, 4096, snd_pos(), &bounds, 1, on_resend, &r, &armed),
        AA_RETRANSMIT_NAK_OUTSIDE_WINDOW);
    AA_CHECK_EQ(aa_retransmit_handler_active_count(&h), 1);

    /* a shifted range over the active one: its start inside it is a duplicate... */
    bounds.low_position = term_101;
    AA_CHECK_EQ(aa_retransmit_handler_on_nak_bounded(&h, 101, 4096 + 32, 30000, snd_pos(), &bounds, 2, on_resend, &r, &armed),
        AA_RETRANSMIT_NAK_DUPLICATE);
    /* ...and one starting below it is cut where it begins: no byte is resent twice in a linger */
    AA_CHECK_EQ(aa_retransmit_handler_on_nak_bounded(&h, 101, 0, 30000, snd_pos(), &bounds, 3, on_resend, &r, &armed),
        AA_RETRANSMIT_NAK_RESENT);
    AA_CHECK_EQ(r.term_offset[1], 0);
    AA_CHECK_EQ(r.length[1], 4096);

    /* the budget: cut to what is left, refused when nothing is */
    bounds.max_length = 1000;
    AA_CHECK_EQ(aa_retransmit_handler_on_nak_bounded(&h, 101, 16384, 8192, snd_pos(), &bounds, 4, on_resend, &r, &armed),
        AA_RETRANSMIT_NAK_RESENT);
    AA_CHECK_EQ(r.length[2], 1000);
    AA_CHECK_EQ(armed.length, 1000);
    AA_CHECK(armed.is_budget_limited);
    bounds.max_length = 0;
    AA_CHECK_EQ(aa_retransmit_handler_on_nak_bounded(&h, 101, 24576, 64, snd_pos(), &bounds, 5, on_resend, &r, &armed),
        AA_RETRANSMIT_NAK_OVER_BUDGET);
    AA_CHECK_EQ(r.count, 3);
    AA_CHECK_EQ(aa_retransmit_handler_active_count(&h), 3);
    aa_retransmit_handler_fini(&h);
}

int main(void)
{
    AA_RUN(should_compute_the_retransmission_estimate);
    AA_RUN(should_resend_unicast_nak_immediately_then_linger);
    AA_RUN(should_replace_the_unicast_action_for_a_new_range);
    AA_RUN(should_use_a_pool_for_group_semantics_and_overflow);
    AA_RUN(should_delay_then_resend_then_linger);
    AA_RUN(should_clamp_length_to_estimate_and_term_end);
    AA_RUN(should_resend_only_inside_the_resend_window);
    AA_RUN(should_reject_invalid_naks_and_parameters);
    AA_RUN(should_clamp_to_the_bounds_and_cut_at_active_ranges);
    return 0;
}
