/* Flow control (reference 5): the min and tagged strategies driven with SM, ERR and SETUP frames laid
 * out by hand from the reference tables, and a test clock (now_ns is an argument of every callback). */
#include <string.h>

#include "aa_test.h"
#include "util/aa_error.h"
#include "util/aa_registry.h"
#include "protocols/aa_flow_control.h"

#define TERM (64 * 1024)
#define BITS 16
#define INITIAL 5
#define WINDOW (8 * 1024)
#define MS (1000 * 1000LL)

/* An SM of `length` bytes (36, 44, or a malformed extra length) reporting stream position `position`;
 * the tag (if any) fills bytes 36..43. */
static size_t sm_frame(
    uint8_t *b, size_t length, uint8_t flags, int64_t receiver_id, int64_t position, int32_t window, int64_t tag)
{
    memset(b, 0, 64);
    test_put32(b + 0, (int32_t)length);
    b[4] = 0;
    b[5] = flags;
    b[6] = 0x03;
    test_put32(b + 8, 77);
    test_put32(b + 12, 1001);
    test_put32(b + 16, INITIAL + (int32_t)(position >> BITS));
    test_put32(b + 20, (int32_t)(position & (TERM - 1)));
    test_put32(b + 24, window);
    test_put64(b + 28, receiver_id);
    if (length >= 44)
    {
        test_put64(b + 36, tag);
    }
    return length;
}

typedef struct
{
    aa_flow_control_strategy_t *fc;
    volatile int64_t receivers;
    int64_t lmt;
}
fixture_t;

static void create(fixture_t *f, const char *name, const char *options, int64_t default_tag, int32_t default_min_size)
{
    aa_flow_control_strategy_choice_t choice;
    char spec[128];
    snprintf(spec, sizeof(spec), "%s%s%s", name, NULL != options ? "," : "", NULL != options ? options : "");
    AA_CHECK_EQ(aa_flow_control_strategy_select(true, spec, NULL, &choice), 0);
    aa_flow_control_strategy_params_t params;
    aa_flow_control_strategy_params_default(&params);
    params.term_length = TERM;
    params.initial_term_id = INITIAL;
    params.group_tag = default_tag;
    params.group_min_size = default_min_size;
    f->fc = NULL;
    if (aa_flow_control_strategy_create(&f->fc, &choice, &params) < 0)
    {
        fprintf(stderr, "%s\n", aa_errmsg());
        AA_CHECK(false);
    }
    AA_CHECK(NULL != f->fc && f->fc->tracks_receivers);
    AA_CHECK(0 == strcmp(f->fc->name, name));
    f->receivers = -1;
    f->fc->receivers_counter = &f->receivers;
    f->lmt = 0;
}

/* Feeds an SM; returns and keeps the new limit. */
static int64_t on_sm(
    fixture_t *f, size_t length, uint8_t flags, int64_t receiver_id, int64_t position, int32_t window, int64_t tag,
    int64_t now)
{
    uint8_t b[64];
    size_t n = sm_frame(b, length, flags, receiver_id, position, window, tag);
    f->lmt = f->fc->on_status_message(f->fc->state, b, n, f->lmt, INITIAL, BITS, now);
    return f->lmt;
}

static int64_t on_idle(fixture_t *f, int64_t now)
{
    f->lmt = f->fc->on_idle(f->fc->state, now, f->lmt, 0, false);
    return f->lmt;
}

static void on_err(fixture_t *f, int64_t receiver_id, int64_t now)
{
    uint8_t b[64];
    memset(b, 0, sizeof(b));
    test_put32(b + 0, 40 + 4);
    b[6] = 0x04;
    test_put32(b + 8, 77);
    test_put32(b + 12, 1001);
    test_put64(b + 16, receiver_id);
    test_put32(b + 32, 13);          /* IMAGE_REJECTED */
    test_put32(b + 36, 4);
    memcpy(b + 40, "gone", 4);
    f->fc->on_error(f->fc->state, b, 44, now);
}

static int64_t on_setup(fixture_t *f, int64_t now)
{
    uint8_t b[40];
    memset(b, 0, sizeof(b));
    test_put32(b + 0, 40);
    b[6] = 0x05;
    f->lmt = f->fc->on_setup(f->fc->state, b, sizeof(b), now, f->lmt, BITS, 0);
    return f->lmt;
}

static void trigger_send_setup(fixture_t *f, size_t length, int64_t receiver_id, int64_t tag, int64_t now)
{
    uint8_t b[64];
    size_t n = sm_frame(b, length, 0x80, receiver_id, 0, 0, tag);
    test_put32(b + 16, 0);   /* SEND_SETUP SMs carry term id, offset and window 0 */
    f->fc->on_trigger_send_setup(f->fc->state, b, n, now);
}

static void should_track_the_slowest_receiver(void)
{
    fixture_t f;
    create(&f, "min", NULL, -1, 0);
    AA_CHECK(f.fc->has_required_receivers(f.fc->state));
    AA_CHECK_EQ(f.fc->max_retransmission_length(f.fc->state, TERM), 16 * (TERM / 2));

    /* first receiver: limit = its position + window */
    AA_CHECK_EQ(on_sm(&f, 36, 0, 1, 4096, WINDOW, 0, 0), 4096 + WINDOW);
    AA_CHECK_EQ(f.receivers, 1);
    /* a slower one within a window: tracked, and an SM never lowers the limit */
    AA_CHECK_EQ(on_sm(&f, 36, 0, 2, 1024, WINDOW, 0, 1), 4096 + WINDOW);
    AA_CHECK_EQ(f.receivers, 2);
    /* the fast one runs ahead: the slow one holds the limit */
    AA_CHECK_EQ(on_sm(&f, 36, 0, 1, 32768, WINDOW, 0, 2), 4096 + WINDOW);
    AA_CHECK_EQ(on_sm(&f, 36, 0, 2, 8192, WINDOW, 0, 3), 8192 + WINDOW);
    /* the same receiver again is one receiver */
    AA_CHECK_EQ(on_sm(&f, 36, 0, 2, 8192, WINDOW, 0, 4), 8192 + WINDOW);
    AA_CHECK_EQ(f.receivers, 2);
    /* idle: the minimum, which may lower the limit (a smaller window) */
    AA_CHECK_EQ(on_sm(&f, 36, 0, 2, 8192, 1024, 0, 5), 8192 + WINDOW);
    AA_CHECK_EQ(on_idle(&f, 6), 8192 + 1024);
    /* positions across terms: term id INITIAL + 2 */
    AA_CHECK_EQ(on_sm(&f, 36, 0, 2, 2LL * TERM + 64, WINDOW, 0, 7), 32768 + WINDOW);
    AA_CHECK_EQ(on_sm(&f, 36, 0, 1, 2LL * TERM + 4096, WINDOW, 0, 8), 2LL * TERM + 64 + WINDOW);
    f.fc->fini(f.fc);
}

static void should_not_admit_a_newcomer_more_than_a_window_behind(void)
{
    fixture_t f;
    create(&f, "min", NULL, -1, 0);
    int64_t base = 10LL * TERM;
    AA_CHECK_EQ(on_sm(&f, 36, 0, 1, base, WINDOW, 0, 0), base + WINDOW);
    /* pos + window = base - 1 < min - window = base: not admitted, limit unchanged */
    AA_CHECK_EQ(on_sm(&f, 36, 0, 2, base - WINDOW - 1, WINDOW, 0, 1), base + WINDOW);
    AA_CHECK_EQ(f.receivers, 1);
    on_idle(&f, 2);
    AA_CHECK_EQ(f.lmt, base + WINDOW);
    /* pos + window = min - window exactly: admitted, and it paces the sender from the next idle */
    AA_CHECK_EQ(on_sm(&f, 36, 0, 3, base - WINDOW, WINDOW, 0, 3), base + WINDOW);
    AA_CHECK_EQ(f.receivers, 2);
    AA_CHECK_EQ(on_idle(&f, 4), base);
    f.fc->fini(f.fc);
}

static void should_drop_receivers_after_the_receiver_timeout(void)
{
    fixture_t f;
    create(&f, "min", "t:500ms", -1, 0);
    on_sm(&f, 36, 0, 1, 0, WINDOW, 0, 0);
    on_sm(&f, 36, 0, 2, 0, WINDOW, 0, 0);
    AA_CHECK_EQ(f.receivers, 2);
    /* receiver 1 goes on, 2 falls silent */
    AA_CHECK_EQ(on_sm(&f, 36, 0, 1, 16384, WINDOW, 0, 400 * MS), WINDOW);
    AA_CHECK_EQ(on_idle(&f, 500 * MS), WINDOW);               /* exactly the timeout: still tracked */
    AA_CHECK_EQ(f.receivers, 2);
    AA_CHECK_EQ(on_idle(&f, 500 * MS + 1), 16384 + WINDOW);   /* past it: dropped */
    AA_CHECK_EQ(f.receivers, 1);
    /* the default timeout (params: 5 s) when no t: is given */
    fixture_t g;
    create(&g, "min", NULL, -1, 0);
    on_sm(&g, 36, 0, 1, 0, WINDOW, 0, 0);
    on_idle(&g, 5000 * MS);
    AA_CHECK_EQ(g.receivers, 1);
    on_idle(&g, 5000 * MS + 1);
    AA_CHECK_EQ(g.receivers, 0);
    /* nobody left: idle keeps the limit */
    AA_CHECK_EQ(on_idle(&g, 6000 * MS), WINDOW);
    g.fc->fini(g.fc);
    f.fc->fini(f.fc);
}

static void should_drop_many_receivers_at_once_and_keep_the_live_ones(void)
{
    fixture_t f;
    create(&f, "min", "t:1s", -1, 0);
    for (int64_t id = 1; id <= 12; id++)   /* beyond the initial table of 8: it grows */
    {
        on_sm(&f, 36, 0, id, 1000 * id, WINDOW, 0, 0);
    }
    AA_CHECK_EQ(f.receivers, 12);
    /* the even ones go on; the odd ones (the slowest among them, receiver 1) fall silent */
    for (int64_t id = 2; id <= 12; id += 2)
    {
        on_sm(&f, 36, 0, id, 1000 * id + 100, WINDOW, 0, 900 * MS);
    }
    AA_CHECK_EQ(on_idle(&f, 1500 * MS), 2100 + WINDOW);
    AA_CHECK_EQ(f.receivers, 6);
    /* every survivor is still tracked: each one's next SM updates it and the minimum follows */
    on_sm(&f, 36, 0, 2, 20000, WINDOW, 0, 1600 * MS);
    AA_CHECK_EQ(on_idle(&f, 1700 * MS), 4100 + WINDOW);
    AA_CHECK_EQ(f.receivers, 6);
    f.fc->fini(f.fc);
}

static void should_drop_receivers_that_end_their_stream_or_send_an_error(void)
{
    fixture_t f;
    create(&f, "min", NULL, -1, 0);
    on_sm(&f, 36, 0, 1, 0, WINDOW, 0, 0);
    on_sm(&f, 36, 0, 2, 1024, WINDOW, 0, 0);
    on_sm(&f, 36, 0, 3, 2048, WINDOW, 0, 0);
    AA_CHECK_EQ(f.receivers, 3);
    /* receiver 1 says EOS: gone at the next idle */
    on_sm(&f, 36, 0x40, 1, 0, WINDOW, 0, 1);
    AA_CHECK_EQ(f.receivers, 3);
    AA_CHECK_EQ(on_idle(&f, 2), 1024 + WINDOW);
    AA_CHECK_EQ(f.receivers, 2);
    /* an ERR with receiver 2's id marks it; an ERR for nobody tracked does nothing */
    on_err(&f, 99, 3);
    AA_CHECK_EQ(on_idle(&f, 4), 1024 + WINDOW);
    AA_CHECK_EQ(f.receivers, 2);
    on_err(&f, 2, 5);
    AA_CHECK_EQ(on_idle(&f, 6), 2048 + WINDOW);
    AA_CHECK_EQ(f.receivers, 1);
    /* a newcomer whose first SM has EOS is not admitted */
    on_sm(&f, 36, 0x40, 4, 4096, WINDOW, 0, 7);
    AA_CHECK_EQ(f.receivers, 1);
    f.fc->fini(f.fc);
}

static void should_wait_for_the_group_min_size(void)
{
    fixture_t f;
    create(&f, "min", "g:/2,t:1s", -1, 0);
    AA_CHECK(!f.fc->has_required_receivers(f.fc->state));
    f.lmt = 100;
    /* one receiver: the limit stays, on SMs and on idle */
    AA_CHECK_EQ(on_sm(&f, 36, 0, 1, 0, WINDOW, 0, 0), 100);
    AA_CHECK_EQ(on_idle(&f, 1), 100);
    AA_CHECK(!f.fc->has_required_receivers(f.fc->state));
    /* two: the minimum */
    AA_CHECK_EQ(on_sm(&f, 36, 0, 2, 512, WINDOW, 0, 2), WINDOW);
    AA_CHECK(f.fc->has_required_receivers(f.fc->state));
    AA_CHECK_EQ(on_idle(&f, 3), WINDOW);
    /* one times out: not enough again, the limit stays where it was */
    on_sm(&f, 36, 0, 2, 4096, WINDOW, 0, 900 * MS);
    AA_CHECK_EQ(on_idle(&f, 1001 * MS), WINDOW);
    AA_CHECK_EQ(f.receivers, 1);
    AA_CHECK(!f.fc->has_required_receivers(f.fc->state));
    AA_CHECK_EQ(on_sm(&f, 36, 0, 2, 8192, WINDOW, 0, 1002 * MS), WINDOW);
    f.fc->fini(f.fc);

    /* the driver's default min size applies without g: */
    create(&f, "min", NULL, -1, 3);
    on_sm(&f, 36, 0, 1, 0, WINDOW, 0, 0);
    on_sm(&f, 36, 0, 2, 0, WINDOW, 0, 0);
    AA_CHECK(!f.fc->has_required_receivers(f.fc->state));
    on_sm(&f, 36, 0, 3, 0, WINDOW, 0, 0);
    AA_CHECK(f.fc->has_required_receivers(f.fc->state));
    f.fc->fini(f.fc);
}

static void should_track_only_receivers_with_the_group_tag(void)
{
    fixture_t f;
    create(&f, "tagged", "g:1001/1", -1, 0);
    f.lmt = 100;
    /* no tag (36 bytes), another tag, a malformed extra length carrying the right bytes: not tracked */
    AA_CHECK_EQ(on_sm(&f, 36, 0, 1, 0, WINDOW, 0, 0), 100);
    AA_CHECK_EQ(on_sm(&f, 44, 0, 2, 0, WINDOW, 1002, 0), 100);
    AA_CHECK_EQ(on_sm(&f, 48, 0, 3, 0, WINDOW, 1001, 0), 100);
    AA_CHECK_EQ(on_sm(&f, 52, 0, 4, 0, WINDOW, 1001, 0), 100);
    AA_CHECK_EQ(f.receivers, -1);   /* never written: nothing changed */
    AA_CHECK(!f.fc->has_required_receivers(f.fc->state));
    /* a 44-byte SM with the tag */
    AA_CHECK_EQ(on_sm(&f, 44, 0, 5, 4096, WINDOW, 1001, 0), 4096 + WINDOW);
    AA_CHECK_EQ(f.receivers, 1);
    AA_CHECK(f.fc->has_required_receivers(f.fc->state));
    /* untagged receivers far behind do not hold it back */
    AA_CHECK_EQ(on_sm(&f, 36, 0, 1, 0, 1024, 0, 1), 4096 + WINDOW);
    AA_CHECK_EQ(on_sm(&f, 44, 0, 5, 16384, WINDOW, 1001, 2), 16384 + WINDOW);
    AA_CHECK_EQ(on_idle(&f, 3), 16384 + WINDOW);
    f.fc->fini(f.fc);

    /* without g: the driver's default tag (AERON_FLOW_CONTROL_GROUP_TAG) is the group's */
    create(&f, "tagged", NULL, 42, 0);
    on_sm(&f, 44, 0, 1, 0, WINDOW, 1001, 0);
    AA_CHECK_EQ(f.receivers, -1);
    on_sm(&f, 44, 0, 1, 0, WINDOW, 42, 0);
    AA_CHECK_EQ(f.receivers, 1);
    f.fc->fini(f.fc);

    /* min treats a malformed extra length as no tag, and tracks it like any SM */
    create(&f, "min", NULL, -1, 0);
    on_sm(&f, 40, 0, 1, 0, WINDOW, 0, 0);
    on_sm(&f, 44, 0, 2, 0, WINDOW, 7, 0);
    AA_CHECK_EQ(f.receivers, 2);
    f.fc->fini(f.fc);
}

static void should_follow_an_untracked_sm_while_nobody_is_tracked(void)
{
    /* reference: zero receivers (possible only with min size 0) -> max(limit, position + window) */
    fixture_t f;
    create(&f, "tagged", "g:1001", -1, 0);
    AA_CHECK_EQ(on_sm(&f, 36, 0, 1, 4096, WINDOW, 0, 0), 4096 + WINDOW);
    AA_CHECK_EQ(f.receivers, -1);
    AA_CHECK_EQ(on_sm(&f, 36, 0, 1, 0, WINDOW, 0, 0), 4096 + WINDOW);
    AA_CHECK_EQ(on_idle(&f, 1), 4096 + WINDOW);
    /* once a tagged receiver is tracked, untagged SMs no longer move it */
    on_sm(&f, 44, 0, 2, 4096, WINDOW, 1001, 2);
    AA_CHECK_EQ(on_sm(&f, 36, 0, 1, 60000, WINDOW, 0, 3), 4096 + WINDOW);
    f.fc->fini(f.fc);
}

static void should_hold_the_limit_after_an_elicited_setup(void)
{
    fixture_t f;
    create(&f, "tagged", "g:7,t:1s", -1, 0);
    on_sm(&f, 44, 0, 1, 0, WINDOW, 7, 0);
    AA_CHECK_EQ(f.lmt, WINDOW);

    /* a SEND_SETUP SM without the tag, or before anyone is tracked, sets no cap */
    trigger_send_setup(&f, 36, 2, 0, 10);
    AA_CHECK_EQ(on_setup(&f, 11), WINDOW);
    AA_CHECK_EQ(on_sm(&f, 44, 0, 1, 1024, WINDOW, 7, 12), 1024 + WINDOW);

    /* a tagged newcomer asks for SETUP: the limit at that SETUP is held */
    trigger_send_setup(&f, 44, 2, 7, 100 * MS);
    AA_CHECK_EQ(f.lmt, 1024 + WINDOW);
    AA_CHECK_EQ(on_setup(&f, 150 * MS), 1024 + WINDOW);
    AA_CHECK_EQ(on_sm(&f, 44, 0, 1, 30000, WINDOW, 7, 200 * MS), 1024 + WINDOW);
    AA_CHECK_EQ(on_idle(&f, 300 * MS), 1024 + WINDOW);
    /* a receiver more than a window behind is not added, so the cap stays */
    AA_CHECK_EQ(on_sm(&f, 44, 0, 3, 0, 512, 7, 310 * MS), 1024 + WINDOW);
    /* the newcomer is added: the cap goes at once */
    AA_CHECK_EQ(on_sm(&f, 44, 0, 2, 30000, WINDOW, 7, 400 * MS), 30000 + WINDOW);
    AA_CHECK_EQ(f.receivers, 2);
    f.fc->fini(f.fc);

    /* without a newcomer the cap lasts one receiver timeout from the SETUP */
    create(&f, "min", "t:1s", -1, 0);
    on_sm(&f, 36, 0, 1, 0, WINDOW, 0, 0);
    trigger_send_setup(&f, 36, 2, 0, 0);
    AA_CHECK_EQ(on_setup(&f, 100 * MS), WINDOW);
    on_sm(&f, 36, 0, 1, 4096, WINDOW, 0, 500 * MS);
    AA_CHECK_EQ(on_idle(&f, 1099 * MS), WINDOW);
    AA_CHECK_EQ(on_idle(&f, 1100 * MS), 4096 + WINDOW);
    /* the SETUP the cap waits for is the next one only */
    AA_CHECK_EQ(on_setup(&f, 1200 * MS), 4096 + WINDOW);
    on_sm(&f, 36, 0, 1, 8192, WINDOW, 0, 1300 * MS);
    AA_CHECK_EQ(on_idle(&f, 1300 * MS), 8192 + WINDOW);
    f.fc->fini(f.fc);
}

static void expect_refused(const char *spec, const char *text)
{
    aa_flow_control_strategy_choice_t choice;
    aa_flow_control_strategy_params_t params;
    aa_flow_control_strategy_params_default(&params);
    aa_flow_control_strategy_t *fc = NULL;
    AA_CHECK_EQ(aa_flow_control_strategy_select(true, spec, NULL, &choice), 0);
    AA_CHECK_EQ(aa_flow_control_strategy_create(&fc, &choice, &params), -1);
    AA_CHECK(NULL == fc);
    AA_CHECK_EQ(aa_errcode(), AA_ERROR_CODE_INVALID_CHANNEL);
    if (NULL == strstr(aa_errmsg(), text))
    {
        fprintf(stderr, "fc=%s: expected '%s' in: %s\n", spec, text, aa_errmsg());
        AA_CHECK(false);
    }
}

static void should_parse_the_group_options(void)
{
    aa_flow_control_group_options_t o;
    AA_CHECK_EQ(aa_flow_control_parse_group_options("tagged", "g:1001/3,t:2s", &o), 0);
    AA_CHECK(o.has_group && o.has_group_tag && o.has_group_min_size && o.has_receiver_timeout);
    AA_CHECK_EQ(o.group_tag, 1001);
    AA_CHECK_EQ(o.group_min_size, 3);
    AA_CHECK_EQ(o.receiver_timeout_ns, 2000 * MS);
    AA_CHECK_EQ(aa_flow_control_parse_group_options("min", "g:/3", &o), 0);
    AA_CHECK(o.has_group && !o.has_group_tag && o.has_group_min_size && !o.has_receiver_timeout);
    AA_CHECK_EQ(o.group_min_size, 3);
    AA_CHECK_EQ(aa_flow_control_parse_group_options("tagged", "g:-5", &o), 0);
    AA_CHECK(o.has_group_tag && !o.has_group_min_size);
    AA_CHECK_EQ(o.group_tag, -5);
    AA_CHECK_EQ(aa_flow_control_parse_group_options("min", "t:500ms", &o), 0);
    AA_CHECK_EQ(o.receiver_timeout_ns, 500 * MS);
    AA_CHECK_EQ(aa_flow_control_parse_group_options("min", NULL, &o), 0);
    AA_CHECK(!o.has_group && !o.has_receiver_timeout);

    expect_refused("min,g:", "malformed group option 'g:'");
    expect_refused("tagged,g:abc/2", "malformed group option 'g:abc/2'");
    expect_refused("tagged,g:1/x", "malformed group option 'g:1/x'");
    expect_refused("tagged,g:1/-1", "malformed group option 'g:1/-1'");
    expect_refused("min,g:/", "write g:<group tag> with a 64-bit integer tag");
    expect_refused("tagged,g:1,g:2", "a second group option 'g:2'");
    expect_refused("min,t:", "malformed receiver timeout 't:'");
    expect_refused("min,t:0", "malformed receiver timeout 't:0'");
    expect_refused("min,t:5parsecs", "give one receiver timeout above 0 with a unit, e.g. t:500ms");
    expect_refused("min,t:1s,t:2s", "a second receiver timeout");
    expect_refused("min,x:1", "unknown option 'x:1'; min takes g:<group tag>[/<group min size>] and t:<receiver timeout>");
    expect_refused("min,g:1001", "min tracks every receiver and does not filter by group tag");
    expect_refused("min,g:1001/2", "use fc=tagged,g:1001 to track the receivers with that tag");
    expect_refused("unicast,g:/2", "fc=unicast takes no options");

    /* errors carry the strategy's name when built through the registry */
    aa_flow_control_strategy_choice_t choice;
    aa_flow_control_strategy_params_t params;
    aa_flow_control_strategy_params_default(&params);
    aa_flow_control_strategy_t *fc = NULL;
    AA_CHECK_EQ(aa_flow_control_strategy_select(true, "tagged,g:x", NULL, &choice), 0);
    AA_CHECK_EQ(aa_flow_control_strategy_create(&fc, &choice, &params), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "flow control 'tagged'"));
    /* driver defaults out of range are the configuration's error */
    params.receiver_timeout_ns = 0;
    AA_CHECK_EQ(aa_flow_control_strategy_select(true, "min", NULL, &choice), 0);
    AA_CHECK_EQ(aa_flow_control_strategy_create(&fc, &choice, &params), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "AERON_FLOW_CONTROL_RECEIVER_TIMEOUT"));
    /* the unicast strategy tracks nobody */
    AA_CHECK_EQ(aa_flow_control_strategy_select(false, NULL, NULL, &choice), 0);
    aa_flow_control_strategy_params_default(&params);
    AA_CHECK_EQ(aa_flow_control_strategy_create(&fc, &choice, &params), 0);
    AA_CHECK(!fc->tracks_receivers);
    fc->fini(fc);
}

int main(void)
{
    AA_RUN(should_track_the_slowest_receiver);
    AA_RUN(should_not_admit_a_newcomer_more_than_a_window_behind);
    AA_RUN(should_drop_receivers_after_the_receiver_timeout);
    AA_RUN(should_drop_many_receivers_at_once_and_keep_the_live_ones);
    AA_RUN(should_drop_receivers_that_end_their_stream_or_send_an_error);
    AA_RUN(should_wait_for_the_group_min_size);
    AA_RUN(should_track_only_receivers_with_the_group_tag);
    AA_RUN(should_follow_an_untracked_sm_while_nobody_is_tracked);
    AA_RUN(should_hold_the_limit_after_an_elicited_setup);
    AA_RUN(should_parse_the_group_options);
    return 0;
}
