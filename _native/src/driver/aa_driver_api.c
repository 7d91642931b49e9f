/* The public driver API over the context table and aa_driver_t. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "aeron_async.h"
#include "util/aa_error.h"

aa_driver_context_t *aa_driver_context_new(void)
{
    aa_driver_context_t *ctx = malloc(sizeof(aa_driver_context_t));
    if (NULL == ctx)
    {
        AA_SET_ERR(ENOMEM, "%s", "out of memory");
        return NULL;
    }
    if (aa_driver_context_init(ctx) < 0)
    {
        free(ctx);
        return NULL;
    }
    return ctx;
}

void aa_driver_context_free(aa_driver_context_t *ctx)
{
    free(ctx);
}

int aa_driver_context_set_clock(
    aa_driver_context_t *ctx, aa_clock_func_t nano_time, aa_clock_func_t epoch_time, void *clientd)
{
    if ((NULL == nano_time) != (NULL == epoch_time))
    {
        AA_SET_ERR(EINVAL, "%s", "aa_driver_context_set_clock: give both nano_time and epoch_time, or neither for the "
            "system clocks");
        return -1;
    }
    if (NULL == nano_time)
    {
        ctx->clock = aa_clock_system();
        return 0;
    }
    aa_clock_t clock = { nano_time, epoch_time, clientd };
    ctx->clock = clock;
    return 0;
}

const char *aa_driver_context_aeron_dir(aa_driver_context_t *ctx)
{
    return ctx->aeron_dir;
}

static int aa_driver_launch_joining(aa_driver_t **out, aa_driver_context_t *ctx, bool *joined)
{
    aa_driver_t *driver = NULL;
    if (aa_driver_init(&driver, ctx, joined) < 0)
    {
        return -1;
    }
    if (NULL == driver)
    {
        *out = NULL;
        return 0;
    }
    if (aa_driver_start(driver) < 0)
    {
        aa_driver_close(driver);
        return -1;
    }
    *out = driver;
    return 0;
}

int aa_driver_launch(aa_driver_t **out, aa_driver_context_t *ctx)
{
    return aa_driver_launch_joining(out, ctx, NULL);
}

int aa_driver_launch_or_join(aa_driver_t **out, aa_driver_context_t *ctx)
{
    bool joined = false;
    return aa_driver_launch_joining(out, ctx, &joined);
}

aa_flow_control_proxy_host_t *aa_driver_flow_control_proxy_host(aa_driver_t *driver)
{
    return &driver->conductor.flow_control_proxy_host;
}
