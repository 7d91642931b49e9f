/* A minimal assertion harness for the native tests: each failure prints where and exits 1. */
#ifndef AA_TEST_H
#define AA_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <inttypes.h>

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

#endif
