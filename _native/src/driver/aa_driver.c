#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aa_driver.h"
#include "aa_cnc.h"
#include "../concurrent/aa_mpsc_rb.h"
#include "../util/aa_clock.h"
#include "../util/aa_error.h"
#include "../util/aa_fs.h"

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
    if (AA_CNC_VERSION == aa_get_int32_acquire(&cnc->cnc_version) &&
        (size_t)length >= AA_CNC_HEADER_LENGTH + (size_t)cnc->to_driver_buffer_length)
    {
        aa_mpsc_rb_t rb;
        if (0 == aa_mpsc_rb_init(&rb, aa_cnc_to_driver_buffer(cnc), (size_t)cnc->to_driver_buffer_length))
        {
            int64_t age = aa_epoch_clock() - aa_mpsc_rb_consumer_heartbeat_time_value(&rb);
            if (NULL != heartbeat_age_ms)
            {
                *heartbeat_age_ms = age;
            }
            if (NULL != pid)
            {
                *pid = cnc->pid;
            }
            result = age <= driver_timeout_ms ? 1 : 0;
        }
    }
    aa_unmap(&mapped);
    return result;
}

static int aa_driver_composite_do_work(void *state)
{
    aa_driver_t *driver = state;
    return aa_driver_conductor_do_work(&driver->conductor);
}

static void aa_driver_composite_on_close(void *state)
{
    aa_driver_t *driver = state;
    aa_driver_conductor_on_close(&driver->conductor);
}

int aa_driver_init(aa_driver_t **out, const aa_driver_context_t *ctx)
{
    aa_driver_t *driver = calloc(1, sizeof(aa_driver_t));
    if (NULL == driver)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory allocating the driver");
        return -1;
    }
    driver->ctx = *ctx;
    if (aa_driver_context_validate(&driver->ctx) < 0)
    {
        free(driver);
        return -1;
    }

    int64_t age_ms = 0, pid = 0;
    int active = aa_driver_is_active(driver->ctx.aeron_dir, driver->ctx.driver_timeout_ms, &age_ms, &pid);
    if (1 == active && !driver->ctx.dir_delete_on_start)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "an active media driver is already running in %s (pid %" PRId64 ", heartbeat %" PRId64 " ms ago); "
            "connect to it, stop it, or choose another directory with AERON_DIR",
            driver->ctx.aeron_dir, pid, age_ms);
        free(driver);
        return -1;
    }

    char path[PATH_MAX];
    if (aa_delete_dir(driver->ctx.aeron_dir) < 0 || aa_mkdirs(driver->ctx.aeron_dir) < 0)
    {
        AA_APPEND_ERR("preparing the aeron directory %s", driver->ctx.aeron_dir);
        free(driver);
        return -1;
    }
    snprintf(path, sizeof(path), "%s/publications", driver->ctx.aeron_dir);
    if (aa_mkdirs(path) < 0)
    {
        free(driver);
        return -1;
    }
    snprintf(path, sizeof(path), "%s/images", driver->ctx.aeron_dir);
    if (aa_mkdirs(path) < 0)
    {
        free(driver);
        return -1;
    }

    if (aa_driver_conductor_init(&driver->conductor, &driver->ctx) < 0)
    {
        free(driver);
        return -1;
    }
    *out = driver;
    return 0;
}

int aa_driver_start(aa_driver_t *driver)
{
    aa_idle_strategy_t idle;
    const char *idle_spec = driver->ctx.conductor_idle_strategy;
    if (AA_THREADING_MODE_SHARED == driver->ctx.threading_mode || AA_THREADING_MODE_INVOKER == driver->ctx.threading_mode)
    {
        idle_spec = driver->ctx.shared_idle_strategy;
    }
    if (aa_idle_strategy_load(&idle, idle_spec) < 0)
    {
        return -1;
    }
    aa_idle_strategy_set_doorbell(&idle, aa_cnc_doorbell(driver->conductor.cnc), AA_IDLE_DEEP_AFTER_NS, AA_IDLE_DEEP_PARK_NS);
    if (AA_THREADING_MODE_INVOKER == driver->ctx.threading_mode)
    {
        driver->invoker_idle_strategy = idle;
        driver->started = true;
        return 0;
    }
    if (aa_agent_runner_init(
        &driver->runners[0],
        AA_THREADING_MODE_SHARED == driver->ctx.threading_mode ? "aeron-shared" : "aeron-conductor",
        driver, aa_driver_composite_do_work, aa_driver_composite_on_close, &idle) < 0)
    {
        aa_idle_strategy_close(&idle);
        return -1;
    }
    driver->runners_count = 1;
    if (aa_agent_runner_start(&driver->runners[0]) < 0)
    {
        return -1;
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
    if (driver->runners_count > 0)
    {
        for (int i = 0; i < driver->runners_count; i++)
        {
            aa_agent_runner_close(&driver->runners[i]);
        }
    }
    else
    {
        if (driver->started)
        {
            aa_idle_strategy_close(&driver->invoker_idle_strategy);
        }
        aa_driver_composite_on_close(driver);
    }
    free(driver);
    if (delete_dir)
    {
        aa_delete_dir(dir);
    }
    return 0;
}
