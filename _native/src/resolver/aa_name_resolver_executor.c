/* The name resolver executor (aa_name_resolver_executor.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "resolver/aa_name_resolver_executor.h"
#include "util/aa_clock.h"
#include "util/aa_error.h"

#define AA_NAME_RESOLVER_EXECUTOR_MAX_THREADS 64

struct aa_name_resolver_executor_stct
{
    pthread_mutex_t mutex;
    pthread_cond_t work;        /* a request queued, or closing */
    pthread_cond_t exited;      /* a thread left */
    aa_name_resolution_request_t *queue_head;
    aa_name_resolution_request_t *queue_tail;
    aa_name_resolution_request_t *done_head;
    aa_name_resolution_request_t *done_tail;
    volatile int32_t done_count;        /* read without the mutex by poll */
    int32_t in_flight;                  /* conductor only */
    bool is_closing;
    bool is_abandoned;                  /* closed while a thread was inside the resolver */
    int32_t threads_count;
    int32_t running;
    pthread_t threads[AA_NAME_RESOLVER_EXECUTOR_MAX_THREADS];
    aa_name_resolver_t *resolver;
    aa_name_resolver_executor_wake_func_t wake;
    void *wake_clientd;
};

void aa_name_resolution_request_free(aa_name_resolution_request_t *request)
{
    if (NULL != request)
    {
        free(request->command);
        free(request->channel);
        free(request);
    }
}

static void aa_name_resolution_list_free(aa_name_resolution_request_t *list)
{
    while (NULL != list)
    {
        aa_name_resolution_request_t *next = list->next;
        aa_name_resolution_request_free(list);
        list = next;
    }
}

void aa_name_resolution_request_run(aa_name_resolution_request_t *request, aa_name_resolver_t *resolver)
{
    int64_t start_ns = aa_nano_clock();
    int family = AF_UNSPEC;
    for (int32_t i = 0; i < request->names_count; i++)
    {
        aa_name_resolution_name_t *name = &request->names[i];
        aa_uri_address_t parts;
        aa_err_clear();
        int preferred = AF_UNSPEC != name->family ? name->family : family;
        name->rc = aa_name_resolver_resolve_value(
            resolver, name->key, name->value, 0 == strcmp(name->key, "interface"), preferred,
            request->is_re_resolution, &name->address, &parts);
        if (name->rc < 0)
        {
            name->errcode = aa_errcode();
            snprintf(name->error, sizeof(name->error), "%s", aa_errmsg());
        }
        else
        {
            name->errcode = 0;
            name->error[0] = '\0';
            if (AF_UNSPEC == family)
            {
                family = name->address.ss_family;
            }
        }
    }
    request->duration_ns = aa_nano_clock() - start_ns;
}

static void aa_name_resolver_executor_release(aa_name_resolver_executor_t *executor)
{
    aa_name_resolution_list_free(executor->queue_head);
    aa_name_resolution_list_free(executor->done_head);
    pthread_cond_destroy(&executor->work);
    pthread_cond_destroy(&executor->exited);
    pthread_mutex_destroy(&executor->mutex);
    free(executor);
}

static void *aa_name_resolver_executor_run(void *arg)
{
    aa_name_resolver_executor_t *executor = arg;
    pthread_mutex_lock(&executor->mutex);
    while (true)
    {
        while (!executor->is_closing && NULL == executor->queue_head)
        {
            pthread_cond_wait(&executor->work, &executor->mutex);
        }
        if (executor->is_closing)
        {
            break;
        }
        aa_name_resolution_request_t *request = executor->queue_head;
        executor->queue_head = request->next;
        if (NULL == executor->queue_head)
        {
            executor->queue_tail = NULL;
        }
        request->next = NULL;
        aa_name_resolver_t *resolver = executor->resolver;
        pthread_mutex_unlock(&executor->mutex);

        aa_name_resolution_request_run(request, resolver);

        pthread_mutex_lock(&executor->mutex);
        if (executor->is_closing)
        {
            aa_name_resolution_request_free(request);
            break;
        }
        if (NULL == executor->done_tail)
        {
            executor->done_head = request;
        }
        else
        {
            executor->done_tail->next = request;
        }
        executor->done_tail = request;
        __atomic_add_fetch(&executor->done_count, 1, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&executor->mutex);
        if (NULL != executor->wake)
        {
            executor->wake(executor->wake_clientd);
        }
        pthread_mutex_lock(&executor->mutex);
    }
    executor->running--;
    bool release = executor->is_abandoned && 0 == executor->running;
    pthread_cond_broadcast(&executor->exited);
    pthread_mutex_unlock(&executor->mutex);
    if (release)
    {
        aa_name_resolver_executor_release(executor);
    }
    return NULL;
}

int aa_name_resolver_executor_create(
    aa_name_resolver_executor_t **out, int32_t threads_count, aa_name_resolver_t *resolver,
    aa_name_resolver_executor_wake_func_t wake, void *wake_clientd)
{
    *out = NULL;
    if (threads_count < 1 || threads_count > AA_NAME_RESOLVER_EXECUTOR_MAX_THREADS)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "AERON_DRIVER_ASYNC_EXECUTOR_THREADS=%d: give 1 to %d", threads_count,
            AA_NAME_RESOLVER_EXECUTOR_MAX_THREADS);
        return -1;
    }
    aa_name_resolver_executor_t *executor = calloc(1, sizeof(*executor));
    if (NULL == executor)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory creating the name resolver executor");
        return -1;
    }
    pthread_mutex_init(&executor->mutex, NULL);
    pthread_cond_init(&executor->work, NULL);
    pthread_cond_init(&executor->exited, NULL);
    executor->resolver = resolver;
    executor->wake = wake;
    executor->wake_clientd = wake_clientd;
    for (int32_t i = 0; i < threads_count; i++)
    {
        pthread_mutex_lock(&executor->mutex);
        executor->running++;
        pthread_mutex_unlock(&executor->mutex);
        int rc = pthread_create(&executor->threads[i], NULL, aa_name_resolver_executor_run, executor);
        if (0 != rc)
        {
            pthread_mutex_lock(&executor->mutex);
            executor->running--;
            pthread_mutex_unlock(&executor->mutex);
            AA_SET_ERR(rc, "starting name resolver executor thread %d: %s", i, strerror(rc));
            aa_name_resolver_executor_close(executor, INT64_MAX);
            return -1;
        }
        executor->threads_count++;
    }
    *out = executor;
    return 0;
}

void aa_name_resolver_executor_submit(aa_name_resolver_executor_t *executor, aa_name_resolution_request_t *request)
{
    request->next = NULL;
    pthread_mutex_lock(&executor->mutex);
    if (NULL == executor->queue_tail)
    {
        executor->queue_head = request;
    }
    else
    {
        executor->queue_tail->next = request;
    }
    executor->queue_tail = request;
    executor->in_flight++;
    pthread_cond_signal(&executor->work);
    pthread_mutex_unlock(&executor->mutex);
}

aa_name_resolution_request_t *aa_name_resolver_executor_poll(aa_name_resolver_executor_t *executor)
{
    if (0 == __atomic_load_n(&executor->done_count, __ATOMIC_ACQUIRE))
    {
        return NULL;
    }
    pthread_mutex_lock(&executor->mutex);
    aa_name_resolution_request_t *list = executor->done_head;
    int32_t n = executor->done_count;
    executor->done_head = NULL;
    executor->done_tail = NULL;
    __atomic_store_n(&executor->done_count, 0, __ATOMIC_RELAXED);
    executor->in_flight -= n;
    pthread_mutex_unlock(&executor->mutex);
    return list;
}

int32_t aa_name_resolver_executor_in_flight(const aa_name_resolver_executor_t *executor)
{
    return executor->in_flight;
}

int aa_name_resolver_executor_close(aa_name_resolver_executor_t *executor, int64_t timeout_ns)
{
    if (NULL == executor)
    {
        return 0;
    }
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    int64_t ns = (int64_t)deadline.tv_nsec + (timeout_ns > 3600000000000LL ? 3600000000000LL : timeout_ns);
    deadline.tv_sec += (time_t)(ns / 1000000000LL);
    deadline.tv_nsec = (long)(ns % 1000000000LL);

    pthread_mutex_lock(&executor->mutex);
    executor->is_closing = true;
    pthread_cond_broadcast(&executor->work);
    while (executor->running > 0)
    {
        if (ETIMEDOUT == pthread_cond_timedwait(&executor->exited, &executor->mutex, &deadline))
        {
            break;
        }
    }
    if (executor->running > 0)
    {
        /* A thread is inside the resolver (a DNS server that does not answer): leave the executor to
         * it; the last thread out frees it. */
        executor->is_abandoned = true;
        for (int32_t i = 0; i < executor->threads_count; i++)
        {
            pthread_detach(executor->threads[i]);
        }
        pthread_mutex_unlock(&executor->mutex);
        return 1;
    }
    pthread_mutex_unlock(&executor->mutex);
    for (int32_t i = 0; i < executor->threads_count; i++)
    {
        pthread_join(executor->threads[i], NULL);
    }
    aa_name_resolver_executor_release(executor);
    return 0;
}
