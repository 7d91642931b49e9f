/* Congestion control (reference 6): the static window, and cubic on a test clock (every call takes
 * the time): the initial window, the cut on loss with a forced SM, the growth curve and its cap, growth
 * at most once per RTT, TCP mode, RTT measurement and the counters; the strategies by name. */
#include <string.h>

#include "aa_test.h"
#include "protocols/aa_congestion_control.h"
#include "util/aa_error.h"

#define MTU 1408
#define US (1000LL)
#define MS (1000 * 1000LL)
#define S (1000 * 1000 * 1000LL)

static const aa_cubic_congestion_control_config_t plain = { false, false, 100 * US };

static int32_t rebuild_at(aa_cubic_congestion_control_t *cubic, int64_t now_ns, bool loss, bool *force_sm)
{
    aa_congestion_control_rebuild_t r = { .now_ns = now_ns, .loss_occurred = loss };
    return aa_cubic_congestion_control_on_track_rebuild(cubic, &r, force_sm);
}

static void should_start_at_ten_mtus_capped_by_the_static_window(void)
{
    aa_cubic_congestion_control_t cubic;
    volatile int64_t rtt = -1, wnd = -1;
    AA_CHECK_EQ(aa_cubic_congestion_control_init(&cubic, &plain, MTU, 128 * 1024, 5 * S, &rtt, &wnd), 0);
    AA_CHECK_EQ(cubic.max_cwnd, 93);            /* 131072 / 1408 */
    AA_CHECK_EQ(cubic.cwnd, 10);
    AA_CHECK_EQ(aa_cubic_congestion_control_window_length(&cubic), 10 * MTU);
    AA_CHECK_EQ(wnd, 10 * MTU);
    AA_CHECK_EQ(rtt, 0);

    AA_CHECK_EQ(aa_cubic_congestion_control_init(&cubic, &plain, MTU, 4096, 0, NULL, NULL), 0);
    AA_CHECK_EQ(cubic.max_cwnd, 2);
    AA_CHECK_EQ(aa_cubic_congestion_control_window_length(&cubic), 2 * MTU);

    AA_CHECK_EQ(aa_cubic_congestion_control_init(&cubic, &plain, MTU, 1024, 0, NULL, NULL), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "at least one MTU"));
    AA_CHECK(NULL != strstr(aa_errmsg(), "raise rcv-wnd"));
}

static void should_cut_the_window_on_loss_force_an_sm_and_regrow_along_the_cubic_curve(void)
{
    aa_cubic_congestion_control_t cubic;
    volatile int64_t wnd = 0;
    int64_t t0 = 5 * S;
    bool force = true;
    AA_CHECK_EQ(aa_cubic_congestion_control_init(&cubic, &plain, MTU, 128 * 1024, t0, NULL, &wnd), 0);

    /* Not before the first RTT (the initial 100 us) has passed. */
    AA_CHECK_EQ(rebuild_at(&cubic, t0 + 100 * US, false, &force), 10 * MTU);
    AA_CHECK(!force);
    /* w_max starts at max_cwnd (93), K = cbrt(93 x 0.2 / 0.4): 93 + (int)(0.4 (0.001 - K)^3) = 75. */
    AA_CHECK_EQ(rebuild_at(&cubic, t0 + 1 * MS, false, &force), 75 * MTU);
    AA_CHECK(!force);
    AA_CHECK_EQ(wnd, 75 * MTU);

    /* Loss: w_max = 75, cwnd = 75 x 0.8 = 60, an SM is forced. */
    int64_t loss = t0 + 2 * MS;
    AA_CHECK_EQ(rebuild_at(&cubic, loss, true, &force), 60 * MTU);
    AA_CHECK(force);
    AA_CHECK_EQ(cubic.w_max, 75);
    AA_CHECK_EQ(wnd, 60 * MTU);

    /* W(t) = 75 + (int)(0.4 (t - K)^3), K = cbrt(37.5) = 3.347 s. */
    AA_CHECK_EQ(rebuild_at(&cubic, loss + 1 * S, false, &force), 70 * MTU);
    AA_CHECK(!force);
    AA_CHECK_EQ(rebuild_at(&cubic, loss + 3347 * MS, false, &force), 75 * MTU);   /* back at w_max at K */
    AA_CHECK_EQ(rebuild_at(&cubic, loss + 5 * S, false, &force), 76 * MTU);       /* convex beyond it */
    AA_CHECK_EQ(rebuild_at(&cubic, loss + 10 * S, false, &force), 93 * MTU);      /* capped at max_cwnd */
    AA_CHECK_EQ(rebuild_at(&cubic, loss + 20 * S, false, &force), 93 * MTU);

    /* Repeated losses never take it below one MTU. */
    for (int i = 0; i < 30; i++)
    {
        rebuild_at(&cubic, loss + 21 * S + i, true, &force);
    }
    AA_CHECK_EQ(cubic.cwnd, 1);
    AA_CHECK_EQ(wnd, MTU);
    /* Right after the loss the curve (w_max 1) stays at 1 ... */
    AA_CHECK_EQ(rebuild_at(&cubic, loss + 21 * S + 1000, false, &force), MTU);
    /* ... and, between updates, a one-MTU window forces an SM whenever the consumer moved past the last SM. */
    aa_congestion_control_rebuild_t r = { .now_ns = loss + 21 * S + 1040, .new_consumption_position = 4096,
        .last_sm_position = 2048 };
    AA_CHECK_EQ(aa_cubic_congestion_control_on_track_rebuild(&cubic, &r, &force), MTU);
    AA_CHECK(force);
    r.new_consumption_position = 2048;
    aa_cubic_congestion_control_on_track_rebuild(&cubic, &r, &force);
    AA_CHECK(!force);
}

static void should_grow_at_most_once_per_measured_rtt(void)
{
    aa_cubic_congestion_control_t cubic;
    int64_t t0 = 5 * S;
    bool force;
    AA_CHECK_EQ(aa_cubic_congestion_control_init(&cubic, &plain, MTU, 128 * 1024, t0, NULL, NULL), 0);
    rebuild_at(&cubic, t0 + 1 * MS, false, &force);                 /* 75 */
    int64_t loss = t0 + 2 * MS;
    rebuild_at(&cubic, loss, true, &force);                         /* 60, w_max 75 */
    aa_cubic_congestion_control_on_rttm(&cubic, loss, 500 * MS);    /* RTT 500 ms from now on */
    AA_CHECK_EQ(rebuild_at(&cubic, loss + 1 * S, false, &force), 70 * MTU);
    /* The curve says 73 at 1.4 s, but less than an RTT passed since the last update. */
    AA_CHECK_EQ(rebuild_at(&cubic, loss + 1400 * MS, false, &force), 70 * MTU);
    AA_CHECK_EQ(rebuild_at(&cubic, loss + 1500 * MS, false, &force), 70 * MTU);
    AA_CHECK_EQ(rebuild_at(&cubic, loss + 1600 * MS, false, &force), 73 * MTU);
}

static void should_grow_like_tcp_below_w_max_in_tcp_mode(void)
{
    aa_cubic_congestion_control_config_t tcp = { false, true, 1 * MS };
    aa_cubic_congestion_control_t cubic, plain_cubic;
    int64_t t0 = 5 * S;
    bool force;
    AA_CHECK_EQ(aa_cubic_congestion_control_init(&cubic, &tcp, MTU, 128 * 1024, t0, NULL, NULL), 0);
    AA_CHECK_EQ(aa_cubic_congestion_control_init(&plain_cubic, &plain, MTU, 128 * 1024, t0, NULL, NULL), 0);
    rebuild_at(&cubic, t0 + 2 * MS, false, &force);
    rebuild_at(&plain_cubic, t0 + 2 * MS, false, &force);
    AA_CHECK_EQ(cubic.cwnd, 75);   /* the cubic curve is above the TCP line here */
    int64_t loss = t0 + 3 * MS;
    rebuild_at(&cubic, loss, true, &force);
    rebuild_at(&plain_cubic, loss, true, &force);
    /* 10 ms after the loss, RTT 1 ms: cubic 75 + (int)(0.4 (0.01 - 3.347)^3) = 61;
     * TCP 75 x 0.8 + 3 x 0.2 / 1.8 x 10 = 63.3. */
    AA_CHECK_EQ(rebuild_at(&plain_cubic, loss + 10 * MS, false, &force), 61 * MTU);
    AA_CHECK_EQ(rebuild_at(&cubic, loss + 10 * MS, false, &force), 63 * MTU);
    /* ... and never past max_cwnd. */
    AA_CHECK_EQ(rebuild_at(&cubic, loss + 100 * MS, false, &force), 93 * MTU);   /* TCP line 93.3 */
}

static void should_measure_rtt_every_four_rtts_and_publish_it(void)
{
    aa_cubic_congestion_control_config_t measuring = { true, false, 100 * US };
    aa_cubic_congestion_control_t cubic;
    volatile int64_t rtt = -1;
    int64_t t0 = 5 * S;
    AA_CHECK_EQ(aa_cubic_congestion_control_init(&cubic, &measuring, MTU, 128 * 1024, t0, &rtt, NULL), 0);
    AA_CHECK(aa_cubic_congestion_control_should_measure_rtt(&cubic, t0));   /* at once */
    aa_cubic_congestion_control_on_rttm_sent(&cubic, t0);
    /* Next after 4 x max(rtt, initial RTT) = 400 us. */
    AA_CHECK(!aa_cubic_congestion_control_should_measure_rtt(&cubic, t0 + 400 * US));
    AA_CHECK(aa_cubic_congestion_control_should_measure_rtt(&cubic, t0 + 400 * US + 1));
    /* The reply: rtt = now - echo - delta, computed by the image; here 3 ms. */
    aa_cubic_congestion_control_on_rttm(&cubic, t0 + 3 * MS, 3 * MS);
    AA_CHECK_EQ(rtt, 3 * MS);
    AA_CHECK_EQ(cubic.rtt_ns, 3 * MS);
    AA_CHECK(!aa_cubic_congestion_control_should_measure_rtt(&cubic, t0 + 15 * MS));
    AA_CHECK(aa_cubic_congestion_control_should_measure_rtt(&cubic, t0 + 15 * MS + 1));
    /* A nonsensical RTT (echo from the future) is ignored. */
    aa_cubic_congestion_control_on_rttm(&cubic, t0 + 16 * MS, -5);
    AA_CHECK_EQ(rtt, 3 * MS);
    /* Without measure-rtt: never. */
    AA_CHECK_EQ(aa_cubic_congestion_control_init(&cubic, &plain, MTU, 128 * 1024, t0, NULL, NULL), 0);
    AA_CHECK(!aa_cubic_congestion_control_should_measure_rtt(&cubic, t0 + 10 * S));
}

static void should_parse_cubic_options_and_refuse_malformed_ones(void)
{
    aa_cubic_congestion_control_config_t config = plain;
    AA_CHECK_EQ(aa_cubic_congestion_control_parse_options("measure-rtt:true,tcp-mode:true,initial-rtt:2ms", &config), 0);
    AA_CHECK(config.measure_rtt && config.tcp_mode);
    AA_CHECK_EQ(config.initial_rtt_ns, 2 * MS);
    AA_CHECK_EQ(aa_cubic_congestion_control_parse_options("initial-rtt:250us,measure-rtt:false", &config), 0);
    AA_CHECK_EQ(config.initial_rtt_ns, 250 * US);
    AA_CHECK(!config.measure_rtt);
    AA_CHECK_EQ(aa_cubic_congestion_control_parse_options("initial-rtt:1s", &config), 0);
    AA_CHECK_EQ(config.initial_rtt_ns, 1 * S);
    AA_CHECK_EQ(aa_cubic_congestion_control_parse_options("initial-rtt:1500", &config), 0);
    AA_CHECK_EQ(config.initial_rtt_ns, 1500);
    AA_CHECK_EQ(aa_cubic_congestion_control_parse_options("initial-rtt:7ns", &config), 0);
    AA_CHECK_EQ(config.initial_rtt_ns, 7);
    AA_CHECK_EQ(aa_cubic_congestion_control_parse_options(NULL, &config), 0);
    AA_CHECK_EQ(aa_cubic_congestion_control_parse_options("initial-rtt:99999999999999999999", &config), -1);
    AA_CHECK_EQ(aa_cubic_congestion_control_parse_options("initial-rtt:ms", &config), -1);

    AA_CHECK_EQ(aa_cubic_congestion_control_parse_options("measure-rtt:yes", &config), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "measure-rtt:yes: give measure-rtt:true or measure-rtt:false"));
    AA_CHECK_EQ(aa_cubic_congestion_control_parse_options("initial-rtt:0", &config), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "duration above 0"));
    AA_CHECK_EQ(aa_cubic_congestion_control_parse_options("initial-rtt:5h", &config), -1);
    AA_CHECK_EQ(aa_cubic_congestion_control_parse_options("rtt:1ms", &config), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "no option 'rtt'"));
    AA_CHECK(NULL != strstr(aa_errmsg(), "initial-rtt:<duration>"));
    AA_CHECK_EQ(aa_cubic_congestion_control_parse_options("tcp-mode", &config), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "not key:value"));
}

static void should_choose_strategies_by_name_and_drive_an_image_window(void)
{
    aa_congestion_control_choice_t choice;
    aa_congestion_control_t cc;
    volatile int64_t counters[2] = { -1, -1 };
    aa_congestion_control_params_t params =
    {
        .term_length = 16 * 1024 * 1024, .mtu_length = MTU, .initial_window_length = 128 * 1024,
        .cubic = { false, false, 100 * US }, .counters = { &counters[0], &counters[1] },
    };
    bool force;

    /* static: a fixed window, no counters, no RTT measurement. */
    AA_CHECK_EQ(aa_congestion_control_select(NULL, &choice), 0);
    AA_CHECK_EQ(aa_congestion_control_counters_count(&choice), 0);
    AA_CHECK_EQ(aa_congestion_control_create(&cc, &choice, &params, 0), 0);
    aa_congestion_control_rebuild_t r = { .now_ns = 10 * S, .loss_occurred = true };
    AA_CHECK_EQ(aa_congestion_control_on_track_rebuild(&cc, &r, &force), 128 * 1024);
    AA_CHECK(!force);
    AA_CHECK(!aa_congestion_control_should_measure_rtt(&cc, 10 * S));
    aa_congestion_control_delete(&cc);

    /* cubic with options from the channel over the driver's defaults. */
    AA_CHECK_EQ(aa_congestion_control_select("cubic,measure-rtt:true", &choice), 0);
    AA_CHECK_EQ(aa_congestion_control_counters_count(&choice), 2);
    AA_CHECK(0 == strcmp(aa_congestion_control_counter_label(&choice, 0), "rcv-cc-cubic-rtt"));
    AA_CHECK(0 == strcmp(aa_congestion_control_counter_label(&choice, 1), "rcv-cc-cubic-wnd"));
    int32_t window = 0;
    AA_CHECK_EQ(aa_congestion_control_initial_window_length(&choice, &params, &window), 0);
    AA_CHECK_EQ(window, 10 * MTU);
    AA_CHECK_EQ(aa_congestion_control_create(&cc, &choice, &params, 1 * S), 0);
    AA_CHECK_EQ(counters[0], 0);
    AA_CHECK_EQ(counters[1], 10 * MTU);
    AA_CHECK(aa_congestion_control_should_measure_rtt(&cc, 1 * S));
    aa_congestion_control_on_rttm_sent(&cc, 1 * S);
    aa_congestion_control_on_rttm(&cc, 1 * S + 250 * US, 250 * US);
    AA_CHECK_EQ(counters[0], 250 * US);
    r.now_ns = 1 * S + 1 * MS;
    r.loss_occurred = true;
    AA_CHECK_EQ(aa_congestion_control_on_track_rebuild(&cc, &r, &force), 8 * MTU);
    AA_CHECK(force);
    AA_CHECK_EQ(counters[1], 8 * MTU);
    aa_congestion_control_delete(&cc);

    /* Bad names and options. */
    AA_CHECK_EQ(aa_congestion_control_select("bbr", &choice), -1);
    AA_CHECK_EQ(aa_errcode(), AA_ERROR_CODE_INVALID_CHANNEL);
    AA_CHECK(NULL != strstr(aa_errmsg(), "cc=bbr"));
    AA_CHECK(NULL != strstr(aa_errmsg(), "unknown congestion control 'bbr'; registered: static, cubic"));
    AA_CHECK(NULL != strstr(aa_errmsg(), "name one of those"));
    AA_CHECK_EQ(aa_congestion_control_select("cubic,tcp-mode:maybe", &choice), 0);
    AA_CHECK_EQ(aa_congestion_control_initial_window_length(&choice, &params, &window), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "tcp-mode:true or tcp-mode:false"));
    AA_CHECK_EQ(aa_congestion_control_create(&cc, &choice, &params, 0), -1);
    aa_congestion_control_delete(&cc);
    AA_CHECK_EQ(aa_congestion_control_select("static,measure-rtt:true", &choice), 0);
    AA_CHECK_EQ(aa_congestion_control_initial_window_length(&choice, &params, &window), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "cc=static takes no options"));
}

int main(void)
{
    printf("test_protocols_congestion_control\n");
    AA_RUN(should_start_at_ten_mtus_capped_by_the_static_window);
    AA_RUN(should_cut_the_window_on_loss_force_an_sm_and_regrow_along_the_cubic_curve);
    AA_RUN(should_grow_at_most_once_per_measured_rtt);
    AA_RUN(should_grow_like_tcp_below_w_max_in_tcp_mode);
    AA_RUN(should_measure_rtt_every_four_rtts_and_publish_it);
    AA_RUN(should_parse_cubic_options_and_refuse_malformed_ones);
    AA_RUN(should_choose_strategies_by_name_and_drive_an_image_window);
    return 0;
}
