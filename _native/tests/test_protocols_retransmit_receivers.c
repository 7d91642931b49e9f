/* The receivers a publication honours NAKs from (docs/security.md, Network: senders): who is a
 * receiver, for how long, the table's cap, the retransmit budget per interval; and a NAK storm through
 * the receivers and the retransmit handler together, whose resent bytes stay within the receivers'
 * windows per linger interval whatever the NAK rate. All with a fixed clock. */
#include <arpa/inet.h>
#include <string.h>

#include "aa_test.h"
#include "protocols/aa_retransmit_handler.h"
#include "protocols/aa_retransmit_receivers.h"
#include "logbuffer/aa_logbuffer.h"

#define TERM (64 * 1024)
#define MS (1000 * 1000LL)
#define US (1000LL)
#define INITIAL_TERM_ID 100
#define TIMEOUT (5000 * MS)
#define LINGER (10 * MS)
#define IN_LENGTH ((socklen_t)sizeof(struct sockaddr_in))

static void should_know_receivers_by_address_until_they_fall_silent(void)
{
    aa_retransmit_receivers_t rs;
    aa_retransmit_receivers_init(&rs, 0, TIMEOUT, LINGER, TERM);
    AA_CHECK_EQ((int64_t)rs.max_count, AA_RETRANSMIT_RECEIVERS_MAX_COUNT_DEFAULT);
    struct sockaddr_storage a = test_ipv4_address("10.0.0.1", 40001);
    struct sockaddr_storage a_other_port = test_ipv4_address("10.0.0.1", 40002);
    struct sockaddr_storage b = test_ipv4_address("10.0.0.2", 40001);

    AA_CHECK(NULL == aa_retransmit_receivers_find(&rs, &a, 0));
    AA_CHECK_EQ(aa_retransmit_receivers_on_status_message(&rs, &a, IN_LENGTH, 1, 4096, 16 * 1024, 0), AA_RETRANSMIT_RECEIVERS_ADDED);
    AA_CHECK_EQ(aa_retransmit_receivers_on_status_message(&rs, &b, IN_LENGTH, 1, 0, 1 << 30, 1 * MS), AA_RETRANSMIT_RECEIVERS_ADDED);
    aa_retransmit_receiver_t *ra = aa_retransmit_receivers_find(&rs, &a, 2 * MS);
    AA_CHECK(NULL != ra);
    AA_CHECK_EQ(ra->position, 4096);
    AA_CHECK_EQ(ra->window, 16 * 1024);
    /* a window claimed beyond termLength / 2 counts as termLength / 2 */
    AA_CHECK_EQ(aa_retransmit_receivers_find(&rs, &b, 2 * MS)->window, TERM / 2);
    /* the port is part of the address */
    AA_CHECK(NULL == aa_retransmit_receivers_find(&rs, &a_other_port, 2 * MS));

    /* a later SM moves the position; silence for longer than the timeout: no longer a receiver */
    AA_CHECK_EQ(aa_retransmit_receivers_on_status_message(&rs, &a, IN_LENGTH, 1, 8192, 16 * 1024, 100 * MS), AA_RETRANSMIT_RECEIVERS_REFRESHED);
    AA_CHECK_EQ(aa_retransmit_receivers_find(&rs, &a, 100 * MS)->position, 8192);
    AA_CHECK(NULL != aa_retransmit_receivers_find(&rs, &a, 100 * MS + TIMEOUT));
    AA_CHECK(NULL == aa_retransmit_receivers_find(&rs, &a, 100 * MS + TIMEOUT + 1));
    AA_CHECK(NULL == aa_retransmit_receivers_find(&rs, &b, 1 * MS + TIMEOUT + 1));
    aa_retransmit_receivers_close(&rs);
}

static void should_cap_the_table_and_make_room_from_silent_receivers(void)
{
    aa_retransmit_receivers_t rs;
    aa_retransmit_receivers_init(&rs, 3, TIMEOUT, LINGER, TERM);
    for (uint16_t i = 0; i < 3; i++)
    {
        struct sockaddr_storage r = test_ipv4_address("10.0.0.1", (uint16_t)(41000 + i));
        AA_CHECK_EQ(aa_retransmit_receivers_on_status_message(&rs, &r, IN_LENGTH, 1, 0, 4096, i * MS), AA_RETRANSMIT_RECEIVERS_ADDED);
    }
    struct sockaddr_storage newcomer = test_ipv4_address("10.0.0.9", 41009);
    AA_CHECK_EQ(aa_retransmit_receivers_on_status_message(&rs, &newcomer, IN_LENGTH, 1, 0, 4096, 10 * MS), AA_RETRANSMIT_RECEIVERS_REFUSED);
    AA_CHECK(NULL == aa_retransmit_receivers_find(&rs, &newcomer, 10 * MS));
    AA_CHECK_EQ((int64_t)rs.count, 3);
    /* the known ones are still served while refused ones knock */
    struct sockaddr_storage first = test_ipv4_address("10.0.0.1", 41000);
    AA_CHECK_EQ(aa_retransmit_receivers_on_status_message(&rs, &first, IN_LENGTH, 1, 0, 4096, TIMEOUT), AA_RETRANSMIT_RECEIVERS_REFRESHED);
    /* the other two fall silent: their places go to the newcomer */
    AA_CHECK_EQ(aa_retransmit_receivers_on_status_message(&rs, &newcomer, IN_LENGTH, 1, 0, 4096, 2 * MS + TIMEOUT + 1),
        AA_RETRANSMIT_RECEIVERS_ADDED);
    AA_CHECK_EQ((int64_t)rs.count, 2);
    AA_CHECK(NULL != aa_retransmit_receivers_find(&rs, &first, 2 * MS + TIMEOUT + 1));
    AA_CHECK(NULL != aa_retransmit_receivers_find(&rs, &newcomer, 2 * MS + TIMEOUT + 1));
    aa_retransmit_receivers_close(&rs);
}

static void should_give_each_receiver_its_window_per_interval(void)
{
    aa_retransmit_receivers_t rs;
    aa_retransmit_receivers_init(&rs, 0, TIMEOUT, LINGER, TERM);
    struct sockaddr_storage a = test_ipv4_address("10.0.0.1", 40001);
    aa_retransmit_receivers_on_status_message(&rs, &a, IN_LENGTH, 1, 0, 8192, 0);
    aa_retransmit_receiver_t *ra = aa_retransmit_receivers_find(&rs, &a, 0);
    AA_CHECK_EQ(aa_retransmit_receivers_budget(&rs, ra, 0), 8192);
    aa_retransmit_receivers_charge(ra, 5000);
    AA_CHECK_EQ(aa_retransmit_receivers_budget(&rs, ra, LINGER - 1), 3192);
    aa_retransmit_receivers_charge(ra, 3192);
    AA_CHECK_EQ(aa_retransmit_receivers_budget(&rs, ra, LINGER - 1), 0);
    /* a new interval: the whole window again */
    AA_CHECK_EQ(aa_retransmit_receivers_budget(&rs, ra, LINGER), 8192);
    aa_retransmit_receivers_close(&rs);

    /* a linger of 0 (dedupe off) still leaves an interval of 1 ms */
    aa_retransmit_receivers_init(&rs, 0, TIMEOUT, 0, TERM);
    AA_CHECK_EQ(rs.budget_interval_ns, AA_RETRANSMIT_RECEIVERS_MIN_BUDGET_INTERVAL_NS);
    aa_retransmit_receivers_close(&rs);
}

static int64_t resent_bytes;

static void count_resend(void *clientd, int32_t term_id, int32_t term_offset, size_t length)
{
    (void)clientd;
    (void)term_id;
    (void)term_offset;
    resent_bytes += (int64_t)length;
}

/* One NAK handled as the publication does (media/aa_network_publication.c); false when refused. */
static void storm_nak(
    aa_retransmit_handler_t *h, aa_retransmit_receivers_t *rs, const struct sockaddr_storage *source, int32_t term_id,
    int32_t term_offset, int32_t length, int64_t snd_pos, int64_t now_ns)
{
    aa_retransmit_receiver_t *receiver = aa_retransmit_receivers_find(rs, source, now_ns);
    if (NULL == receiver)
    {
        return;
    }
    aa_retransmit_nak_bounds_t bounds = { receiver->position, aa_retransmit_receivers_budget(rs, receiver, now_ns) };
    aa_retransmit_nak_armed_t armed;
    aa_retransmit_nak_result_t result = aa_retransmit_handler_on_nak_bounded(
        h, term_id, term_offset, length, snd_pos, &bounds, now_ns, count_resend, NULL, &armed);
    if (AA_RETRANSMIT_NAK_RESENT == result || AA_RETRANSMIT_NAK_DELAYED == result)
    {
        aa_retransmit_receivers_charge(receiver, armed.length);
    }
}

/* 100,000 NAKs in one simulated second (one every 10 us) from a receiver, with shifting, alternating
 * and oversized ranges, and as many from a stranger: at most the window per linger interval is
 * resent (unicast and group semantics); the same storm through the unbounded unicast handler resends
 * far more. */
static void should_bound_what_a_nak_storm_resends(void)
{
    for (int group = 0; group <= 1; group++)
    {
        aa_retransmit_handler_params_t p;
        aa_retransmit_handler_params_default(&p, TERM, INITIAL_TERM_ID);
        p.has_group_semantics = 1 == group;
        aa_retransmit_handler_t h;
        AA_CHECK_EQ(aa_retransmit_handler_init(&h, &p), 0);
        aa_retransmit_receivers_t rs;
        aa_retransmit_receivers_init(&rs, 0, TIMEOUT, LINGER, TERM);
        struct sockaddr_storage receiver = test_ipv4_address("10.0.0.1", 40001);
        struct sockaddr_storage stranger = test_ipv4_address("10.0.0.66", 40001);
        int32_t bits = aa_position_bits_to_shift(TERM);
        int64_t snd_pos = aa_compute_position(103, 8192, bits, INITIAL_TERM_ID);
        int64_t window = 16 * 1024;
        aa_retransmit_receivers_on_status_message(&rs, &receiver, IN_LENGTH, 1, snd_pos - window, (int32_t)window, 0);

        resent_bytes = 0;
        uint32_t seed = 12345;
        const int64_t duration = 1000 * MS;
        for (int64_t now = 0; now < duration; now += 10 * US)
        {
            seed = seed * 1103515245u + 12345u;
            int32_t term_id = 102 + (int32_t)((seed >> 8) & 1);
            int32_t term_offset = (int32_t)(((seed >> 9) % (TERM / 32)) * 32);
            int32_t length = 0 == (seed & 4) ? INT32_MAX : (int32_t)(32 + ((seed >> 3) % 4096));
            storm_nak(&h, &rs, &receiver, term_id, term_offset, length, snd_pos, now);
            storm_nak(&h, &rs, &stranger, term_id, term_offset, length, snd_pos, now);
            aa_retransmit_handler_process_timeouts(&h, now, snd_pos, count_resend, NULL);
            if (0 == now % (100 * MS))
            {
                aa_retransmit_receivers_on_status_message(&rs, &receiver, IN_LENGTH, 1, snd_pos - window, (int32_t)window, now);
            }
        }
        int64_t bound = window * (duration / LINGER + 1);
        AA_CHECK(resent_bytes > 0);
        AA_CHECK(resent_bytes <= bound);

        /* the same storm, every NAK taken as the reference's handler alone takes it */
        aa_retransmit_handler_fini(&h);
        AA_CHECK_EQ(aa_retransmit_handler_init(&h, &p), 0);
        int64_t bounded = resent_bytes;
        resent_bytes = 0;
        seed = 12345;
        for (int64_t now = 0; now < duration; now += 10 * US)
        {
            seed = seed * 1103515245u + 12345u;
            int32_t term_id = 102 + (int32_t)((seed >> 8) & 1);
            int32_t term_offset = (int32_t)(((seed >> 9) % (TERM / 32)) * 32);
            int32_t length = 0 == (seed & 4) ? INT32_MAX : (int32_t)(32 + ((seed >> 3) % 4096));
            aa_retransmit_handler_on_nak(&h, term_id, term_offset, length, snd_pos, now, count_resend, NULL);
            aa_retransmit_handler_on_nak(&h, term_id, term_offset, length, snd_pos, now, count_resend, NULL);
            aa_retransmit_handler_process_timeouts(&h, now, snd_pos, count_resend, NULL);
        }
        if (0 == group)
        {
            /* unicast replaces its one action on every new range: nothing bounds it */
            AA_CHECK(resent_bytes > 10 * bound);
            AA_CHECK(resent_bytes > 10 * bounded);
        }
        aa_retransmit_handler_fini(&h);
        aa_retransmit_receivers_close(&rs);
    }
}

/* Receivers sharing one address (multicast on one host, a NAT) are tracked apart by receiver id; a NAK,
 * which names none, is the one furthest behind's (docs/security.md, Network: senders). */
static void should_keep_receivers_of_one_address_apart(void)
{
    aa_retransmit_receivers_t rs;
    aa_retransmit_receivers_init(&rs, 0, TIMEOUT, LINGER, TERM);
    struct sockaddr_storage shared = test_ipv4_address("10.0.0.1", 40001);
    AA_CHECK_EQ(aa_retransmit_receivers_on_status_message(&rs, &shared, IN_LENGTH, 1, 8192, 4096, 0), AA_RETRANSMIT_RECEIVERS_ADDED);
    AA_CHECK_EQ(aa_retransmit_receivers_on_status_message(&rs, &shared, IN_LENGTH, 2, 4096, 4096, 1 * MS), AA_RETRANSMIT_RECEIVERS_ADDED);
    /* the faster one reports again: the slower one's position still bounds what a NAK may ask */
    AA_CHECK_EQ(aa_retransmit_receivers_on_status_message(&rs, &shared, IN_LENGTH, 1, 12288, 4096, 2 * MS), AA_RETRANSMIT_RECEIVERS_REFRESHED);
    AA_CHECK_EQ(rs.count, 2);
    aa_retransmit_receiver_t *found = aa_retransmit_receivers_find(&rs, &shared, 3 * MS);
    AA_CHECK(NULL != found);
    AA_CHECK_EQ(found->receiver_id, 2);
    AA_CHECK_EQ(found->position, 4096);
    aa_retransmit_receivers_close(&rs);
}

int main(void)
{
    AA_RUN(should_know_receivers_by_address_until_they_fall_silent);
    AA_RUN(should_cap_the_table_and_make_room_from_silent_receivers);
    AA_RUN(should_give_each_receiver_its_window_per_interval);
    AA_RUN(should_bound_what_a_nak_storm_resends);
    AA_RUN(should_keep_receivers_of_one_address_apart);
    return 0;
}
