/*
 * The conductor's name resolution: the driver's resolver (built with its context), its periodic
 * work and the resolutions table (media/aa_name_resolutions.h).
 */
#include <string.h>

#include "aa_driver_conductor_private.h"
#include "../util/aa_error.h"

int aa_conductor_resolution_init(aa_driver_conductor_t *conductor, int64_t now_ms)
{
    aa_driver_context_t *ctx = conductor->ctx;
    /* AERON_DRIVER_RESOLVER_INTERFACE makes "driver" the resolver (as Aeron's Java does) */
    const char *supplier = ctx->name_resolver_supplier;
    if ('\0' != ctx->driver_resolver_interface[0])
    {
        if (0 != strcmp(supplier, "default") && 0 != strcmp(supplier, "driver"))
        {
            AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "AERON_DRIVER_RESOLVER_INTERFACE turns the driver name resolver on, "
                "but AERON_NAME_RESOLVER_SUPPLIER chooses '%s': set one of them", supplier);
            return -1;
        }
        supplier = "driver";
    }
    if (aa_name_resolutions_init(&conductor->name_resolutions, ctx->aeron_dir, supplier, now_ms) < 0)
    {
        return -1;
    }
    aa_name_resolver_context_t *rc = &conductor->name_resolver_context;
    rc->driver_context = ctx;
    rc->counters = &conductor->counters;
    rc->system_counters = conductor->system_counters;
    rc->error_log = &conductor->error_log;
    rc->resolutions = &conductor->name_resolutions;
    rc->default_resolver = aa_name_resolver_default();
    rc->clock = &ctx->clock;
    if (aa_name_resolver_create(&conductor->name_resolver, supplier, ctx->name_resolver_init_args, rc) < 0)
    {
        aa_name_resolutions_close(&conductor->name_resolutions);
        return -1;
    }
    return 0;
}

void aa_conductor_resolution_close(aa_driver_conductor_t *conductor)
{
    aa_name_resolver_close(conductor->name_resolver);
    conductor->name_resolver = NULL;
    aa_name_resolutions_close(&conductor->name_resolutions);
}

int aa_conductor_resolution_do_work(aa_driver_conductor_t *conductor, int64_t now_ns, int64_t now_ms)
{
    (void)now_ns;
    aa_name_resolver_t *resolver = conductor->name_resolver;
    int work_count = 0;
    if (NULL != resolver && NULL != resolver->do_work)
    {
        int rc = resolver->do_work(resolver->state, now_ms);
        if (rc < 0)
        {
            AA_APPEND_ERR("name resolver '%s' periodic work", resolver->name);
            aa_driver_conductor_log_error(conductor, aa_errcode(), aa_errmsg());
        }
        else
        {
            work_count += rc;
        }
    }
    return work_count;
}
