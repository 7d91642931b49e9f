/* The loss generator: rule parsing, frame types, drop/dup/reorder at the configured rates,
 * determinism for a seed, on receive and on send, over an in-memory link and over loopback
 * sockets; and its driver options. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aa_test.h"
#include "media/aa_loss_generator.h"
#include "protocols/aa_udp_protocol.h"
#include "driver/aa_driver_context.h"
#include "util/aa_error.h"

#define FRAMES 20000
#define FRAME_LENGTH 32
#define BATCH 16

/* ---- an in-memory link standing in for the sockets ---- */

typedef struct fake_link_stct
{
    uint8_t (*incoming)[FRAME_LENGTH];
    size_t incoming_count;
    size_t incoming_head;
    uint32_t *sent_ids;
    size_t sent_count;
    size_t accept_per_call;         /* 0: everything; otherwise a send takes at most this many */
}
fake_link_t;

static uint32_t frame_id(const uint8_t *frame)
{
    uint32_t id;
    memcpy(&id, frame + 8, sizeof(id));
    return id;
}

static void make_frame(uint8_t *frame, int16_t type, uint32_t id)
{
    aa_frame_header_t header = { FRAME_LENGTH, 0, 0, type };
    memset(frame, 0, FRAME_LENGTH);
    memcpy(frame, &header, sizeof(header));
    memcpy(frame + 8, &id, sizeof(id));
}

static int fake_init(const aa_udp_transport_bindings_t *self, aa_udp_transport_t *t, const aa_udp_transport_params_t *p)
{
    (void)self;
    (void)t;
    (void)p;
    return 0;
}

static int fake_close(const aa_udp_transport_bindings_t *self, aa_udp_transport_t *t)
{
    (void)self;
    (void)t;
    return 0;
}

static int fake_send(const aa_udp_transport_bindings_t *self, aa_udp_transport_t *t, aa_udp_datagram_t *d, size_t n)
{
    (void)t;
    fake_link_t *link = self->state;
    size_t accepted = 0 != link->accept_per_call && n > link->accept_per_call ? link->accept_per_call : n;
    for (size_t i = 0; i < accepted; i++)
    {
        link->sent_ids[link->sent_count++] = frame_id(d[i].buffer);
    }
    return (int)accepted;
}

static int fake_recv(
    const aa_udp_transport_bindings_t *self, aa_udp_transport_t *t, aa_udp_datagram_t *d, size_t n,
    aa_udp_transport_recv_handler_t handler, void *clientd)
{
    fake_link_t *link = self->state;
    size_t count = 0;
    while (count < n && link->incoming_head < link->incoming_count)
    {
        memcpy(d[count].buffer, link->incoming[link->incoming_head++], FRAME_LENGTH);
        d[count].length = FRAME_LENGTH;
        handler(clientd, t, &d[count]);
        count++;
    }
    return (int)count;
}

static fake_link_t *fake_link_new(size_t frames, int16_t (*type_of)(uint32_t id))
{
    fake_link_t *link = calloc(1, sizeof(fake_link_t));
    AA_CHECK(NULL != link);
    link->incoming = calloc(frames, FRAME_LENGTH);
    link->sent_ids = calloc(frames * 3 + 16, sizeof(uint32_t));
    AA_CHECK(NULL != link->incoming && NULL != link->sent_ids);
    for (size_t i = 0; i < frames; i++)
    {
        make_frame(link->incoming[i], type_of((uint32_t)i), (uint32_t)i);
    }
    link->incoming_count = frames;
    return link;
}

static void fake_link_delete(fake_link_t *link)
{
    free(link->incoming);
    free(link->sent_ids);
    free(link);
}

static int16_t all_data(uint32_t id)
{
    (void)id;
    return AA_HDR_TYPE_DATA;
}

static int16_t alternate_data_and_sm(uint32_t id)
{
    return 0 == id % 2 ? AA_HDR_TYPE_DATA : AA_HDR_TYPE_SM;
}

/* ---- running traffic through a loss generator ---- */

typedef struct delivered_stct
{
    uint32_t *ids;
    size_t count;
}
delivered_t;

static void on_delivered(void *clientd, aa_udp_transport_t *transport, aa_udp_datagram_t *datagram)
{
    (void)transport;
    delivered_t *delivered = clientd;
    delivered->ids[delivered->count++] = frame_id(datagram->buffer);
}

static aa_loss_generator_params_t rules(const char *spec)
{
    aa_loss_generator_params_t params;
    if (aa_loss_generator_params_parse(&params, spec) < 0)
    {
        fprintf(stderr, "rejected %s: %s\n", spec, aa_errmsg());
        AA_CHECK(0);
    }
    return params;
}

/* Receives every frame of a fresh link through receive rules; returns what was delivered. */
static delivered_t run_receive(
    const char *spec, uint64_t seed, size_t frames, int16_t (*type_of)(uint32_t), aa_loss_generator_stats_t *stats)
{
    fake_link_t *link = fake_link_new(frames, type_of);
    aa_udp_transport_bindings_t inner = { "fake", fake_init, fake_close, fake_send, fake_recv, link };
    aa_loss_generator_params_t receive = rules(spec);
    aa_udp_transport_bindings_t *bindings = NULL;
    AA_CHECK_EQ(aa_loss_generator_bindings_create(&bindings, &inner, &receive, NULL, seed), 0);
    aa_udp_transport_t transport;
    aa_udp_transport_params_t params;
    memset(&params, 0, sizeof(params));
    AA_CHECK_EQ(aa_udp_transport_init(&transport, bindings, &params), 0);

    delivered_t delivered = { calloc(frames * 2 + 1, sizeof(uint32_t)), 0 };
    static uint8_t buffers[BATCH][AA_UDP_MAX_DATAGRAM_LENGTH];
    aa_udp_datagram_t datagrams[BATCH];
    for (size_t i = 0; i < BATCH; i++)
    {
        memset(&datagrams[i], 0, sizeof(datagrams[i]));
        datagrams[i].buffer = buffers[i];
        datagrams[i].capacity = sizeof(buffers[i]);
    }
    while (link->incoming_head < link->incoming_count)
    {
        AA_CHECK(aa_udp_transport_recv(&transport, datagrams, BATCH, on_delivered, &delivered) >= 0);
    }
    /* one more poll with nothing new releases a datagram held for reordering */
    AA_CHECK(aa_udp_transport_recv(&transport, datagrams, BATCH, on_delivered, &delivered) >= 0);
    *stats = *aa_loss_generator_receive_stats(bindings);
    AA_CHECK(NULL == aa_loss_generator_send_stats(&inner));
    AA_CHECK_EQ(aa_udp_transport_close(&transport), 0);
    aa_loss_generator_bindings_delete(bindings);
    fake_link_delete(link);
    return delivered;
}

/* run_receive for a test that needs only how many frames came through. */
static size_t run_receive_count(
    const char *spec, uint64_t seed, size_t frames, int16_t (*type_of)(uint32_t), aa_loss_generator_stats_t *stats)
{
    delivered_t delivered = run_receive(spec, seed, frames, type_of, stats);
    free(delivered.ids);
    return delivered.count;
}

/* The count of an event of probability rate in n trials lies within 5 standard deviations. */
static void check_rate(uint64_t observed, size_t n, double rate)
{
    double expected = rate * (double)n;
    double tolerance = 5.0 * sqrt((double)n * rate * (1.0 - rate)) + 1.0;
    if (fabs((double)observed - expected) > tolerance)
    {
        fprintf(stderr, "observed %llu of %zu, expected %.0f +- %.0f\n", (unsigned long long)observed, n, expected, tolerance);
        AA_CHECK(0);
    }
}

static void should_parse_rules(void)
{
    aa_loss_generator_params_t params = rules("drop:data:0.1, dup:any:5% ,reorder:sm:0.5");
    AA_CHECK_EQ(params.rules_count, 3);
    AA_CHECK_EQ(params.rules[0].action, AA_LOSS_ACTION_DROP);
    AA_CHECK_EQ(params.rules[0].frame_type, AA_LOSS_FRAME_DATA);
    AA_CHECK(fabs(params.rules[0].rate - 0.1) < 1e-12);
    AA_CHECK_EQ(params.rules[1].action, AA_LOSS_ACTION_DUPLICATE);
    AA_CHECK_EQ(params.rules[1].frame_type, AA_LOSS_FRAME_ANY);
    AA_CHECK(fabs(params.rules[1].rate - 0.05) < 1e-12);
    AA_CHECK_EQ(params.rules[2].action, AA_LOSS_ACTION_REORDER);
    AA_CHECK_EQ(params.rules[2].frame_type, AA_LOSS_FRAME_SM);
    AA_CHECK(0 == strcmp(params.spec, "drop:data:0.1, dup:any:5% ,reorder:sm:0.5"));
    AA_CHECK(aa_loss_generator_params_is_enabled(&params));
    params = rules("duplicate:setup:0,drop:nak:0.5");
    params = rules("");
    AA_CHECK(!aa_loss_generator_params_is_enabled(&params));
    params = rules("   ");
    AA_CHECK(!aa_loss_generator_params_is_enabled(&params));
    AA_CHECK(!aa_loss_generator_params_is_enabled(NULL));
    params = rules("drop:rttm:1,drop:err:1,drop:setup:1,drop:nak:1,drop:sm:1,drop:data:1");
    AA_CHECK_EQ(params.rules_count, 6);

    const char *bad[][2] =
    {
        { "lose:data:0.1", "unknown action" },
        { "drop:dta:0.1", "unknown frame type" },
        { "drop:data", "three parts" },
        { "drop:data:0.1:x", "three parts" },
        { "drop:data:1.5", "from 0 to 1" },
        { "drop:data:-0.1", "from 0 to 1" },
        { "drop:data:150%", "from 0 to 1" },
        { "drop:data:often", "from 0 to 1" },
        { "drop:data:0.1,", "empty rule" },
        { "drop:data:0.7,dup:any:0.4", "add up to 1.1, more than 1" },
        { NULL, NULL }
    };
    for (int i = 0; NULL != bad[i][0]; i++)
    {
        AA_CHECK_EQ(aa_loss_generator_params_parse(&params, bad[i][0]), -1);
        AA_CHECK_EQ(aa_errcode(), AA_ERROR_CODE_CONFIGURATION);
        if (NULL == strstr(aa_errmsg(), bad[i][1]))
        {
            fprintf(stderr, "message for %s lacks '%s': %s\n", bad[i][0], bad[i][1], aa_errmsg());
            AA_CHECK(0);
        }
    }
    AA_CHECK_EQ(aa_loss_generator_params_parse(&params, "drop:data:x"), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "(e.g. drop:data:0.1,dup:any:1%)"));
}

static void should_classify_frames_by_first_header(void)
{
    uint8_t frame[FRAME_LENGTH];
    const int16_t types[] = { AA_HDR_TYPE_PAD, AA_HDR_TYPE_DATA, AA_HDR_TYPE_SETUP, AA_HDR_TYPE_SM, AA_HDR_TYPE_NAK,
        AA_HDR_TYPE_RTTM, AA_HDR_TYPE_ERR, AA_HDR_TYPE_RES, AA_HDR_TYPE_EXT };
    const aa_loss_frame_type_t expected[] = { AA_LOSS_FRAME_DATA, AA_LOSS_FRAME_DATA, AA_LOSS_FRAME_SETUP,
        AA_LOSS_FRAME_SM, AA_LOSS_FRAME_NAK, AA_LOSS_FRAME_RTTM, AA_LOSS_FRAME_ERR, AA_LOSS_FRAME_OTHER,
        AA_LOSS_FRAME_OTHER };
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
    {
        make_frame(frame, types[i], 0);
        AA_CHECK_EQ(aa_loss_generator_frame_type(frame, sizeof(frame)), expected[i]);
    }
    AA_CHECK_EQ(aa_loss_generator_frame_type(frame, 7), AA_LOSS_FRAME_OTHER);
}

static void should_drop_at_the_configured_rate_deterministically(void)
{
    aa_loss_generator_stats_t stats, again_stats, other_stats;
    delivered_t first = run_receive("drop:data:0.1", 42, FRAMES, all_data, &stats);
    AA_CHECK_EQ(stats.datagrams, FRAMES);
    AA_CHECK_EQ(first.count, FRAMES - stats.dropped);
    check_rate(stats.dropped, FRAMES, 0.1);
    AA_CHECK_EQ(stats.duplicated + stats.reordered, 0);
    for (size_t i = 1; i < first.count; i++)
    {
        AA_CHECK(first.ids[i - 1] < first.ids[i]);
    }

    delivered_t again = run_receive("drop:data:0.1", 42, FRAMES, all_data, &again_stats);
    AA_CHECK_EQ(again.count, first.count);
    AA_CHECK(0 == memcmp(first.ids, again.ids, first.count * sizeof(uint32_t)));

    delivered_t other = run_receive("drop:data:0.1", 43, FRAMES, all_data, &other_stats);
    check_rate(other_stats.dropped, FRAMES, 0.1);
    AA_CHECK(other.count != first.count || 0 != memcmp(first.ids, other.ids, first.count * sizeof(uint32_t)));
    printf("(seed 42: %llu dropped, seed 43: %llu) ", (unsigned long long)stats.dropped,
        (unsigned long long)other_stats.dropped);
    free(first.ids);
    free(again.ids);
    free(other.ids);
}

/* How many of the delivered frames are DATA (alternate_data_and_sm: the even ids). */
static size_t count_data(const delivered_t *delivered)
{
    size_t data = 0;
    for (size_t i = 0; i < delivered->count; i++)
    {
        data += 0 == delivered->ids[i] % 2;
    }
    return data;
}

static void should_apply_rules_by_frame_type(void)
{
    aa_loss_generator_stats_t stats;
    delivered_t delivered = run_receive("drop:sm:1", 1, 1000, alternate_data_and_sm, &stats);
    AA_CHECK_EQ(delivered.count, 500);
    AA_CHECK_EQ(stats.dropped, 500);
    for (size_t i = 0; i < delivered.count; i++)
    {
        AA_CHECK_EQ(delivered.ids[i] % 2, 0);
    }
    free(delivered.ids);

    delivered = run_receive("drop:any:0.3", 5, FRAMES, alternate_data_and_sm, &stats);
    size_t data = count_data(&delivered);
    check_rate(FRAMES / 2 - data, FRAMES / 2, 0.3);
    check_rate(FRAMES / 2 - (delivered.count - data), FRAMES / 2, 0.3);
    free(delivered.ids);

    /* rules for one type and for any add up */
    delivered = run_receive("drop:data:0.2,drop:any:0.1", 9, FRAMES, alternate_data_and_sm, &stats);
    data = count_data(&delivered);
    check_rate(FRAMES / 2 - data, FRAMES / 2, 0.3);
    check_rate(FRAMES / 2 - (delivered.count - data), FRAMES / 2, 0.1);
    free(delivered.ids);
}

static void should_duplicate_next_to_the_original(void)
{
    aa_loss_generator_stats_t stats;
    delivered_t delivered = run_receive("dup:data:0.05", 7, FRAMES, all_data, &stats);
    check_rate(stats.duplicated, FRAMES, 0.05);
    AA_CHECK_EQ(delivered.count, FRAMES + stats.duplicated);
    uint32_t expected = 0;
    uint64_t repeats = 0;
    for (size_t i = 0; i < delivered.count; i++)
    {
        if (i > 0 && delivered.ids[i] == delivered.ids[i - 1])
        {
            repeats++;
            continue;
        }
        AA_CHECK_EQ(delivered.ids[i], expected);
        expected++;
    }
    AA_CHECK_EQ(repeats, stats.duplicated);
    AA_CHECK_EQ(expected, FRAMES);
    free(delivered.ids);
}

/* Every frame once; a frame comes after a larger one only when it was held back, and then it
 * comes right after the frame that passed next (after the frames held before it in the same run):
 * it is larger than every frame that passed before that one. Returns how many came late. */
static uint64_t check_reordered(const uint32_t *ids, size_t count, size_t frames)
{
    uint8_t *seen = calloc(frames, 1);
    int64_t highest = -1;
    int64_t previous_highest = -1;
    uint64_t late = 0;
    for (size_t i = 0; i < count; i++)
    {
        AA_CHECK(ids[i] < frames && 0 == seen[ids[i]]);
        seen[ids[i]] = 1;
        if ((int64_t)ids[i] < highest)
        {
            late++;
            AA_CHECK((int64_t)ids[i] > previous_highest);
            AA_CHECK((int64_t)ids[i - 1] == highest || ids[i - 1] < ids[i]);
        }
        else
        {
            previous_highest = highest;
            highest = ids[i];
        }
    }
    free(seen);
    return late;
}

static void should_reorder_with_the_next_datagram(void)
{
    aa_loss_generator_stats_t stats;
    delivered_t delivered = run_receive("reorder:data:0.05", 11, FRAMES, all_data, &stats);
    AA_CHECK_EQ(delivered.count, FRAMES);
    uint64_t late = check_reordered(delivered.ids, delivered.count, FRAMES);
    /* (frames held at the very end come out at the final poll, after nothing, so in order) */
    AA_CHECK(late > 0 && late <= stats.reordered && late + 2 >= stats.reordered);
    check_rate(stats.reordered, FRAMES, 0.05);
    free(delivered.ids);

    delivered = run_receive("reorder:any:0.5,drop:data:0.2", 12, FRAMES, all_data, &stats);
    AA_CHECK_EQ(delivered.count, FRAMES - stats.dropped);
    check_rate(stats.reordered, FRAMES, 0.5);
    free(delivered.ids);
}

static void should_release_a_held_datagram_on_the_next_poll(void)
{
    aa_loss_generator_stats_t stats;
    AA_CHECK_EQ(run_receive_count("reorder:data:1", 3, 1, all_data, &stats), 1);
    AA_CHECK_EQ(stats.reordered, 1);
}

/* Sends frames [0, frames) in calls of up to BATCH through send rules; returns what the link got. */
static fake_link_t *run_send(const char *spec, uint64_t seed, size_t frames, size_t accept_per_call, aa_loss_generator_stats_t *stats)
{
    fake_link_t *link = fake_link_new(frames, all_data);
    link->accept_per_call = accept_per_call;
    aa_udp_transport_bindings_t inner = { "fake", fake_init, fake_close, fake_send, fake_recv, link };
    aa_loss_generator_params_t send = rules(spec);
    aa_udp_transport_bindings_t *bindings = NULL;
    AA_CHECK_EQ(aa_loss_generator_bindings_create(&bindings, &inner, NULL, &send, seed), 0);
    aa_udp_transport_t transport;
    aa_udp_transport_params_t params;
    memset(&params, 0, sizeof(params));
    AA_CHECK_EQ(aa_udp_transport_init(&transport, bindings, &params), 0);

    aa_udp_datagram_t datagrams[BATCH];
    size_t next = 0;
    while (next < frames)
    {
        size_t n = frames - next < BATCH ? frames - next : BATCH;
        for (size_t i = 0; i < n; i++)
        {
            memset(&datagrams[i], 0, sizeof(datagrams[i]));
            datagrams[i].buffer = link->incoming[next + i];
            datagrams[i].length = FRAME_LENGTH;
        }
        int rc = aa_udp_transport_send(&transport, datagrams, n);
        AA_CHECK(rc >= 0 && (size_t)rc <= n);
        next += (size_t)rc;
    }
    /* a last send (a heartbeat, say) releases a datagram still held */
    uint8_t heartbeat[FRAME_LENGTH];
    make_frame(heartbeat, AA_HDR_TYPE_PAD, UINT32_MAX);
    memset(&datagrams[0], 0, sizeof(datagrams[0]));
    datagrams[0].buffer = heartbeat;
    datagrams[0].length = FRAME_LENGTH;
    int rc;
    while (0 == (rc = aa_udp_transport_send(&transport, datagrams, 1)))
    {
    }
    AA_CHECK_EQ(rc, 1);
    *stats = *aa_loss_generator_send_stats(bindings);
    AA_CHECK(NULL != aa_loss_generator_receive_stats(bindings));
    AA_CHECK_EQ(aa_loss_generator_receive_stats(bindings)->datagrams, 0);
    aa_udp_transport_close(&transport);
    aa_loss_generator_bindings_delete(bindings);
    return link;
}

static size_t count_real_frames(const fake_link_t *link, uint32_t *occurrences, size_t frames)
{
    size_t total = 0;
    memset(occurrences, 0, frames * sizeof(uint32_t));
    for (size_t i = 0; i < link->sent_count; i++)
    {
        if (UINT32_MAX != link->sent_ids[i])
        {
            AA_CHECK(link->sent_ids[i] < frames);
            occurrences[link->sent_ids[i]]++;
            total++;
        }
    }
    return total;
}

static void should_apply_rules_when_sending(void)
{
    static uint32_t occurrences[FRAMES];
    aa_loss_generator_stats_t stats, again_stats;

    fake_link_t *link = run_send("drop:data:0.2", 99, FRAMES, 0, &stats);
    check_rate(stats.dropped, FRAMES + 1, 0.2);
    size_t lost = FRAMES - count_real_frames(link, occurrences, FRAMES);
    AA_CHECK(lost == stats.dropped || lost + 1 == stats.dropped);
    fake_link_t *again = run_send("drop:data:0.2", 99, FRAMES, 0, &again_stats);
    AA_CHECK_EQ(again->sent_count, link->sent_count);
    AA_CHECK(0 == memcmp(again->sent_ids, link->sent_ids, link->sent_count * sizeof(uint32_t)));
    fake_link_delete(link);
    fake_link_delete(again);

    link = run_send("dup:data:0.1", 5, FRAMES, 0, &stats);
    check_rate(stats.duplicated, FRAMES + 1, 0.1);
    count_real_frames(link, occurrences, FRAMES);
    uint64_t extra = 0;
    for (size_t i = 0; i < FRAMES; i++)
    {
        AA_CHECK(occurrences[i] >= 1 && occurrences[i] <= 2);
        extra += occurrences[i] - 1;
    }
    AA_CHECK(extra == stats.duplicated || extra + 1 == stats.duplicated);
    fake_link_delete(link);

    link = run_send("reorder:data:0.1", 6, FRAMES, 0, &stats);
    AA_CHECK(count_real_frames(link, occurrences, FRAMES) == FRAMES);
    for (size_t i = 0; i < FRAMES; i++)
    {
        AA_CHECK_EQ(occurrences[i], 1);
    }
    size_t real = 0;
    for (size_t i = 0; i < link->sent_count; i++)
    {
        if (UINT32_MAX != link->sent_ids[i])
        {
            link->sent_ids[real++] = link->sent_ids[i];
        }
    }
    uint64_t late = check_reordered(link->sent_ids, real, FRAMES);
    AA_CHECK(late > 0 && late <= stats.reordered && late + 2 >= stats.reordered);
    check_rate(stats.reordered, FRAMES, 0.1);
    fake_link_delete(link);
}

static void should_keep_every_datagram_when_sends_are_partial(void)
{
    static uint32_t occurrences[FRAMES];
    aa_loss_generator_stats_t stats;
    fake_link_t *link = run_send("reorder:data:0.2", 21, 5000, 3, &stats);
    count_real_frames(link, occurrences, 5000);
    for (size_t i = 0; i < 5000; i++)
    {
        AA_CHECK_EQ(occurrences[i], 1);
    }
    fake_link_delete(link);

    link = run_send("dup:data:0.2", 22, 5000, 3, &stats);
    count_real_frames(link, occurrences, 5000);
    for (size_t i = 0; i < 5000; i++)
    {
        AA_CHECK(occurrences[i] >= 1);
    }
    for (size_t i = 1; i < link->sent_count; i++)
    {
        AA_CHECK(link->sent_ids[i] >= link->sent_ids[i - 1] || UINT32_MAX == link->sent_ids[i - 1]);
    }
    fake_link_delete(link);

    link = run_send("drop:data:0.2,dup:data:0.2,reorder:data:0.2", 23, 5000, 2, &stats);
    count_real_frames(link, occurrences, 5000);
    uint64_t missing = 0;
    for (size_t i = 0; i < 5000; i++)
    {
        missing += 0 == occurrences[i];
    }
    AA_CHECK(missing <= stats.dropped);
    fake_link_delete(link);
}

static void should_pass_everything_through_without_rules(void)
{
    aa_loss_generator_stats_t stats;
    AA_CHECK_EQ(run_receive_count("", 1, 100, all_data, &stats), 100);
    AA_CHECK_EQ(stats.datagrams, 0);
}

/* ---- over loopback sockets ---- */

static void on_socket_datagram(void *clientd, aa_udp_transport_t *transport, aa_udp_datagram_t *datagram)
{
    (void)transport;
    delivered_t *delivered = clientd;
    delivered->ids[delivered->count++] = frame_id(datagram->buffer);
}

static delivered_t run_over_loopback(uint64_t seed, aa_loss_generator_stats_t *stats)
{
    aa_udp_channel_t *channel = NULL;
    AA_CHECK_EQ(aa_udp_channel_parse(&channel, "aeron:udp?endpoint=127.0.0.1:0|so-rcvbuf=1m", NULL), 0);
    aa_udp_transport_params_t params;
    aa_udp_transport_params_from_channel(&params, channel, AA_UDP_TRANSPORT_ROLE_RECEIVE);
    aa_loss_generator_params_t receive = rules("drop:data:0.25,dup:sm:1");
    aa_udp_transport_bindings_t *bindings = NULL;
    AA_CHECK_EQ(aa_loss_generator_bindings_create(&bindings, NULL, &receive, NULL, seed), 0);
    aa_udp_transport_t receiver, sender;
    AA_CHECK_EQ(aa_udp_transport_init(&receiver, bindings, &params), 0);
    AA_CHECK(receiver.fd >= 0);
    aa_udp_address_wildcard(&params.bind_address, AF_INET, 0);
    params.destination = receiver.bound_address;
    params.socket_rcvbuf_length = 0;
    AA_CHECK_EQ(aa_udp_transport_init(&sender, NULL, &params), 0);

    static uint8_t frames[200][FRAME_LENGTH];
    aa_udp_datagram_t datagrams[BATCH];
    for (uint32_t i = 0; i < 200; i++)
    {
        make_frame(frames[i], i < 190 ? AA_HDR_TYPE_DATA : AA_HDR_TYPE_SM, i);
    }
    for (size_t next = 0; next < 200;)
    {
        size_t n = 200 - next < BATCH ? 200 - next : BATCH;
        for (size_t i = 0; i < n; i++)
        {
            memset(&datagrams[i], 0, sizeof(datagrams[i]));
            datagrams[i].buffer = frames[next + i];
            datagrams[i].length = FRAME_LENGTH;
        }
        int rc = aa_udp_transport_send(&sender, datagrams, n);
        AA_CHECK(rc >= 0);
        next += (size_t)rc;
    }

    delivered_t delivered = { calloc(400, sizeof(uint32_t)), 0 };
    static uint8_t buffers[BATCH][2048];
    for (int attempt = 0; attempt < 100000 && aa_loss_generator_receive_stats(bindings)->datagrams < 200; attempt++)
    {
        for (size_t i = 0; i < BATCH; i++)
        {
            memset(&datagrams[i], 0, sizeof(datagrams[i]));
            datagrams[i].buffer = buffers[i];
            datagrams[i].capacity = sizeof(buffers[i]);
        }
        if (0 == aa_udp_transport_recv(&receiver, datagrams, BATCH, on_socket_datagram, &delivered))
        {
            usleep(100);
        }
    }
    *stats = *aa_loss_generator_receive_stats(bindings);
    aa_udp_transport_close(&receiver);
    aa_udp_transport_close(&sender);
    aa_loss_generator_bindings_delete(bindings);
    aa_udp_channel_delete(channel);
    return delivered;
}

static void should_wrap_socket_transports(void)
{
    aa_loss_generator_stats_t stats, again_stats;
    delivered_t first = run_over_loopback(1234, &stats);
    AA_CHECK_EQ(stats.datagrams, 200);
    AA_CHECK_EQ(stats.duplicated, 10);
    AA_CHECK(stats.dropped > 0);
    AA_CHECK_EQ(first.count, 200 - stats.dropped + 10);
    delivered_t again = run_over_loopback(1234, &again_stats);
    AA_CHECK_EQ(again.count, first.count);
    AA_CHECK(0 == memcmp(first.ids, again.ids, first.count * sizeof(uint32_t)));
    printf("(%llu of 190 data frames dropped, 10 status messages doubled) ", (unsigned long long)stats.dropped);
    free(first.ids);
    free(again.ids);
}

/* ---- driver options ---- */

static void should_read_loss_and_socket_options_into_the_driver_context(void)
{
    aa_driver_context_t ctx;
    AA_CHECK_EQ(aa_driver_context_init(&ctx), 0);
    AA_CHECK(!aa_loss_generator_params_is_enabled(&ctx.udp_receive_loss));
    AA_CHECK(!aa_loss_generator_params_is_enabled(&ctx.udp_send_loss));
    AA_CHECK_EQ(ctx.udp_loss_seed, 0);
    AA_CHECK_EQ(ctx.socket_so_rcvbuf, 128 * 1024);
    AA_CHECK_EQ(ctx.socket_so_sndbuf, 0);
    AA_CHECK_EQ(ctx.socket_multicast_ttl, 0);
    AA_CHECK_EQ(aa_driver_context_validate(&ctx), 0);

    AA_CHECK_EQ(aa_driver_context_set(&ctx, "AERON_UDP_RECEIVE_LOSS", "drop:data:5%,reorder:any:0.01"), 0);
    AA_CHECK_EQ(ctx.udp_receive_loss.rules_count, 2);
    AA_CHECK(fabs(ctx.udp_receive_loss.rules[0].rate - 0.05) < 1e-12);
    AA_CHECK_EQ(aa_driver_context_set(&ctx, "aeron.udp.send.loss", "dup:nak:0.5"), 0);
    AA_CHECK_EQ(ctx.udp_send_loss.rules[0].frame_type, AA_LOSS_FRAME_NAK);
    AA_CHECK_EQ(aa_driver_context_set(&ctx, "AERON_UDP_LOSS_SEED", "-9000000000"), 0);
    AA_CHECK_EQ(ctx.udp_loss_seed, -9000000000LL);
    AA_CHECK_EQ(aa_driver_context_set(&ctx, "aeron.socket.so_rcvbuf", "2m"), 0);
    AA_CHECK_EQ(ctx.socket_so_rcvbuf, 2 * 1024 * 1024);

    AA_CHECK_EQ(aa_driver_context_set(&ctx, "AERON_UDP_RECEIVE_LOSS", "drop:data:2"), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "AERON_UDP_RECEIVE_LOSS"));
    AA_CHECK(NULL != strstr(aa_errmsg(), "from 0 to 1"));
    AA_CHECK_EQ(ctx.udp_receive_loss.rules_count, 2);
    AA_CHECK_EQ(aa_driver_context_set(&ctx, "AERON_UDP_LOSS_SEED", "12x"), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "64-bit integer"));
    AA_CHECK_EQ(aa_driver_context_set(&ctx, "AERON_UDP_RECEIVE_LOSS", ""), 0);
    AA_CHECK(!aa_loss_generator_params_is_enabled(&ctx.udp_receive_loss));

    AA_CHECK_EQ(aa_driver_context_set(&ctx, "AERON_SOCKET_MULTICAST_TTL", "256"), 0);
    AA_CHECK_EQ(aa_driver_context_validate(&ctx), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "AERON_SOCKET_MULTICAST_TTL=256"));
    AA_CHECK_EQ(aa_driver_context_set(&ctx, "AERON_SOCKET_MULTICAST_TTL", "1"), 0);
    AA_CHECK_EQ(aa_driver_context_set(&ctx, "AERON_SOCKET_SO_SNDBUF", "3g"), 0);
    AA_CHECK_EQ(aa_driver_context_validate(&ctx), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "below 2g"));
}

int main(void)
{
    AA_RUN(should_parse_rules);
    AA_RUN(should_classify_frames_by_first_header);
    AA_RUN(should_drop_at_the_configured_rate_deterministically);
    AA_RUN(should_apply_rules_by_frame_type);
    AA_RUN(should_duplicate_next_to_the_original);
    AA_RUN(should_reorder_with_the_next_datagram);
    AA_RUN(should_release_a_held_datagram_on_the_next_poll);
    AA_RUN(should_apply_rules_when_sending);
    AA_RUN(should_keep_every_datagram_when_sends_are_partial);
    AA_RUN(should_pass_everything_through_without_rules);
    AA_RUN(should_wrap_socket_transports);
    AA_RUN(should_read_loss_and_socket_options_into_the_driver_context);
    return 0;
}
