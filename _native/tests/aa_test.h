/* A minimal assertion harness for the native tests: each failure prints where and exits 1. */
#ifndef AA_TEST_H
#define AA_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

/* Little-endian fields, byte by byte, as the wire and the archive's files lay them out. */
static inline void test_put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void test_put32(uint8_t *p, int32_t v)
{
    test_put16(p, (uint16_t)v);
    test_put16(p + 2, (uint16_t)((uint32_t)v >> 16));
}

static inline void test_put64(uint8_t *p, int64_t v)
{
    test_put32(p, (int32_t)v);
    test_put32(p + 4, (int32_t)((uint64_t)v >> 32));
}

static inline int32_t test_get32(const uint8_t *p)
{
    return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

static inline int64_t test_get64(const uint8_t *p)
{
    return (int64_t)((uint64_t)(uint32_t)test_get32(p) | (uint64_t)(uint32_t)test_get32(p + 4) << 32);
}

#define AA_CHECK(cond) \
    do \
    { \
        if (!(cond)) \
        { \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            exit(1); \
        } \
    } \
    while (0)

#define AA_CHECK_EQ(a, b) \
    do \
    { \
        long long _va = (long long)(a), _vb = (long long)(b); \
        if (_va != _vb) \
        { \
            fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__, __LINE__, #a, #b, _va, _vb); \
            exit(1); \
        } \
    } \
    while (0)

#define AA_RUN(test) \
    do \
    { \
        fprintf(stdout, "  %s ... ", #test); \
        fflush(stdout); \
        test(); \
        fprintf(stdout, "ok\n"); \
    } \
    while (0)

/* An IPv4 socket address ("10.0.0.1", 40001), as a datagram's source or a destination. */
static inline struct sockaddr_storage test_ipv4_address(const char *ip, uint16_t port)
{
    struct sockaddr_storage address;
    memset(&address, 0, sizeof(address));
    struct sockaddr_in *in = (struct sockaddr_in *)&address;
    in->sin_family = AF_INET;
    in->sin_port = htons(port);
    AA_CHECK(1 == inet_pton(AF_INET, ip, &in->sin_addr));
    return address;
}

#endif
