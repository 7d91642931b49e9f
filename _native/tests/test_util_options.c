/* The option engine (util/aa_options.h) on a table of its own: names, defaults, the environment,
 * every type's parsing and refusals, formatting, the options file and the descriptions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aa_test.h"
#include "util/aa_error.h"
#include "util/aa_options.h"

typedef struct test_ctx_stct
{
    bool flag;
    int32_t count;
    int64_t big;
    int64_t length;
    int64_t timeout_ns;
    int64_t timeout_ms;
    char label[8];
    char dir[32];
    char secret[16];
    int32_t mode;
    int32_t custom;
}
test_ctx_t;

static int test_fill(char *buffer, size_t length)
{
    snprintf(buffer, length, "%s", "/filled");
    return 0;
}

static int test_check(const aa_option_t *opt, const char *value)
{
    if (0 == strcmp(value, "bad"))
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s refuses bad", opt->env_name);
        return -1;
    }
    return 0;
}

static int test_parse(void *ctx, const aa_option_t *opt, const char *value)
{
    *(int32_t *)((uint8_t *)ctx + opt->offset) = (int32_t)strlen(value);
    return 0;
}

static int test_format(const void *ctx, const aa_option_t *opt, char *out, size_t length)
{
    return snprintf(out, length, "len%d", *(const int32_t *)((const uint8_t *)ctx + opt->offset));
}

static const char *const test_mode_names[] = { "ONE", "TWO" };
static const aa_option_enum_t test_modes = { test_mode_names, 2, "is not a mode; use ONE or TWO" };

#define F(f) AA_OPTION_FIELD(test_ctx_t, f)

static const aa_option_t test_options[] =
{
    { "flag", "AERON_T_FLAG", "aeron.t.flag", AA_OPTION_BOOL, F(flag), "true", "a flag" },
    { "count", "AERON_T_COUNT", "aeron.t.count", AA_OPTION_INT32, F(count), "7", "a count" },
    { "big", "AERON_T_BIG", "aeron.t.big", AA_OPTION_INT64, F(big), "-5", "a big number" },
    { "length", "AERON_T_LENGTH", "aeron.t.length", AA_OPTION_SIZE, F(length), "64k", "a length" },
    { "timeout", "AERON_T_TIMEOUT", "aeron.t.timeout", AA_OPTION_DURATION, F(timeout_ns), "5ms", "ns", .unit_ns = 1 },
    { "wait", "AERON_T_WAIT", "aeron.t.wait", AA_OPTION_DURATION, F(timeout_ms), "2s", "ms", .unit_ns = 1000000 },
    { "label", "AERON_T_LABEL", "aeron.t.label", AA_OPTION_STRING, F(label), "abc", "checked", .check = test_check },
    { "dir", "AERON_T_DIR", "aeron.t.dir", AA_OPTION_STRING, F(dir), "", "filled", .fill_empty = test_fill },
    { "secret", "AERON_T_SECRET", "aeron.t.secret", AA_OPTION_STRING, F(secret), "", "hidden", .secret = true },
    { "mode", "AERON_T_MODE", "aeron.t.mode", AA_OPTION_ENUM, F(mode), "TWO", "a mode", .choices = &test_modes },
    { "custom", "AERON_T_CUSTOM", "aeron.t.custom", AA_OPTION_CUSTOM, F(custom), "xyz", "custom",
        .parse = test_parse, .format = test_format },
};

static const aa_options_table_t test_table =
{
    "test", test_options, sizeof(test_options) / sizeof(test_options[0]), "1, 2k", "1ms, 2s", "a long", "an int"
};

static void check_refused(test_ctx_t *ctx, const char *name, const char *value, const char *message)
{
    AA_CHECK_EQ(aa_options_set(&test_table, ctx, name, value), -1);
    if (0 != strcmp(aa_errmsg(), message))
    {
        fprintf(stderr, "expected \"%s\", got \"%s\"\n", message, aa_errmsg());
        AA_CHECK(0);
    }
}

static void test_defaults_and_environment(void)
{
    test_ctx_t ctx;
    memset(&ctx, 0, sizeof(ctx));
    unsetenv("AERON_T_COUNT");
    AA_CHECK_EQ(aa_options_init(&test_table, &ctx), 0);
    AA_CHECK(ctx.flag);
    AA_CHECK_EQ(ctx.count, 7);
    AA_CHECK_EQ(ctx.big, -5);
    AA_CHECK_EQ(ctx.length, 65536);
    AA_CHECK_EQ(ctx.timeout_ns, 5000000);
    AA_CHECK_EQ(ctx.timeout_ms, 2000);
    AA_CHECK(0 == strcmp(ctx.label, "abc"));
    AA_CHECK(0 == strcmp(ctx.dir, "/filled"));
    AA_CHECK_EQ(ctx.mode, 1);
    AA_CHECK_EQ(ctx.custom, 3);

    setenv("AERON_T_COUNT", "9", 1);
    AA_CHECK_EQ(aa_options_init(&test_table, &ctx), 0);
    AA_CHECK_EQ(ctx.count, 9);
    setenv("AERON_T_COUNT", "nine", 1);
    AA_CHECK_EQ(aa_options_init(&test_table, &ctx), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "AERON_T_COUNT=nine is not an int"));
    AA_CHECK(NULL != strstr(aa_errmsg(), "from the environment"));
    unsetenv("AERON_T_COUNT");
}

static void test_names_and_refusals(void)
{
    test_ctx_t ctx;
    memset(&ctx, 0, sizeof(ctx));
    AA_CHECK_EQ(aa_options_init(&test_table, &ctx), 0);
    AA_CHECK_EQ(aa_options_set(&test_table, &ctx, "aeron.t.count", "11"), 0);
    AA_CHECK_EQ(ctx.count, 11);
    AA_CHECK_EQ(aa_options_set(&test_table, &ctx, "aeron_t_Count", "12"), 0);
    AA_CHECK_EQ(ctx.count, 12);
    AA_CHECK_EQ(aa_options_set(&test_table, &ctx, "AERON_T_FLAG", "no"), 0);
    AA_CHECK(!ctx.flag);
    AA_CHECK_EQ(aa_options_set(&test_table, &ctx, "AERON_T_MODE", "one"), 0);
    AA_CHECK_EQ(ctx.mode, 0);
    AA_CHECK_EQ(aa_options_set(&test_table, &ctx, "AERON_T_DIR", "/d"), 0);
    AA_CHECK(0 == strcmp(ctx.dir, "/d"));

    check_refused(&ctx, "AERON_T_NOPE", "1", "unknown test option AERON_T_NOPE; see `aeron-async test --help-options`");
    check_refused(&ctx, "AERON_T_FLAG", "maybe", "AERON_T_FLAG=maybe is not a boolean; use true or false");
    check_refused(&ctx, "AERON_T_COUNT", "x", "AERON_T_COUNT=x is not an int");
    check_refused(&ctx, "AERON_T_COUNT", "3000000000", "AERON_T_COUNT=3000000000 is not a 32-bit integer");
    check_refused(&ctx, "AERON_T_BIG", "1.5", "AERON_T_BIG=1.5 is not a long");
    check_refused(&ctx, "AERON_T_LENGTH", "lots",
        "AERON_T_LENGTH=lots is not a size; use bytes with an optional k, m or g suffix (e.g. 1, 2k)");
    check_refused(&ctx, "AERON_T_TIMEOUT", "soon",
        "AERON_T_TIMEOUT=soon is not a duration; use a number with ns, us, ms or s (e.g. 1ms, 2s)");
    check_refused(&ctx, "AERON_T_LABEL", "bad", "AERON_T_LABEL refuses bad");
    check_refused(&ctx, "AERON_T_LABEL", "12345678", "AERON_T_LABEL is too long (8 characters, at most 7)");
    check_refused(&ctx, "AERON_T_MODE", "THREE", "AERON_T_MODE=THREE is not a mode; use ONE or TWO");
    AA_CHECK_EQ(ctx.count, 12); /* a refused value leaves the field as it was */
    AA_CHECK(0 == strcmp(ctx.label, "abc"));
}

static void test_format_write_and_describe(void)
{
    test_ctx_t ctx;
    memset(&ctx, 0, sizeof(ctx));
    AA_CHECK_EQ(aa_options_init(&test_table, &ctx), 0);
    char value[32];
    AA_CHECK_EQ(aa_options_get(&test_table, &ctx, "aeron.t.wait", value, sizeof(value)), 6);
    AA_CHECK(0 == strcmp(value, "2000ms"));
    AA_CHECK_EQ(aa_options_get(&test_table, &ctx, "AERON_T_CUSTOM", value, sizeof(value)), 4);
    AA_CHECK(0 == strcmp(value, "len3"));
    AA_CHECK_EQ(aa_options_get(&test_table, &ctx, "AERON_T_LABEL", value, 2), -1);
    AA_CHECK_EQ(aa_options_get(&test_table, &ctx, "AERON_T_NOPE", value, sizeof(value)), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "unknown test option AERON_T_NOPE"));
    AA_CHECK_EQ(aa_options_set(&test_table, &ctx, "AERON_T_SECRET", "hush"), 0);

    char *text = NULL;
    size_t length = 0;
    FILE *out = open_memstream(&text, &length);
    AA_CHECK(NULL != out);
    AA_CHECK_EQ(aa_options_write(&test_table, &ctx, out), 0);
    AA_CHECK_EQ(fclose(out), 0);
    AA_CHECK(0 == strcmp(text,
        "aeron.t.flag=true\naeron.t.count=7\naeron.t.big=-5\naeron.t.length=65536\naeron.t.timeout=5000000ns\n"
        "aeron.t.wait=2000ms\naeron.t.label=abc\naeron.t.dir=/filled\naeron.t.secret=(set)\naeron.t.mode=TWO\n"
        "aeron.t.custom=len3\n"));
    free(text);

    /* every formatted value sets the option to what it holds */
    test_ctx_t again;
    memcpy(&again, &ctx, sizeof(ctx));
    for (size_t i = 0; i < test_table.count; i++)
    {
        if (test_options[i].secret || AA_OPTION_CUSTOM == test_options[i].type)
        {
            continue;
        }
        AA_CHECK(aa_options_format(&ctx, &test_options[i], value, sizeof(value)) > 0);
        AA_CHECK_EQ(aa_options_apply(&test_table, &again, &test_options[i], value), 0);
    }
    AA_CHECK(0 == memcmp(&again, &ctx, sizeof(ctx)));

    aa_option_info_t info;
    AA_CHECK_EQ(aa_options_describe(&test_table, 3, &info), 0);
    AA_CHECK(0 == strcmp(info.name, "length") && 0 == strcmp(info.env_name, "AERON_T_LENGTH"));
    AA_CHECK(0 == strcmp(info.property_name, "aeron.t.length") && 0 == strcmp(info.default_value, "64k"));
    AA_CHECK(0 == strcmp(info.description, "a length"));
    AA_CHECK_EQ(info.type, AA_OPTION_SIZE);
    AA_CHECK_EQ(aa_options_describe(&test_table, (int32_t)test_table.count, &info), -1);
    AA_CHECK_EQ(aa_options_describe(&test_table, -1, &info), -1);
}

int main(void)
{
    AA_RUN(test_defaults_and_environment);
    AA_RUN(test_names_and_refusals);
    AA_RUN(test_format_write_and_describe);
    return 0;
}
