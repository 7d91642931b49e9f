/* The name resolver proxy (resolvers written in Python) without Python: this test plays the executor
 * threads (lookup, resolve), the conductor (create, do_work, delete) and the worker (poll, answer),
 * with a worker thread that answers some names, fails others and never answers "hang". */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "aa_test.h"
#include "resolver/aa_name_resolver_proxy.h"
#include "concurrent/aa_error_log.h"
#include "util/aa_clock.h"
#include "util/aa_error.h"
#include "util/aa_registry.h"
#include "media/aa_udp_channel.h"

#define MS (1000 * 1000LL)

static char logged[1024];
static int logged_count;
static pthread_mutex_t logged_mutex = PTHREAD_MUTEX_INITIALIZER;

static void record_error(void *clientd, int32_t code, const char *message)
{
    (void)clientd;
    (void)code;
    pthread_mutex_lock(&logged_mutex);
    snprintf(logged, sizeof(logged), "%s", message);
    logged_count++;
    pthread_mutex_unlock(&logged_mutex);
}

static aa_name_resolver_proxy_registration_t registration(int32_t flags, int64_t timeout_ms)
{
    aa_name_resolver_proxy_registration_t r;
    memset(&r, 0, sizeof(r));
    snprintf(r.name, sizeof(r.name), "%s", "services");
    r.flags = flags;
    r.timeout_ns = timeout_ms * MS;
    r.work_interval_ms = 100;
    return r;
}

/* ---- a worker thread ---- */

static volatile int worker_running;
static int64_t hung_request_id;
static int created_count, closed_count, work_count;
static int64_t last_work_ms;

static void *worker(void *arg)
{
    (void)arg;
    aa_name_resolver_proxy_request_t requests[8];
    while (__atomic_load_n(&worker_running, __ATOMIC_ACQUIRE))
    {
        int count = aa_name_resolver_proxy_host_poll(requests, 8);
        if (0 == count)
        {
            aa_name_resolver_proxy_host_wait(50 * MS);
            continue;
        }
        for (int i = 0; i < count; i++)
        {
            aa_name_resolver_proxy_request_t *r = &requests[i];
            switch (r->type)
            {
                case AA_NAME_RESOLVER_PROXY_REQUEST_CREATE:
                    created_count++;
                    AA_CHECK(NULL != strstr(r->resolver, "services"));
                    aa_name_resolver_proxy_host_answer(r->request_id, 0 == strcmp(r->name, "bad") ? -1 : 0, 0, "",
                        "ValueError: bad init args");
                    break;
                case AA_NAME_RESOLVER_PROXY_REQUEST_CLOSE:
                    __atomic_add_fetch(&closed_count, 1, __ATOMIC_RELEASE);
                    break;
                case AA_NAME_RESOLVER_PROXY_REQUEST_DO_WORK:
                    work_count++;
                    last_work_ms = r->now_ms;
                    aa_name_resolver_proxy_host_answer(r->request_id, 0, 0, "", "");
                    break;
                default:
                    if (0 == strcmp(r->name, "hang"))
                    {
                        __atomic_store_n(&hung_request_id, r->request_id, __ATOMIC_RELEASE);   /* answered later */
                    }
                    else if (0 == strcmp(r->name, "boom"))
                    {
                        aa_name_resolver_proxy_host_answer(
                            r->request_id, -1, AA_ERROR_CODE_GENERIC_ERROR, "", "RuntimeError: boom");
                    }
                    else if (0 == strcmp(r->name, "nowhere"))
                    {
                        aa_name_resolver_proxy_host_answer(
                            r->request_id, -1, AA_ERROR_CODE_UNKNOWN_HOST, "", "unknown host nowhere");
                    }
                    else if (AA_NAME_RESOLVER_PROXY_REQUEST_LOOKUP == r->type)
                    {
                        char answer[300];
                        snprintf(answer, sizeof(answer), "%s.internal:%d", r->name, r->is_again ? 2 : 1);
                        aa_name_resolver_proxy_host_answer(r->request_id, 0, 0, answer, "");
                    }
                    else
                    {
                        aa_name_resolver_proxy_host_answer(r->request_id, 0, 0,
                            0 == strcmp(r->name, "v6") ? "fd00::7" : 0 == strcmp(r->name, "junk") ? "not-an-ip" : "10.1.2.3",
                            "");
                    }
                    break;
            }
        }
    }
    return NULL;
}

static pthread_t worker_thread;

static void start_worker(void)
{
    __atomic_store_n(&worker_running, 1, __ATOMIC_RELEASE);
    aa_name_resolver_proxy_host_attach(true);
    AA_CHECK_EQ(pthread_create(&worker_thread, NULL, worker, NULL), 0);
}

static void stop_worker(void)
{
    __atomic_store_n(&worker_running, 0, __ATOMIC_RELEASE);
    aa_name_resolver_proxy_host_wake();
    pthread_join(worker_thread, NULL);
    aa_name_resolver_proxy_host_attach(false);
}

static int64_t elapsed_ms(struct timespec start)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
}

static void should_refuse_without_a_worker(void)
{
    aa_name_resolver_proxy_registration_t r = registration(AA_NAME_RESOLVER_PROXY_HAS_LOOKUP, 200);
    aa_name_resolver_proxy_t *proxy = NULL;
    AA_CHECK_EQ(aa_name_resolver_proxy_create(&proxy, &r, "", record_error, NULL), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "no worker runs it"));
    AA_CHECK(NULL != strstr(aa_errmsg(), "register_name_resolver"));
}

/* The worker started, and a proxy of the registration (flags, timeout) created with init_args. */
static aa_name_resolver_proxy_t *start_worker_and_create(int32_t flags, int64_t timeout_ms, const char *init_args)
{
    start_worker();
    aa_name_resolver_proxy_registration_t r = registration(flags, timeout_ms);
    aa_name_resolver_proxy_t *proxy = NULL;
    AA_CHECK_EQ(aa_name_resolver_proxy_create(&proxy, &r, init_args, record_error, NULL), 0);
    return proxy;
}

static void should_look_up_and_resolve_through_the_worker(void)
{
    aa_name_resolver_proxy_t *proxy = start_worker_and_create(
        AA_NAME_RESOLVER_PROXY_HAS_LOOKUP | AA_NAME_RESOLVER_PROXY_HAS_RESOLVE, 500, "a=1");
    char out[128];
    AA_CHECK_EQ(aa_name_resolver_proxy_lookup(proxy, "endpoint", "svc", false, out, sizeof(out)), 0);
    AA_CHECK(0 == strcmp(out, "svc.internal:1"));
    AA_CHECK_EQ(aa_name_resolver_proxy_lookup(proxy, "endpoint", "svc", true, out, sizeof(out)), 0);
    AA_CHECK(0 == strcmp(out, "svc.internal:2"));

    struct sockaddr_storage address;
    AA_CHECK_EQ(aa_name_resolver_proxy_resolve(proxy, "endpoint", "svc.internal", AF_UNSPEC, false, &address), 0);
    AA_CHECK_EQ(address.ss_family, AF_INET);
    AA_CHECK_EQ(((struct sockaddr_in *)&address)->sin_addr.s_addr, inet_addr("10.1.2.3"));
    AA_CHECK_EQ(((struct sockaddr_in *)&address)->sin_port, 0);
    AA_CHECK_EQ(aa_name_resolver_proxy_resolve(proxy, "endpoint", "v6", AF_INET6, false, &address), 0);
    AA_CHECK_EQ(address.ss_family, AF_INET6);

    int logged_before = logged_count;
    AA_CHECK_EQ(aa_name_resolver_proxy_resolve(proxy, "endpoint", "junk", AF_UNSPEC, false, &address), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "not an IPv4 or IPv6 address literal"));

    /* an exception fails the lookup, naming it; an unknown host is the unknown-host error; the
     * caller (the driver) logs them, not the proxy */
    AA_CHECK_EQ(aa_name_resolver_proxy_lookup(proxy, "endpoint", "boom", false, out, sizeof(out)), -1);
    AA_CHECK(0 == strcmp(aa_errmsg(), "name resolver 'services' (Python): lookup of endpoint=boom: RuntimeError: boom"));
    AA_CHECK_EQ(aa_errcode(), AA_ERROR_CODE_GENERIC_ERROR);
    AA_CHECK_EQ(aa_name_resolver_proxy_resolve(proxy, "control", "nowhere", AF_UNSPEC, false, &address), -1);
    AA_CHECK_EQ(aa_errcode(), AA_ERROR_CODE_UNKNOWN_HOST);
    AA_CHECK_EQ(logged_count, logged_before);

    aa_name_resolver_proxy_delete(proxy);
    for (int i = 0; i < 400 && 0 == __atomic_load_n(&closed_count, __ATOMIC_ACQUIRE); i++)
    {
        struct timespec ts = { 0, 5 * MS };
        nanosleep(&ts, NULL);
    }
    stop_worker();
    AA_CHECK_EQ(created_count, 1);
    AA_CHECK_EQ(closed_count, 1);
    AA_CHECK_EQ(aa_name_resolver_proxy_host_in_flight(), 0);
}

static void should_time_out_a_hung_call_and_serve_later_ones(void)
{
    aa_name_resolver_proxy_t *proxy = start_worker_and_create(AA_NAME_RESOLVER_PROXY_HAS_LOOKUP, 100, "");
    char out[128];
    int logged_before = logged_count;
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    AA_CHECK_EQ(aa_name_resolver_proxy_lookup(proxy, "endpoint", "hang", false, out, sizeof(out)), -1);
    int64_t waited = elapsed_ms(start);
    AA_CHECK(waited >= 95 && waited < 5000);
    AA_CHECK_EQ(aa_errcode(), AA_ERROR_CODE_TIMEOUT);
    AA_CHECK(NULL != strstr(aa_errmsg(), "lookup of endpoint=hang did not answer within 100 ms"));
    AA_CHECK_EQ(logged_count, logged_before);
    AA_CHECK_EQ(aa_name_resolver_proxy_host_in_flight(), 1);   /* abandoned, still held by the hung call */

    /* the next lookup is served while the hung one still holds its slot */
    AA_CHECK_EQ(aa_name_resolver_proxy_lookup(proxy, "endpoint", "next", false, out, sizeof(out)), 0);
    AA_CHECK(0 == strcmp(out, "next.internal:1"));
    /* the late answer frees the slot and reaches nobody */
    int64_t hung = __atomic_load_n(&hung_request_id, __ATOMIC_ACQUIRE);
    AA_CHECK(hung > 0);
    AA_CHECK_EQ(aa_name_resolver_proxy_host_answer(hung, 0, 0, "late:1", ""), 1);
    AA_CHECK_EQ(aa_name_resolver_proxy_host_answer(hung, 0, 0, "late:1", ""), -1);
    AA_CHECK_EQ(aa_name_resolver_proxy_host_in_flight(), 0);

    /* without HAS_LOOKUP, lookup is the identity and never reaches the worker */
    aa_name_resolver_proxy_registration_t plain = registration(AA_NAME_RESOLVER_PROXY_HAS_RESOLVE, 100);
    aa_name_resolver_proxy_t *identity = NULL;
    AA_CHECK_EQ(aa_name_resolver_proxy_create(&identity, &plain, "", record_error, NULL), 0);
    AA_CHECK_EQ(aa_name_resolver_proxy_lookup(identity, "endpoint", "hang", false, out, sizeof(out)), 0);
    AA_CHECK(0 == strcmp(out, "hang"));
    AA_CHECK_EQ(aa_name_resolver_proxy_lookup(identity, "endpoint", "toolong", false, out, 4), -1);

    aa_name_resolver_proxy_delete(identity);
    aa_name_resolver_proxy_delete(proxy);
    stop_worker();
}

static void should_post_do_work_without_waiting_and_not_pile_it_up(void)
{
    aa_name_resolver_proxy_registration_t r = registration(AA_NAME_RESOLVER_PROXY_HAS_DO_WORK, 100);
    aa_name_resolver_proxy_t *proxy = NULL;
    aa_name_resolver_proxy_host_attach(true);   /* no worker thread yet: requests stay queued */
    aa_name_resolver_proxy_request_t stale[8];
    while (aa_name_resolver_proxy_host_poll(stale, 8) > 0)
    {
        /* CLOSE of the last test's proxies, deleted after its worker stopped */
    }
    AA_CHECK_EQ(aa_name_resolver_proxy_create(&proxy, &r, "", record_error, NULL), 0);
    AA_CHECK_EQ(aa_name_resolver_proxy_do_work(proxy, 1000), 1);
    AA_CHECK_EQ(aa_name_resolver_proxy_do_work(proxy, 1050), 0);    /* within the interval */
    AA_CHECK_EQ(aa_name_resolver_proxy_do_work(proxy, 1200), 0);    /* the last one is still in flight */
    aa_name_resolver_proxy_request_t requests[4];
    AA_CHECK_EQ(aa_name_resolver_proxy_host_poll(requests, 4), 2);
    AA_CHECK_EQ(requests[0].type, AA_NAME_RESOLVER_PROXY_REQUEST_CREATE);
    AA_CHECK_EQ(requests[1].type, AA_NAME_RESOLVER_PROXY_REQUEST_DO_WORK);
    AA_CHECK_EQ(requests[1].now_ms, 1000);
    AA_CHECK_EQ(aa_name_resolver_proxy_host_answer(requests[0].request_id, 0, 0, "", ""), 1);
    AA_CHECK_EQ(aa_name_resolver_proxy_host_answer(requests[1].request_id, -1, 0, "", "KeyError: 'x'"), 1);
    AA_CHECK(NULL != strstr(logged, "do_work failed: KeyError: 'x'"));
    AA_CHECK_EQ(aa_name_resolver_proxy_do_work(proxy, 1300), 1);
    AA_CHECK_EQ(aa_name_resolver_proxy_host_poll(requests, 4), 1);
    AA_CHECK_EQ(requests[0].now_ms, 1300);
    /* deleting it: CLOSE comes after what was queued before */
    aa_name_resolver_proxy_delete(proxy);
    AA_CHECK_EQ(aa_name_resolver_proxy_host_answer(requests[0].request_id, 0, 0, "", ""), 1);
    AA_CHECK_EQ(aa_name_resolver_proxy_host_poll(requests, 4), 1);
    AA_CHECK_EQ(requests[0].type, AA_NAME_RESOLVER_PROXY_REQUEST_CLOSE);
    aa_name_resolver_proxy_host_attach(false);
    AA_CHECK_EQ(aa_name_resolver_proxy_host_in_flight(), 0);
}

static void should_log_a_failed_create_and_fail_waiters_when_the_worker_detaches(void)
{
    aa_name_resolver_proxy_t *proxy = start_worker_and_create(AA_NAME_RESOLVER_PROXY_HAS_LOOKUP, 5000, "bad");
    for (int i = 0; i < 200 && NULL == strstr(logged, "creating it failed"); i++)
    {
        struct timespec ts = { 0, 5 * MS };
        nanosleep(&ts, NULL);
    }
    AA_CHECK(NULL != strstr(logged, "name resolver 'services' (Python): creating it failed: ValueError: bad init args"));
    stop_worker();
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    char out[64];
    AA_CHECK_EQ(aa_name_resolver_proxy_lookup(proxy, "endpoint", "svc", false, out, sizeof(out)), -1);
    AA_CHECK(elapsed_ms(start) < 1000);
    AA_CHECK(NULL != strstr(aa_errmsg(), "no worker runs it"));
    aa_name_resolver_proxy_delete(proxy);
}

static int fake_default_resolve(
    void *state, const char *key, const char *host, int family, bool is_re_resolution, struct sockaddr_storage *address)
{
    (void)state;
    (void)key;
    (void)family;
    (void)is_re_resolution;
    memset(address, 0, sizeof(*address));
    address->ss_family = AF_INET;
    ((struct sockaddr_in *)address)->sin_addr.s_addr = inet_addr(0 == strcmp(host, "from-default") ? "192.0.2.1" : "0.0.0.0");
    return 0;
}

static char error_log_text[2048];

static void read_error(int32_t count, int64_t first, int64_t last, const char *error, size_t length, void *clientd)
{
    (void)count;
    (void)first;
    (void)last;
    (void)clientd;
    size_t used = strlen(error_log_text);
    snprintf(error_log_text + used, sizeof(error_log_text) - used, "%.*s\n", (int)length, error);
}

static void should_supply_a_driver_resolver_from_the_registry(void)
{
    AA_CHECK_EQ(aa_name_resolver_proxy_register("py-services", AA_NAME_RESOLVER_PROXY_HAS_LOOKUP, 100 * MS, 1000, ""), 0);
    AA_CHECK_EQ(aa_name_resolver_proxy_register("py-services", AA_NAME_RESOLVER_PROXY_HAS_LOOKUP, 100 * MS, 1000, ""), -1);
    AA_CHECK_EQ(aa_name_resolver_proxy_register("py-bad", 64, 100 * MS, 1000, ""), -1);
    AA_CHECK_EQ(aa_name_resolver_proxy_register("py-bad", 0, 0, 1000, ""), -1);
    aa_strategy_t entry;
    AA_CHECK_EQ(aa_registry_lookup(AA_STRATEGY_KIND_NAME_RESOLVER, "py-services", &entry), 0);
    static uint8_t buffer[16 * 1024];
    aa_distinct_error_log_t log;
    AA_CHECK_EQ(aa_distinct_error_log_init(&log, buffer, sizeof(buffer)), 0);
    aa_name_resolver_t fallback = { "default", NULL, fake_default_resolve, NULL, NULL, NULL };
    aa_clock_t clock = aa_clock_system();
    aa_name_resolver_context_t context;
    memset(&context, 0, sizeof(context));
    context.error_log = &log;
    context.default_resolver = &fallback;
    context.clock = &clock;

    const aa_name_resolver_table_t *table = entry.table;
    aa_name_resolver_t *resolver = NULL;
    AA_CHECK_EQ(table->supplier(&resolver, "", &context, entry.clientd), -1);   /* no worker yet */
    start_worker();
    AA_CHECK_EQ(table->supplier(&resolver, "", &context, entry.clientd), 0);
    AA_CHECK(0 == strcmp(resolver->name, "py-services"));
    AA_CHECK(NULL != resolver->lookup && NULL == resolver->do_work);
    char out[64];
    AA_CHECK_EQ(resolver->lookup(resolver->state, "endpoint", "svc", false, out, sizeof(out)), 0);
    AA_CHECK(0 == strcmp(out, "svc.internal:1"));
    struct sockaddr_storage address;   /* resolve is not overridden: the default resolver answers */
    AA_CHECK_EQ(resolver->resolve(resolver->state, "endpoint", "from-default", AF_UNSPEC, false, &address), 0);
    AA_CHECK_EQ(((struct sockaddr_in *)&address)->sin_addr.s_addr, inet_addr("192.0.2.1"));
    AA_CHECK_EQ(resolver->lookup(resolver->state, "endpoint", "hang", false, out, sizeof(out)), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "name resolver 'py-services' (Python): lookup of endpoint=hang did not answer within 100 ms"));
    AA_CHECK_EQ(resolver->lookup(resolver->state, "control", "boom", false, out, sizeof(out)), -1);
    /* what no caller sees goes to the driver's error log: a create that failed */
    aa_name_resolver_t *broken = NULL;
    AA_CHECK_EQ(table->supplier(&broken, "bad", &context, entry.clientd), 0);
    error_log_text[0] = '\0';
    for (int i = 0; i < 400 && 0 == aa_error_log_read(buffer, sizeof(buffer), read_error, NULL, 0); i++)
    {
        struct timespec ts = { 0, 5 * MS };
        nanosleep(&ts, NULL);
    }
    AA_CHECK(NULL != strstr(error_log_text, "name resolver 'py-services' (Python): creating it failed: ValueError: bad init args"));
    AA_CHECK_EQ(aa_error_log_read(buffer, sizeof(buffer), read_error, NULL, 0), 1);
    broken->close(broken);
    resolver->close(resolver);
    stop_worker();
    int64_t hung = __atomic_load_n(&hung_request_id, __ATOMIC_ACQUIRE);
    aa_name_resolver_proxy_host_answer(hung, 0, 0, "late:1", "");
    aa_distinct_error_log_close(&log);
}

int main(void)
{
    AA_RUN(should_refuse_without_a_worker);
    AA_RUN(should_look_up_and_resolve_through_the_worker);
    AA_RUN(should_time_out_a_hung_call_and_serve_later_ones);
    AA_RUN(should_post_do_work_without_waiting_and_not_pile_it_up);
    AA_RUN(should_log_a_failed_create_and_fail_waiters_when_the_worker_detaches);
    AA_RUN(should_supply_a_driver_resolver_from_the_registry);
    return 0;
}
