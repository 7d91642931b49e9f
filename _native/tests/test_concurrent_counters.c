/* Counters: allocation, labels, free-to-reuse deadline, lookup; distinct error log. */
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "aa_test.h"
#include "concurrent/aa_counters.h"
#include "concurrent/aa_error_log.h"

#define VALUES (64 * 128)

static void should_allocate_free_and_reuse_after_deadline(void)
{
    uint8_t *values = calloc(1, VALUES);
    uint8_t *metadata = calloc(1, VALUES * 4);
    aa_counters_manager_t m;
    AA_CHECK_EQ(aa_counters_manager_init(&m, metadata, VALUES * 4, values, VALUES, 1000), 0);
    int32_t a = aa_counters_manager_allocate(&m, 0, 1, (const uint8_t *)"key", 3, "alpha", 5);
    int32_t b = aa_counters_manager_allocate(&m, 0, 11, NULL, 0, "beta", 4);
    AA_CHECK_EQ(a, 0);
    AA_CHECK_EQ(b, 1);
    aa_counter_set_registration_id(&m, b, 42);
    aa_counters_manager_append_to_label(&m, a, " more", 5);
    *aa_counters_manager_addr(&m, a) = 99;

    aa_counters_reader_t r;
    aa_counters_reader_init(&r, metadata, VALUES * 4, values, VALUES);
    char label[400];
    AA_CHECK_EQ(aa_counters_reader_counter_label(&r, a, label, sizeof(label)), 10);
    AA_CHECK(0 == strcmp(label, "alpha more"));
    AA_CHECK_EQ(aa_counters_reader_counter_type_id(&r, b), 11);
    AA_CHECK_EQ(aa_counters_reader_find_by_type_id_and_registration_id(&r, 11, 42), b);
    AA_CHECK_EQ(aa_counters_reader_find_by_type_id_and_registration_id(&r, 11, 43), -1);
    AA_CHECK_EQ(*aa_counters_reader_addr(&r, a), 99);

    aa_counters_manager_free(&m, 100, a);
    AA_CHECK_EQ(aa_counters_reader_counter_state(&r, a), AA_COUNTER_RECORD_RECLAIMED);
    int32_t c = aa_counters_manager_allocate(&m, 500, 1, NULL, 0, "gamma", 5);
    AA_CHECK_EQ(c, 2);
    int32_t d = aa_counters_manager_allocate(&m, 1100, 1, NULL, 0, "delta", 5);
    AA_CHECK_EQ(d, a);
    AA_CHECK_EQ(*aa_counters_reader_addr(&r, d), 0);
    AA_CHECK_EQ(aa_counters_reader_counter_state(&r, d), AA_COUNTER_RECORD_ALLOCATED);

    int32_t last = 0;
    while ((last = aa_counters_manager_allocate(&m, 2000, 1, NULL, 0, "x", 1)) >= 0)
    {
    }
    AA_CHECK_EQ(aa_counters_manager_allocate(&m, 2000, 1, NULL, 0, "x", 1), -1);
    aa_counters_manager_close(&m);
    free(values);
    free(metadata);
}

typedef struct
{
    aa_distinct_error_log_t *log;
    int id;
}
error_thread_t;

static void *record_errors(void *arg)
{
    error_thread_t *t = arg;
    char text[64];
    for (int i = 0; i < 1000; i++)
    {
        snprintf(text, sizeof(text), "error kind %d", i % 7);
        AA_CHECK_EQ(aa_distinct_error_log_record(t->log, 1000 + i, i % 7, text), 0);
    }
    return NULL;
}

typedef struct
{
    int records;
    int64_t observations;
}
error_totals_t;

static void count_errors(int32_t count, int64_t first, int64_t last, const char *error, size_t length, void *clientd)
{
    error_totals_t *t = clientd;
    AA_CHECK(first <= last);
    AA_CHECK(length > 0 && 0 == strncmp(error, "error kind ", 11));
    t->records++;
    t->observations += count;
}

static void should_keep_errors_distinct_under_concurrency(void)
{
    uint8_t *buffer = calloc(1, 64 * 1024);
    aa_distinct_error_log_t log;
    AA_CHECK_EQ(aa_distinct_error_log_init(&log, buffer, 64 * 1024), 0);
    pthread_t threads[4];
    error_thread_t ctx[4];
    for (int i = 0; i < 4; i++)
    {
        ctx[i] = (error_thread_t){ &log, i };
        pthread_create(&threads[i], NULL, record_errors, &ctx[i]);
    }
    for (int i = 0; i < 4; i++)
    {
        pthread_join(threads[i], NULL);
    }
    error_totals_t totals = { 0, 0 };
    AA_CHECK_EQ(aa_error_log_read(buffer, 64 * 1024, count_errors, &totals, 0), 7);
    AA_CHECK_EQ(totals.records, 7);
    AA_CHECK_EQ(totals.observations, 4000);
    aa_distinct_error_log_close(&log);
    free(buffer);
}

int main(void)
{
    AA_RUN(should_allocate_free_and_reuse_after_deadline);
    AA_RUN(should_keep_errors_distinct_under_concurrency);
    return 0;
}
