/* Channel URI parsing: accepted forms and the messages for rejected ones. */
#include <string.h>

#include "aa_test.h"
#include "uri/aa_uri.h"
#include "util/aa_error.h"

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
    check_rejected("ipc", "invalid URI scheme or transport: ipc");
    check_rejected("aeron:tcp", "invalid URI scheme or transport: aeron:tcp");
    check_rejected("aeron:tcp?endpoint=localhost:40123", "invalid URI scheme or transport: aeron:tcp?endpoint=localhost:40123");
    check_rejected("aeron:ipc?term-lenght=64k", "did you mean 'term-length'");
    check_rejected("aeron:ipc?bogus=1", "accepted for aeron:ipc");
    check_rejected("aeron:ipc?endpoint=localhost:1", "unknown parameter 'endpoint'");
    /* socket buffers parse on aeron:ipc too: Aeron's clients send them there */
    aa_uri_t ipc;
    AA_CHECK_EQ(aa_uri_parse("aeron:ipc?so-sndbuf=64k|so-rcvbuf=128k", &ipc), 0);
    AA_CHECK(aa_uri_is_param_of(AA_URI_MEDIA_IPC, "so-rcvbuf") && !aa_uri_is_param_of(AA_URI_MEDIA_IPC, "endpoint"));
    check_rejected("aeron:ipc?mtu", "has no value");
    check_rejected("aeron:ipc?=5", "empty name");
    check_rejected("aeron:ipc?mtu=1|mtu=2", "given twice");
}

static aa_uri_t *uri_with(aa_uri_t *uri, const char *key, const char *value)
{
    /* The getters also guard values that did not come through aa_uri_parse. */
    memset(uri, 0, sizeof(*uri));
    uri->media = AA_URI_MEDIA_IPC;
    snprintf(uri->params[0].key, sizeof(uri->params[0].key), "%s", key);
    snprintf(uri->params[0].value, sizeof(uri->params[0].value), "%s", value);
    uri->params_count = 1;
    return uri;
}

static void should_reject_bad_values_in_getters(void)
{
    aa_uri_t uri;
    int64_t v;
    bool b;
    int32_t i;
    AA_CHECK_EQ(aa_uri_get_size(uri_with(&uri, "term-length", "big"), "term-length", &v), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "term-length=big"));
    AA_CHECK_EQ(aa_uri_get_bool(uri_with(&uri, "sparse", "yes"), "sparse", &b), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "true or false"));
    AA_CHECK_EQ(aa_uri_get_int32(uri_with(&uri, "session-id", "99999999999"), "session-id", &i), -1);
    AA_CHECK_EQ(aa_uri_get_duration_ns(uri_with(&uri, "linger", "soon"), "linger", &v), -1);
}

static void should_reject_bad_values_when_parsing(void)
{
    check_rejected("aeron:ipc?term-length=big", "term-length=big");
    check_rejected("aeron:ipc?term-length=100000", "power of two");
    check_rejected("aeron:ipc?term-length=32k", "power of two between 64k and 1g");
    check_rejected("aeron:ipc?term-length=2g", "power of two");
    check_rejected("aeron:ipc?sparse=yes", "true or false");
    check_rejected("aeron:ipc?session-id=99999999999", "session-id=99999999999");
    check_rejected("aeron:ipc?linger=soon", "duration");
    check_rejected("aeron:ipc?mtu=1000", "multiple of 32");
    check_rejected("aeron:ipc?mtu=32", "greater than 32");
    check_rejected("aeron:ipc?mtu=65536", "at most 65504");
    /* Aeron's C driver's words first, as a real aeronmd answers them */
    check_rejected("aeron:ipc?linger=soon", "could not parse linger=soon in URI. Channel aeron:ipc?linger=soon: ");
    check_rejected("aeron:ipc?term-length=32k", "term length less than min length of 65536: length=32768. ");
    check_rejected("aeron:ipc?term-length=2g", "term length greater than max length of 1073741824: length=2147483648. ");
    check_rejected("aeron:ipc?term-length=3m", "term length not a power of 2: length=3145728. ");
    check_rejected("aeron:ipc?mtu=abc", "could not parse mtu=abc in URI. ");
    check_rejected("aeron:ipc?mtu=100000", "mtuLength must be a > HEADER_LENGTH and <= MAX_UDP_PAYLOAD_LENGTH: mtuLength=100000. ");
    check_rejected("aeron:ipc?mtu=33", "mtuLength must be a multiple of FRAME_ALIGNMENT: mtuLength=33. ");
    check_rejected("aeron:ipc?init-term-id=5", "init-term-id, term-id and term-offset must be given together");
    check_rejected("aeron:ipc?init-term-id=5|term-id=6", "given together");
    check_rejected("aeron:ipc?init-term-id=5|term-id=6|term-offset=100", "term-offset=100");
    check_rejected("aeron:ipc?init-term-id=5|term-id=6|term-offset=-32", "multiple of 32");
    check_rejected("aeron:ipc?term-length=64k|init-term-id=5|term-id=6|term-offset=65568", "beyond term-length");
    check_rejected("aeron:ipc?tether=sometimes", "tether=sometimes");
    check_rejected("aeron:ipc?max-resend=0", "1 to 256");
    check_rejected("aeron:ipc?max-resend=257", "1 to 256");
    check_rejected("aeron:ipc?group=maybe", "true, false or infer");
    check_rejected("aeron:ipc?tags=abc", "could not parse channel tag string: abc");
    check_rejected("aeron:udp?endpoint=localhost:40123|tags=1001,x", "could not parse channel tag string: 1001,x");
    check_rejected("aeron:udp?endpoint=localhost:40123|tags=-5", "could not parse channel tag string: -5");
    check_rejected("aeron:ipc?term-length=64k|pub-wnd=64k", "pub-wnd");
    check_rejected("aeron:ipc?mtu=8k|pub-wnd=4k", "at least the mtu");
    check_rejected("aeron:udp?endpoint=localhost", "host:port");
    check_rejected("aeron:udp?endpoint=localhost:65536", "port from 0 to 65535");
    check_rejected("aeron:udp?endpoint=localhost:http", "port from 0 to 65535");
    check_rejected("aeron:udp?endpoint=::1:40123", "IPv6 address in brackets");
    check_rejected("aeron:udp?endpoint=[::1:40123", "closed by ']'");
    check_rejected("aeron:udp?endpoint=:40123", "host");
    check_rejected("aeron:udp?endpoint=localhost:1/24", "without a /prefix");
    check_rejected("aeron:udp?endpoint=localhost:1|interface=10.0.0.1/129", "prefix length");
    check_rejected("aeron:udp?endpoint=localhost:1|interface=10.0.0.1:x", "port from 0 to 65535");
    check_rejected("aeron:udp?endpoint=localhost:1|ttl=256", "0 to 255");
    check_rejected("aeron:udp?endpoint=localhost:1|control-mode=auto", "dynamic, manual or response");
    /* fc= and cc= name strategies of the driver's registry: only their form is checked here */
    check_rejected("aeron:udp?endpoint=localhost:1|cc=re no", "congestion control strategy name");
    check_rejected("aeron:udp?endpoint=localhost:1|cc=", "congestion control strategy name");
    check_rejected("aeron:udp?endpoint=localhost:1|fc=,t:1s", "flow control strategy name");
    check_rejected("aeron:udp?endpoint=localhost:1|fc=min,", "flow control strategy name");
    check_rejected("aeron:udp?endpoint=localhost:1|fc=min,x:1", "max, min and tagged take");
    check_rejected("aeron:udp?endpoint=localhost:1|fc=min,t:soon", "max, min and tagged take");
    check_rejected("aeron:udp?endpoint=localhost:1|fc=tagged,g:x/2", "max, min and tagged take");
    check_rejected("aeron:udp?endpoint=localhost:1|so-rcvbuf=lots", "so-rcvbuf=lots");
    check_rejected("aeron:udp?endpoint=localhost:1|so-sndbuf=4g", "below 2g");
    check_rejected("aeron:udp?endpoint=localhost:1|rcv-wnd=256k|so-rcvbuf=128k", "rcv-wnd=262144 is larger than so-rcvbuf");
    check_rejected("aeron:udp?endpoint=localhost:1|nak-delay=fast", "nak-delay=fast");
    check_rejected("aeron:udp?endpoint=localhost:1|gtag=x", "64-bit integer");
    check_rejected("aeron:udp?endpoint=localhost:1|session-id=tag:x", "tag:<entity tag>");
    check_rejected("aeron:udp?endpoint=localhost:1|media-rcv-ts-offset=-1", "'reserved'");
    check_rejected("aeron:udp?endpoint=localhost:1|ats=true", "encrypted transport");
}

static void should_require_an_address_for_udp(void)
{
    aa_uri_t uri;
    check_rejected("aeron:udp", "URIs for UDP must specify endpoint, control, tags, or control-mode=manual/response");
    check_rejected("aeron:udp?term-length=64k", "URIs for UDP must specify");
    check_rejected("aeron:udp?control-mode=dynamic", "control-mode=dynamic needs control=host:port");
    AA_CHECK_EQ(aa_uri_parse("aeron:udp?control=localhost:40456", &uri), 0);
    AA_CHECK_EQ(aa_uri_parse("aeron:udp?control=localhost:40456|control-mode=dynamic", &uri), 0);
    AA_CHECK_EQ(aa_uri_parse("aeron:udp?tags=1001", &uri), 0);
    AA_CHECK_EQ(aa_uri_parse("aeron:udp?control-mode=manual", &uri), 0);
    AA_CHECK_EQ(aa_uri_parse("aeron:udp?control-mode=response", &uri), 0);
}

static void should_accept_every_documented_udp_parameter(void)
{
    aa_uri_t uri;
    const char *channels[] =
    {
        "aeron:udp?endpoint=127.0.0.1:40123|interface=127.0.0.1|control=127.0.0.1:40124|control-mode=dynamic"
            "|ttl=8|mtu=8k|term-length=1m|init-term-id=-5|term-id=-3|term-offset=4096|session-id=-7",
        "aeron:udp?endpoint=[::1]:40123|interface=[::1]:0/128|linger=200ms|eos=false|sparse=true|tether=false"
            "|reliable=false|rcv-wnd=64k|so-sndbuf=256k|so-rcvbuf=256k|nak-delay=100us",
        "aeron:udp?endpoint=localhost:40123|alias=my stream|tags=1001,7|group=infer|rejoin=false|ssc=true"
            "|fc=tagged,g:100/2,t:5s|gtag=-9|cc=cubic|pub-wnd=128k|max-resend=256",
        "aeron:udp?endpoint=localhost:0|interface=192.168.1.0/24|fc=min|cc=static|group=true"
            "|media-rcv-ts-offset=reserved|channel-rcv-ts-offset=0|channel-snd-ts-offset=8"
            "|untethered-window-limit-timeout=5s|untethered-resting-timeout=10s|ats=false",
        "aeron:udp?control-mode=response|response-endpoint=localhost:40125|response-correlation-id=42"
            "|stream-id=10|session-id=tag:55",
        "aeron:udp?endpoint=localhost:1|fc=max",
        "aeron:udp?endpoint=localhost:1|fc=fastest|cc=reno",
        "aeron:udp?endpoint=localhost:1|fc=my-strategy,window:4,anything|cc=my.cc,x",
        "aeron:ipc?term-length=64k|mtu=64|init-term-id=0|term-id=2|term-offset=65536|pub-wnd=32k|group=false",
        NULL
    };
    for (int i = 0; NULL != channels[i]; i++)
    {
        if (0 != aa_uri_parse(channels[i], &uri))
        {
            fprintf(stderr, "rejected %s: %s\n", channels[i], aa_errmsg());
            AA_CHECK(0);
        }
    }
    AA_CHECK_EQ(aa_uri_parse(channels[2], &uri), 0);
    aa_uri_tags_t tags;
    AA_CHECK_EQ(aa_uri_get_tags(&uri, &tags), 1);
    AA_CHECK(tags.has_channel_tag && tags.has_entity_tag);
    AA_CHECK_EQ(tags.channel_tag, 1001);
    AA_CHECK_EQ(tags.entity_tag, 7);
    AA_CHECK(0 == strcmp(aa_uri_find_param(&uri, "alias"), "my stream"));
    AA_CHECK_EQ(aa_uri_parse("aeron:udp?endpoint=localhost:1", &uri), 0);
    AA_CHECK_EQ(aa_uri_get_tags(&uri, &tags), 0);
    AA_CHECK(!tags.has_channel_tag);
}

static void should_name_unknown_udp_parameters_and_list_accepted_ones(void)
{
    check_rejected("aeron:udp?endpoint=localhost:1|so-rcvbuff=1m", "unknown parameter 'so-rcvbuff' (did you mean 'so-rcvbuf'?)");
    check_rejected("aeron:udp?endpiont=localhost:1", "did you mean 'endpoint'");
    check_rejected("aeron:udp?endpoint=localhost:1|colour=red", "unknown parameter 'colour'; accepted for aeron:udp:");
    const char *names[] =
    {
        "endpoint", "interface", "control", "control-mode", "ttl", "mtu", "term-length", "init-term-id", "term-id",
        "term-offset", "session-id", "linger", "eos", "sparse", "tether", "reliable", "rcv-wnd", "so-sndbuf",
        "so-rcvbuf", "nak-delay", "alias", "tags", "group", "rejoin", "ssc", "fc", "gtag", "cc", "pub-wnd",
        "max-resend", NULL
    };
    for (int i = 0; NULL != names[i]; i++)
    {
        char fragment[64];
        snprintf(fragment, sizeof(fragment), " %s,", names[i]);
        if (NULL == strstr(aa_errmsg(), fragment) && 0 != strncmp(strstr(aa_errmsg(), "udp: ") + 5, names[i], strlen(names[i])))
        {
            fprintf(stderr, "accepted list lacks %s: %s\n", names[i], aa_errmsg());
            AA_CHECK(0);
        }
    }
    char ipc[1024];
    aa_uri_accepted_params(AA_URI_MEDIA_IPC, ipc, sizeof(ipc));
    AA_CHECK(NULL == strstr(ipc, "endpoint"));
    AA_CHECK(NULL != strstr(ipc, "term-length"));
}

static void should_split_addresses(void)
{
    aa_uri_address_t a;
    AA_CHECK_EQ(aa_uri_parse_address("endpoint", "localhost:40123", true, false, &a), 0);
    AA_CHECK(0 == strcmp(a.host, "localhost") && a.has_port && 40123 == a.port && !a.is_bracketed && !a.has_prefix);
    AA_CHECK_EQ(aa_uri_parse_address("endpoint", "[::1]:0", true, false, &a), 0);
    AA_CHECK(0 == strcmp(a.host, "::1") && a.is_bracketed && a.has_port && 0 == a.port);
    AA_CHECK_EQ(aa_uri_parse_address("interface", "[fe80::1]:5/64", false, true, &a), 0);
    AA_CHECK(0 == strcmp(a.host, "fe80::1") && 5 == a.port && a.has_prefix && 64 == a.prefix_length);
    AA_CHECK_EQ(aa_uri_parse_address("interface", "10.1.2.0/24", false, true, &a), 0);
    AA_CHECK(0 == strcmp(a.host, "10.1.2.0") && !a.has_port && 24 == a.prefix_length);
    AA_CHECK_EQ(aa_uri_parse_address("endpoint", "host", true, false, &a), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "endpoint=host"));
}

int main(void)
{
    AA_RUN(should_parse_ipc_and_udp);
    AA_RUN(should_reject_with_clear_messages);
    AA_RUN(should_reject_bad_values_in_getters);
    AA_RUN(should_reject_bad_values_when_parsing);
    AA_RUN(should_require_an_address_for_udp);
    AA_RUN(should_accept_every_documented_udp_parameter);
    AA_RUN(should_name_unknown_udp_parameters_and_list_accepted_ones);
    AA_RUN(should_split_addresses);
    return 0;
}
