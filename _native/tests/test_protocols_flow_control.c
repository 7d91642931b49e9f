/* Flow control (reference 5): the unicast strategy driven by hand-built SM frames, the strategy
 * vtable, and the supplier table and selection rules. */
#include <string.h>

#include "aa_test.h"
#include "util/aa_registry.h"
#include "protocols/aa_flow_control.h"
#include "logbuffer/aa_logbuffer.h"
#include "util/aa_error.h"

#define TERM (16 * 1024 * 1024)
#define BITS 24

/* An SM laid out by hand from the reference 1.6 table (not with the encoder). Returns its length. */
static size_t sm(uint8_t *b, uint8_t flags, int32_t term_id, int32_t term_offset, int32_t window, const int64_t *tag)
{
    memset(b, 0, 64);
    size_t length = NULL == tag ? 36 : 44;
    test_put32(b + 0, (int32_t)length);
    b[4] = 0;                 /* version */
    b[5] = flags;
    b[6] = 0x03;              /* type SM, little-endian int16 */
    b[7] = 0x00;
    test_put32(b + 8, 77);          /* session_id */
    test_put32(b + 12, 1001);       /* stream_id */
    test_put32(b + 16, term_id);    /* consumption_term_id */
    test_put32(b + 20, term_offset);/* consumption_term_offset */
    test_put32(b + 24, window);     /* receiver_window */
    test_put64(b + 28, 0x5152535455565758LL); /* receiver_id, 4-byte aligned */
    if (NULL != tag)
    {
        test_put64(b + 36, *tag);
    }
    return length;
}

static aa_flow_control_strategy_t *unicast(void)
{
    aa_flow_control_strategy_params_t params;
    aa_flow_control_strategy_params_default(&params);
    params.term_length = TERM;
    params.initial_term_id = 1000;
    aa_flow_control_strategy_t *s = NULL;
    AA_CHECK_EQ(aa_unicast_flow_control_strategy_supplier(&s, &params), 0);
    AA_CHECK(NULL != s);
    return s;
}

static void should_set_limit_to_sm_position_plus_window(void)
{
    aa_flow_control_strategy_t *fc = unicast();
    AA_CHECK(0 == strcmp(fc->name, "unicast"));
    uint8_t b[64];
    int64_t now = 123;

    /* Before any SM the limit is the sender position (0); the first SM opens a window at the join. */
    size_t n = sm(b, 0, 1000, 0, 128 * 1024, NULL);
    int64_t lmt = fc->on_status_message(fc->state, b, n, 0, 1000, BITS, now);
    AA_CHECK_EQ(lmt, 128 * 1024);

    /* Consumption moves on: limit = position + window. */
    n = sm(b, 0, 1002, 4096, 128 * 1024, NULL);
    lmt = fc->on_status_message(fc->state, b, n, lmt, 1000, BITS, now);
    AA_CHECK_EQ(lmt, 2LL * TERM + 4096 + 128 * 1024);

    /* An older (reordered) SM or a smaller window never lowers the limit. */
    int64_t before = lmt;
    n = sm(b, 0, 1001, 0, 128 * 1024, NULL);
    AA_CHECK_EQ(fc->on_status_message(fc->state, b, n, lmt, 1000, BITS, now), before);
    n = sm(b, 0, 1002, 4096, 1024, NULL);
    AA_CHECK_EQ(fc->on_status_message(fc->state, b, n, lmt, 1000, BITS, now), before);

    /* Receiver group tag and EOS flag do not change the unicast arithmetic. */
    int64_t tag = 99;
    n = sm(b, 0x40, 1002, 8192, 128 * 1024, &tag);
    AA_CHECK_EQ(n, 44);
    AA_CHECK_EQ(fc->on_status_message(fc->state, b, n, lmt, 1000, BITS, now), 2LL * TERM + 8192 + 128 * 1024);

    fc->fini(fc);
}

static void should_handle_term_id_wrap_and_positions_before_the_initial_term(void)
{
    aa_flow_control_strategy_t *fc = unicast();
    uint8_t b[64];
    /* initial term INT32_MAX, SM in term INT32_MIN = term count 1. */
    size_t n = sm(b, 0, INT32_MIN, 32, 65536, NULL);
    AA_CHECK_EQ(fc->on_status_message(fc->state, b, n, 0, INT32_MAX, BITS, 0), (int64_t)TERM + 32 + 65536);

    /* A term before the initial term gives a negative position: the limit stays. */
    n = sm(b, 0, 999, 0, 65536, NULL);
    AA_CHECK_EQ(fc->on_status_message(fc->state, b, n, 4096, 1000, BITS, 0), 4096);
    fc->fini(fc);
}

static void should_ignore_malformed_status_messages(void)
{
    aa_flow_control_strategy_t *fc = unicast();
    uint8_t b[64];
    size_t n = sm(b, 0, 1005, 0, 65536, NULL);
    /* Truncated, wrong version, wrong type: limit unchanged. */
    AA_CHECK_EQ(fc->on_status_message(fc->state, b, n - 1, 4096, 1000, BITS, 0), 4096);
    b[4] = 1;
    AA_CHECK_EQ(fc->on_status_message(fc->state, b, n, 4096, 1000, BITS, 0), 4096);
    b[4] = 0;
    b[6] = 0x02;
    AA_CHECK_EQ(fc->on_status_message(fc->state, b, n, 4096, 1000, BITS, 0), 4096);
    /* frame_length larger than the datagram. */
    b[6] = 0x03;
    test_put32(b + 0, 44);
    AA_CHECK_EQ(fc->on_status_message(fc->state, b, n, 4096, 1000, BITS, 0), 4096);
    fc->fini(fc);
}

static void should_leave_limit_on_idle_setup_and_error(void)
{
    aa_flow_control_strategy_t *fc = unicast();
    uint8_t setup[40] = { 0x28, 0, 0, 0, 0, 0, 0x05, 0 };
    uint8_t err[40] = { 0x28, 0, 0, 0, 0, 0, 0x04, 0 };
    uint8_t b[64];
    size_t n = sm(b, 0x80, 0, 0, 0, NULL);

    AA_CHECK_EQ(fc->on_idle(fc->state, 5, 8192, 4096, false), 8192);
    AA_CHECK_EQ(fc->on_idle(fc->state, 5, 8192, 8192, true), 8192);
    AA_CHECK_EQ(fc->on_setup(fc->state, setup, sizeof(setup), 5, 8192, BITS, 4096), 8192);
    fc->on_error(fc->state, err, sizeof(err), 5);
    fc->on_trigger_send_setup(fc->state, b, n, 5);
    AA_CHECK_EQ(fc->on_idle(fc->state, 6, 8192, 4096, false), 8192);
    AA_CHECK(fc->has_required_receivers(fc->state));
    /* Retransmit estimate: min(128 KiB, term/2) x 16. */
    AA_CHECK_EQ(fc->max_retransmission_length(fc->state, TERM), 2 * 1024 * 1024);
    AA_CHECK_EQ(fc->max_retransmission_length(fc->state, 64 * 1024), 512 * 1024);
    fc->fini(fc);
}

static void should_load_suppliers_by_name_from_the_registry(void)
{
    aa_flow_control_strategy_choice_t choice;
    AA_CHECK_EQ(aa_flow_control_strategy_select(false, "unicast", NULL, &choice), 0);
    AA_CHECK(choice.supplier == aa_unicast_flow_control_strategy_supplier);
    AA_CHECK(0 == strcmp(choice.name, "unicast") && NULL == choice.options);
    AA_CHECK_EQ(aa_flow_control_strategy_select(false, "aa_unicast_flow_control_strategy_supplier", NULL, &choice), 0);
    AA_CHECK(choice.supplier == aa_unicast_flow_control_strategy_supplier);

    /* every strategy of the reference is registered */
    const char *reference[] = { "max", "min,t:2s", "tagged,g:1001/3" };
    for (size_t i = 0; i < sizeof(reference) / sizeof(reference[0]); i++)
    {
        AA_CHECK_EQ(aa_flow_control_strategy_select(false, reference[i], NULL, &choice), 0);
    }
    AA_CHECK_EQ(aa_flow_control_strategy_select(false, "preferred", NULL, &choice), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "channel parameter fc=preferred: unknown flow control 'preferred'"));
    AA_CHECK(NULL == strstr(aa_errmsg(), "not implemented"));
    AA_CHECK_EQ(aa_flow_control_strategy_select(false, "", NULL, &choice), -1);

    /* Build through the chosen supplier and drive it through the table. */
    aa_flow_control_strategy_params_t params;
    aa_flow_control_strategy_params_default(&params);
    AA_CHECK_EQ(params.receiver_timeout_ns, 5000000000LL);
    AA_CHECK_EQ(params.group_min_size, 0);
    AA_CHECK_EQ(params.group_tag, -1);
    AA_CHECK_EQ(aa_flow_control_strategy_select(false, NULL, NULL, &choice), 0);
    aa_flow_control_strategy_t *fc = NULL;
    AA_CHECK_EQ(aa_flow_control_strategy_create(&fc, &choice, &params), 0);
    uint8_t b[64];
    size_t n = sm(b, 0, 7, 64, 1024, NULL);
    AA_CHECK_EQ(fc->on_status_message(fc->state, b, n, 0, 7, 16, 0), 64 + 1024);
    fc->fini(fc);

    /* unicast applies no options, so it refuses them */
    AA_CHECK_EQ(aa_flow_control_strategy_select(false, "unicast,t:5s", NULL, &choice), 0);
    AA_CHECK(0 == strcmp(choice.options, "t:5s"));
    AA_CHECK_EQ(aa_flow_control_strategy_create(&fc, &choice, &params), -1);
    AA_CHECK(NULL == fc);
    AA_CHECK(NULL != strstr(aa_errmsg(), "fc=unicast takes no options, got 't:5s'"));
}

/* max (reference 5): the unicast limit rule (never lowered, the fastest receiver wins), retransmit
 * multiple 4, no options. */
static void should_pace_max_by_the_fastest_receiver(void)
{
    aa_flow_control_strategy_choice_t choice;
    aa_flow_control_strategy_params_t params;
    aa_flow_control_strategy_params_default(&params);
    AA_CHECK_EQ(aa_flow_control_strategy_select(true, "max", NULL, &choice), 0);
    aa_flow_control_strategy_t *fc = NULL;
    AA_CHECK_EQ(aa_flow_control_strategy_create(&fc, &choice, &params), 0);
    AA_CHECK(0 == strcmp(fc->name, "max"));
    uint8_t b[64];
    size_t n = sm(b, 0, 7, 4096, 1024, NULL);
    int64_t lmt = fc->on_status_message(fc->state, b, n, 0, 7, 16, 0);
    AA_CHECK_EQ(lmt, 4096 + 1024);
    n = sm(b, 0, 7, 64, 1024, NULL);      /* a slower receiver does not pull the limit back */
    AA_CHECK_EQ(fc->on_status_message(fc->state, b, n, lmt, 7, 16, 0), lmt);
    AA_CHECK_EQ(fc->on_idle(fc->state, 1000, lmt, 0, false), lmt);
    AA_CHECK(fc->has_required_receivers(fc->state));
    AA_CHECK_EQ(fc->max_retransmission_length(fc->state, 16 * 1024 * 1024), 128 * 1024 * 4);
    fc->fini(fc);

    AA_CHECK_EQ(aa_flow_control_strategy_select(true, "max,t:2s", NULL, &choice), 0);
    AA_CHECK_EQ(aa_flow_control_strategy_create(&fc, &choice, &params), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "fc=max takes no options, got 't:2s'"));
}

static void should_select_per_channel_and_default(void)
{
    aa_flow_control_strategy_choice_t choice;
    /* Without fc=: unicast channels use unicast, group channels the driver default (max). */
    AA_CHECK_EQ(aa_flow_control_strategy_select(false, NULL, "max", &choice), 0);
    AA_CHECK(choice.supplier == aa_unicast_flow_control_strategy_supplier);
    AA_CHECK_EQ(aa_flow_control_strategy_select(true, NULL, NULL, &choice), 0);
    AA_CHECK(choice.supplier == aa_max_flow_control_strategy_supplier);
    AA_CHECK_EQ(aa_flow_control_strategy_select(true, NULL, "nosuch", &choice), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "the driver's default flow control nosuch"));
    AA_CHECK_EQ(aa_flow_control_strategy_select(true, NULL, "unicast", &choice), 0);
    /* fc= is applied, not ignored, on every channel. */
    AA_CHECK_EQ(aa_flow_control_strategy_select(true, "unicast", "max", &choice), 0);
    AA_CHECK(choice.supplier == aa_unicast_flow_control_strategy_supplier);

    /* An alias brings its options; giving options of one's own as well is refused. */
    AA_CHECK_EQ(aa_registry_register_alias(AA_STRATEGY_KIND_FLOW_CONTROL, "uni-opts", "unicast", "t:1s", NULL), 0);
    AA_CHECK_EQ(aa_flow_control_strategy_select(false, "uni-opts", NULL, &choice), 0);
    AA_CHECK(0 == strcmp(choice.options, "t:1s") && 0 == strcmp(choice.name, "uni-opts"));
    AA_CHECK_EQ(aa_flow_control_strategy_select(false, "uni-opts,t:2s", NULL, &choice), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "alias of unicast with options 't:1s' already"));
}

static int custom_supplier_calls = 0;

static int custom_supplier(aa_flow_control_strategy_t **strategy, const aa_flow_control_strategy_params_t *params)
{
    custom_supplier_calls++;
    AA_CHECK(NULL != params->clientd && 42 == *(int *)params->clientd);
    aa_flow_control_strategy_params_t p = *params;
    p.fc_options = NULL;
    return aa_unicast_flow_control_strategy_supplier(strategy, &p);
}

static const aa_flow_control_strategy_table_t custom_table = { custom_supplier };

static void should_build_strategies_registered_at_run_time(void)
{
    static int clientd = 42;
    AA_CHECK_EQ(aa_registry_register(AA_STRATEGY_KIND_FLOW_CONTROL, "custom", &custom_table, &clientd, "test"), 0);
    aa_flow_control_strategy_choice_t choice;
    AA_CHECK_EQ(aa_flow_control_strategy_select(false, "custom,anything", NULL, &choice), 0);
    AA_CHECK(0 == strcmp(choice.options, "anything"));
    aa_flow_control_strategy_params_t params;
    aa_flow_control_strategy_params_default(&params);
    aa_flow_control_strategy_t *fc = NULL;
    AA_CHECK_EQ(aa_flow_control_strategy_create(&fc, &choice, &params), 0);
    AA_CHECK_EQ(custom_supplier_calls, 1);
    fc->fini(fc);
    AA_CHECK_EQ(aa_flow_control_strategy_select(false, "nope", NULL, &choice), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "registered: unicast, aa_unicast_flow_control_strategy_supplier, min, tagged, max, uni-opts, custom"));
}

int main(void)
{
    AA_RUN(should_set_limit_to_sm_position_plus_window);
    AA_RUN(should_handle_term_id_wrap_and_positions_before_the_initial_term);
    AA_RUN(should_ignore_malformed_status_messages);
    AA_RUN(should_leave_limit_on_idle_setup_and_error);
    AA_RUN(should_load_suppliers_by_name_from_the_registry);
    AA_RUN(should_select_per_channel_and_default);
    AA_RUN(should_pace_max_by_the_fastest_receiver);
    AA_RUN(should_build_strategies_registered_at_run_time);
    return 0;
}
