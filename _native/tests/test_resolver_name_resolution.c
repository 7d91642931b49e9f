/* The name resolver executor (lookups off the conductor) and the name resolutions table. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aa_test.h"
#include "resolver/aa_name_resolutions.h"
#include "resolver/aa_name_resolver_executor.h"
#include "media/aa_send_channel_endpoint.h"
#include "aa_media_fakes.h"
#include "util/aa_clock.h"
#include "util/aa_error.h"

static volatile int wakes = 0;

static void test_wake(void *clientd)
{
    (void)clientd;
    __atomic_add_fetch(&wakes, 1, __ATOMIC_RELEASE);
}

/* A resolver that blocks (a DNS server that does not answer) until released. */
static volatile int gate_open = 0;

static int gated_resolve(
    void *state, const char *key, const char *host, int family, bool is_re_resolution, struct sockaddr_storage *address)
{
    (void)state;
    (void)key;
    (void)family;
    (void)is_re_resolution;
    if (0 == strcmp(host, "slow"))
    {
        while (!__atomic_load_n(&gate_open, __ATOMIC_ACQUIRE))
        {
            usleep(1000);
        }
    }
    struct sockaddr_in *a4 = (struct sockaddr_in *)address;
    a4->sin_family = AF_INET;
    inet_pton(AF_INET, 0 == strcmp(host, "slow") ? "10.0.0.9" : "10.0.0.1", &a4->sin_addr);
    return 0;
}

static aa_name_resolution_request_t *new_request(const char *key, const char *value, bool is_re_resolution)
{
    aa_name_resolution_request_t *request = calloc(1, sizeof(*request));
    AA_CHECK(NULL != request);
    request->is_re_resolution = is_re_resolution;
    request->names_count = 1;
    snprintf(request->names[0].key, sizeof(request->names[0].key), "%s", key);
    snprintf(request->names[0].value, sizeof(request->names[0].value), "%s", value);
    return request;
}

static aa_name_resolution_request_t *poll_one(aa_name_resolver_executor_t *executor)
{
    for (int i = 0; i < 5000; i++)    /* at most 5 s */
    {
        aa_name_resolution_request_t *done = aa_name_resolver_executor_poll(executor);
        if (NULL != done)
        {
            AA_CHECK(NULL == done->next);
            return done;
        }
        usleep(1000);
    }
    AA_CHECK(0 && "no answer within 5 s");
    return NULL;
}

static void check_address(const struct sockaddr_storage *address, const char *expected)
{
    char text[AA_UDP_ADDRESS_FORMAT_MAX_LENGTH];
    AA_CHECK(aa_udp_address_format(text, sizeof(text), address) > 0);
    if (0 != strcmp(text, expected))
    {
        fprintf(stderr, "address %s, expected %s\n", text, expected);
    }
    AA_CHECK(0 == strcmp(text, expected));
}

static void should_answer_off_the_caller_thread_and_wake_it(void)
{
    aa_name_resolver_t *resolver = NULL;
    AA_CHECK_EQ(aa_name_resolver_create(&resolver, "csv_table", "pod-1,127.0.0.7|pod-2,127.0.0.8,127.0.0.9", NULL), 0);
    aa_name_resolver_executor_t *executor = NULL;
    AA_CHECK_EQ(aa_name_resolver_executor_create(&executor, 0, resolver, test_wake, NULL), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "AERON_DRIVER_ASYNC_EXECUTOR_THREADS=0"));
    AA_CHECK_EQ(aa_name_resolver_executor_create(&executor, 1, resolver, test_wake, NULL), 0);
    AA_CHECK(NULL == aa_name_resolver_executor_poll(executor));

    aa_name_resolver_executor_submit(executor, new_request("endpoint", "pod-1:40123", false));
    AA_CHECK_EQ(aa_name_resolver_executor_in_flight(executor), 1);
    aa_name_resolution_request_t *done = poll_one(executor);
    AA_CHECK_EQ(done->names[0].rc, 0);
    check_address(&done->names[0].address, "127.0.0.7:40123");
    AA_CHECK(__atomic_load_n(&wakes, __ATOMIC_ACQUIRE) >= 1);
    AA_CHECK_EQ(aa_name_resolver_executor_in_flight(executor), 0);
    aa_name_resolution_request_free(done);

    /* a re-resolution takes the re-resolution column; a failure carries its error */
    aa_name_resolver_executor_submit(executor, new_request("control", "pod-2:40124", true));
    done = poll_one(executor);
    AA_CHECK_EQ(done->names[0].rc, 0);
    check_address(&done->names[0].address, "127.0.0.9:40124");
    aa_name_resolution_request_free(done);
    aa_name_resolver_executor_submit(executor, new_request("endpoint", "no-such-host.invalid:1", false));
    done = poll_one(executor);
    AA_CHECK_EQ(done->names[0].rc, -1);
    AA_CHECK_EQ(done->names[0].errcode, AA_ERROR_CODE_UNKNOWN_HOST);
    AA_CHECK(NULL != strstr(done->names[0].error, "no-such-host.invalid"));
    aa_name_resolution_request_free(done);

    AA_CHECK_EQ(aa_name_resolver_executor_close(executor, 1000000000LL), 0);
    aa_name_resolver_close(resolver);
}

static void should_answer_a_fast_name_while_another_thread_waits_for_a_slow_one(void)
{
    aa_name_resolver_t gated = { "gated", NULL, gated_resolve, NULL, NULL, NULL };
    aa_name_resolver_executor_t *executor = NULL;
    gate_open = 0;
    AA_CHECK_EQ(aa_name_resolver_executor_create(&executor, 2, &gated, test_wake, NULL), 0);
    aa_name_resolver_executor_submit(executor, new_request("endpoint", "slow:1", false));
    aa_name_resolver_executor_submit(executor, new_request("endpoint", "fast:2", false));
    aa_name_resolution_request_t *done = poll_one(executor);
    check_address(&done->names[0].address, "10.0.0.1:2");
    aa_name_resolution_request_free(done);
    AA_CHECK_EQ(aa_name_resolver_executor_in_flight(executor), 1);
    /* closing while a thread is inside the resolver leaves the executor to that thread */
    AA_CHECK_EQ(aa_name_resolver_executor_close(executor, 20 * 1000 * 1000LL), 1);
    __atomic_store_n(&gate_open, 1, __ATOMIC_RELEASE);
    usleep(100 * 1000);    /* the thread returns, frees the executor and leaves (ASan checks the rest) */
}

static void should_record_resolutions_and_count_changes(void)
{
    char dir[] = "/tmp/aa_resolutions_XXXXXX";
    AA_CHECK(NULL != mkdtemp(dir));
    aa_name_resolutions_t table;
    AA_CHECK_EQ(aa_name_resolutions_init(&table, dir, NULL, "csv_table", 1000), 0);
    struct sockaddr_storage a, b;
    AA_CHECK_EQ(aa_udp_channel_resolve_host("endpoint", "10.1.1.1", 40123, AF_UNSPEC, &a), 0);
    AA_CHECK_EQ(aa_udp_channel_resolve_host("endpoint", "10.1.1.2", 40123, AF_UNSPEC, &b), 0);
    AA_CHECK_EQ(aa_name_resolutions_record(&table, "pod-1:40123", "endpoint", &a, "csv_table", 2000), 0);
    AA_CHECK_EQ(aa_name_resolutions_record(&table, "pod-1:40123", "endpoint", &a, "csv_table", 3000), 0);
    AA_CHECK_EQ(aa_name_resolutions_record(&table, "pod-1:40123", "endpoint", &b, "csv_table", 4000), 1);
    AA_CHECK_EQ(aa_name_resolutions_record(&table, "pod-1:40123", "control", &a, "driver", 4000), 0);
    AA_CHECK_EQ(aa_name_resolutions_record_failure(&table, "late:1", "endpoint", "default", "cannot resolve", 5000), 0);
    AA_CHECK_EQ(table.count, 3);

    const uint8_t *base = table.file.addr;
    int32_t magic, count;
    memcpy(&magic, base, 4);
    memcpy(&count, base + 16, 4);
    AA_CHECK_EQ(magic, AA_NAME_RESOLUTIONS_MAGIC);
    AA_CHECK_EQ(count, 3);
    AA_CHECK(0 == strcmp((const char *)base + 32, "csv_table"));
    const aa_name_resolution_entry_t *e = (const aa_name_resolution_entry_t *)(base + AA_NAME_RESOLUTIONS_HEADER_LENGTH);
    AA_CHECK(0 == strcmp(e->name, "pod-1:40123") && 0 == strcmp(e->key, "endpoint"));
    AA_CHECK(0 == strcmp(e->address, "10.1.1.2:40123"));
    AA_CHECK_EQ(e->change_count, 1);
    AA_CHECK_EQ(e->first_resolution_ms, 2000);
    AA_CHECK_EQ(e->last_resolution_ms, 4000);
    AA_CHECK_EQ(e->sequence % 2, 0);
    AA_CHECK_EQ(e->state, AA_NAME_RESOLUTION_STATE_RESOLVED);
    e = (const aa_name_resolution_entry_t *)(base + AA_NAME_RESOLUTIONS_HEADER_LENGTH + 2 * AA_NAME_RESOLUTIONS_ENTRY_LENGTH);
    AA_CHECK(0 == strcmp(e->name, "late:1"));
    AA_CHECK_EQ(e->state, AA_NAME_RESOLUTION_STATE_FAILED);
    AA_CHECK_EQ(e->failure_count, 1);
    AA_CHECK(0 == strcmp(e->address, "") && 0 == strcmp(e->error, "cannot resolve"));

    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, AA_NAME_RESOLUTIONS_FILE);
    aa_name_resolutions_close(&table);
    AA_CHECK_EQ(unlink(path), 0);
    AA_CHECK_EQ(rmdir(dir), 0);
}

static int re_resolution_requests = 0;
static struct sockaddr_storage re_resolution_address;

static void record_re_resolution(void *clientd, bool is_sender, void *endpoint, const struct sockaddr_storage *address)
{
    (void)clientd;
    AA_CHECK(is_sender && NULL != endpoint);
    re_resolution_requests++;
    re_resolution_address = *address;
}

static aa_send_channel_endpoint_t *new_send_endpoint(fake_services_t *fake, const char *uri, aa_name_resolver_t *resolver)
{
    aa_udp_channel_defaults_t defaults = { 0, 0, 0, resolver };
    aa_udp_channel_t *channel = NULL;
    AA_CHECK_EQ(aa_udp_channel_parse(&channel, uri, &defaults), 0);
    aa_send_channel_endpoint_t *endpoint = NULL;
    AA_CHECK_EQ(aa_send_channel_endpoint_create(&endpoint, channel, NULL, &fake->services), 0);
    return endpoint;
}

static void should_ask_for_a_named_endpoint_silent_for_the_timeout_only(void)
{
    const int64_t s = 1000000000LL;
    fake_services_t fake;
    fake_services_init(&fake);
    fake.services.request_re_resolution = record_re_resolution;
    aa_name_resolver_t *resolver = NULL;
    AA_CHECK_EQ(aa_name_resolver_create(&resolver, "csv_table", "pod-1,127.0.0.1", NULL), 0);
    aa_send_channel_endpoint_t *named = new_send_endpoint(&fake, "aeron:udp?endpoint=pod-1:40777", resolver);
    aa_send_channel_endpoint_t *literal = new_send_endpoint(&fake, "aeron:udp?endpoint=127.0.0.1:40778", resolver);
    AA_CHECK(named->is_endpoint_named);
    AA_CHECK(!literal->is_endpoint_named);
    named->time_of_last_sm_ns = 10 * s;
    literal->time_of_last_sm_ns = 10 * s;

    AA_CHECK_EQ(aa_send_channel_endpoint_check_re_resolution(named, 15 * s), 0);    /* 5 s: not yet */
    AA_CHECK_EQ(aa_send_channel_endpoint_check_re_resolution(named, 15 * s + 1), 1);
    AA_CHECK_EQ(re_resolution_requests, 1);
    check_address(&re_resolution_address, "127.0.0.1:40777");
    AA_CHECK_EQ(aa_send_channel_endpoint_check_re_resolution(named, 17 * s), 0);    /* timer restarted */
    AA_CHECK_EQ(aa_send_channel_endpoint_check_re_resolution(literal, 60 * s), 0);  /* by address: never */
    AA_CHECK_EQ(re_resolution_requests, 1);

    /* the conductor's answer: the new address is where the sender sends, and the timer restarts */
    struct sockaddr_storage moved;
    AA_CHECK_EQ(aa_udp_channel_resolve_host("endpoint", "127.0.0.2", 40777, AF_UNSPEC, &moved), 0);
    aa_send_channel_endpoint_set_destination(named, &re_resolution_address, &moved, 20 * s);
    check_address(&named->transport.destination, "127.0.0.2:40777");
    AA_CHECK(named->transport.has_destination);
    AA_CHECK_EQ(aa_send_channel_endpoint_check_re_resolution(named, 24 * s), 0);
    AA_CHECK_EQ(aa_send_channel_endpoint_check_re_resolution(named, 26 * s), 1);
    check_address(&re_resolution_address, "127.0.0.2:40777");

    aa_send_channel_endpoint_delete(named);
    aa_send_channel_endpoint_delete(literal);
    aa_name_resolver_close(resolver);
}

int main(void)
{
    AA_RUN(should_answer_off_the_caller_thread_and_wake_it);
    AA_RUN(should_answer_a_fast_name_while_another_thread_waits_for_a_slow_one);
    AA_RUN(should_record_resolutions_and_count_changes);
    AA_RUN(should_ask_for_a_named_endpoint_silent_for_the_timeout_only);
    return 0;
}
