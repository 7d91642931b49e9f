/* The option tables through the public API (aeron_async.h): the driver's and the archive's, both
 * run by the option engine (util/aa_options.h). The Python contexts (DriverContext, ArchiveContext)
 * and the CLI's --help-options read them here, so each option's name and default is written once. */
#include "aeron_async.h"
#include "archive/aa_archive_context.h"
#include "driver/aa_driver_context.h"
#include "util/aa_error.h"
#include "util/aa_options.h"

static const aa_options_table_t *aa_options_table(int32_t kind)
{
    switch (kind)
    {
        case AA_OPTIONS_DRIVER:
            return aa_driver_context_options();
        case AA_OPTIONS_ARCHIVE:
            return aa_archive_context_options();
        default:
            AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR, "no option table of kind %d (AA_OPTIONS_DRIVER or AA_OPTIONS_ARCHIVE)",
                (int)kind);
            return NULL;
    }
}

int aa_options_count(int32_t kind)
{
    const aa_options_table_t *table = aa_options_table(kind);
    return NULL == table ? -1 : (int)table->count;
}

int aa_option_describe(int32_t kind, int32_t index, aa_option_info_t *info)
{
    const aa_options_table_t *table = aa_options_table(kind);
    if (NULL == table)
    {
        return -1;
    }
    if (aa_options_describe(table, index, info) < 0)
    {
        AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR, "the %s has no option %d (it has %zu)", table->what, (int)index,
            table->count);
        return -1;
    }
    return 0;
}

static int aa_option_strings(int32_t kind, int index, const char **env_name, const char **property_name,
    const char **default_value, const char **description)
{
    aa_option_info_t info;
    if (aa_option_describe(kind, index, &info) < 0)
    {
        return -1;
    }
    *env_name = info.env_name;
    *property_name = info.property_name;
    *default_value = info.default_value;
    *description = info.description;
    return 0;
}

int aa_driver_option(
    int index, const char **env_name, const char **property_name, const char **default_value, const char **description)
{
    return aa_option_strings(AA_OPTIONS_DRIVER, index, env_name, property_name, default_value, description);
}

int aa_archive_option(
    int index, const char **env_name, const char **property_name, const char **default_value, const char **description)
{
    return aa_option_strings(AA_OPTIONS_ARCHIVE, index, env_name, property_name, default_value, description);
}
