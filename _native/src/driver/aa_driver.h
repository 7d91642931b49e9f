/*
 * The media driver: context, the three agents (conductor, sender, receiver) and the runners of the
 * chosen threading mode. DEDICATED runs each agent on its own thread, SHARED_NETWORK the conductor
 * on one and the network agents (sender, receiver) on another, SHARED all on one, INVOKER none (the
 * application calls aa_driver_do_work). The conductor's idle strategy sleeps deeply on the driver
 * doorbell; in SHARED and INVOKER the one thread sleeps deeply on the driver waiter (below), even with
 * UDP endpoints open; the network agents of DEDICATED and SHARED_NETWORK back off to at most the
 * strategy's longest park (1 ms).
 */
#ifndef AA_DRIVER_H
#define AA_DRIVER_H

#include "driver/aa_driver_conductor.h"
#include "driver/aa_driver_context.h"
#include "driver/aa_driver_receiver.h"
#include "driver/aa_driver_sender.h"
#include "agent/aa_agent.h"

#define AA_DRIVER_MAX_RUNNERS 3
/* What the SHARED/INVOKER thread sleeps on when deeply idle: the CnC doorbell (client commands,
 * back-pressured offers), the log doorbell of every network publication (a client appended data to
 * send), and the sockets of every UDP endpoint: a watcher thread blocks in epoll_wait on the sender's
 * and the receiver's pollers (one-shot, armed only while the driver thread sleeps) and rings the CnC
 * doorbell when a datagram arrives. Falls back to parking when more logs are open than futex_waitv
 * takes, where futex_waitv is missing, or where a transport has no socket (test doubles). */
typedef struct aa_driver_waiter_stct
{
    struct aa_driver_stct *driver;
    int watch_fd;            /* epoll over the sender's and receiver's poller epoll fds + stop_fd */
    int stop_fd;             /* eventfd: ends the watcher */
    pthread_t watcher;
    bool watcher_started;
    bool waitv_unsupported;
    aa_doorbell_set_t doorbells; /* the CnC doorbell + one per network publication log */
}
aa_driver_waiter_t;

typedef struct aa_driver_stct
{
    aa_driver_context_t ctx;
    aa_driver_conductor_t conductor;
    aa_driver_sender_t sender;
    aa_driver_receiver_t receiver;
    aa_agent_runner_t runners[AA_DRIVER_MAX_RUNNERS];
    int runners_count;
    aa_idle_strategy_t invoker_idle_strategy;
    /* SHARED and INVOKER: the one idle strategy, sleeping deeply on the waiter. */
    aa_idle_strategy_t *composite_idle_strategy;
    aa_driver_waiter_t waiter;
    aa_idle_deep_waiter_t deep_waiter;
    bool started;
    int lock_fd; /* <aeron dir>/AA_DRIVER_LOCK_FILE, locked while starting and while closing */
}
aa_driver_t;

/* Drivers of this library that start or close on one directory take turns through an flock on this
 * file in it: a driver checks for a live driver and creates its CnC file holding the lock, and holds
 * it again from marking its CnC file closed until it has deleted the directory (if it does). */
#define AA_DRIVER_LOCK_FILE "driver.lock"

/* Checks for a live driver in the directory (fails naming its pid), prepares the directory, creates
 * the CnC file. Takes a copy of ctx. With `joined` not NULL a live driver is no failure: *joined is
 * set, *driver NULL, and 0 returned. */
int aa_driver_init(aa_driver_t **driver, const aa_driver_context_t *ctx, bool *joined);
int aa_driver_start(aa_driver_t *driver);
int aa_driver_do_work(aa_driver_t *driver);
void aa_driver_idle(aa_driver_t *driver, int work_count);
int aa_driver_close(aa_driver_t *driver);

/* Driver control (aa_driver_control.c): the options the driver runs with, written at start as
 * property=value lines to this file in its directory (`aeron-async driver --info` reads it). */
#define AA_DRIVER_OPTIONS_FILE "driver-options.properties"
int aa_driver_write_options_file(aa_driver_t *driver);

/* Reads the CnC file in dir: 1 if a driver there is alive, 0 if not (no CnC file, or its driver closed,
 * its process is gone, or its heartbeat is older than the timeout: aa_cnc_driver_liveness), -1 on
 * error; the heartbeat's age (-1 for a closed driver) and the pid where given. */
int aa_driver_is_active(const char *aeron_dir, int64_t driver_timeout_ms, int64_t *heartbeat_age_ms, int64_t *pid);

#endif
