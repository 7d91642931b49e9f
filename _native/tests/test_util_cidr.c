/* CIDR lists: IPv4 and IPv6 networks, bare hosts, prefix edges (/0, /32, /128, a prefix inside a
 * byte), host bits cleared, IPv4-mapped IPv6 sources, and the refusals that name the option. */
#include <string.h>

#include "aa_test.h"
#include "util/aa_cidr.h"
#include "util/aa_error.h"

static bool has(const aa_cidr_list_t *list, const char *ip)
{
    struct sockaddr_storage address;
    memset(&address, 0, sizeof(address));
    struct sockaddr_in *in4 = (struct sockaddr_in *)&address;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&address;
    if (1 == inet_pton(AF_INET, ip, &in4->sin_addr))
    {
        in4->sin_family = AF_INET;
    }
    else
    {
        AA_CHECK_EQ(inet_pton(AF_INET6, ip, &in6->sin6_addr), 1);
        in6->sin6_family = AF_INET6;
    }
    return aa_cidr_list_contains_address(list, &address);
}

static void should_match_ipv4_and_ipv6_networks(void)
{
    aa_cidr_list_t list;
    AA_CHECK_EQ(aa_cidr_list_parse("OPT", " 10.0.0.0/8, 192.168.1.77/30 ,127.0.0.1, fd00::/8,::1", &list), 0);
    AA_CHECK_EQ(list.count, 5);
    AA_CHECK(has(&list, "10.255.1.2"));
    AA_CHECK(!has(&list, "11.0.0.1"));
    AA_CHECK(has(&list, "192.168.1.76") && has(&list, "192.168.1.79"));   /* host bits of .77/30 cleared */
    AA_CHECK(!has(&list, "192.168.1.75") && !has(&list, "192.168.1.80"));
    AA_CHECK(has(&list, "127.0.0.1") && !has(&list, "127.0.0.2"));
    AA_CHECK(has(&list, "fd12::5") && !has(&list, "fe80::1"));
    AA_CHECK(has(&list, "::1") && !has(&list, "::2"));
    AA_CHECK(has(&list, "::ffff:10.1.2.3"));       /* an IPv4 source seen by an IPv6 socket */
    AA_CHECK(!has(&list, "::ffff:127.0.0.2"));

    AA_CHECK_EQ(aa_cidr_list_parse("OPT", "0.0.0.0/0", &list), 0);
    AA_CHECK(has(&list, "203.0.113.9") && !has(&list, "2001:db8::1"));
    AA_CHECK_EQ(aa_cidr_list_parse("OPT", "2001:db8::/33", &list), 0);
    AA_CHECK(has(&list, "2001:db8:7fff::1") && !has(&list, "2001:db8:8000::1"));
    AA_CHECK_EQ(aa_cidr_list_parse("OPT", "", &list), 0);
    AA_CHECK_EQ(list.count, 0);
    AA_CHECK_EQ(aa_cidr_list_parse("OPT", NULL, &list), 0);
    AA_CHECK_EQ(list.count, 0);
}

static void should_refuse_what_is_no_network(void)
{
    const char *bad[] = { "10.0.0.0/33", "fd00::/129", "10.0.0.0/", "10.0.0.0/x", "10.0.0.0/-1", "pod-1",
        "10.0.0.300", "10.0.0.0/8,nope" };
    aa_cidr_list_t list;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    {
        AA_CHECK_EQ(aa_cidr_list_parse("AERON_DRIVER_RESOLVER_ALLOWED_NETWORKS", bad[i], &list), -1);
        AA_CHECK(NULL != strstr(aa_errmsg(), "AERON_DRIVER_RESOLVER_ALLOWED_NETWORKS"));
        AA_CHECK(NULL != strstr(aa_errmsg(), "e.g. 10.0.0.0/8"));
    }
}

int main(void)
{
    printf("test_util_cidr\n");
    AA_RUN(should_match_ipv4_and_ipv6_networks);
    AA_RUN(should_refuse_what_is_no_network);
    return 0;
}
