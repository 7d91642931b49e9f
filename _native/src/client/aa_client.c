#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client/aa_client.h"
#include "aeron_async.h"
#include "protocols/aa_control_protocol.h"
#include "uri/aa_uri.h"
#include "util/aa_clock.h"
#include "util/aa_error.h"

#define AA_CLIENT_KEEPALIVE_INTERVAL_NS (500 * 1000 * 1000LL)
#define AA_CLIENT_RESOURCE_LINGER_NS (3 * 1000 * 1000 * 1000LL)
#define AA_CLIENT_SERVICE_INTERVAL_NS (1 * 1000 * 1000LL)
/* Checks of the driver heartbeat are at most a sleep + a service interval apart, plus scheduling slack. */
#define AA_CLIENT_DRIVER_CHECK_MARGIN_MS (50LL)
/* A heartbeat this stale makes the conductor check whether the driver's process still exists. */
#define AA_CLIENT_DRIVER_PID_CHECK_AGE_MS (100LL)

void aa_client_set_error_from_state(aa_client_t *client)
{
    int32_t state = aa_get_int32_acquire(&client->state);
    int code = AA_CLIENT_STATE_DRIVER_TIMEOUT == state ? AA_ERROR_CODE_DRIVER_TIMEOUT :
        AA_CLIENT_STATE_CLIENT_TIMEOUT == state ? AA_ERROR_CODE_CLIENT_TIMEOUT :
        AA_CLIENT_STATE_DRIVER_CORRUPT == state ? AA_ERROR_CODE_DRIVER_CORRUPT : AA_ERROR_CODE_CLOSED;
    AA_SET_ERR(code, "%s", '\0' != client->state_message[0] ? client->state_message : "the client is closed");
}

void aa_client_driver_corrupt(aa_client_t *client, const char *what)
{
    if (AA_CLIENT_STATE_ACTIVE != client->state)
    {
        return;
    }
    snprintf(client->state_message, sizeof(client->state_message),
        "the media driver's CnC file %s/%s is corrupt: %s. This client stopped rather than trust it: something other "
        "than the driver wrote the file; restart the driver (it makes a new CnC file), let only the driver's user "
        "(and its group) write the aeron directory (docs/security.md, \"The CnC file\"), and reconnect",
        client->aeron_dir, AA_CNC_FILE, what);
    aa_put_int32_release(&client->state, AA_CLIENT_STATE_DRIVER_CORRUPT);
}

bool aa_client_counter_id_valid(aa_client_t *client, int32_t counter_id)
{
    return counter_id >= 0 && counter_id <= client->counters.max_counter_id;
}

/* ---- lingering resources ---- */

/* Keep a new log mapping populated ahead of the stream (aa_prefault.h), so that the message path
 * never takes the page faults. */
int64_t aa_client_publication_prefault_position(const void *pub)
{
    return aa_logbuffer_producer_position(&((aa_publication_t *)pub)->log);
}

int64_t aa_client_image_prefault_position(const void *image)
{
    return aa_get_int64_volatile(((const aa_image_t *)image)->subscriber_position);
}

void aa_client_free_image_mapping(aa_image_t *image)
{
    aa_prefault_remove(&image->subscription->client->prefault, image->mapped.addr);
    aa_unmap(&image->mapped);
    free(image->assembly);
    image->assembly = NULL;
    image->assembly_capacity = 0;
}

static void aa_client_free_subscription(aa_subscription_t *sub)
{
    aa_image_list_t *list = sub->images;
    if (NULL != list)
    {
        for (size_t i = 0; i < list->count; i++)
        {
            aa_client_free_image_mapping(list->images[i]);
            free(list->images[i]);
        }
        free(list);
    }
    for (size_t i = 0; i < sub->retired_count; i++)
    {
        aa_client_free_image_mapping(sub->retired[i]);
        free(sub->retired[i]);
    }
    free(sub->retired);
    free(sub->events);
    free(sub->channel);
    free(sub);
}

void aa_client_free_publication(aa_publication_t *pub)
{
    aa_prefault_remove(&pub->client->prefault, pub->mapped.addr);
    aa_unmap(&pub->mapped);
    free(pub->channel);
    free(pub);
}

static void aa_client_free_lingering(aa_lingering_t *l)
{
    switch (l->kind)
    {
        case AA_LINGER_PUBLICATION:
            aa_client_free_publication(l->resource);
            break;
        case AA_LINGER_IMAGE_LIST:
            free(l->resource);
            break;
        case AA_LINGER_IMAGE:
            aa_client_free_image_mapping(l->resource);
            break;
        case AA_LINGER_COUNTER:
            free(l->resource);
            break;
        case AA_LINGER_SUBSCRIPTION:
        {
            aa_subscription_t *sub = l->resource;
            aa_client_t *client = sub->client;
            for (size_t i = 0; i < client->lingering_count; i++)
            {
                aa_lingering_t *other = &client->lingering[i];
                if (AA_LINGER_IMAGE == other->kind && ((aa_image_t *)other->resource)->subscription == sub)
                {
                    other->kind = 0;
                }
            }
            aa_client_free_subscription(sub);
            break;
        }
        default:
            break;
    }
}

int aa_client_linger(aa_client_t *client, void *resource, int32_t kind)
{
    if (AA_GROW(client, lingering) < 0)
    {
        return -1;
    }
    aa_lingering_t *l = &client->lingering[client->lingering_count++];
    l->resource = resource;
    l->kind = kind;
    l->deadline_ns = aa_clock_nano_time(&client->clock) + client->resource_linger_ns;
    return 0;
}

/* ---- commands ---- */

int aa_client_send(aa_client_t *client, int32_t msg_type_id, const void *msg, size_t length)
{
    if (aa_mpsc_rb_write(&client->to_driver, msg_type_id, msg, length) < 0)
    {
        AA_SET_ERR(AA_ERROR_CODE_RESOURCE_TEMPORARILY_UNAVAILABLE,
            "could not send a command to the media driver at %s: its command buffer is full", client->aeron_dir);
        return -1;
    }
    aa_doorbell_ring(aa_cnc_doorbell(client->cnc));
    return 0;
}

int aa_client_send_remove(aa_client_t *client, int32_t msg_type_id, int64_t registration_id)
{
    aa_remove_command_t command = {
        .correlated = { .client_id = client->client_id, .correlation_id = aa_mpsc_rb_next_correlation_id(&client->to_driver) },
        .registration_id = registration_id,
    };
    return aa_client_send(client, msg_type_id, &command, sizeof(command));
}

aa_registration_t *aa_client_find_registration(aa_client_t *client, int64_t correlation_id)
{
    for (size_t i = 0; i < client->registrations_count; i++)
    {
        if (client->registrations[i].correlation_id == correlation_id)
        {
            return &client->registrations[i];
        }
    }
    return NULL;
}

static void aa_client_remove_registration(aa_client_t *client, aa_registration_t *r)
{
    free(r->error_message);
    free(r->channel);
    size_t index = (size_t)(r - client->registrations);
    client->registrations[index] = client->registrations[--client->registrations_count];
}

/* ---- conductor duty cycle ---- */

static void aa_client_mark_all_closed(aa_client_t *client)
{
    for (size_t i = 0; i < client->publications_count; i++)
    {
        aa_put_int32_release(&client->publications[i]->is_closed, 1);
        aa_client_notify(client->publications[i]->notify_fd);
    }
    for (size_t i = 0; i < client->subscriptions_count; i++)
    {
        aa_subscription_t *sub = client->subscriptions[i];
        aa_put_int32_release(&sub->is_closed, 1);
        aa_client_notify(sub->notify_fd);
    }
    for (size_t i = 0; i < client->added_counters_count; i++)
    {
        aa_put_int32_release(&client->added_counters[i]->is_closed, 1);
    }
    for (size_t i = 0; i < client->registrations_count; i++)
    {
        aa_registration_t *r = &client->registrations[i];
        if (0 == r->status)
        {
            aa_client_registration_failed(r,
                AA_CLIENT_STATE_DRIVER_CORRUPT == client->state ? AA_ERROR_CODE_DRIVER_CORRUPT : AA_ERROR_CODE_DRIVER_TIMEOUT,
                client->state_message, strlen(client->state_message));
        }
    }
}

static void aa_client_keepalive(aa_client_t *client, int64_t now_ms)
{
    if (client->heartbeat_counter_id < 0)
    {
        client->heartbeat_counter_id = aa_counters_reader_find_by_type_id_and_registration_id(
            &client->counters, AA_COUNTER_TYPE_CLIENT_HEARTBEAT, client->client_id);
    }
    if (client->heartbeat_counter_id >= 0 &&
        AA_COUNTER_RECORD_ALLOCATED == aa_counters_reader_counter_state(&client->counters, client->heartbeat_counter_id) &&
        client->client_id == aa_counters_reader_counter_registration_id(&client->counters, client->heartbeat_counter_id))
    {
        aa_put_int64_release(aa_counters_reader_addr(&client->counters, client->heartbeat_counter_id), now_ms);
    }
    else
    {
        client->heartbeat_counter_id = -1;
        aa_correlated_command_t command = { .client_id = client->client_id, .correlation_id = 0 };
        aa_mpsc_rb_write(&client->to_driver, AA_COMMAND_CLIENT_KEEPALIVE, &command, sizeof(command));
    }
}

/* The state message for a client whose driver is gone, by what aa_cnc_driver_liveness found. */
static void aa_client_describe_lost_driver(aa_client_t *client, int liveness, int64_t age_ms)
{
    size_t size = sizeof(client->state_message);
    int64_t pid = client->cnc->pid;
    switch (liveness)
    {
        case AA_CNC_DRIVER_CLOSED:
            snprintf(client->state_message, size,
                "the media driver at %s (pid %" PRId64 ") has closed; start a driver again and reconnect",
                client->aeron_dir, pid);
            break;
        case AA_CNC_DRIVER_EXITED:
            snprintf(client->state_message, size,
                "the media driver at %s has exited without closing (pid %" PRId64 " no longer runs); "
                "start a driver again and reconnect", client->aeron_dir, pid);
            break;
        default:
            snprintf(client->state_message, size,
                "the media driver at %s has not answered for %" PRId64 " ms (driver timeout %" PRId64 " ms); "
                "it has stopped or hangs: restart it and reconnect", client->aeron_dir, age_ms,
                client->driver_timeout_ms);
            break;
    }
}

/* Housekeeping: keepalives, registration deadlines and freeing lingering resources are not counted
 * as work, so an idle conductor backs off fully; only a lost driver counts. */
static int aa_client_service(aa_client_t *client, int64_t now_ns)
{
    int64_t now_ms = aa_clock_epoch_time(&client->clock);
    int64_t heartbeat_ms = aa_mpsc_rb_consumer_heartbeat_time_value(&client->to_driver);
    /* Lost at once when the driver closed (it marks its CnC file so as its last act) or its process
     * is gone (checked once the heartbeat is a little stale, so a live driver costs no system call);
     * otherwise once the heartbeat is older than the driver timeout less the longest gap between two
     * checks (an idle conductor sleeps between them), so that waiters hear of a hung driver within
     * the driver timeout, not up to a sleep after it. A live driver's heartbeat is at most a deep
     * park (16 ms) old. */
    int64_t margin_ms = client->driver_timeout_ms / 4 < AA_CLIENT_DRIVER_CHECK_MARGIN_MS ?
        client->driver_timeout_ms / 4 : AA_CLIENT_DRIVER_CHECK_MARGIN_MS;
    int64_t age_ms = now_ms - heartbeat_ms;
    int liveness = AA_CNC_DRIVER_CLOSED_HEARTBEAT == heartbeat_ms || age_ms >= AA_CLIENT_DRIVER_PID_CHECK_AGE_MS ?
        aa_cnc_driver_liveness(client->cnc, heartbeat_ms, age_ms, client->driver_timeout_ms - margin_ms) :
        AA_CNC_DRIVER_ACTIVE;
    if (AA_CNC_DRIVER_ACTIVE != liveness)
    {
        aa_client_describe_lost_driver(client, liveness, age_ms);
        aa_put_int32_release(&client->state, AA_CLIENT_STATE_DRIVER_TIMEOUT);
        aa_client_mark_all_closed(client);
        return 1;
    }

    if (now_ns >= client->time_of_last_keepalive_ns + client->keepalive_interval_ns)
    {
        client->time_of_last_keepalive_ns = now_ns;
        aa_client_keepalive(client, now_ms);
    }

    for (size_t i = 0; i < client->registrations_count; i++)
    {
        aa_registration_t *r = &client->registrations[i];
        if (0 == r->status && now_ms > r->deadline_ms)
        {
            char message[512];
            int n = snprintf(message, sizeof(message),
                "no response from the media driver at %s within the driver timeout (%" PRId64 " ms)",
                client->aeron_dir, client->driver_timeout_ms);
            aa_client_registration_failed(r, AA_ERROR_CODE_DRIVER_TIMEOUT, message, (size_t)n);
        }
    }

    for (size_t i = client->lingering_count; i-- > 0;)
    {
        if (now_ns >= client->lingering[i].deadline_ns)
        {
            aa_client_free_lingering(&client->lingering[i]);
            client->lingering[i] = client->lingering[--client->lingering_count];
        }
    }
    return 0;
}

/* Under the lock, after a duty cycle: how many registrations still wait for the driver. */
static void aa_client_count_awaiting(aa_client_t *client)
{
    int32_t awaiting = 0;
    for (size_t i = 0; i < client->registrations_count; i++)
    {
        awaiting += 0 == client->registrations[i].status ? 1 : 0;
    }
    if (awaiting != client->awaiting_responses)
    {
        aa_put_int32_release(&client->awaiting_responses, awaiting);
    }
}

int aa_client_do_work(aa_client_t *client)
{
    if (0 != pthread_mutex_trylock(&client->lock))
    {
        return 0;
    }
    int work_count = 0;
    if (AA_CLIENT_STATE_ACTIVE == client->state)
    {
        int received = aa_broadcast_receiver_receive(&client->to_clients, aa_client_on_response, client);
        if (received < 0)
        {
            char what[400];
            snprintf(what, sizeof(what), "%s", aa_errmsg());
            aa_client_driver_corrupt(client, what);
            received = 1;
        }
        work_count += received;
        if (aa_get_int32_acquire(&client->parked_count) > 0)
        {
            int signalled = aa_client_check_waiters(client);
            if (signalled > 0)
            {
                aa_client_wake_spin_on_signal(client);
            }
            work_count += signalled;
        }
        if (AA_CLIENT_STATE_ACTIVE != client->state)
        {
            aa_client_mark_all_closed(client);
        }
        else
        {
            work_count += aa_prefault_do_work(&client->prefault);
            int64_t now_ns = aa_clock_nano_time(&client->clock);
            if (now_ns >= client->time_of_last_service_ns + AA_CLIENT_SERVICE_INTERVAL_NS)
            {
                client->time_of_last_service_ns = now_ns;
                work_count += aa_client_service(client, now_ns);
            }
        }
    }
    if (client->awaiting_responses > 0)
    {
        aa_client_count_awaiting(client); /* answered, failed, timed out, or the client closed */
    }
    pthread_mutex_unlock(&client->lock);
    return work_count;
}

static int aa_client_agent_do_work(void *state)
{
    return aa_client_do_work(state);
}

static void aa_client_agent_on_close(void *state)
{
    (void)state;
}

/* ---- connect / close ---- */

int aa_client_connect(
    aa_client_t **out, const char *aeron_dir, int64_t driver_timeout_ms, bool use_invoker, const char *idle_strategy)
{
    return aa_client_connect_with_clock(out, aeron_dir, driver_timeout_ms, use_invoker, idle_strategy, NULL, NULL, NULL);
}

int aa_client_connect_with_clock(
    aa_client_t **out, const char *aeron_dir, int64_t driver_timeout_ms, bool use_invoker, const char *idle_strategy,
    aa_clock_func_t nano_time, aa_clock_func_t epoch_time, void *clientd)
{
    if ((NULL == nano_time) != (NULL == epoch_time))
    {
        AA_SET_ERR(EINVAL, "%s", "aa_client_connect_with_clock: give both nano_time and epoch_time, or neither for the "
            "system clocks");
        return -1;
    }
    aa_client_t *client = calloc(1, sizeof(aa_client_t));
    if (NULL == client)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory allocating the client");
        return -1;
    }
    client->clock = aa_clock_system();
    if (NULL != nano_time)
    {
        aa_clock_t clock = { nano_time, epoch_time, clientd };
        client->clock = clock;
    }
    if (NULL == aeron_dir || '\0' == aeron_dir[0])
    {
        aa_default_aeron_dir(client->aeron_dir, sizeof(client->aeron_dir));
    }
    else
    {
        snprintf(client->aeron_dir, sizeof(client->aeron_dir), "%s", aeron_dir);
    }
    client->driver_timeout_ms = driver_timeout_ms > 0 ? driver_timeout_ms : 10000;
    client->keepalive_interval_ns = AA_CLIENT_KEEPALIVE_INTERVAL_NS;
    client->resource_linger_ns = AA_CLIENT_RESOURCE_LINGER_NS;
    client->heartbeat_counter_id = -1;
    client->use_invoker = use_invoker;

    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", client->aeron_dir, AA_CNC_FILE);
    int64_t length = aa_file_length(path);
    if (length < 0 && EACCES == errno)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "no access to the media driver's %s: %s; a driver's directory is its user's only (docs/security.md, "
            "Files): run this client as that user, or have the driver started with AERON_DIR_GROUP set to a group "
            "of this user", path, strerror(EACCES));
        free(client);
        return -1;
    }
    if (length < AA_CNC_HEADER_LENGTH)
    {
        AA_SET_ERR(AA_ERROR_CODE_DRIVER_NOT_FOUND,
            "no media driver at %s (%s is missing); start one with `aeron-async driver` (AERON_DIR=%s), "
            "or launch an embedded one with aeron_async.MediaDriver.launch()", client->aeron_dir, path, client->aeron_dir);
        free(client);
        return -1;
    }
    if (aa_map_existing_file(&client->cnc_file, path, 0) < 0)
    {
        AA_APPEND_ERR("%s", "mapping the media driver's CnC file");
        free(client);
        return -1;
    }
    aa_cnc_metadata_t *cnc = (aa_cnc_metadata_t *)client->cnc_file.addr;
    int64_t deadline_ms = aa_epoch_clock() + client->driver_timeout_ms;
    int32_t version;
    while (AA_CNC_VERSION != (version = aa_get_int32_acquire(&cnc->cnc_version)))
    {
        if (0 != version || aa_epoch_clock() > deadline_ms)
        {
            AA_SET_ERR(AA_ERROR_CODE_DRIVER_NOT_FOUND,
                "the CnC file at %s has version %d.%d.%d; this client needs %d.%d.%d (a driver of another version, "
                "or one that never finished starting)", path, (version >> 16) & 0xff, (version >> 8) & 0xff,
                version & 0xff, AA_CNC_VERSION_MAJOR, AA_CNC_VERSION_MINOR, AA_CNC_VERSION_PATCH);
            aa_unmap(&client->cnc_file);
            free(client);
            return -1;
        }
        usleep(1000);
    }
    client->cnc = cnc;
    const char *fault = aa_cnc_lengths_fault(cnc, client->cnc_file.length);
    if (NULL != fault ||
        aa_mpsc_rb_init(&client->to_driver, aa_cnc_to_driver_buffer(cnc), (size_t)cnc->to_driver_buffer_length) < 0 ||
        aa_broadcast_receiver_init(&client->to_clients, aa_cnc_to_clients_buffer(cnc), (size_t)cnc->to_clients_buffer_length) < 0)
    {
        AA_SET_ERR(AA_ERROR_CODE_DRIVER_CORRUPT,
            "the CnC file at %s is truncated or corrupt (%s): restart the driver (it makes a new CnC file), and let only "
            "the driver's user (and its group) write the aeron directory (docs/security.md, \"The CnC file\")", path,
            NULL != fault ? fault : "its command buffers cannot be mapped");
        aa_unmap(&client->cnc_file);
        free(client);
        return -1;
    }
    aa_counters_reader_init(
        &client->counters, aa_cnc_counters_metadata_buffer(cnc), (size_t)cnc->counters_metadata_buffer_length,
        aa_cnc_counters_values_buffer(cnc), (size_t)cnc->counters_values_buffer_length);

    int64_t heartbeat_ms = aa_mpsc_rb_consumer_heartbeat_time_value(&client->to_driver);
    int64_t age = aa_clock_epoch_time(&client->clock) - heartbeat_ms;
    int liveness = aa_cnc_driver_liveness(cnc, heartbeat_ms, age, client->driver_timeout_ms);
    if (AA_CNC_DRIVER_ACTIVE != liveness)
    {
        if (AA_CNC_DRIVER_CLOSED == liveness)
        {
            AA_SET_ERR(AA_ERROR_CODE_DRIVER_NOT_FOUND,
                "the media driver at %s has closed (pid %" PRId64 "); start one with `aeron-async driver`",
                client->aeron_dir, (int64_t)cnc->pid);
        }
        else if (AA_CNC_DRIVER_EXITED == liveness)
        {
            AA_SET_ERR(AA_ERROR_CODE_DRIVER_NOT_FOUND,
                "the media driver at %s is not running (pid %" PRId64 " exited without closing it); "
                "start one with `aeron-async driver`", client->aeron_dir, (int64_t)cnc->pid);
        }
        else
        {
            AA_SET_ERR(AA_ERROR_CODE_DRIVER_NOT_FOUND,
                "the media driver at %s is not running (its last heartbeat was %" PRId64 " ms ago, pid %" PRId64 "); "
                "start one with `aeron-async driver`", client->aeron_dir, age, (int64_t)cnc->pid);
        }
        aa_broadcast_receiver_close(&client->to_clients);
        aa_unmap(&client->cnc_file);
        free(client);
        return -1;
    }

    client->client_id = aa_mpsc_rb_next_correlation_id(&client->to_driver);
    client->wake_spin_max_ns = AA_CLIENT_WAKE_SPIN_DEFAULT_NS;
    client->wake_spin_ns = AA_CLIENT_WAKE_SPIN_DEFAULT_NS;
    pthread_mutex_init(&client->lock, NULL);
    client->time_of_last_keepalive_ns = aa_clock_nano_time(&client->clock);
    aa_correlated_command_t command = { .client_id = client->client_id, .correlation_id = 0 };
    if (aa_client_send(client, AA_COMMAND_CLIENT_KEEPALIVE, &command, sizeof(command)) < 0)
    {
        aa_broadcast_receiver_close(&client->to_clients);
        aa_unmap(&client->cnc_file);
        pthread_mutex_destroy(&client->lock);
        free(client);
        return -1;
    }


    if (!use_invoker)
    {
        aa_idle_strategy_t idle;
        int idle_rc = 0;
        if (NULL == idle_strategy || '\0' == idle_strategy[0])
        {
            aa_client_idle_state_t *state = calloc(1, sizeof(aa_client_idle_state_t));
            if (NULL == state)
            {
                AA_SET_ERR(ENOMEM, "%s", "out of memory");
                idle_rc = -1;
            }
            else
            {
                state->client = client;
                idle.name = "client";
                idle.idle = aa_client_idle;
                idle.init = aa_client_idle_init;
                idle.set_doorbell = NULL;
                idle.close = NULL;
                idle.state = state;
            }
        }
        else
        {
            idle_rc = aa_idle_strategy_load(&idle, idle_strategy);
        }
        if (idle_rc < 0 ||
            aa_agent_runner_init(&client->runner, "aeron-client", client, aa_client_agent_do_work, aa_client_agent_on_close, &idle) < 0 ||
            aa_agent_runner_start(&client->runner) < 0)
        {
            aa_broadcast_receiver_close(&client->to_clients);
            aa_unmap(&client->cnc_file);
            pthread_mutex_destroy(&client->lock);
            free(client);
            return -1;
        }
        client->runner_started = true;
    }
    *out = client;
    return 0;
}

int aa_client_close(aa_client_t *client)
{
    if (NULL == client)
    {
        return 0;
    }
    if (client->runner_started)
    {
        aa_agent_runner_signal_stop(&client->runner);
        aa_client_wake(client); /* the conductor sees it stopped now, not after its long sleep */
        aa_agent_runner_close(&client->runner);
    }
    pthread_mutex_lock(&client->lock);
    if (AA_CLIENT_STATE_ACTIVE == client->state)
    {
        aa_correlated_command_t command = {
            .client_id = client->client_id, .correlation_id = aa_mpsc_rb_next_correlation_id(&client->to_driver) };
        aa_mpsc_rb_write(&client->to_driver, AA_COMMAND_CLIENT_CLOSE, &command, sizeof(command));
        aa_doorbell_ring(aa_cnc_doorbell(client->cnc));
    }
    aa_put_int32_release(&client->state, AA_CLIENT_STATE_CLOSED);
    for (size_t i = 0; i < client->lingering_count; i++)
    {
        aa_client_free_lingering(&client->lingering[i]);
    }
    for (size_t i = 0; i < client->publications_count; i++)
    {
        aa_client_free_publication(client->publications[i]);
    }
    for (size_t i = 0; i < client->subscriptions_count; i++)
    {
        aa_client_free_subscription(client->subscriptions[i]);
    }
    for (size_t i = 0; i < client->added_counters_count; i++)
    {
        free(client->added_counters[i]);
    }
    free(client->added_counters);
    free(client->publication_errors);
    for (size_t i = 0; i < client->registrations_count; i++)
    {
        free(client->registrations[i].error_message);
        free(client->registrations[i].channel);
    }
    aa_prefault_close(&client->prefault);
    free(client->lingering);
    free(client->publications);
    free(client->subscriptions);
    free(client->registrations);
    aa_broadcast_receiver_close(&client->to_clients);
    aa_unmap(&client->cnc_file);
    pthread_mutex_unlock(&client->lock);
    pthread_mutex_destroy(&client->lock);
    free(client);
    return 0;
}

int32_t aa_client_state(aa_client_t *client)
{
    return aa_get_int32_acquire(&client->state);
}

const char *aa_client_state_message(aa_client_t *client)
{
    return client->state_message;
}

int64_t aa_client_id(aa_client_t *client)
{
    return client->client_id;
}

const char *aa_client_aeron_dir(aa_client_t *client)
{
    return client->aeron_dir;
}

/* ---- registrations ---- */

int64_t aa_client_registration_begin(aa_client_t *client)
{
    pthread_mutex_lock(&client->lock);
    if (AA_CLIENT_STATE_ACTIVE != client->state)
    {
        aa_client_set_error_from_state(client);
        pthread_mutex_unlock(&client->lock);
        return -1;
    }
    if (AA_GROW(client, registrations) < 0)
    {
        pthread_mutex_unlock(&client->lock);
        return -1;
    }
    return aa_mpsc_rb_next_correlation_id(&client->to_driver);
}

int64_t aa_client_registration_send(
    aa_client_t *client, int64_t correlation_id, int32_t type, void *request, size_t length, int32_t stream_id,
    char *channel)
{
    aa_correlated_command_t *correlated = request;
    correlated->client_id = client->client_id;
    correlated->correlation_id = correlation_id;
    if (aa_client_send(client, type, request, length) < 0)
    {
        free(channel);
        pthread_mutex_unlock(&client->lock);
        return -1;
    }
    aa_registration_t *r = &client->registrations[client->registrations_count++];
    memset(r, 0, sizeof(*r));
    r->correlation_id = correlation_id;
    r->type = type;
    r->stream_id = stream_id;
    r->channel = channel;
    if (AA_COMMAND_ADD_STATIC_COUNTER == type)
    {
        /* kept before the lock is let go: the answer names only the correlation id */
        r->static_registration_id = ((const aa_static_counter_command_t *)request)->registration_id;
    }
    r->deadline_ms = aa_clock_epoch_time(&client->clock) + client->driver_timeout_ms;
    aa_put_int32_release(&client->awaiting_responses, client->awaiting_responses + 1);
    pthread_mutex_unlock(&client->lock);
    if (!client->use_invoker &&
        !(aa_get_int32_acquire(aa_cnc_features(client->cnc)) & AA_CNC_FEATURE_CLIENTS_DOORBELL))
    {
        aa_client_wake(client); /* from its long sleep, to look for the answer often (no ring will come) */
    }
    return correlation_id;
}

static int64_t aa_client_async_add(
    aa_client_t *client, int32_t command_type, const char *channel, int32_t stream_id)
{
    aa_uri_t uri;
    if (aa_uri_parse(channel, &uri) < 0)
    {
        return -1;
    }
    size_t channel_length = strlen(channel);
    uint8_t buffer[sizeof(aa_subscription_command_t) + AA_URI_MAX_LENGTH];
    int64_t correlation_id = aa_client_registration_begin(client);
    if (correlation_id < 0)
    {
        return -1;
    }
    size_t header_length;
    if (AA_COMMAND_ADD_SUBSCRIPTION == command_type)
    {
        aa_subscription_command_t *command = (aa_subscription_command_t *)buffer;
        command->registration_correlation_id = -1;
        command->stream_id = stream_id;
        command->channel_length = (int32_t)channel_length;
        header_length = sizeof(*command);
    }
    else
    {
        aa_publication_command_t *command = (aa_publication_command_t *)buffer;
        command->stream_id = stream_id;
        command->channel_length = (int32_t)channel_length;
        header_length = sizeof(*command);
    }
    memcpy(buffer + header_length, channel, channel_length);
    char *channel_copy = strdup(channel);
    if (NULL == channel_copy)
    {
        pthread_mutex_unlock(&client->lock);
        return -1;
    }
    return aa_client_registration_send(
        client, correlation_id, command_type, buffer, header_length + channel_length, stream_id, channel_copy);
}

/* A registration's answer: 1 with *resource (and *session_id, for a next session id request) once
 * answered, 0 while not, -1 with its error. */
static int aa_client_poll_registration(
    aa_client_t *client, int64_t correlation_id, void **resource, int32_t *session_id)
{
    if (client->use_invoker)
    {
        aa_client_do_work(client);
    }
    pthread_mutex_lock(&client->lock);
    aa_registration_t *r = aa_client_find_registration(client, correlation_id);
    if (NULL == r)
    {
        if (AA_CLIENT_STATE_ACTIVE != client->state)
        {
            aa_client_set_error_from_state(client);
        }
        else
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "unknown registration %" PRId64, correlation_id);
        }
        pthread_mutex_unlock(&client->lock);
        return -1;
    }
    if ((NULL != session_id) != (AA_COMMAND_GET_NEXT_AVAILABLE_SESSION_ID == r->type))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "registration %" PRId64 " is %sa next session id request",
            correlation_id, NULL != session_id ? "not " : "");
        pthread_mutex_unlock(&client->lock);
        return -1;
    }
    int status = r->status;
    if (1 == status)
    {
        *resource = r->resource;
        if (NULL != session_id)
        {
            *session_id = r->session_id;
        }
        aa_client_remove_registration(client, r);
    }
    else if (-1 == status)
    {
        AA_SET_ERR(r->error_code, "%s", NULL != r->error_message ? r->error_message : "registration failed");
        aa_client_remove_registration(client, r);
    }
    pthread_mutex_unlock(&client->lock);
    return status;
}

int aa_client_async_poll(aa_client_t *client, int64_t correlation_id, void **resource)
{
    return aa_client_poll_registration(client, correlation_id, resource, NULL);
}

int aa_client_async_next_session_id_poll(aa_client_t *client, int64_t correlation_id, int32_t *session_id)
{
    void *unused = NULL;
    return aa_client_poll_registration(client, correlation_id, &unused, session_id);
}

int64_t aa_client_async_add_publication(aa_client_t *client, const char *channel, int32_t stream_id, bool exclusive)
{
    return aa_client_async_add(
        client, exclusive ? AA_COMMAND_ADD_EXCLUSIVE_PUBLICATION : AA_COMMAND_ADD_PUBLICATION, channel, stream_id);
}

int aa_client_async_add_publication_poll(aa_client_t *client, int64_t correlation_id, aa_publication_t **publication)
{
    return aa_client_async_poll(client, correlation_id, (void **)publication);
}

int64_t aa_client_async_add_subscription(aa_client_t *client, const char *channel, int32_t stream_id)
{
    return aa_client_async_add(client, AA_COMMAND_ADD_SUBSCRIPTION, channel, stream_id);
}

int aa_client_async_add_subscription_poll(aa_client_t *client, int64_t correlation_id, aa_subscription_t **subscription)
{
    return aa_client_async_poll(client, correlation_id, (void **)subscription);
}

/* REMOVE_PUBLICATION with its flags (aeron-wave3.md 4.1: REVOKE). */
static int aa_client_send_remove_publication(aa_client_t *client, int64_t registration_id, uint64_t flags)
{
    aa_remove_publication_command_t command = {
        .correlated = { .client_id = client->client_id, .correlation_id = aa_mpsc_rb_next_correlation_id(&client->to_driver) },
        .registration_id = registration_id,
        .flags = flags,
    };
    return aa_client_send(client, AA_COMMAND_REMOVE_PUBLICATION, &command, sizeof(command));
}

int aa_publication_set_revoke_on_close(aa_publication_t *pub, bool revoke)
{
    if (!pub->is_exclusive)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "publication %" PRId64 " is not exclusive: only an exclusive "
            "publication can be revoked (add it with add_exclusive_publication)", pub->registration_id);
        return -1;
    }
    pub->revoke_on_close = revoke;
    return 0;
}

int aa_publication_revoke(aa_publication_t *pub)
{
    if (aa_publication_set_revoke_on_close(pub, true) < 0)
    {
        return -1;
    }
    return aa_publication_close(pub);
}

int aa_publication_close(aa_publication_t *pub)
{
    aa_client_t *client = pub->client;
    pthread_mutex_lock(&client->lock);
    aa_put_int32_release(&pub->is_closed, 1);
    aa_client_unpark(&pub->parked, client);
    for (size_t i = 0; i < client->publications_count; i++)
    {
        if (client->publications[i] == pub)
        {
            client->publications[i] = client->publications[--client->publications_count];
            if (AA_CLIENT_STATE_ACTIVE == client->state)
            {
                aa_client_send_remove_publication(
                    client, pub->registration_id, pub->revoke_on_close ? AA_REMOVE_PUBLICATION_FLAG_REVOKE : 0);
            }
            aa_client_linger(client, pub, AA_LINGER_PUBLICATION);
            break;
        }
    }
    pthread_mutex_unlock(&client->lock);
    return 0;
}

int aa_subscription_close(aa_subscription_t *sub)
{
    aa_client_t *client = sub->client;
    pthread_mutex_lock(&client->lock);
    aa_put_int32_release(&sub->is_closed, 1);
    aa_client_unpark(&sub->parked, client);
    for (size_t i = 0; i < client->subscriptions_count; i++)
    {
        if (client->subscriptions[i] == sub)
        {
            client->subscriptions[i] = client->subscriptions[--client->subscriptions_count];
            if (AA_CLIENT_STATE_ACTIVE == client->state)
            {
                aa_client_send_remove(client, AA_COMMAND_REMOVE_SUBSCRIPTION, sub->registration_id);
            }
            aa_image_list_t *list = sub->images;
            for (size_t j = 0; j < list->count; j++)
            {
                aa_put_int32_release(&list->images[j]->is_closed, 1);
                aa_client_unpark(&list->images[j]->parked, client);
            }
            aa_client_linger(client, sub, AA_LINGER_SUBSCRIPTION);
            break;
        }
    }
    pthread_mutex_unlock(&client->lock);
    return 0;
}
