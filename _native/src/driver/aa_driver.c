#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

#include "driver/aa_driver.h"
#include "protocols/aa_cnc.h"
#include "media/aa_network_publication.h"
#include "concurrent/aa_mpsc_rb.h"
#include "util/aa_clock.h"
#include "util/aa_error.h"
#include "util/aa_fs.h"
#include "util/aa_process.h"

int aa_driver_is_active(const char *aeron_dir, int64_t driver_timeout_ms, int64_t *heartbeat_age_ms, int64_t *pid)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", aeron_dir, AA_CNC_FILE);
    if (!aa_file_exists(path))
    {
        return 0;
    }
    int64_t length = aa_file_length(path);
    if (length < AA_CNC_HEADER_LENGTH)
    {
        return 0;
    }
    aa_mapped_file_t mapped = { 0 };
    if (aa_map_existing_file(&mapped, path, 0) < 0)
    {
        return -1;
    }
    aa_cnc_metadata_t *cnc = (aa_cnc_metadata_t *)mapped.addr;
    int result = 0;
    /* a header whose lengths no driver writes (docs/security.md, "The CnC file") is no live driver's */
    if (AA_CNC_VERSION == aa_get_int32_acquire(&cnc->cnc_version) && NULL == aa_cnc_lengths_fault(cnc, (size_t)length))
    {
        aa_mpsc_rb_t rb;
        if (0 == aa_mpsc_rb_init(&rb, aa_cnc_to_driver_buffer(cnc), (size_t)cnc->to_driver_buffer_length))
        {
            int64_t heartbeat_ms = aa_mpsc_rb_consumer_heartbeat_time_value(&rb);
            int64_t age = AA_CNC_DRIVER_CLOSED_HEARTBEAT == heartbeat_ms ? -1 : aa_epoch_clock() - heartbeat_ms;
            if (NULL != heartbeat_age_ms)
            {
                *heartbeat_age_ms = age;
            }
            if (NULL != pid)
            {
                *pid = cnc->pid;
            }
            result = AA_CNC_DRIVER_ACTIVE == aa_cnc_driver_liveness(cnc, heartbeat_ms, age, driver_timeout_ms) ? 1 : 0;
        }
    }
    aa_unmap(&mapped);
    return result;
}

static int aa_driver_composite_do_work(void *state)
{
    aa_driver_t *driver = state;
    int work_count = aa_driver_conductor_do_work(&driver->conductor);
    work_count += aa_driver_sender_do_work(&driver->sender);
    work_count += aa_driver_receiver_do_work(&driver->receiver);
    return work_count;
}

/* ---- the driver waiter (SHARED, INVOKER) ---- */

static void *aa_driver_waiter_watch(void *arg)
{
    aa_driver_waiter_t *w = arg;
    aa_doorbell_t *doorbell = aa_cnc_doorbell(w->driver->conductor.cnc);
    for (;;)
    {
        struct epoll_event events[4];
        int ready = epoll_wait(w->watch_fd, events, 4, -1);
        if (ready < 0)
        {
            if (EINTR == errno)
            {
                continue;
            }
            return NULL;
        }
        for (int i = 0; i < ready; i++)
        {
            if (events[i].data.fd == w->stop_fd)
            {
                return NULL;
            }
        }
        aa_doorbell_ring(doorbell); /* a datagram arrived while the driver thread slept */
    }
}

static void aa_driver_waiter_init(aa_driver_waiter_t *w, aa_driver_t *driver)
{
    memset(w, 0, sizeof(*w));
    w->driver = driver;
    w->watch_fd = -1;
    w->stop_fd = -1;
}

/* Starts the watcher the first time a UDP endpoint is open; false when it cannot. */
static bool aa_driver_waiter_start_watcher(aa_driver_waiter_t *w)
{
    if (w->watcher_started)
    {
        return true;
    }
    if (w->watch_fd < 0 && (w->watch_fd = epoll_create1(EPOLL_CLOEXEC)) < 0)
    {
        return false;
    }
    if (w->stop_fd < 0)
    {
        if ((w->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
        {
            return false;
        }
        struct epoll_event stop = { .events = EPOLLIN, .data.fd = w->stop_fd };
        if (epoll_ctl(w->watch_fd, EPOLL_CTL_ADD, w->stop_fd, &stop) < 0)
        {
            return false;
        }
        /* The pollers' epoll fds are readable while any of their sockets is: watched one-shot, armed
         * only before the driver thread sleeps, so a busy driver never wakes the watcher. */
        int pollers[2] = { w->driver->sender.poller.epoll_fd, w->driver->receiver.poller.epoll_fd };
        for (int i = 0; i < 2; i++)
        {
            struct epoll_event off = { .events = 0, .data.fd = pollers[i] };
            if (epoll_ctl(w->watch_fd, EPOLL_CTL_ADD, pollers[i], &off) < 0)
            {
                return false;
            }
        }
    }
    if (pthread_create(&w->watcher, NULL, aa_driver_waiter_watch, w) != 0)
    {
        return false;
    }
    w->watcher_started = true;
    return true;
}

static bool aa_driver_waiter_arm_poller(aa_driver_waiter_t *w, aa_udp_transport_poller_t *poller)
{
    if (0 == poller->transports_count)
    {
        return true;
    }
    for (size_t i = 0; i < poller->transports_count; i++)
    {
        if (poller->transports[i]->fd < 0)
        {
            return false; /* a transport without a socket: nothing to wait on */
        }
    }
    if (!aa_driver_waiter_start_watcher(w))
    {
        return false;
    }
    struct epoll_event on = { .events = EPOLLIN | EPOLLONESHOT, .data.fd = poller->epoll_fd };
    return 0 == epoll_ctl(w->watch_fd, EPOLL_CTL_MOD, poller->epoll_fd, &on);
}

static bool aa_driver_waiter_arm(void *clientd)
{
    aa_driver_waiter_t *w = clientd;
    aa_driver_t *driver = w->driver;
    aa_driver_sender_t *sender = &driver->sender;
    aa_doorbell_set_clear(&w->doorbells);
    if (sender->publications_count > 0 &&
        (w->waitv_unsupported || sender->publications_count + 1 > AA_DOORBELL_SET_CAPACITY))
    {
        return false;
    }
    /* The CnC doorbell first: a datagram that arrives from here on rings it (through the watcher). */
    aa_doorbell_set_add(&w->doorbells, aa_cnc_doorbell(driver->conductor.cnc));
    for (size_t i = 0; i < sender->publications_count; i++)
    {
        aa_doorbell_set_add(&w->doorbells, aa_logbuffer_doorbell(sender->publications[i]->log.metadata));
    }
    return aa_driver_waiter_arm_poller(w, &sender->poller) && aa_driver_waiter_arm_poller(w, &driver->receiver.poller);
}

static void aa_driver_waiter_wait(void *clientd, int64_t timeout_ns)
{
    aa_driver_waiter_t *w = clientd;
    if (aa_doorbell_set_wait(&w->doorbells, timeout_ns) < 0)
    {
        w->waitv_unsupported = true; /* from now on it parks whenever a network publication is open */
    }
}

static void aa_driver_waiter_close(aa_driver_waiter_t *w)
{
    if (w->watcher_started)
    {
        uint64_t one = 1;
        if (write(w->stop_fd, &one, sizeof(one)) == (ssize_t)sizeof(one))
        {
            pthread_join(w->watcher, NULL);
        }
        w->watcher_started = false;
    }
    if (w->watch_fd >= 0)
    {
        close(w->watch_fd);
        w->watch_fd = -1;
    }
    if (w->stop_fd >= 0)
    {
        close(w->stop_fd);
        w->stop_fd = -1;
    }
}

static void aa_driver_use_waiter(aa_driver_t *driver, aa_idle_strategy_t *strategy)
{
    driver->deep_waiter.arm = aa_driver_waiter_arm;
    driver->deep_waiter.wait = aa_driver_waiter_wait;
    driver->deep_waiter.clientd = &driver->waiter;
    aa_idle_strategy_set_deep_waiter(strategy, &driver->deep_waiter, AA_IDLE_DEEP_AFTER_NS, AA_IDLE_DEEP_PARK_NS);
    driver->composite_idle_strategy = strategy;
}

static void aa_driver_composite_on_close(void *state)
{
    aa_driver_t *driver = state;
    aa_driver_receiver_on_close(&driver->receiver);
    aa_driver_sender_on_close(&driver->sender);
    aa_driver_conductor_on_close(&driver->conductor);
}

static int aa_driver_network_do_work(void *state)
{
    aa_driver_t *driver = state;
    return aa_driver_sender_do_work(&driver->sender) + aa_driver_receiver_do_work(&driver->receiver);
}

/* Prepares the directory and the agents; the caller holds the directory's lock. */
static int aa_driver_init_locked(aa_driver_t *driver)
{
    char path[PATH_MAX];
    if (aa_fs_prepare_dir(driver->ctx.aeron_dir, &driver->ctx.dir_access, AA_DRIVER_DIR_OPTION) < 0)
    {
        return -1;
    }
    if (aa_delete_dir_contents(driver->ctx.aeron_dir, AA_DRIVER_LOCK_FILE) < 0)
    {
        AA_APPEND_ERR("preparing the aeron directory %s", driver->ctx.aeron_dir);
        return -1;
    }
    snprintf(path, sizeof(path), "%s/publications", driver->ctx.aeron_dir);
    if (aa_fs_prepare_dir(path, &driver->ctx.dir_access, AA_DRIVER_DIR_OPTION) < 0)
    {
        return -1;
    }
    snprintf(path, sizeof(path), "%s/images", driver->ctx.aeron_dir);
    if (aa_fs_prepare_dir(path, &driver->ctx.dir_access, AA_DRIVER_DIR_OPTION) < 0)
    {
        return -1;
    }

    if (aa_driver_sender_init(&driver->sender, &driver->ctx, &driver->conductor.services) < 0)
    {
        return -1;
    }
    if (aa_driver_receiver_init(&driver->receiver, &driver->ctx, &driver->conductor.services) < 0)
    {
        aa_driver_sender_on_close(&driver->sender);
        return -1;
    }
    if (aa_driver_conductor_init(&driver->conductor, &driver->ctx, &driver->sender, &driver->receiver) < 0)
    {
        aa_driver_receiver_on_close(&driver->receiver);
        aa_driver_sender_on_close(&driver->sender);
        return -1;
    }
    /* Lets readers tell a driver that has exited from one they cannot check (aa_cnc.h). Our own
     * launchers read it only after the lock is released. */
    aa_put_int64_release(aa_cnc_pid_namespace(driver->conductor.cnc), (int64_t)aa_process_pid_namespace());
    aa_put_int32_release(aa_cnc_features(driver->conductor.cnc), AA_CNC_FEATURE_CLIENTS_DOORBELL);
    aa_driver_waiter_init(&driver->waiter, driver);
    if (aa_driver_write_options_file(driver) < 0)
    {
        AA_APPEND_ERR("%s", "writing the driver's options file");
        aa_driver_composite_on_close(driver);
        return -1;
    }
    return 0;
}

int aa_driver_init(aa_driver_t **out, const aa_driver_context_t *ctx, bool *joined)
{
    aa_driver_t *driver = calloc(1, sizeof(aa_driver_t));
    if (NULL == driver)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory allocating the driver");
        return -1;
    }
    driver->ctx = *ctx;
    driver->lock_fd = -1;
    if (aa_driver_context_validate(&driver->ctx) < 0)
    {
        free(driver);
        return -1;
    }

    /* One launcher at a time decides whether a driver runs here and, if none does, creates the CnC
     * file: launchers racing on one directory end with one driver, the others seeing it alive. */
    /* the directory checked (docs/security.md, Files), its mode and group left to the driver that
     * starts in it (aa_driver_init_locked): a launcher that finds a live one changes nothing there */
    driver->lock_fd = aa_lock_file_in_dir(driver->ctx.aeron_dir, AA_DRIVER_LOCK_FILE, NULL, AA_DRIVER_DIR_OPTION);
    if (driver->lock_fd < 0)
    {
        AA_APPEND_ERR("preparing the aeron directory %s", driver->ctx.aeron_dir);
        free(driver);
        return -1;
    }
    int64_t age_ms = 0, pid = 0;
    int active = aa_driver_is_active(driver->ctx.aeron_dir, driver->ctx.driver_timeout_ms, &age_ms, &pid);
    if (1 == active && !driver->ctx.dir_delete_on_start)
    {
        if (NULL != joined)
        {
            *joined = true;
            *out = NULL;
            aa_release_lock_fd(driver->lock_fd);
            free(driver);
            return 0;
        }
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "an active media driver is already running in %s (pid %" PRId64 ", heartbeat %" PRId64 " ms ago); "
            "connect to it, stop it, or choose another directory with AERON_DIR",
            driver->ctx.aeron_dir, pid, age_ms);
        aa_release_lock_fd(driver->lock_fd);
        free(driver);
        return -1;
    }
    if (aa_driver_init_locked(driver) < 0)
    {
        aa_release_lock_fd(driver->lock_fd);
        free(driver);
        return -1;
    }
    aa_unlock_fd(driver->lock_fd);
    if (NULL != joined)
    {
        *joined = false;
    }
    *out = driver;
    return 0;
}

static int aa_driver_add_runner(
    aa_driver_t *driver, const char *role_name, aa_agent_do_work_func_t do_work, const char *idle_spec, bool deep_idle)
{
    aa_idle_strategy_t idle;
    if (aa_idle_strategy_load(&idle, idle_spec) < 0)
    {
        return -1;
    }
    if (deep_idle)
    {
        aa_idle_strategy_set_doorbell(
            &idle, aa_cnc_doorbell(driver->conductor.cnc), AA_IDLE_DEEP_AFTER_NS, AA_IDLE_DEEP_PARK_NS);
    }
    aa_agent_runner_t *runner = &driver->runners[driver->runners_count];
    if (aa_agent_runner_init(runner, role_name, driver, do_work, NULL, &idle) < 0)
    {
        aa_idle_strategy_close(&idle);
        return -1;
    }
    driver->runners_count++;
    return 0;
}

static int aa_driver_conductor_agent_do_work(void *state)
{
    return aa_driver_conductor_do_work(&((aa_driver_t *)state)->conductor);
}

static int aa_driver_sender_agent_do_work(void *state)
{
    return aa_driver_sender_do_work(&((aa_driver_t *)state)->sender);
}

static int aa_driver_receiver_agent_do_work(void *state)
{
    return aa_driver_receiver_do_work(&((aa_driver_t *)state)->receiver);
}

/* The runners only run the agents: aa_driver_close joins every runner's thread first, then closes
 * the agents (receiver, sender, conductor), so nothing the conductor frees is still in use. */
static int aa_driver_add_runners(aa_driver_t *driver)
{
    aa_driver_context_t *ctx = &driver->ctx;
    switch (ctx->threading_mode)
    {
        case AA_THREADING_MODE_DEDICATED:
            if (aa_driver_add_runner(driver, "aeron-conductor", aa_driver_conductor_agent_do_work,
                ctx->conductor_idle_strategy, true) < 0 ||
                aa_driver_add_runner(driver, "aeron-sender", aa_driver_sender_agent_do_work,
                ctx->sender_idle_strategy, false) < 0 ||
                aa_driver_add_runner(driver, "aeron-receiver", aa_driver_receiver_agent_do_work,
                ctx->receiver_idle_strategy, false) < 0)
            {
                return -1;
            }
            return 0;

        case AA_THREADING_MODE_SHARED_NETWORK:
            if (aa_driver_add_runner(driver, "aeron-conductor", aa_driver_conductor_agent_do_work,
                ctx->conductor_idle_strategy, true) < 0 ||
                aa_driver_add_runner(driver, "aeron-network", aa_driver_network_do_work,
                ctx->shared_network_idle_strategy, false) < 0)
            {
                return -1;
            }
            return 0;

        default:
            if (aa_driver_add_runner(driver, "aeron-shared", aa_driver_composite_do_work, ctx->shared_idle_strategy, true) < 0)
            {
                return -1;
            }
            aa_driver_use_waiter(driver, &driver->runners[0].idle_strategy);
            return 0;
    }
}

int aa_driver_start(aa_driver_t *driver)
{
    if (AA_THREADING_MODE_INVOKER == driver->ctx.threading_mode)
    {
        if (aa_idle_strategy_load(&driver->invoker_idle_strategy, driver->ctx.shared_idle_strategy) < 0)
        {
            return -1;
        }
        aa_driver_use_waiter(driver, &driver->invoker_idle_strategy);
        driver->started = true;
        return 0;
    }
    if (aa_driver_add_runners(driver) < 0)
    {
        return -1;
    }
    for (int i = 0; i < driver->runners_count; i++)
    {
        if (aa_agent_runner_start(&driver->runners[i]) < 0)
        {
            return -1;
        }
    }
    driver->started = true;
    return 0;
}

int aa_driver_do_work(aa_driver_t *driver)
{
    return aa_driver_composite_do_work(driver);
}

void aa_driver_idle(aa_driver_t *driver, int work_count)
{
    aa_idle_strategy_idle(&driver->invoker_idle_strategy, work_count);
}

int aa_driver_close(aa_driver_t *driver)
{
    if (NULL == driver)
    {
        return 0;
    }
    char dir[sizeof(driver->ctx.aeron_dir)];
    memcpy(dir, driver->ctx.aeron_dir, sizeof(dir));
    bool delete_dir = driver->ctx.dir_delete_on_shutdown;
    for (int i = 0; i < driver->runners_count; i++)
    {
        aa_agent_runner_close(&driver->runners[i]);
    }
    if (0 == driver->runners_count && driver->started)
    {
        aa_idle_strategy_close(&driver->invoker_idle_strategy);
    }
    aa_driver_waiter_close(&driver->waiter);
    /* Held from marking the CnC file closed (the conductor's last act) until the directory is gone,
     * so a driver starting here meanwhile waits rather than has its files deleted under it. */
    int lock_fd = driver->lock_fd;
    if (lock_fd >= 0 && aa_lock_fd(lock_fd) < 0)
    {
        aa_release_lock_fd(lock_fd);
        lock_fd = -1;
    }
    aa_driver_composite_on_close(driver);
    free(driver);
    if (delete_dir)
    {
        aa_delete_dir(dir);
    }
    if (lock_fd >= 0)
    {
        aa_release_lock_fd(lock_fd);
    }
    return 0;
}
