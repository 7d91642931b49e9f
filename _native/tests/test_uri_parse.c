/* Channel URI parsing: accepted forms and the messages for rejected ones. */
#include <string.h>

#include "aa_test.h"
#include "../src/uri/aa_uri.h"
#include "../src/util/aa_error.h"

static void should_parse_ipc_and_udp(void)
{
    aa_uri_t uri;
    AA_CHECK_EQ(aa_uri_parse("aeron:ipc", &uri), 0);
    AA_CHECK_EQ(uri.media, AA_URI_MEDIA_IPC);
    AA_CHECK_EQ(uri.params_count, 0);
    AA_CHECK_EQ(aa_uri_parse("aeron:udp?endpoint=localhost:40123|term-length=64k|linger=5s|eos=false", &uri), 0);
    AA_CHECK_EQ(uri.media, AA_URI_MEDIA_UDP);
    AA_CHECK(0 == strcmp(aa_uri_find_param(&uri, "endpoint"), "localhost:40123"));
    int64_t term_length = 0, linger = 0;
    bool eos = true;
    AA_CHECK_EQ(aa_uri_get_size(&uri, "term-length", &term_length), 1);
    AA_CHECK_EQ(term_length, 65536);
    AA_CHECK_EQ(aa_uri_get_duration_ns(&uri, "linger", &linger), 1);
    AA_CHECK_EQ(linger, 5000000000LL);
    AA_CHECK_EQ(aa_uri_get_bool(&uri, "eos", &eos), 1);
    AA_CHECK(!eos);
    int32_t missing = 7;
    AA_CHECK_EQ(aa_uri_get_int32(&uri, "session-id", &missing), 0);
    AA_CHECK_EQ(missing, 7);
    AA_CHECK_EQ(aa_uri_parse("aeron-spy:aeron:udp?endpoint=x:1", &uri), 0);
    AA_CHECK(uri.is_spy);
}

static void check_rejected(const char *channel, const char *fragment)
{
    aa_uri_t uri;
    AA_CHECK_EQ(aa_uri_parse(channel, &uri), -1);
    if (NULL == strstr(aa_errmsg(), fragment))
    {
        fprintf(stderr, "message for %s lacks '%s': %s\n", channel, fragment, aa_errmsg());
        AA_CHECK(0);
    }
    AA_CHECK_EQ(aa_errcode(), AA_ERROR_CODE_INVALID_CHANNEL);
}

static void should_reject_with_clear_messages(void)
{
    check_rejected("ipc", "must start with 'aeron:'");
    check_rejected("aeron:tcp", "unknown media 'tcp'");
    check_rejected("aeron:ipc?term-lenght=64k", "did you mean 'term-length'");
    check_rejected("aeron:ipc?bogus=1", "accepted for aeron:ipc");
    check_rejected("aeron:ipc?endpoint=localhost:1", "unknown parameter 'endpoint'");
    check_rejected("aeron:ipc?mtu", "has no value");
    check_rejected("aeron:ipc?=5", "empty name");
    check_rejected("aeron:ipc?mtu=1|mtu=2", "given twice");
}

static void should_reject_bad_values(void)
{
    aa_uri_t uri;
    AA_CHECK_EQ(aa_uri_parse("aeron:ipc?term-length=big|sparse=yes|session-id=99999999999|linger=soon", &uri), 0);
    int64_t v;
    bool b;
    int32_t i;
    AA_CHECK_EQ(aa_uri_get_size(&uri, "term-length", &v), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "term-length=big"));
    AA_CHECK_EQ(aa_uri_get_bool(&uri, "sparse", &b), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "true or false"));
    AA_CHECK_EQ(aa_uri_get_int32(&uri, "session-id", &i), -1);
    AA_CHECK_EQ(aa_uri_get_duration_ns(&uri, "linger", &v), -1);
}

int main(void)
{
    AA_RUN(should_parse_ipc_and_udp);
    AA_RUN(should_reject_with_clear_messages);
    AA_RUN(should_reject_bad_values);
    return 0;
}
