/* The option engine: the code every option table shares (util/aa_options.h). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/aa_options.h"
#include "util/aa_error.h"
#include "util/aa_parse.h"

const aa_option_t *aa_options_find(const aa_options_table_t *table, const char *name)
{
    char normalised[128];
    size_t len = strlen(name);
    if (len >= sizeof(normalised))
    {
        return NULL;
    }
    for (size_t i = 0; i <= len; i++)
    {
        char c = name[i];
        normalised[i] = '.' == c ? '_' : (char)toupper((unsigned char)c);
    }
    for (size_t i = 0; i < table->count; i++)
    {
        if (0 == strcmp(table->options[i].env_name, normalised))
        {
            return &table->options[i];
        }
    }
    return NULL;
}

static int aa_option_parse_bool(const char *value, bool *out)
{
    if (0 == strcasecmp(value, "true") || 0 == strcmp(value, "1") || 0 == strcasecmp(value, "yes"))
    {
        *out = true;
        return 0;
    }
    if (0 == strcasecmp(value, "false") || 0 == strcmp(value, "0") || 0 == strcasecmp(value, "no"))
    {
        *out = false;
        return 0;
    }
    return -1;
}

/* 1: a number in range, 0: no number at all, -1: a number out of int64's range */
static int aa_option_parse_integer(const char *value, int64_t *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(value, &end, 10);
    if (end == value || '\0' != *end)
    {
        return 0;
    }
    if (0 != errno)
    {
        return -1;
    }
    *out = (int64_t)v;
    return 1;
}

static int aa_option_store_string(const aa_option_t *opt, char *field, const char *value)
{
    size_t length = strlen(value);
    if (length >= opt->size)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s is too long (%zu characters, at most %zu)",
            opt->env_name, length, opt->size - 1);
        return -1;
    }
    memcpy(field, value, length + 1);
    return 0;
}

int aa_options_apply(const aa_options_table_t *table, void *ctx, const aa_option_t *opt, const char *value)
{
    uint8_t *field = (uint8_t *)ctx + opt->offset;
    switch (opt->type)
    {
        case AA_OPTION_BOOL:
            if (aa_option_parse_bool(value, (bool *)field) < 0)
            {
                AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s=%s is not a boolean; use true or false",
                    opt->env_name, value);
                return -1;
            }
            return 0;

        case AA_OPTION_INT32:
        {
            int64_t v = 0;
            int found = aa_option_parse_integer(value, &v);
            if (found <= 0 || v < INT32_MIN || v > INT32_MAX)
            {
                AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s=%s is not %s", opt->env_name, value,
                    found <= 0 ? table->int32_noun : "a 32-bit integer");
                return -1;
            }
            *(int32_t *)field = (int32_t)v;
            return 0;
        }

        case AA_OPTION_INT64:
            if (aa_option_parse_integer(value, (int64_t *)field) <= 0)
            {
                AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s=%s is not %s", opt->env_name, value, table->int64_noun);
                return -1;
            }
            return 0;

        case AA_OPTION_SIZE:
        case AA_OPTION_DURATION:
        {
            bool size = AA_OPTION_SIZE == opt->type;
            int64_t v = size ? aa_parse_size(value) : aa_parse_duration_ns(value);
            if (v < 0)
            {
                AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s=%s is not %s; use %s (e.g. %s)", opt->env_name, value,
                    size ? "a size" : "a duration",
                    size ? "bytes with an optional k, m or g suffix" : "a number with ns, us, ms or s",
                    size ? table->size_examples : table->duration_examples);
                return -1;
            }
            *(int64_t *)field = size ? v : v / opt->unit_ns;
            return 0;
        }

        case AA_OPTION_STRING:
            if ('\0' == value[0] && NULL != opt->fill_empty)
            {
                return opt->fill_empty((char *)field, opt->size);
            }
            if (NULL != opt->check && opt->check(opt, value) < 0)
            {
                return -1;
            }
            return aa_option_store_string(opt, (char *)field, value);

        case AA_OPTION_ENUM:
            for (int32_t i = 0; i < opt->choices->count; i++)
            {
                if (0 == strcasecmp(value, opt->choices->names[i]))
                {
                    *(int32_t *)field = i;
                    return 0;
                }
            }
            AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s=%s %s", opt->env_name, value, opt->choices->refusal);
            return -1;

        case AA_OPTION_CUSTOM:
            return opt->parse(ctx, opt, value);

        default:
            break;
    }
    AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s has an option type this engine does not know (%d)",
        opt->env_name, (int)opt->type);
    return -1;
}

int aa_options_set(const aa_options_table_t *table, void *ctx, const char *name, const char *value)
{
    const aa_option_t *opt = aa_options_find(table, name);
    if (NULL == opt)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "unknown %s option %s; see `aeron-async %s --help-options`",
            table->what, name, table->what);
        return -1;
    }
    return aa_options_apply(table, ctx, opt, value);
}

int aa_options_init(const aa_options_table_t *table, void *ctx)
{
    for (size_t i = 0; i < table->count; i++)
    {
        if (aa_options_apply(table, ctx, &table->options[i], table->options[i].default_value) < 0)
        {
            return -1;
        }
    }
    for (size_t i = 0; i < table->count; i++)
    {
        const char *env = getenv(table->options[i].env_name);
        if (NULL != env && aa_options_apply(table, ctx, &table->options[i], env) < 0)
        {
            AA_APPEND_ERR("%s", "from the environment");
            return -1;
        }
    }
    return 0;
}

int aa_options_format(const void *ctx, const aa_option_t *opt, char *out, size_t length)
{
    const uint8_t *field = (const uint8_t *)ctx + opt->offset;
    switch (opt->type)
    {
        case AA_OPTION_BOOL:
            return snprintf(out, length, "%s", *(const bool *)field ? "true" : "false");
        case AA_OPTION_INT32:
            return snprintf(out, length, "%" PRId32, *(const int32_t *)field);
        case AA_OPTION_INT64:
        case AA_OPTION_SIZE:
            return snprintf(out, length, "%" PRId64, *(const int64_t *)field);
        case AA_OPTION_DURATION:
            return snprintf(out, length, "%" PRId64 "%s", *(const int64_t *)field, 1 == opt->unit_ns ? "ns" : "ms");
        case AA_OPTION_STRING:
            if (opt->secret)
            {
                return snprintf(out, length, "%s", '\0' == *(const char *)field ? "" : "(set)");
            }
            return snprintf(out, length, "%s", (const char *)field);
        case AA_OPTION_ENUM:
        {
            int32_t index = *(const int32_t *)field;
            return snprintf(out, length, "%s", index >= 0 && index < opt->choices->count ? opt->choices->names[index] : "?");
        }
        case AA_OPTION_CUSTOM:
            return NULL == opt->format ? -1 : opt->format(ctx, opt, out, length);
        default:
            break;
    }
    return -1;
}

int aa_options_get(const aa_options_table_t *table, const void *ctx, const char *name, char *out, size_t length)
{
    const aa_option_t *opt = aa_options_find(table, name);
    if (NULL == opt)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "unknown %s option %s; see `aeron-async %s --help-options`",
            table->what, name, table->what);
        return -1;
    }
    int n = aa_options_format(ctx, opt, out, length);
    if (n < 0 || (size_t)n >= length)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s: the value does not fit %zu bytes", opt->env_name, length);
        return -1;
    }
    return n;
}

int aa_options_write(const aa_options_table_t *table, const void *ctx, FILE *out)
{
    char value[1100];
    for (size_t i = 0; i < table->count; i++)
    {
        const aa_option_t *o = &table->options[i];
        int n = aa_options_format(ctx, o, value, sizeof(value));
        int rc = n < 0 ?
            fprintf(out, "# %s: value not recorded (option kind %d)\n", o->property_name, (int)o->type) :
            fprintf(out, "%s=%s\n", o->property_name, value);
        if (rc < 0)
        {
            AA_SET_ERR(errno, "writing the %s's options", table->what);
            return -1;
        }
    }
    return 0;
}

int aa_options_describe(const aa_options_table_t *table, int32_t index, aa_option_info_t *info)
{
    if (index < 0 || (size_t)index >= table->count)
    {
        return -1;
    }
    const aa_option_t *o = &table->options[index];
    info->name = o->name;
    info->env_name = o->env_name;
    info->property_name = o->property_name;
    info->type = o->type;
    info->default_value = o->default_value;
    info->description = o->description;
    return 0;
}
