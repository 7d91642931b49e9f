/* A channel is parsed once on its way to becoming a publication or a subscription (docs/architecture.md,
 * "Channels: parsed once"): an embedded driver and a client in this process. The Makefile links this
 * test with -Wl,--wrap=aa_uri_parse, and __wrap_aa_uri_parse counts the parses made on the driver's
 * threads (the client parses a channel too, on the caller's thread: this one). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "aa_test.h"
#include "aeron_async.h"
#include "uri/aa_uri.h"

static pthread_t test_thread;
static int driver_parses = 0;

int __real_aa_uri_parse(const char *uri, aa_uri_t *parsed);

int __wrap_aa_uri_parse(const char *uri, aa_uri_t *parsed)
{
    if (!pthread_equal(pthread_self(), test_thread))
    {
        __atomic_add_fetch(&driver_parses, 1, __ATOMIC_SEQ_CST);
    }
    return __real_aa_uri_parse(uri, parsed);
}

static int parses(void)
{
    return __atomic_load_n(&driver_parses, __ATOMIC_SEQ_CST);
}

static void sleep_ms(long ms)
{
    struct timespec ts = { 0, ms * 1000 * 1000 };
    nanosleep(&ts, NULL);
}

/* Adds a publication or a subscription and waits for the driver's answer: 1 when ready, -1 when
 * refused. The driver parsed the channel before it answered, so the count is final when this returns. */
static int add(
    aa_client_t *client, const char *channel, bool is_publication, aa_publication_t **publication,
    aa_subscription_t **subscription)
{
    int64_t id = is_publication ? aa_client_async_add_publication(client, channel, 1001, false) :
        aa_client_async_add_subscription(client, channel, 1001);
    AA_CHECK(id >= 0);
    for (int i = 0; i < 10000; i++)
    {
        int rc = is_publication ? aa_client_async_add_publication_poll(client, id, publication) :
            aa_client_async_add_subscription_poll(client, id, subscription);
        if (0 != rc)
        {
            return rc;
        }
        sleep_ms(1);
    }
    AA_CHECK(0);
    return -1;
}

/* Each command's channel is parsed once by the driver: new and shared publications (compared parse to
 * parse), a channel that names a host (it waits for the resolver executor and runs again on the parse
 * it carries), a subscription, and a shared publication refused for asking other settings. */
static void should_parse_each_command_channel_once(void)
{
    char dir[] = "/tmp/aa_parse_once_XXXXXX";
    AA_CHECK(NULL != mkdtemp(dir));
    char aeron_dir[sizeof(dir) + 16];
    snprintf(aeron_dir, sizeof(aeron_dir), "%s/aeron", dir);
    aa_driver_context_t *ctx = aa_driver_context_new();
    AA_CHECK(NULL != ctx);
    AA_CHECK_EQ(aa_driver_context_set(ctx, "AERON_DIR", aeron_dir), 0);
    AA_CHECK_EQ(aa_driver_context_set(ctx, "AERON_THREADING_MODE", "DEDICATED"), 0);
    aa_driver_t *driver = NULL;
    AA_CHECK_EQ(aa_driver_launch(&driver, ctx), 0);
    aa_driver_context_free(ctx);    /* the driver keeps a copy */
    aa_client_t *client = NULL;
    AA_CHECK_EQ(aa_client_connect(&client, aeron_dir, 10000, false, NULL), 0);

    static const struct
    {
        const char *channel;
        bool is_publication;
        int rc;
    }
    commands[] =
    {
        { "aeron:udp?endpoint=127.0.0.1:40911|alias=new", true, 1 },
        { "aeron:udp?endpoint=127.0.0.1:40911|alias=shared", true, 1 },       /* the same send endpoint and publication */
        { "aeron:udp?endpoint=127.0.0.1:40911|linger=1s", true, -1 },         /* refused: the shared one keeps its linger */
        { "aeron:ipc?term-length=64k", true, 1 },
        { "aeron:ipc?term-length=64k|alias=shared", true, 1 },
        { "aeron:udp?endpoint=localhost:40912", true, 1 },                    /* a name: resolved off the conductor */
        { "aeron:udp?endpoint=127.0.0.1:0", false, 1 },                       /* binds a free port */
    };
    aa_publication_t *publications[sizeof(commands) / sizeof(commands[0])] = { NULL };
    aa_subscription_t *subscriptions[sizeof(commands) / sizeof(commands[0])] = { NULL };
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
    {
        int before = parses();
        int rc = add(client, commands[i].channel, commands[i].is_publication, &publications[i], &subscriptions[i]);
        int driver_parsed = parses() - before;
        if (rc != commands[i].rc || 1 != driver_parsed)
        {
            fprintf(stderr, "%s: rc %d (expected %d), parsed %d times by the driver: %s\n", commands[i].channel, rc,
                commands[i].rc, driver_parsed, rc < 0 ? aa_errmsg() : "");
            AA_CHECK(0);
        }
        if (rc < 0)
        {
            AA_CHECK(NULL != strstr(aa_errmsg(), "linger=1s differs from linger="));
        }
    }

    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
    {
        if (NULL != publications[i])
        {
            aa_publication_close(publications[i]);
        }
        if (NULL != subscriptions[i])
        {
            aa_subscription_close(subscriptions[i]);
        }
    }
    AA_CHECK_EQ(aa_client_close(client), 0);
    AA_CHECK_EQ(aa_driver_close(driver), 0);
    char command[sizeof(dir) + 16];
    snprintf(command, sizeof(command), "rm -rf %s", dir);
    AA_CHECK_EQ(system(command), 0);
}

int main(void)
{
    test_thread = pthread_self();
    AA_RUN(should_parse_each_command_channel_once);
    return 0;
}
