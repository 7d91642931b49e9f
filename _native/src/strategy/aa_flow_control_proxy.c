#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strategy/aa_flow_control_proxy.h"
#include "concurrent/aa_atomic.h"
#include "util/aa_array.h"
#include "util/aa_error.h"
#include "util/aa_registry.h"
#include "protocols/aa_retransmit_handler.h"
#include "protocols/aa_udp_frames.h"

#define AA_FLOW_CONTROL_PROXY_RING_MASK (AA_FLOW_CONTROL_PROXY_RING_CAPACITY - 1)

_Static_assert(0 == (AA_FLOW_CONTROL_PROXY_RING_CAPACITY & AA_FLOW_CONTROL_PROXY_RING_MASK),
    "the ring capacity is a power of two");

/* What aa_flow_control_proxy_register leaves in the registry entry's clientd (never freed: entries
 * live as long as the process). */
typedef struct aa_flow_control_proxy_registration_stct
{
    char name[AA_STRATEGY_NAME_MAX_LENGTH];
    int32_t retransmit_multiple;
    int32_t options;
}
aa_flow_control_proxy_registration_t;

/* A queued event: the public record plus the raw source address, formatted by the worker. */
typedef struct aa_flow_control_proxy_entry_stct
{
    aa_flow_control_proxy_event_t event;
    struct sockaddr_storage source;
    socklen_t source_length;
}
aa_flow_control_proxy_entry_t;

struct aa_flow_control_proxy_stct
{
    aa_flow_control_strategy_t strategy;
    aa_flow_control_proxy_host_t *host;
    const aa_flow_control_proxy_registration_t *registration;
    aa_flow_control_strategy_params_t params;   /* fc_options and clientd cleared */
    aa_flow_control_proxy_info_t info;
    bool has_group_option;
    bool has_timeout_option;
    bool create_reported;                       /* worker, under the host mutex */

    /* The answers (worker writes, sender reads). */
    volatile int64_t limit;
    volatile int32_t has_required_receivers;
    aa_flow_control_strategy_t *volatile fallback;
    volatile int64_t events_dropped;
    volatile int64_t events_coalesced;

    /* Sender only. */
    int64_t time_of_last_idle_ns;
    struct sockaddr_storage source;
    socklen_t source_length;
    aa_flow_control_proxy_entry_t pending[AA_FLOW_CONTROL_PROXY_PENDING_CAPACITY];
    int32_t pending_count;
    bool has_pending_setup;
    aa_flow_control_proxy_entry_t pending_setup;

    /* The ring: the sender produces, the worker consumes. */
    volatile uint64_t tail __attribute__((aligned(64)));
    volatile uint64_t head __attribute__((aligned(64)));
    aa_flow_control_proxy_entry_t ring[AA_FLOW_CONTROL_PROXY_RING_CAPACITY] __attribute__((aligned(64)));
};

/* ---- the sender's side ---- */

static bool aa_flow_control_proxy_push(aa_flow_control_proxy_t *proxy, const aa_flow_control_proxy_entry_t *entry)
{
    uint64_t tail = proxy->tail;
    uint64_t head = __atomic_load_n(&proxy->head, __ATOMIC_ACQUIRE);
    if (tail - head >= AA_FLOW_CONTROL_PROXY_RING_CAPACITY)
    {
        return false;
    }
    proxy->ring[tail & AA_FLOW_CONTROL_PROXY_RING_MASK] = *entry;
    __atomic_store_n(&proxy->tail, tail + 1, __ATOMIC_RELEASE);
    return true;
}

/* Moves pending events into the ring while it has room; true when any moved. */
static bool aa_flow_control_proxy_flush_pending(aa_flow_control_proxy_t *proxy)
{
    bool moved = false;
    if (proxy->has_pending_setup && aa_flow_control_proxy_push(proxy, &proxy->pending_setup))
    {
        proxy->has_pending_setup = false;
        moved = true;
    }
    int32_t sent = 0;
    while (sent < proxy->pending_count && aa_flow_control_proxy_push(proxy, &proxy->pending[sent]))
    {
        sent++;
    }
    if (sent > 0)
    {
        memmove(proxy->pending, proxy->pending + sent, (size_t)(proxy->pending_count - sent) * sizeof(proxy->pending[0]));
        proxy->pending_count -= sent;
        moved = true;
    }
    return moved;
}

static void aa_flow_control_proxy_count(volatile int64_t *counter)
{
    __atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + 1, __ATOMIC_RELEASE);
}

/* Queues a status message, ERR or SEND_SETUP request: into the ring when nothing is pending before
 * it, else into the pending table, replacing an older one of the same receiver and type. */
static void aa_flow_control_proxy_enqueue_receiver_event(
    aa_flow_control_proxy_t *proxy, const aa_flow_control_proxy_entry_t *entry)
{
    bool moved = aa_flow_control_proxy_flush_pending(proxy);
    if (0 == proxy->pending_count && !proxy->has_pending_setup && aa_flow_control_proxy_push(proxy, entry))
    {
        moved = true;
    }
    else
    {
        int32_t i = 0;
        for (; i < proxy->pending_count; i++)
        {
            aa_flow_control_proxy_event_t *queued = &proxy->pending[i].event;
            if (queued->type == entry->event.type && queued->receiver_id == entry->event.receiver_id)
            {
                proxy->pending[i] = *entry;
                aa_flow_control_proxy_count(&proxy->events_coalesced);
                break;
            }
        }
        if (i == proxy->pending_count)
        {
            if (proxy->pending_count < AA_FLOW_CONTROL_PROXY_PENDING_CAPACITY)
            {
                proxy->pending[proxy->pending_count++] = *entry;
            }
            else
            {
                aa_flow_control_proxy_count(&proxy->events_dropped);
            }
        }
    }
    if (moved && NULL != proxy->host)
    {
        aa_doorbell_ring(&proxy->host->doorbell);
    }
}

static int64_t aa_flow_control_proxy_answer(aa_flow_control_proxy_t *proxy, int64_t snd_lmt)
{
    int64_t limit = __atomic_load_n(&proxy->limit, __ATOMIC_ACQUIRE);
    return AA_FLOW_CONTROL_PROXY_NO_ANSWER == limit ? snd_lmt : limit;
}

static aa_flow_control_strategy_t *aa_flow_control_proxy_fallback(aa_flow_control_proxy_t *proxy)
{
    return __atomic_load_n(&proxy->fallback, __ATOMIC_ACQUIRE);
}

static void aa_flow_control_proxy_entry_init(
    aa_flow_control_proxy_t *proxy, aa_flow_control_proxy_entry_t *entry, int32_t type, int64_t now_ns,
    int64_t snd_lmt)
{
    memset(&entry->event, 0, offsetof(aa_flow_control_proxy_event_t, source));
    entry->event.source[0] = '\0';
    entry->event.instance_id = proxy->info.instance_id;
    entry->event.type = type;
    entry->event.now_ns = now_ns;
    entry->event.sender_limit = snd_lmt;
    entry->source_length = 0;
}

static void aa_flow_control_proxy_on_sm_source(
    void *state, const struct sockaddr_storage *source, socklen_t source_length)
{
    aa_flow_control_proxy_t *proxy = state;
    aa_flow_control_strategy_t *fallback = aa_flow_control_proxy_fallback(proxy);
    if (NULL != fallback)
    {
        if (NULL != fallback->on_status_message_source)
        {
            fallback->on_status_message_source(fallback->state, source, source_length);
        }
        return;
    }
    if (NULL == source || source_length > (socklen_t)sizeof(proxy->source))
    {
        proxy->source_length = 0;
        return;
    }
    memcpy(&proxy->source, source, source_length);
    proxy->source_length = source_length;
}

static void aa_flow_control_proxy_take_source(aa_flow_control_proxy_t *proxy, aa_flow_control_proxy_entry_t *entry)
{
    if (proxy->source_length > 0)
    {
        memcpy(&entry->source, &proxy->source, proxy->source_length);
        entry->source_length = proxy->source_length;
        proxy->source_length = 0;
    }
}

static int64_t aa_flow_control_proxy_on_status_message(
    void *state, const uint8_t *sm, size_t length, int64_t snd_lmt, int32_t initial_term_id,
    int32_t position_bits_to_shift, int64_t now_ns)
{
    aa_flow_control_proxy_t *proxy = state;
    aa_flow_control_strategy_t *fallback = aa_flow_control_proxy_fallback(proxy);
    if (NULL != fallback)
    {
        return fallback->on_status_message(
            fallback->state, sm, length, snd_lmt, initial_term_id, position_bits_to_shift, now_ns);
    }
    aa_udp_status_message_t message;
    if (aa_udp_frame_decode_status_message(sm, length, &message) < 0)
    {
        proxy->source_length = 0;
        return aa_flow_control_proxy_answer(proxy, snd_lmt);
    }
    aa_flow_control_proxy_entry_t entry;
    aa_flow_control_proxy_entry_init(proxy, &entry, AA_FLOW_CONTROL_PROXY_EVENT_STATUS_MESSAGE, now_ns, snd_lmt);
    entry.event.flags = message.header.frame_header.flags;
    entry.event.receiver_id = message.header.receiver_id;
    entry.event.position = aa_udp_compute_position(
        message.header.consumption_term_id, message.header.consumption_term_offset, position_bits_to_shift,
        initial_term_id);
    entry.event.window = message.header.receiver_window;
    entry.event.has_group_tag = message.has_group_tag ? 1 : 0;
    entry.event.group_tag = message.has_group_tag ? message.group_tag : 0;
    aa_flow_control_proxy_take_source(proxy, &entry);
    aa_flow_control_proxy_enqueue_receiver_event(proxy, &entry);
    return aa_flow_control_proxy_answer(proxy, snd_lmt);
}

static int64_t aa_flow_control_proxy_on_idle(
    void *state, int64_t now_ns, int64_t snd_lmt, int64_t snd_pos, bool is_end_of_stream)
{
    aa_flow_control_proxy_t *proxy = state;
    aa_flow_control_strategy_t *fallback = aa_flow_control_proxy_fallback(proxy);
    if (NULL != fallback)
    {
        return fallback->on_idle(fallback->state, now_ns, snd_lmt, snd_pos, is_end_of_stream);
    }
    bool moved = (proxy->pending_count > 0 || proxy->has_pending_setup) && aa_flow_control_proxy_flush_pending(proxy);
    if (now_ns - proxy->time_of_last_idle_ns >= AA_FLOW_CONTROL_PROXY_IDLE_INTERVAL_NS)
    {
        aa_flow_control_proxy_entry_t entry;
        aa_flow_control_proxy_entry_init(proxy, &entry, AA_FLOW_CONTROL_PROXY_EVENT_IDLE, now_ns, snd_lmt);
        entry.event.position = snd_pos;
        entry.event.flags = is_end_of_stream ? 1 : 0;
        /* a tick that finds the ring full is skipped: the next one comes */
        if (aa_flow_control_proxy_push(proxy, &entry))
        {
            proxy->time_of_last_idle_ns = now_ns;
            moved = true;
        }
    }
    if (moved && NULL != proxy->host)
    {
        aa_doorbell_ring(&proxy->host->doorbell);
    }
    return aa_flow_control_proxy_answer(proxy, snd_lmt);
}

static int64_t aa_flow_control_proxy_on_setup(
    void *state, const uint8_t *setup, size_t length, int64_t now_ns, int64_t snd_lmt, int32_t position_bits_to_shift,
    int64_t snd_pos)
{
    aa_flow_control_proxy_t *proxy = state;
    aa_flow_control_strategy_t *fallback = aa_flow_control_proxy_fallback(proxy);
    if (NULL != fallback)
    {
        return fallback->on_setup(fallback->state, setup, length, now_ns, snd_lmt, position_bits_to_shift, snd_pos);
    }
    aa_flow_control_proxy_entry_t entry;
    aa_flow_control_proxy_entry_init(proxy, &entry, AA_FLOW_CONTROL_PROXY_EVENT_SETUP, now_ns, snd_lmt);
    entry.event.position = snd_pos;
    bool moved = aa_flow_control_proxy_flush_pending(proxy);
    if (!proxy->has_pending_setup && aa_flow_control_proxy_push(proxy, &entry))
    {
        moved = true;
    }
    else
    {
        if (proxy->has_pending_setup)
        {
            aa_flow_control_proxy_count(&proxy->events_coalesced);
        }
        proxy->pending_setup = entry;
        proxy->has_pending_setup = true;
    }
    if (moved && NULL != proxy->host)
    {
        aa_doorbell_ring(&proxy->host->doorbell);
    }
    return aa_flow_control_proxy_answer(proxy, snd_lmt);
}

static void aa_flow_control_proxy_on_error(void *state, const uint8_t *error, size_t length, int64_t now_ns)
{
    aa_flow_control_proxy_t *proxy = state;
    aa_flow_control_strategy_t *fallback = aa_flow_control_proxy_fallback(proxy);
    if (NULL != fallback)
    {
        fallback->on_error(fallback->state, error, length, now_ns);
        return;
    }
    aa_udp_error_t frame;
    if (aa_udp_frame_decode_error(error, length, &frame) < 0)
    {
        return;
    }
    aa_flow_control_proxy_entry_t entry;
    aa_flow_control_proxy_entry_init(proxy, &entry, AA_FLOW_CONTROL_PROXY_EVENT_ERROR, now_ns, 0);
    entry.event.receiver_id = frame.header.receiver_id;
    entry.event.window = frame.header.error_code;
    entry.event.has_group_tag = frame.has_group_tag ? 1 : 0;
    entry.event.group_tag = frame.has_group_tag ? frame.header.group_tag : 0;
    aa_flow_control_proxy_enqueue_receiver_event(proxy, &entry);
}

static void aa_flow_control_proxy_on_trigger_send_setup(void *state, const uint8_t *sm, size_t length, int64_t now_ns)
{
    aa_flow_control_proxy_t *proxy = state;
    aa_flow_control_strategy_t *fallback = aa_flow_control_proxy_fallback(proxy);
    if (NULL != fallback)
    {
        fallback->on_trigger_send_setup(fallback->state, sm, length, now_ns);
        return;
    }
    aa_udp_status_message_t message;
    if (aa_udp_frame_decode_status_message(sm, length, &message) < 0)
    {
        proxy->source_length = 0;
        return;
    }
    aa_flow_control_proxy_entry_t entry;
    aa_flow_control_proxy_entry_init(proxy, &entry, AA_FLOW_CONTROL_PROXY_EVENT_TRIGGER_SEND_SETUP, now_ns, 0);
    entry.event.flags = message.header.frame_header.flags;
    entry.event.receiver_id = message.header.receiver_id;
    entry.event.has_group_tag = message.has_group_tag ? 1 : 0;
    entry.event.group_tag = message.has_group_tag ? message.group_tag : 0;
    aa_flow_control_proxy_take_source(proxy, &entry);
    aa_flow_control_proxy_enqueue_receiver_event(proxy, &entry);
}

static bool aa_flow_control_proxy_has_required_receivers(void *state)
{
    aa_flow_control_proxy_t *proxy = state;
    aa_flow_control_strategy_t *fallback = aa_flow_control_proxy_fallback(proxy);
    if (NULL != fallback)
    {
        return fallback->has_required_receivers(fallback->state);
    }
    return 0 != __atomic_load_n(&proxy->has_required_receivers, __ATOMIC_ACQUIRE);
}

static int32_t aa_flow_control_proxy_max_retransmission_length(void *state, int32_t term_length)
{
    aa_flow_control_proxy_t *proxy = state;
    return aa_retransmit_handler_max_retransmission_length(term_length, proxy->registration->retransmit_multiple);
}

/* ---- the host ---- */

static ssize_t aa_flow_control_proxy_host_index(aa_flow_control_proxy_host_t *host, int64_t instance_id)
{
    for (size_t i = 0; i < host->proxies_count; i++)
    {
        if (host->proxies[i]->info.instance_id == instance_id)
        {
            return (ssize_t)i;
        }
    }
    return -1;
}

static void aa_flow_control_proxy_fini(aa_flow_control_strategy_t *strategy)
{
    if (NULL == strategy)
    {
        return;
    }
    aa_flow_control_proxy_t *proxy = strategy->state;
    aa_flow_control_proxy_host_t *host = proxy->host;
    if (NULL == host)
    {
        free(proxy);
        return;
    }
    pthread_mutex_lock(&host->mutex);
    ssize_t index = aa_flow_control_proxy_host_index(host, proxy->info.instance_id);
    if (index >= 0)
    {
        host->proxies[index] = host->proxies[host->proxies_count - 1];
        host->proxies_count--;
        if (proxy->create_reported)
        {
            host->closed_ids[host->closed_count++] = proxy->info.instance_id; /* room reserved at creation */
        }
    }
    pthread_mutex_unlock(&host->mutex);
    aa_doorbell_ring(&host->doorbell);
    aa_flow_control_strategy_t *fallback = aa_flow_control_proxy_fallback(proxy);
    if (NULL != fallback)
    {
        fallback->fini(fallback);
    }
    free(proxy);
}

/* Which options the registration accepts is checked here, token by token; their values are parsed
 * by the reference grammar's parser (aa_flow_control_parse_group_options). */
static int aa_flow_control_proxy_parse_options(
    aa_flow_control_proxy_t *proxy, const char *name, const char *options, int32_t accepted)
{
    snprintf(proxy->info.options, sizeof(proxy->info.options), "%s", NULL != options ? options : "");
    if (NULL != options && strlen(options) >= sizeof(proxy->info.options))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL, "channel parameter fc=%s,%s: the options are too long", name, options);
        return -1;
    }
    char copy[sizeof(proxy->info.options)];
    snprintf(copy, sizeof(copy), "%s", proxy->info.options);
    const char *accepts = 0 == (accepted & (AA_FLOW_CONTROL_PROXY_OPTION_GROUP | AA_FLOW_CONTROL_PROXY_OPTION_TIMEOUT)) ?
        "it takes no options" : (0 == (accepted & AA_FLOW_CONTROL_PROXY_OPTION_TIMEOUT) ? "it takes g:<tag>[/<min size>]" :
        (0 == (accepted & AA_FLOW_CONTROL_PROXY_OPTION_GROUP) ? "it takes t:<timeout>" :
        "it takes g:<tag>[/<min size>] and t:<timeout>"));
    char *save = NULL;
    for (char *token = strtok_r(copy, ",", &save); NULL != token; token = strtok_r(NULL, ",", &save))
    {
        bool taken = (0 == strncmp(token, "g:", 2) && 0 != (accepted & AA_FLOW_CONTROL_PROXY_OPTION_GROUP)) ||
            (0 == strncmp(token, "t:", 2) && 0 != (accepted & AA_FLOW_CONTROL_PROXY_OPTION_TIMEOUT));
        if (!taken)
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
                "channel parameter fc=%s,%s: '%s' is not an option of flow control '%s' (%s)",
                name, options, token, name, accepts);
            return -1;
        }
    }
    aa_flow_control_group_options_t parsed;
    if (aa_flow_control_parse_group_options(name, options, &parsed) < 0)
    {
        return -1;
    }
    if (parsed.has_group_min_size)
    {
        proxy->info.group_min_size = parsed.group_min_size;
    }
    if (parsed.has_group_tag)
    {
        proxy->info.group_tag = parsed.group_tag;
        proxy->has_group_option = true;
    }
    if (parsed.has_receiver_timeout)
    {
        proxy->info.receiver_timeout_ns = parsed.receiver_timeout_ns;
        proxy->has_timeout_option = true;
    }
    if (0 != (accepted & AA_FLOW_CONTROL_PROXY_OPTION_GROUP_TAG_REQUIRED) && !proxy->has_group_option)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "channel parameter fc=%s%s%s: flow control '%s' needs a group tag: add g:<tag>[/<min size>]",
            name, NULL != options ? "," : "", NULL != options ? options : "", name);
        return -1;
    }
    return 0;
}

static int aa_flow_control_proxy_ensure(void **array, size_t *capacity, size_t needed, size_t element)
{
    if (needed <= *capacity)
    {
        return 0;
    }
    size_t new_capacity = *capacity < 4 ? 4 : *capacity * 2;
    while (new_capacity < needed)
    {
        new_capacity *= 2;
    }
    void *grown = realloc(*array, new_capacity * element);
    if (NULL == grown)
    {
        return -1;
    }
    *array = grown;
    *capacity = new_capacity;
    return 0;
}

static int aa_flow_control_proxy_supplier(
    aa_flow_control_strategy_t **strategy, const aa_flow_control_strategy_params_t *params)
{
    const aa_flow_control_proxy_registration_t *registration = params->clientd;
    aa_flow_control_proxy_host_t *host = params->proxy_host;
    if (NULL != host && 0 == __atomic_load_n(&host->worker_attached, __ATOMIC_ACQUIRE))
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "flow control '%s' is written in Python and no Python worker serves this driver: use it in a "
            "driver launched by aeron_async (MediaDriver, or aeron-async driver --flow-control %s=module:Class) in the "
            "process that registered it", registration->name, registration->name);
        return -1;
    }
    aa_flow_control_proxy_t *proxy = NULL;
    if (0 != posix_memalign((void **)&proxy, 64, sizeof(aa_flow_control_proxy_t)))
    {
        AA_SET_ERR(ENOMEM, "out of memory for flow control '%s'", registration->name);
        return -1;
    }
    memset(proxy, 0, sizeof(*proxy));
    proxy->host = host;
    proxy->registration = registration;
    proxy->params = *params;
    proxy->params.fc_options = NULL;
    proxy->params.clientd = NULL;
    proxy->info.registration_id = params->registration_id;
    proxy->info.stream_id = params->stream_id;
    proxy->info.initial_term_id = params->initial_term_id;
    proxy->info.term_length = params->term_length;
    proxy->info.group_min_size = params->group_min_size;
    proxy->info.group_tag = params->group_tag;
    proxy->info.receiver_timeout_ns = params->receiver_timeout_ns;
    snprintf(proxy->info.name, sizeof(proxy->info.name), "%s", registration->name);
    if (aa_flow_control_proxy_parse_options(proxy, registration->name, params->fc_options, registration->options) < 0)
    {
        free(proxy);
        return -1;
    }
    proxy->limit = AA_FLOW_CONTROL_PROXY_NO_ANSWER;
    proxy->time_of_last_idle_ns = INT64_MIN / 2;

    aa_flow_control_strategy_t *s = &proxy->strategy;
    s->name = registration->name;
    s->on_status_message = aa_flow_control_proxy_on_status_message;
    s->on_idle = aa_flow_control_proxy_on_idle;
    s->on_setup = aa_flow_control_proxy_on_setup;
    s->on_error = aa_flow_control_proxy_on_error;
    s->on_trigger_send_setup = aa_flow_control_proxy_on_trigger_send_setup;
    s->has_required_receivers = aa_flow_control_proxy_has_required_receivers;
    s->max_retransmission_length = aa_flow_control_proxy_max_retransmission_length;
    s->fini = aa_flow_control_proxy_fini;
    s->on_status_message_source = aa_flow_control_proxy_on_sm_source;
    s->tracks_receivers = 0 != (registration->options & AA_FLOW_CONTROL_PROXY_OPTION_TRACKS_RECEIVERS);
    s->receivers_counter = NULL;
    s->state = proxy;
    if (NULL == host)
    {
        *strategy = s; /* a probe checking the options (channel checks), or a unit test: drained by nobody */
        return 0;
    }

    pthread_mutex_lock(&host->mutex);
    /* closed_ids keeps room for every live proxy, so fini never allocates */
    if (aa_flow_control_proxy_ensure(
            (void **)&host->proxies, &host->proxies_capacity, host->proxies_count + 1, sizeof(host->proxies[0])) < 0 ||
        aa_flow_control_proxy_ensure(
            (void **)&host->closed_ids, &host->closed_capacity, host->proxies_count + host->closed_count + 1,
            sizeof(host->closed_ids[0])) < 0)
    {
        pthread_mutex_unlock(&host->mutex);
        free(proxy);
        AA_SET_ERR(ENOMEM, "out of memory for flow control '%s'", registration->name);
        return -1;
    }
    proxy->info.instance_id = ++host->next_instance_id;
    host->proxies[host->proxies_count++] = proxy;
    pthread_mutex_unlock(&host->mutex);
    aa_doorbell_ring(&host->doorbell);
    *strategy = s;
    return 0;
}

static const aa_flow_control_strategy_table_t aa_flow_control_proxy_table = { aa_flow_control_proxy_supplier };

int aa_flow_control_proxy_register(
    const char *name, int32_t retransmit_multiple, int32_t options, const char *description)
{
    if (retransmit_multiple < 1 || retransmit_multiple > 1024)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "flow control '%s': the retransmit multiple must be 1 to 1024 receiver windows, got %d",
            NULL != name ? name : "(null)", retransmit_multiple);
        return -1;
    }
    if (aa_flow_control_strategy_register_builtins() < 0)
    {
        return -1;
    }
    aa_flow_control_proxy_registration_t *registration = calloc(1, sizeof(*registration));
    if (NULL == registration)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory registering a flow control strategy");
        return -1;
    }
    snprintf(registration->name, sizeof(registration->name), "%s", NULL != name ? name : "");
    registration->retransmit_multiple = retransmit_multiple;
    registration->options = options;
    if (aa_registry_register(AA_STRATEGY_KIND_FLOW_CONTROL, name, &aa_flow_control_proxy_table, registration,
            NULL != description ? description : "") < 0)
    {
        free(registration);
        return -1;
    }
    return 0;
}

int aa_flow_control_proxy_host_init(
    aa_flow_control_proxy_host_t *host, void (*log_error)(void *clientd, int32_t code, const char *message),
    void *log_error_clientd)
{
    memset(host, 0, sizeof(*host));
    if (0 != pthread_mutex_init(&host->mutex, NULL))
    {
        AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR, "%s", "initialising the flow control proxy host's mutex");
        return -1;
    }
    host->log_error = log_error;
    host->log_error_clientd = log_error_clientd;
    return 0;
}

void aa_flow_control_proxy_host_close(aa_flow_control_proxy_host_t *host)
{
    if (NULL == host->log_error)
    {
        return;
    }
    AA_ARRAY_FREE(host->proxies);
    aa_array_free((void **)&host->closed_ids, &host->closed_capacity, &host->closed_count);
    pthread_mutex_destroy(&host->mutex);
    host->log_error = NULL;
}

void aa_flow_control_proxy_host_attach(aa_flow_control_proxy_host_t *host, bool attached)
{
    __atomic_store_n(&host->worker_attached, attached ? 1 : 0, __ATOMIC_RELEASE);
}

static void aa_flow_control_proxy_format_source(const aa_flow_control_proxy_entry_t *entry, char *out, size_t length)
{
    char text[INET6_ADDRSTRLEN];
    out[0] = '\0';
    if (AF_INET == entry->source.ss_family && entry->source_length >= (socklen_t)sizeof(struct sockaddr_in))
    {
        const struct sockaddr_in *in4 = (const struct sockaddr_in *)&entry->source;
        if (NULL != inet_ntop(AF_INET, &in4->sin_addr, text, sizeof(text)))
        {
            snprintf(out, length, "%s:%u", text, (unsigned)ntohs(in4->sin_port));
        }
    }
    else if (AF_INET6 == entry->source.ss_family && entry->source_length >= (socklen_t)sizeof(struct sockaddr_in6))
    {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&entry->source;
        if (NULL != inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof(text)))
        {
            snprintf(out, length, "[%s]:%u", text, (unsigned)ntohs(in6->sin6_port));
        }
    }
}

int aa_flow_control_proxy_host_poll(
    aa_flow_control_proxy_host_t *host, aa_flow_control_proxy_event_t *events, int32_t capacity)
{
    int32_t count = 0;
    pthread_mutex_lock(&host->mutex);
    size_t closed = 0;
    for (; closed < host->closed_count && count < capacity; closed++)
    {
        aa_flow_control_proxy_event_t *event = &events[count++];
        memset(event, 0, sizeof(*event));
        event->instance_id = host->closed_ids[closed];
        event->type = AA_FLOW_CONTROL_PROXY_EVENT_CLOSE;
    }
    if (closed > 0)
    {
        memmove(host->closed_ids, host->closed_ids + closed, (host->closed_count - closed) * sizeof(host->closed_ids[0]));
        host->closed_count -= closed;
    }
    for (size_t i = 0; i < host->proxies_count && count < capacity; i++)
    {
        aa_flow_control_proxy_t *proxy = host->proxies[i];
        if (!proxy->create_reported)
        {
            aa_flow_control_proxy_event_t *event = &events[count++];
            memset(event, 0, sizeof(*event));
            event->instance_id = proxy->info.instance_id;
            event->type = AA_FLOW_CONTROL_PROXY_EVENT_CREATE;
            proxy->create_reported = true;
        }
        uint64_t head = proxy->head;
        uint64_t tail = __atomic_load_n(&proxy->tail, __ATOMIC_ACQUIRE);
        if (NULL != aa_flow_control_proxy_fallback(proxy))
        {
            head = tail; /* replaced: what it queued before is nobody's any more */
        }
        for (; head < tail && count < capacity; head++)
        {
            const aa_flow_control_proxy_entry_t *entry = &proxy->ring[head & AA_FLOW_CONTROL_PROXY_RING_MASK];
            aa_flow_control_proxy_event_t *event = &events[count++];
            memcpy(event, &entry->event, offsetof(aa_flow_control_proxy_event_t, source));
            aa_flow_control_proxy_format_source(entry, event->source, sizeof(event->source));
        }
        __atomic_store_n(&proxy->head, head, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&host->mutex);
    return count;
}

static bool aa_flow_control_proxy_host_has_events(aa_flow_control_proxy_host_t *host)
{
    bool has_events = false;
    pthread_mutex_lock(&host->mutex);
    has_events = host->closed_count > 0;
    for (size_t i = 0; i < host->proxies_count && !has_events; i++)
    {
        aa_flow_control_proxy_t *proxy = host->proxies[i];
        has_events = !proxy->create_reported ||
            (NULL == aa_flow_control_proxy_fallback(proxy) &&
            __atomic_load_n(&proxy->tail, __ATOMIC_ACQUIRE) != proxy->head);
    }
    pthread_mutex_unlock(&host->mutex);
    return has_events;
}

int aa_flow_control_proxy_host_wait(aa_flow_control_proxy_host_t *host, int64_t timeout_ns)
{
    int32_t sequence = aa_doorbell_arm(&host->doorbell);
    if (aa_flow_control_proxy_host_has_events(host))
    {
        return 1;
    }
    aa_doorbell_wait(&host->doorbell, sequence, timeout_ns);
    return aa_flow_control_proxy_host_has_events(host) ? 1 : 0;
}

void aa_flow_control_proxy_host_wake(aa_flow_control_proxy_host_t *host)
{
    aa_doorbell_ring(&host->doorbell);
}

int aa_flow_control_proxy_host_answer(
    aa_flow_control_proxy_host_t *host, int64_t instance_id, int64_t sender_limit, bool has_required_receivers,
    int64_t receiver_count)
{
    int rc = -1;
    pthread_mutex_lock(&host->mutex);
    ssize_t index = aa_flow_control_proxy_host_index(host, instance_id);
    if (index >= 0)
    {
        aa_flow_control_proxy_t *proxy = host->proxies[index];
        __atomic_store_n(&proxy->has_required_receivers, has_required_receivers ? 1 : 0, __ATOMIC_RELEASE);
        __atomic_store_n(&proxy->limit, sender_limit, __ATOMIC_RELEASE);
        /* set by the conductor once it allocated the publication's counters, maybe after this instance's
         * first answer */
        volatile int64_t *counter = __atomic_load_n(&proxy->strategy.receivers_counter, __ATOMIC_ACQUIRE);
        if (NULL != counter && receiver_count >= 0 && NULL == aa_flow_control_proxy_fallback(proxy))
        {
            aa_put_int64_release(counter, receiver_count);
        }
        rc = 0;
    }
    pthread_mutex_unlock(&host->mutex);
    if (rc < 0)
    {
        AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR, "flow control instance %" PRId64 " is closed", instance_id);
    }
    return rc;
}

/* Builds the fallback: the strategy registered as `name` with the proxy's parameters. */
static int aa_flow_control_proxy_build(
    aa_flow_control_proxy_t *proxy, const char *name, const char *options, aa_flow_control_strategy_t **out)
{
    aa_strategy_t entry;
    if (aa_registry_lookup(AA_STRATEGY_KIND_FLOW_CONTROL, name, &entry) < 0)
    {
        return -1;
    }
    aa_flow_control_strategy_params_t params = proxy->params;
    params.fc_options = NULL != options && '\0' != *options ? options : entry.options;
    params.clientd = entry.clientd;
    params.group_min_size = proxy->info.group_min_size;
    params.receiver_timeout_ns = proxy->info.receiver_timeout_ns;
    const aa_flow_control_strategy_table_t *table = entry.table;
    *out = NULL;
    if (table->supplier == aa_flow_control_proxy_supplier || table->supplier(out, &params) < 0)
    {
        *out = NULL;
        return -1;
    }
    return 0;
}

int aa_flow_control_proxy_host_fail(aa_flow_control_proxy_host_t *host, int64_t instance_id, const char *message)
{
    pthread_mutex_lock(&host->mutex);
    ssize_t index = aa_flow_control_proxy_host_index(host, instance_id);
    if (index < 0 || NULL != aa_flow_control_proxy_fallback(host->proxies[index]))
    {
        pthread_mutex_unlock(&host->mutex);
        return 0; /* closed meanwhile, or replaced already */
    }
    aa_flow_control_proxy_t *proxy = host->proxies[index];
    char options[128];
    size_t used = 0;
    options[0] = '\0';
    if (proxy->info.group_min_size > 0)
    {
        used += (size_t)snprintf(options + used, sizeof(options) - used, "g:/%d", proxy->info.group_min_size);
    }
    if (proxy->has_timeout_option)
    {
        snprintf(options + used, sizeof(options) - used, "%st:%" PRId64 "ns", used > 0 ? "," : "",
            proxy->info.receiver_timeout_ns);
    }
    aa_flow_control_strategy_t *fallback = NULL;
    const char *used_name = "min";
    const char *note = "";
    if (aa_flow_control_proxy_build(proxy, "min", options, &fallback) < 0 &&
        aa_flow_control_proxy_build(proxy, "min", NULL, &fallback) < 0)
    {
        used_name = "unicast";
        note = " (no native 'min' is registered in this driver's process)";
        if (aa_flow_control_proxy_build(proxy, "unicast", NULL, &fallback) < 0)
        {
            pthread_mutex_unlock(&host->mutex);
            AA_APPEND_ERR("flow control '%s': building the fallback strategy", proxy->info.name);
            return -1;
        }
    }
    char text[2048];
    snprintf(text, sizeof(text),
        "flow control '%s' of publication %" PRId64 " (stream %d) failed: %s; the publication now uses the native "
        "'%s' flow control%s%s%s",
        proxy->info.name, proxy->info.registration_id, proxy->info.stream_id, NULL != message ? message : "",
        used_name, '\0' != options[0] && 0 == strcmp(used_name, "min") ? " with " : "",
        0 == strcmp(used_name, "min") ? options : "", note);
    fallback->receivers_counter = proxy->strategy.receivers_counter; /* min counts into it from now on */
    __atomic_store_n(&proxy->fallback, fallback, __ATOMIC_RELEASE);
    proxy->info.has_failed = true;
    pthread_mutex_unlock(&host->mutex);
    host->log_error(host->log_error_clientd, AA_ERROR_CODE_GENERIC_ERROR, text);
    return 0;
}

int aa_flow_control_proxy_host_describe(
    aa_flow_control_proxy_host_t *host, int64_t instance_id, aa_flow_control_proxy_info_t *info)
{
    int rc = -1;
    pthread_mutex_lock(&host->mutex);
    ssize_t index = aa_flow_control_proxy_host_index(host, instance_id);
    if (index >= 0)
    {
        aa_flow_control_proxy_t *proxy = host->proxies[index];
        *info = proxy->info;
        info->events_dropped = __atomic_load_n(&proxy->events_dropped, __ATOMIC_ACQUIRE);
        info->events_coalesced = __atomic_load_n(&proxy->events_coalesced, __ATOMIC_ACQUIRE);
        rc = 0;
    }
    pthread_mutex_unlock(&host->mutex);
    if (rc < 0)
    {
        AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR, "flow control instance %" PRId64 " is closed", instance_id);
    }
    return rc;
}

void aa_flow_control_proxy_host_log_error(aa_flow_control_proxy_host_t *host, const char *message)
{
    host->log_error(host->log_error_clientd, AA_ERROR_CODE_GENERIC_ERROR, message);
}
