/* The strategy registry (util/aa_registry): registration, duplicates, aliases, lookup misses that
 * name every registered strategy, listing, and registration from several threads at once. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "aa_test.h"
#include "util/aa_error.h"
#include "util/aa_registry.h"

typedef struct fake_table_stct
{
    int (*answer)(void);
}
fake_table_t;

static int answer_one(void)
{
    return 1;
}

static int answer_two(void)
{
    return 2;
}

static const fake_table_t table_one = { answer_one };
static const fake_table_t table_two = { answer_two };

static void should_register_and_look_up_by_kind_and_name(void)
{
    int clientd = 7;
    AA_CHECK_EQ(aa_registry_register(AA_STRATEGY_KIND_FLOW_CONTROL, "t-one", &table_one, &clientd, "the first"), 0);
    AA_CHECK_EQ(aa_registry_register(AA_STRATEGY_KIND_CONGESTION_CONTROL, "t-one", &table_two, NULL, NULL), 0);
    aa_strategy_t s;
    AA_CHECK_EQ(aa_registry_lookup(AA_STRATEGY_KIND_FLOW_CONTROL, "t-one", &s), 0);
    AA_CHECK_EQ(((const fake_table_t *)s.table)->answer(), 1);
    AA_CHECK(s.clientd == &clientd);
    AA_CHECK(0 == strcmp(s.name, "t-one") && 0 == strcmp(s.target, "t-one"));
    AA_CHECK(0 == strcmp(s.description, "the first"));
    AA_CHECK(!s.is_alias && NULL == s.options);
    AA_CHECK_EQ(s.kind, AA_STRATEGY_KIND_FLOW_CONTROL);
    /* the same name under another kind is another entry */
    AA_CHECK_EQ(aa_registry_lookup(AA_STRATEGY_KIND_CONGESTION_CONTROL, "t-one", &s), 0);
    AA_CHECK_EQ(((const fake_table_t *)s.table)->answer(), 2);
    AA_CHECK(0 == strcmp(s.description, ""));
}

static void should_refuse_a_taken_name_and_keep_the_first(void)
{
    AA_CHECK_EQ(aa_registry_register(AA_STRATEGY_KIND_FLOW_CONTROL, "t-one", &table_two, NULL, NULL), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "flow control 't-one' is already registered"));
    aa_strategy_t s;
    AA_CHECK_EQ(aa_registry_lookup(AA_STRATEGY_KIND_FLOW_CONTROL, "t-one", &s), 0);
    AA_CHECK_EQ(((const fake_table_t *)s.table)->answer(), 1);
}

static void should_refuse_bad_names_kinds_and_tables(void)
{
    const char *bad[] = { "", "has space", "a,b", "a:b", "a|b", "a=b",
        "a-name-that-is-far-too-long-to-be-a-strategy-name-in-a-uri-0123456789" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    {
        AA_CHECK_EQ(aa_registry_register(AA_STRATEGY_KIND_IDLE, bad[i], &table_one, NULL, NULL), -1);
        AA_CHECK(NULL != strstr(aa_errmsg(), "is invalid: use 1 to 63 letters"));
    }
    AA_CHECK_EQ(aa_registry_register(AA_STRATEGY_KIND_IDLE, NULL, &table_one, NULL, NULL), -1);
    AA_CHECK_EQ(aa_registry_register(AA_STRATEGY_KIND_COUNT, "t-kind", &table_one, NULL, NULL), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "unknown strategy kind 4"));
    AA_CHECK_EQ(aa_registry_register(-1, "t-kind", &table_one, NULL, NULL), -1);
    AA_CHECK_EQ(aa_registry_register(AA_STRATEGY_KIND_IDLE, "t-null", NULL, NULL, NULL), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "the function table is NULL"));
    AA_CHECK_EQ(aa_registry_count(AA_STRATEGY_KIND_IDLE), 0);
}

static void should_name_every_registered_strategy_on_a_miss(void)
{
    AA_CHECK_EQ(aa_registry_register(AA_STRATEGY_KIND_FLOW_CONTROL, "t-two", &table_two, NULL, NULL), 0);
    aa_strategy_t s;
    AA_CHECK_EQ(aa_registry_lookup(AA_STRATEGY_KIND_FLOW_CONTROL, "t-three", &s), -1);
    AA_CHECK_EQ(aa_errcode(), AA_ERROR_CODE_CONFIGURATION);
    AA_CHECK(NULL != strstr(aa_errmsg(), "unknown flow control 't-three'; registered: t-one, t-two"));
    AA_CHECK_EQ(aa_registry_lookup(AA_STRATEGY_KIND_NAME_RESOLVER, "default", &s), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "unknown name resolver 'default'; registered: none"));
    AA_CHECK_EQ(aa_registry_lookup(AA_STRATEGY_KIND_FLOW_CONTROL, NULL, &s), -1);
    AA_CHECK_EQ(aa_registry_lookup(9, "t-one", &s), -1);
}

static void should_resolve_aliases_to_their_target_with_options(void)
{
    AA_CHECK_EQ(aa_registry_register_alias(AA_STRATEGY_KIND_FLOW_CONTROL, "t-slow", "t-two", "t:10s", "slow one"), 0);
    aa_strategy_t s;
    AA_CHECK_EQ(aa_registry_lookup(AA_STRATEGY_KIND_FLOW_CONTROL, "t-slow", &s), 0);
    AA_CHECK(s.is_alias);
    AA_CHECK(0 == strcmp(s.name, "t-slow") && 0 == strcmp(s.target, "t-two"));
    AA_CHECK(0 == strcmp(s.options, "t:10s"));
    AA_CHECK_EQ(((const fake_table_t *)s.table)->answer(), 2);
    AA_CHECK_EQ(aa_registry_register_alias(AA_STRATEGY_KIND_FLOW_CONTROL, "t-plain", "t-one", "", NULL), 0);
    AA_CHECK_EQ(aa_registry_lookup(AA_STRATEGY_KIND_FLOW_CONTROL, "t-plain", &s), 0);
    AA_CHECK(NULL == s.options);

    AA_CHECK_EQ(aa_registry_register_alias(AA_STRATEGY_KIND_FLOW_CONTROL, "t-bad", "t-missing", NULL, NULL), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "names 't-missing', which is not registered; registered: t-one, t-two"));
    AA_CHECK_EQ(aa_registry_register_alias(AA_STRATEGY_KIND_FLOW_CONTROL, "t-chain", "t-slow", NULL, NULL), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "itself an alias of 't-two'"));
    AA_CHECK_EQ(aa_registry_register_alias(AA_STRATEGY_KIND_FLOW_CONTROL, "t-none", NULL, NULL, NULL), -1);
    AA_CHECK_EQ(aa_registry_register_alias(AA_STRATEGY_KIND_FLOW_CONTROL, "t-slow", "t-one", NULL, NULL), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "already registered as an alias of t-two"));
    /* an alias of the same name in another kind cannot name this kind's entries */
    AA_CHECK_EQ(aa_registry_register_alias(AA_STRATEGY_KIND_IDLE, "t-slow", "t-two", NULL, NULL), -1);
}

static void should_list_names_in_registration_order(void)
{
    char names[256];
    AA_CHECK_EQ(aa_registry_names(AA_STRATEGY_KIND_FLOW_CONTROL, names, sizeof(names)), 4);
    AA_CHECK(0 == strcmp(names, "t-one, t-two, t-slow, t-plain"));
    AA_CHECK_EQ(aa_registry_count(AA_STRATEGY_KIND_FLOW_CONTROL), 4);
    AA_CHECK_EQ(aa_registry_names(AA_STRATEGY_KIND_IDLE, names, sizeof(names)), 0);
    AA_CHECK(0 == strcmp(names, ""));
    AA_CHECK_EQ(aa_registry_names(AA_STRATEGY_KIND_FLOW_CONTROL, names, 10), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "do not fit"));
    aa_strategy_t s;
    AA_CHECK_EQ(aa_registry_entry(AA_STRATEGY_KIND_FLOW_CONTROL, 2, &s), 0);
    AA_CHECK(0 == strcmp(s.name, "t-slow") && s.is_alias);
    AA_CHECK_EQ(aa_registry_entry(AA_STRATEGY_KIND_FLOW_CONTROL, 4, &s), -1);
    AA_CHECK(0 == strcmp(aa_registry_kind_name(AA_STRATEGY_KIND_IDLE), "idle strategy"));
    AA_CHECK(NULL == aa_registry_kind_name(AA_STRATEGY_KIND_COUNT));
}

static void should_split_specs(void)
{
    char name[16];
    const char *options = NULL;
    AA_CHECK_EQ(aa_registry_split_spec("min,g:1/2,t:5s", ',', name, sizeof(name), &options), 0);
    AA_CHECK(0 == strcmp(name, "min") && 0 == strcmp(options, "g:1/2,t:5s"));
    AA_CHECK_EQ(aa_registry_split_spec("backoff", ':', name, sizeof(name), &options), 0);
    AA_CHECK(0 == strcmp(name, "backoff") && NULL == options);
    AA_CHECK_EQ(aa_registry_split_spec("a-name-longer-than-fifteen", ',', name, sizeof(name), &options), -1);
}

#define THREADS 4
#define PER_THREAD 50

static void *register_many(void *arg)
{
    int id = (int)(intptr_t)arg;
    for (int i = 0; i < PER_THREAD; i++)
    {
        char name[32];
        snprintf(name, sizeof(name), "r-%d-%d", id, i);
        if (aa_registry_register(AA_STRATEGY_KIND_NAME_RESOLVER, name, &table_one, NULL, NULL) < 0)
        {
            return (void *)1;
        }
        /* every thread also races for one shared name: exactly one wins */
        aa_registry_register(AA_STRATEGY_KIND_NAME_RESOLVER, "r-shared", &table_two, NULL, NULL);
        aa_strategy_t s;
        if (aa_registry_lookup(AA_STRATEGY_KIND_NAME_RESOLVER, name, &s) < 0 || s.table != &table_one)
        {
            return (void *)1;
        }
    }
    return NULL;
}

static void should_register_from_many_threads_at_once(void)
{
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++)
    {
        AA_CHECK_EQ(pthread_create(&threads[i], NULL, register_many, (void *)(intptr_t)i), 0);
    }
    for (int i = 0; i < THREADS; i++)
    {
        void *result = NULL;
        AA_CHECK_EQ(pthread_join(threads[i], &result), 0);
        AA_CHECK(NULL == result);
    }
    AA_CHECK_EQ(aa_registry_count(AA_STRATEGY_KIND_NAME_RESOLVER), THREADS * PER_THREAD + 1);
}

int main(void)
{
    printf("test_util_registry\n");
    AA_RUN(should_register_and_look_up_by_kind_and_name);
    AA_RUN(should_refuse_a_taken_name_and_keep_the_first);
    AA_RUN(should_refuse_bad_names_kinds_and_tables);
    AA_RUN(should_name_every_registered_strategy_on_a_miss);
    AA_RUN(should_resolve_aliases_to_their_target_with_options);
    AA_RUN(should_list_names_in_registration_order);
    AA_RUN(should_split_specs);
    AA_RUN(should_register_from_many_threads_at_once);
    return 0;
}
