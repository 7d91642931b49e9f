/*
 * Parked async waiters: a waiter parks on a subscription, an image or a publication, arming its
 * logs' doorbells; the client conductor unparks it and writes its notify fd when there is news,
 * stays awake for an adaptive wake-spin window after waking one, and, idle, sleeps on the doorbells
 * of every log an async waiter may wait on.
 */
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/syscall.h>

#include "client/aa_client.h"
#include "aeron_async.h"
#include "util/aa_clock.h"

#define AA_CLIENT_IDLE_SLEEP_NS (16 * 1000 * 1000LL)
#define AA_CLIENT_WAIT_CHECK_NS (1000 * 1000L)
#define AA_CLIENT_AWAIT_SLEEP_NS (50 * 1000L)
#define AA_CLIENT_WAKE_SPIN_MIN_NS (10 * 1000LL)

static bool aa_image_has_data(aa_image_t *image)
{
    int64_t position = aa_get_int64_acquire(image->subscriber_position);
    int32_t offset = (int32_t)(position & (image->term_length - 1));
    const uint8_t *term = image->log.term_buffers[aa_index_by_position(position, image->position_bits_to_shift)];
    return aa_frame_length_volatile(term, offset) > 0;
}

/* A whole-subscription waiter wakes for data on any image, an image event or closure; end of
 * stream alone is not news to it (the image stays at its end until it is removed, with an event). */
static bool aa_subscription_has_something(aa_subscription_t *sub, aa_image_list_t *list)
{
    if (aa_get_int32_acquire(&sub->is_closed) || aa_get_int64_acquire(&sub->events_tail) != sub->events_head)
    {
        return true;
    }
    for (size_t i = 0; i < list->count; i++)
    {
        aa_image_t *image = list->images[i];
        if (aa_get_int32_acquire(&image->is_closed) || aa_image_has_data(image))
        {
            return true;
        }
    }
    return false;
}

bool aa_client_unpark(volatile int32_t *parked, aa_client_t *client)
{
    if (aa_cas_int32(parked, 1, 0))
    {
        aa_get_and_add_int32(&client->parked_count, -1);
        return true;
    }
    return false;
}

int aa_client_check_waiters(aa_client_t *client)
{
    int work_count = 0;
    for (size_t i = 0; i < client->subscriptions_count; i++)
    {
        aa_subscription_t *sub = client->subscriptions[i];
        aa_image_list_t *list = __atomic_load_n(&sub->images, __ATOMIC_ACQUIRE);
        bool signal = false;
        if (aa_get_int32_acquire(&sub->parked) && aa_subscription_has_something(sub, list) &&
            aa_client_unpark(&sub->parked, client))
        {
            signal = true;
        }
        for (size_t j = 0; j < list->count; j++)
        {
            aa_image_t *image = list->images[j];
            if (aa_get_int32_acquire(&image->parked) &&
                (aa_image_is_end_of_stream(image) || aa_image_has_data(image) || aa_get_int32_acquire(&sub->is_closed)) &&
                aa_client_unpark(&image->parked, client))
            {
                signal = true;
            }
        }
        if (signal)
        {
            aa_client_notify(sub->notify_fd);
            work_count++;
        }
    }
    for (size_t i = 0; i < client->publications_count; i++)
    {
        aa_publication_t *pub = client->publications[i];
        if (aa_get_int32_acquire(&pub->parked) &&
            (aa_get_int32_acquire(&pub->is_closed) ||
             aa_get_int64_acquire(pub->position_limit) > aa_get_int64_acquire(&pub->parked_position)) &&
            aa_client_unpark(&pub->parked, client))
        {
            aa_client_notify(pub->notify_fd);
            work_count++;
        }
    }
    return work_count;
}

/* The wake spin adapts as the kernel's halt polling does, on the time from one wake-up to the next
 * (how long the conductor was without a waiter to wake): within the window, it was caught and the
 * window stays; longer, but within the maximum, a longer window would have caught it and the window
 * doubles (from AA_CLIENT_WAKE_SPIN_MIN_NS); longer than the maximum, the spinning was wasted and the
 * window halves (to 0 below AA_CLIENT_WAKE_SPIN_MIN_NS). So request/response exchanges keep their
 * CPUs awake, and sparse wake-ups cost no spinning after a few. */
void aa_client_wake_spin_on_signal(aa_client_t *client)
{
    int64_t max_ns = __atomic_load_n(&client->wake_spin_max_ns, __ATOMIC_RELAXED);
    int64_t window_ns = __atomic_load_n(&client->wake_spin_ns, __ATOMIC_RELAXED);
    int64_t now_ns = aa_nano_clock();
    if (client->wake_spin_last_signal_ns > 0)
    {
        int64_t since_ns = now_ns - client->wake_spin_last_signal_ns;
        if (since_ns > max_ns)
        {
            window_ns = window_ns / 2 < AA_CLIENT_WAKE_SPIN_MIN_NS ? 0 : window_ns / 2;
        }
        else if (since_ns > window_ns)
        {
            window_ns = window_ns < AA_CLIENT_WAKE_SPIN_MIN_NS ? AA_CLIENT_WAKE_SPIN_MIN_NS : 2 * window_ns;
        }
    }
    window_ns = window_ns < max_ns ? window_ns : max_ns;
    __atomic_store_n(&client->wake_spin_ns, window_ns, __ATOMIC_RELAXED);
    client->wake_spin_last_signal_ns = now_ns;
    client->wake_spin_until_ns = window_ns > 0 ? now_ns + window_ns : 0;
}

int64_t aa_client_wake_spin_window_ns(aa_client_t *client)
{
    return __atomic_load_n(&client->wake_spin_ns, __ATOMIC_RELAXED);
}

bool aa_client_doorbells_watched(aa_client_t *client)
{
    return 0 != __atomic_load_n(&client->doorbells_watched, __ATOMIC_SEQ_CST);
}

void aa_client_set_wake_spin_ns(aa_client_t *client, int64_t max_ns)
{
    __atomic_store_n(&client->wake_spin_max_ns, max_ns > 0 ? max_ns : 0, __ATOMIC_RELAXED);
    __atomic_store_n(&client->wake_spin_ns, max_ns > 0 ? max_ns : 0, __ATOMIC_RELAXED); /* windows start there */
}

void aa_client_wake(aa_client_t *client)
{
    __atomic_fetch_add(&client->wake_word, 1, __ATOMIC_SEQ_CST);
    syscall(SYS_futex, &client->wake_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* After parking (counted first, so a conductor woken by the ring looks) and arming: the conductor
 * needs waking only when it does not already sleep on the doorbells of every async log. */
static void aa_client_parked(aa_client_t *client)
{
    if (!__atomic_load_n(&client->doorbells_watched, __ATOMIC_SEQ_CST))
    {
        aa_client_wake(client);
    }
}

void aa_subscription_set_notify_fd(aa_subscription_t *sub, int fd)
{
    pthread_mutex_lock(&sub->client->lock);
    sub->notify_fd = fd;
    pthread_mutex_unlock(&sub->client->lock);
    aa_client_wake(sub->client); /* its logs join the conductor's doorbell set */
}

void aa_subscription_park(aa_subscription_t *sub)
{
    if (aa_cas_int32(&sub->parked, 0, 1))
    {
        aa_get_and_add_int32(&sub->client->parked_count, 1);
        aa_image_list_t *list = __atomic_load_n(&sub->images, __ATOMIC_ACQUIRE);
        for (size_t i = 0; i < list->count; i++)
        {
            aa_doorbell_arm(aa_logbuffer_doorbell(list->images[i]->log.metadata));
        }
        aa_client_parked(sub->client);
    }
}

void aa_subscription_unpark(aa_subscription_t *sub)
{
    aa_client_unpark(&sub->parked, sub->client);
}

void aa_image_park(aa_image_t *image)
{
    /* a closed image has nothing more to wait for (and its log is let go of after the linger) */
    if (!aa_get_int32_acquire(&image->is_closed) && aa_cas_int32(&image->parked, 0, 1))
    {
        aa_get_and_add_int32(&image->subscription->client->parked_count, 1);
        aa_doorbell_arm(aa_logbuffer_doorbell(image->log.metadata));
        aa_client_parked(image->subscription->client);
    }
}

void aa_image_unpark(aa_image_t *image)
{
    aa_client_unpark(&image->parked, image->subscription->client);
}

void aa_publication_set_notify_fd(aa_publication_t *pub, int fd)
{
    pthread_mutex_lock(&pub->client->lock);
    pub->notify_fd = fd;
    pthread_mutex_unlock(&pub->client->lock);
    aa_client_wake(pub->client);
}

void aa_publication_park(aa_publication_t *pub, int64_t position)
{
    aa_put_int64_release(&pub->parked_position, position);
    if (aa_cas_int32(&pub->parked, 0, 1))
    {
        aa_get_and_add_int32(&pub->client->parked_count, 1);
        aa_doorbell_arm(aa_logbuffer_doorbell(pub->log.metadata));
        aa_client_parked(pub->client);
    }
}

void aa_publication_unpark(aa_publication_t *pub)
{
    aa_client_unpark(&pub->parked, pub->client);
}

/* Adds to the set the doorbell of every log an async waiter may wait on (a subscription's images, a
 * publication's log): armed where the waiter is parked, watched unarmed otherwise (skipped with
 * parked_only). False when the set is full. Under the client lock. */
static bool aa_client_add_doorbells(aa_client_t *client, aa_doorbell_set_t *doorbells, bool parked_only)
{
    for (size_t i = 0; i < client->subscriptions_count; i++)
    {
        aa_subscription_t *sub = client->subscriptions[i];
        if (sub->notify_fd < 0)
        {
            continue;
        }
        aa_image_list_t *list = sub->images;
        bool sub_parked = aa_get_int32_acquire(&sub->parked);
        for (size_t j = 0; j < list->count; j++)
        {
            aa_doorbell_t *doorbell = aa_logbuffer_doorbell(list->images[j]->log.metadata);
            bool parked = sub_parked || aa_get_int32_acquire(&list->images[j]->parked);
            if ((parked || !parked_only) &&
                !(parked ? aa_doorbell_set_add(doorbells, doorbell) : aa_doorbell_set_watch(doorbells, doorbell)))
            {
                return false;
            }
        }
    }
    for (size_t i = 0; i < client->publications_count; i++)
    {
        aa_publication_t *pub = client->publications[i];
        bool parked = aa_get_int32_acquire(&pub->parked);
        if (pub->notify_fd < 0 || (parked_only && !parked))
        {
            continue;
        }
        aa_doorbell_t *doorbell = aa_logbuffer_doorbell(pub->log.metadata);
        if (!(parked ? aa_doorbell_set_add(doorbells, doorbell) : aa_doorbell_set_watch(doorbells, doorbell)))
        {
            return false;
        }
    }
    return true;
}

/* Sleeps until the doorbell of a log an async waiter may wait on is rung, the driver rings the
 * clients' doorbell in the CnC header (it transmitted a response or an event), the conductor is
 * woken, or AA_CLIENT_IDLE_SLEEP_NS passes. Waiters arm their logs' doorbells as they park; the conductor
 * arms those of parked waiters again (a ring disarms, and a ring that woke it may not have been
 * what the waiter waits for) and watches the others unarmed. doorbells_watched says whether they
 * all fit in one futex_waitv; it is cleared while the set is built, so a waiter that parks meanwhile
 * wakes the conductor. If they do not all fit, the conductor sleeps on the parked waiters' doorbells
 * alone (parking then wakes it). Returns false when it could not wait that way: the parked waiters'
 * logs alone are more than 127, or the kernel has no futex_waitv. */
static bool aa_client_wait_on_doorbells(aa_client_idle_state_t *s, int32_t wake_word)
{
    aa_client_t *client = s->client;
    aa_doorbell_set_t *doorbells = &s->doorbells;
    /* our driver rings the clients' doorbell with its news (aa_cnc.h); Aeron's does not */
    aa_doorbell_t *driver_news = aa_get_int32_acquire(aa_cnc_features(client->cnc)) & AA_CNC_FEATURE_CLIENTS_DOORBELL ?
        aa_cnc_clients_doorbell(client->cnc) : NULL;
    aa_doorbell_set_clear(doorbells);
    aa_doorbell_set_add_word(doorbells, &client->wake_word, wake_word, false);
    if (NULL != driver_news)
    {
        aa_doorbell_set_add(doorbells, driver_news);
    }

    pthread_mutex_lock(&client->lock);
    __atomic_store_n(&client->doorbells_watched, 0, __ATOMIC_SEQ_CST);
    bool all_fit = !s->waitv_unsupported && aa_client_add_doorbells(client, doorbells, false);
    bool parked_fit = all_fit;
    if (!all_fit && !s->waitv_unsupported)
    {
        aa_doorbell_set_clear(doorbells);
        aa_doorbell_set_add_word(doorbells, &client->wake_word, wake_word, false);
        if (NULL != driver_news)
        {
            aa_doorbell_set_add(doorbells, driver_news);
        }
        parked_fit = aa_client_add_doorbells(client, doorbells, true);
    }
    __atomic_store_n(&client->doorbells_watched, all_fit ? 1 : 0, __ATOMIC_SEQ_CST);
    /* waiters whose data came before the set was built wait on no ring, nor does news the driver
     * transmitted before its doorbell was armed */
    int signalled = AA_CLIENT_STATE_ACTIVE == client->state && aa_get_int32_acquire(&client->parked_count) > 0 ?
        aa_client_check_waiters(client) : 0;
    bool news = AA_CLIENT_STATE_ACTIVE == client->state && aa_broadcast_receiver_has_pending(&client->to_clients);
    pthread_mutex_unlock(&client->lock);
    if (!parked_fit)
    {
        return false;
    }
    if (signalled > 0 || news)
    {
        return true;
    }
    /* without the driver's ring, a registration's answer is looked for often */
    int64_t timeout_ns = NULL == driver_news && aa_get_int32_acquire(&client->awaiting_responses) > 0 ?
        AA_CLIENT_AWAIT_SLEEP_NS : AA_CLIENT_IDLE_SLEEP_NS;
    if (aa_doorbell_set_wait(doorbells, timeout_ns) < 0)
    {
        s->waitv_unsupported = true;
        __atomic_store_n(&client->doorbells_watched, 0, __ATOMIC_SEQ_CST);
        return false;
    }
    return true;
}

/* Sleeps on the doorbells of the logs async waiters may wait on (publishers ring after appending,
 * the driver after moving a publisher limit; only when a parked waiter armed them) and on the
 * driver's news (the clients' doorbell in the CnC header), so a waiter wakes at once, parking costs
 * no system call, and a registration's answer or a new image is handled as it comes. Where
 * futex_waitv is missing (Linux < 5.16) or parked waiters wait on more than 127 logs, it looks for
 * a pending registration's answer every AA_CLIENT_AWAIT_SLEEP_NS, checks parked waiters every
 * AA_CLIENT_WAIT_CHECK_NS, and otherwise sleeps 16 ms between duty cycles (reference 10), woken
 * early when a waiter parks or a registration is made. */
void aa_client_idle(void *state, int work_count)
{
    aa_client_idle_state_t *s = state;
    aa_client_t *client = s->client;
    if (work_count > 0)
    {
        return;
    }
    if (client->wake_spin_until_ns > 0)
    {
        int64_t now_ns = aa_nano_clock();
        if (now_ns < client->wake_spin_until_ns)
        {
            sched_yield();
            return;
        }
        client->wake_spin_until_ns = 0;
    }
    int32_t wake_word = __atomic_load_n(&client->wake_word, __ATOMIC_SEQ_CST);
    if (aa_client_wait_on_doorbells(s, wake_word))
    {
        return;
    }
    if (aa_get_int32_acquire(&client->awaiting_responses) > 0)
    {
        /* no futex_waitv, so no sleeping on the driver's news: look for the answer often */
        struct timespec ts = { 0, AA_CLIENT_AWAIT_SLEEP_NS };
        nanosleep(&ts, NULL);
        return;
    }
    if (aa_get_int32_acquire(&client->parked_count) > 0)
    {
        struct timespec ts = { 0, AA_CLIENT_WAIT_CHECK_NS };
        nanosleep(&ts, NULL);
        return;
    }
    struct timespec timeout = { AA_CLIENT_IDLE_SLEEP_NS / 1000000000LL, AA_CLIENT_IDLE_SLEEP_NS % 1000000000LL };
    syscall(SYS_futex, &client->wake_word, FUTEX_WAIT_PRIVATE, wake_word, &timeout, NULL, 0);
}

int aa_client_idle_init(void **state, const char *args)
{
    (void)state;
    (void)args;
    return 0;
}
