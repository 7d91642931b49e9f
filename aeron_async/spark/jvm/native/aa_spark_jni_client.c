/*
 * The JVM connector's shared uses of the C client (aa_spark_jni_client.h).
 */
#include <inttypes.h>
#include <time.h>

#include "util/aa_error.h"

#include "aa_spark_jni_client.h"

int64_t aa_spark_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void aa_spark_pause(void)
{
    struct timespec pause = { 0, 100000 };
    nanosleep(&pause, NULL);
}

static void timed_out(const char *what, const char *channel, int64_t timeout_ms, const char *option)
{
    AA_SET_ERR(AA_ERROR_CODE_TIMEOUT, "the media driver did not add the %s of %s within %" PRId64 " ms%s%s%s", what,
        channel, timeout_ms, NULL == option ? "" : " (option ", NULL == option ? "" : option,
        NULL == option ? "" : ")");
}

aa_publication_t *aa_spark_add_publication(aa_client_t *client, const char *channel, int32_t stream_id,
    bool exclusive, int64_t timeout_ms, const char *option)
{
    aa_publication_t *publication = NULL;
    int64_t correlation_id = aa_client_async_add_publication(client, channel, stream_id, exclusive);
    int rc = correlation_id < 0 ? -1 : 0;
    int64_t deadline = aa_spark_now_ms() + timeout_ms;
    while (0 == rc)
    {
        rc = aa_client_async_add_publication_poll(client, correlation_id, &publication);
        if (0 == rc)
        {
            if (aa_spark_now_ms() > deadline)
            {
                timed_out("publication", channel, timeout_ms, option);
                return NULL;
            }
            aa_spark_pause();
        }
    }
    return rc < 0 ? NULL : publication;
}

aa_subscription_t *aa_spark_add_subscription(aa_client_t *client, const char *channel, int32_t stream_id,
    int64_t timeout_ms, int64_t *registration_id)
{
    aa_subscription_t *subscription = NULL;
    int64_t correlation_id = aa_client_async_add_subscription(client, channel, stream_id);
    if (NULL != registration_id)
    {
        *registration_id = correlation_id;
    }
    int rc = correlation_id < 0 ? -1 : 0;
    int64_t deadline = aa_spark_now_ms() + timeout_ms;
    while (0 == rc)
    {
        rc = aa_client_async_add_subscription_poll(client, correlation_id, &subscription);
        if (0 == rc)
        {
            if (aa_spark_now_ms() > deadline)
            {
                timed_out("subscription", channel, timeout_ms, NULL);
                return NULL;
            }
            aa_spark_pause();
        }
    }
    return rc < 0 ? NULL : subscription;
}
