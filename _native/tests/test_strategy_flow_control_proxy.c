/* The flow control proxy (strategies written in Python) without Python: this test plays the sender
 * (calling the strategy's callbacks) and the worker (polling the host, answering, failing). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "aa_test.h"
#include "strategy/aa_flow_control_proxy.h"
#include "util/aa_error.h"
#include "util/aa_registry.h"
#include "protocols/aa_retransmit_handler.h"
#include "protocols/aa_udp_frames.h"

#define TERM (64 * 1024)
#define BITS 16
#define INITIAL_TERM 5

static char logged[4096];
static int logged_count;

static void record_error(void *clientd, int32_t code, const char *message)
{
    (void)clientd;
    (void)code;
    snprintf(logged, sizeof(logged), "%s", message);
    logged_count++;
}

static size_t encode_sm(uint8_t *buffer, uint8_t flags, int64_t position, int32_t window, int64_t receiver, const int64_t *tag)
{
    int32_t term_id = INITIAL_TERM + (int32_t)(position >> BITS);
    int32_t offset = (int32_t)(position & (TERM - 1));
    int32_t length = aa_udp_frame_encode_status_message(
        buffer, 64, flags, 77, 1001, term_id, offset, window, receiver, tag);
    AA_CHECK(length > 0);
    return (size_t)length;
}

static aa_flow_control_strategy_t *create(aa_flow_control_proxy_host_t *host, const char *fc)
{
    aa_flow_control_strategy_choice_t choice;
    AA_CHECK_EQ(aa_flow_control_strategy_select(false, fc, NULL, &choice), 0);
    aa_flow_control_strategy_params_t params;
    aa_flow_control_strategy_params_default(&params);
    params.registration_id = 42;
    params.stream_id = 1001;
    params.initial_term_id = INITIAL_TERM;
    params.term_length = TERM;
    params.proxy_host = host;
    aa_flow_control_strategy_t *strategy = NULL;
    if (aa_flow_control_strategy_create(&strategy, &choice, &params) < 0)
    {
        return NULL;
    }
    return strategy;
}

/* Sends one SM through the strategy as the sender does (source first). */
static int64_t status_message(
    aa_flow_control_strategy_t *s, int64_t position, int32_t window, int64_t receiver, const int64_t *tag, int64_t snd_lmt,
    int64_t now_ns)
{
    uint8_t frame[64];
    size_t length = encode_sm(frame, 0, position, window, receiver, tag);
    struct sockaddr_storage source = test_ipv4_address("127.0.0.1", 40123);
    s->on_status_message_source(s->state, &source, sizeof(struct sockaddr_in));
    return s->on_status_message(s->state, frame, length, snd_lmt, INITIAL_TERM, BITS, now_ns);
}

static aa_flow_control_proxy_host_t host;
static aa_flow_control_proxy_event_t events[600];

static void should_register_and_refuse_without_a_worker_or_with_bad_options(void)
{
    AA_CHECK_EQ(aa_flow_control_proxy_register("pyproxy", 16,
        AA_FLOW_CONTROL_PROXY_OPTION_GROUP | AA_FLOW_CONTROL_PROXY_OPTION_TIMEOUT, "a test proxy"), 0);
    AA_CHECK_EQ(aa_flow_control_proxy_register("pytagged", 16,
        AA_FLOW_CONTROL_PROXY_OPTION_GROUP | AA_FLOW_CONTROL_PROXY_OPTION_TIMEOUT |
        AA_FLOW_CONTROL_PROXY_OPTION_GROUP_TAG_REQUIRED, "needs a tag"), 0);
    AA_CHECK_EQ(aa_flow_control_proxy_register("pycount", 16,
        AA_FLOW_CONTROL_PROXY_OPTION_GROUP | AA_FLOW_CONTROL_PROXY_OPTION_TIMEOUT |
        AA_FLOW_CONTROL_PROXY_OPTION_TRACKS_RECEIVERS, "reports its receivers"), 0);
    AA_CHECK_EQ(aa_flow_control_proxy_register("pyproxy", 16, 0, "again"), -1);  /* names are never replaced */
    AA_CHECK_EQ(aa_flow_control_proxy_register("pyzero", 0, 0, "bad multiple"), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "retransmit multiple"));

    AA_CHECK(NULL == create(&host, "pyproxy"));  /* no worker attached yet */
    AA_CHECK(NULL != strstr(aa_errmsg(), "no Python worker serves this driver"));
    aa_flow_control_strategy_t *probe = create(NULL, "pyproxy,t:1s");  /* the channel checks' probe */
    AA_CHECK(NULL != probe);
    AA_CHECK_EQ(status_message(probe, 4096, 1000, 1, NULL, 7, 0), 7);
    probe->fini(probe);
    AA_CHECK(NULL == create(NULL, "pyproxy,x:1"));
    aa_flow_control_proxy_host_attach(&host, true);

    static const struct { const char *fc; const char *error; } refused[] =
    {
        { "pyproxy,x:1", "'x:1' is not an option of flow control 'pyproxy'" },
        { "pyproxy,g:12/abc", "malformed group option 'g:12/abc'" },
        { "pyproxy,g:zz", "malformed group option 'g:zz'" },
        { "pyproxy,t:soon", "malformed receiver timeout 't:soon'" },
        { "pyproxy,t:1s,t:2s", "a second receiver timeout" },
        { "pytagged,t:1s", "needs a group tag" },
    };
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
    {
        AA_CHECK(NULL == create(&host, refused[i].fc));
        AA_CHECK(NULL != strstr(aa_errmsg(), refused[i].error));
    }
    AA_CHECK_EQ(aa_flow_control_proxy_host_poll(&host, events, 600), 0);  /* nothing was created */
}

static void should_queue_events_with_their_fields_and_answer_from_the_worker(void)
{
    aa_flow_control_strategy_t *s = create(&host, "pyproxy,g:1001/2,t:2s");
    AA_CHECK(NULL != s);
    AA_CHECK_EQ(s->max_retransmission_length(s->state, TERM), aa_retransmit_handler_max_retransmission_length(TERM, 16));
    AA_CHECK_EQ(aa_flow_control_proxy_host_wait(&host, 1000), 1);  /* the new instance is news */

    /* before any answer: the limit stays where it is, not connected */
    int64_t tag = 1001;
    AA_CHECK_EQ(status_message(s, 70000, 4096, 9, &tag, 65536, 1000), 65536);
    AA_CHECK(!s->has_required_receivers(s->state));
    AA_CHECK_EQ(s->on_idle(s->state, 2000, 65536, 65536, false), 65536);

    int n = aa_flow_control_proxy_host_poll(&host, events, 600);
    AA_CHECK_EQ(n, 3);
    AA_CHECK_EQ(events[0].type, AA_FLOW_CONTROL_PROXY_EVENT_CREATE);
    int64_t id = events[0].instance_id;
    aa_flow_control_proxy_info_t info;
    AA_CHECK_EQ(aa_flow_control_proxy_host_describe(&host, id, &info), 0);
    AA_CHECK_EQ(info.registration_id, 42);
    AA_CHECK_EQ(info.stream_id, 1001);
    AA_CHECK_EQ(info.group_tag, 1001);
    AA_CHECK_EQ(info.group_min_size, 2);
    AA_CHECK_EQ(info.receiver_timeout_ns, 2000000000LL);
    AA_CHECK(0 == strcmp(info.name, "pyproxy"));
    AA_CHECK(0 == strcmp(info.options, "g:1001/2,t:2s"));

    AA_CHECK_EQ(events[1].type, AA_FLOW_CONTROL_PROXY_EVENT_STATUS_MESSAGE);
    AA_CHECK_EQ(events[1].instance_id, id);
    AA_CHECK_EQ(events[1].receiver_id, 9);
    AA_CHECK_EQ(events[1].position, 70000);
    AA_CHECK_EQ(events[1].window, 4096);
    AA_CHECK_EQ(events[1].has_group_tag, 1);
    AA_CHECK_EQ(events[1].group_tag, 1001);
    AA_CHECK_EQ(events[1].sender_limit, 65536);
    AA_CHECK_EQ(events[1].now_ns, 1000);
    AA_CHECK(0 == strcmp(events[1].source, "127.0.0.1:40123"));
    AA_CHECK_EQ(events[2].type, AA_FLOW_CONTROL_PROXY_EVENT_IDLE);
    AA_CHECK_EQ(events[2].position, 65536);

    /* the worker answers; the sender uses it on every callback from then on */
    AA_CHECK_EQ(aa_flow_control_proxy_host_answer(&host, id, 74096, true, -1), 0);
    AA_CHECK(s->has_required_receivers(s->state));
    AA_CHECK_EQ(s->on_idle(s->state, 3000, 65536, 65536, false), 74096);
    AA_CHECK_EQ(status_message(s, 71000, 4096, 10, NULL, 74096, 4000), 74096);
    uint8_t setup[64];
    int32_t setup_length = aa_udp_frame_encode_setup(setup, sizeof(setup), 0, 0, 77, 1001, INITIAL_TERM, INITIAL_TERM,
        TERM, 1408, 0);
    AA_CHECK_EQ(s->on_setup(s->state, setup, (size_t)setup_length, 5000, 1, BITS, 2), 74096);
    uint8_t err[128];
    int32_t err_length = aa_udp_frame_encode_error(err, sizeof(err), 77, 1001, 10, NULL, 13, "rejected", 8);
    s->on_error(s->state, err, (size_t)err_length, 6000);

    n = aa_flow_control_proxy_host_poll(&host, events, 600);
    AA_CHECK_EQ(n, 3);  /* idle ticks at most every 10 ms: none of them */
    AA_CHECK_EQ(events[0].type, AA_FLOW_CONTROL_PROXY_EVENT_STATUS_MESSAGE);
    AA_CHECK_EQ(events[0].has_group_tag, 0);
    AA_CHECK_EQ(events[1].type, AA_FLOW_CONTROL_PROXY_EVENT_SETUP);
    AA_CHECK_EQ(events[1].position, 2);
    AA_CHECK_EQ(events[2].type, AA_FLOW_CONTROL_PROXY_EVENT_ERROR);
    AA_CHECK_EQ(events[2].receiver_id, 10);
    AA_CHECK_EQ(events[2].window, 13);
    AA_CHECK(0 == strcmp(events[2].source, ""));
    s->on_idle(s->state, 2000 + AA_FLOW_CONTROL_PROXY_IDLE_INTERVAL_NS, 1, 1, true);
    AA_CHECK_EQ(aa_flow_control_proxy_host_poll(&host, events, 600), 1);
    AA_CHECK_EQ(events[0].type, AA_FLOW_CONTROL_PROXY_EVENT_IDLE);
    AA_CHECK_EQ(events[0].flags, 1);
    AA_CHECK_EQ(aa_flow_control_proxy_host_wait(&host, 1000000), 0);  /* nothing waiting: times out */

    s->fini(s);
    n = aa_flow_control_proxy_host_poll(&host, events, 600);
    AA_CHECK_EQ(n, 1);
    AA_CHECK_EQ(events[0].type, AA_FLOW_CONTROL_PROXY_EVENT_CLOSE);
    AA_CHECK_EQ(events[0].instance_id, id);
    AA_CHECK_EQ(aa_flow_control_proxy_host_answer(&host, id, 1, true, -1), -1);
}

static void should_coalesce_status_messages_per_receiver_when_the_ring_is_full(void)
{
    aa_flow_control_strategy_t *s = create(&host, "pyproxy");
    AA_CHECK(NULL != s);
    for (int i = 0; i < AA_FLOW_CONTROL_PROXY_RING_CAPACITY - 1; i++)  /* + CREATE = a full ring for the worker */
    {
        status_message(s, 4096 + i, 4096, 1000 + i, NULL, 0, i);
    }
    status_message(s, 4096, 4096, 1, NULL, 0, 0);  /* the ring's last slot */
    /* full: these wait in the pending table, the later SM of a receiver replacing the earlier */
    status_message(s, 5000, 4096, 7, NULL, 0, 0);
    status_message(s, 6000, 4096, 8, NULL, 0, 0);
    status_message(s, 7000, 4096, 7, NULL, 0, 0);
    status_message(s, 8000, 4096, 7, NULL, 0, 0);
    for (int i = 0; i < AA_FLOW_CONTROL_PROXY_PENDING_CAPACITY; i++)  /* 30 more fit, 2 are dropped */
    {
        status_message(s, 9000, 4096, 5000 + i, NULL, 0, 0);
    }
    int n = aa_flow_control_proxy_host_poll(&host, events, 600);
    AA_CHECK_EQ(n, 1 + AA_FLOW_CONTROL_PROXY_RING_CAPACITY);
    int64_t id = events[0].instance_id;
    aa_flow_control_proxy_info_t info;
    AA_CHECK_EQ(aa_flow_control_proxy_host_describe(&host, id, &info), 0);
    AA_CHECK_EQ(info.events_coalesced, 2);
    AA_CHECK_EQ(info.events_dropped, 2);
    /* the next callback moves what was pending, in order */
    s->on_idle(s->state, 0, 0, 0, false);
    n = aa_flow_control_proxy_host_poll(&host, events, 600);
    AA_CHECK_EQ(n, AA_FLOW_CONTROL_PROXY_PENDING_CAPACITY + 1);  /* the pending, then the idle tick */
    AA_CHECK_EQ(events[0].receiver_id, 7);
    AA_CHECK_EQ(events[0].position, 8000);
    AA_CHECK_EQ(events[1].receiver_id, 8);
    AA_CHECK_EQ(events[2].receiver_id, 5000);
    AA_CHECK_EQ(events[n - 1].type, AA_FLOW_CONTROL_PROXY_EVENT_IDLE);
    s->fini(s);
    AA_CHECK_EQ(aa_flow_control_proxy_host_poll(&host, events, 600), 1);
}

static volatile int sender_stop;

/* As the sender: SMs, then an idle tick every duty cycle (which moves what is pending). */
static void *sender_thread(void *arg)
{
    aa_flow_control_strategy_t *s = arg;
    for (int i = 0; i < 20000; i++)
    {
        status_message(s, 4096 + i, 4096, 1, NULL, 0, i);
    }
    while (!__atomic_load_n(&sender_stop, __ATOMIC_ACQUIRE))
    {
        s->on_idle(s->state, 20000, 0, 0, false);
    }
    return NULL;
}

static void should_hand_events_across_threads_in_order(void)
{
    aa_flow_control_strategy_t *s = create(&host, "pyproxy");
    pthread_t thread;
    AA_CHECK_EQ(pthread_create(&thread, NULL, sender_thread, s), 0);
    int64_t last = -1;
    int64_t received = 0;
    while (last < 4096 + 19999)
    {
        aa_flow_control_proxy_host_wait(&host, 10 * 1000 * 1000);
        int n = aa_flow_control_proxy_host_poll(&host, events, 600);
        for (int i = 0; i < n; i++)
        {
            if (AA_FLOW_CONTROL_PROXY_EVENT_STATUS_MESSAGE == events[i].type)
            {
                AA_CHECK(events[i].position > last);  /* coalescing keeps the latest, in order */
                last = events[i].position;
                received++;
            }
        }
    }
    __atomic_store_n(&sender_stop, 1, __ATOMIC_RELEASE);
    pthread_join(thread, NULL);
    AA_CHECK(received > 0);
    s->fini(s);
    AA_CHECK_EQ(aa_flow_control_proxy_host_poll(&host, events, 600), 1);
}

static void should_replace_a_failed_strategy_with_min_and_log_it(void)
{
    aa_flow_control_strategy_t *s = create(&host, "pycount,g:/2,t:500ms");
    AA_CHECK(s->tracks_receivers);
    volatile int64_t fc_receivers = -7;
    s->receivers_counter = &fc_receivers;  /* as the conductor does for strategies that track receivers */
    AA_CHECK_EQ(aa_flow_control_proxy_host_poll(&host, events, 600), 1);
    int64_t id = events[0].instance_id;
    AA_CHECK_EQ(aa_flow_control_proxy_host_answer(&host, id, 9999, true, 3), 0);
    AA_CHECK(s->has_required_receivers(s->state));
    AA_CHECK_EQ(fc_receivers, 3);
    AA_CHECK_EQ(aa_flow_control_proxy_host_answer(&host, id, 9999, true, -1), 0);  /* no count: left as it is */
    AA_CHECK_EQ(fc_receivers, 3);

    AA_CHECK_EQ(aa_flow_control_proxy_host_fail(&host, id, "ValueError: boom"), 0);
    AA_CHECK_EQ(logged_count, 1);
    AA_CHECK(NULL != strstr(logged, "flow control 'pycount' of publication 42 (stream 1001) failed: ValueError: boom"));
    AA_CHECK(NULL != strstr(logged, "now uses the native 'min' flow control with g:/2,t:500000000ns"));
    /* min with a group of 2: not connected with one receiver, the limit held; then min of both */
    AA_CHECK(!s->has_required_receivers(s->state));
    AA_CHECK_EQ(status_message(s, 4096, 1000, 1, NULL, 100, 0), 100);
    AA_CHECK_EQ(status_message(s, 8192, 1000, 2, NULL, 100, 0), 5096);
    AA_CHECK(s->has_required_receivers(s->state));
    AA_CHECK_EQ(fc_receivers, 2);  /* min counts into the same counter */
    AA_CHECK_EQ(aa_flow_control_proxy_host_poll(&host, events, 600), 0);  /* nothing is queued any more */
    AA_CHECK_EQ(aa_flow_control_proxy_host_fail(&host, id, "again"), 0);  /* replaced once */
    AA_CHECK_EQ(logged_count, 1);
    s->fini(s);
    AA_CHECK_EQ(aa_flow_control_proxy_host_poll(&host, events, 600), 1);
}

int main(void)
{
    AA_CHECK_EQ(aa_flow_control_proxy_host_init(&host, record_error, NULL), 0);
    AA_RUN(should_register_and_refuse_without_a_worker_or_with_bad_options);
    AA_RUN(should_queue_events_with_their_fields_and_answer_from_the_worker);
    AA_RUN(should_coalesce_status_messages_per_receiver_when_the_ring_is_full);
    AA_RUN(should_hand_events_across_threads_in_order);
    AA_RUN(should_replace_a_failed_strategy_with_min_and_log_it);
    aa_flow_control_proxy_host_close(&host);
    return 0;
}
