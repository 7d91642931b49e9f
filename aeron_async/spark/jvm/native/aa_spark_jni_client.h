/*
 * What the JVM connector's native side does with the project's C client in more than one place
 * (the sink, aa_spark_jni_sink.c; remote archive reads, aa_spark_jni_remote.c): a monotonic clock in
 * milliseconds, a short pause between polls, and publications and subscriptions added within a
 * timeout.
 */
#ifndef AA_SPARK_JNI_CLIENT_H
#define AA_SPARK_JNI_CLIENT_H

#include <stdbool.h>
#include <stdint.h>

#include "aeron_async.h"

int64_t aa_spark_now_ms(void);

/* 100 us: what a blocking wait of the connector sleeps between two polls */
void aa_spark_pause(void);

/* The publication (exclusive or not) the driver added within timeout_ms, or NULL with the error set
 * (a timeout names the channel and, when `option` is not NULL, the option that sets the timeout). */
aa_publication_t *aa_spark_add_publication(aa_client_t *client, const char *channel, int32_t stream_id,
    bool exclusive, int64_t timeout_ms, const char *option);

/* The subscription the driver added within timeout_ms, or NULL with the error set; *registration_id
 * (when not NULL) is the id the driver registered it under. */
aa_subscription_t *aa_spark_add_subscription(aa_client_t *client, const char *channel, int32_t stream_id,
    int64_t timeout_ms, int64_t *registration_id);

#endif
