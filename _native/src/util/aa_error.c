#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/aa_error.h"

#define AA_ERROR_MAX_LENGTH 8192

typedef struct aa_per_thread_error_stct
{
    int errcode;
    size_t offset;
    char message[AA_ERROR_MAX_LENGTH];
}
aa_per_thread_error_t;

static _Thread_local aa_per_thread_error_t aa_thread_error = { 0, 0, { 0 } };

static void aa_err_vappend(const char *format, va_list args)
{
    aa_per_thread_error_t *e = &aa_thread_error;
    if (e->offset >= AA_ERROR_MAX_LENGTH - 1)
    {
        return;
    }
    int n = vsnprintf(e->message + e->offset, AA_ERROR_MAX_LENGTH - e->offset, format, args);
    if (n > 0)
    {
        e->offset += (size_t)n;
        if (e->offset > AA_ERROR_MAX_LENGTH - 1)
        {
            e->offset = AA_ERROR_MAX_LENGTH - 1;
        }
    }
}

void aa_err_set(int errcode, const char *function, const char *filename, int line, const char *format, ...)
{
    aa_per_thread_error_t *e = &aa_thread_error;
    (void)function;
    (void)filename;
    (void)line;
    e->errcode = errcode;
    e->offset = 0;
    e->message[0] = '\0';
    va_list args;
    va_start(args, format);
    aa_err_vappend(format, args);
    va_end(args);
}

void aa_err_append(const char *function, const char *filename, int line, const char *format, ...)
{
    (void)function;
    (void)filename;
    (void)line;
    aa_per_thread_error_t *e = &aa_thread_error;
    if (e->offset > 0 && e->offset < AA_ERROR_MAX_LENGTH - 3)
    {
        memcpy(e->message + e->offset, ": ", 3);
        e->offset += 2;
    }
    va_list args;
    va_start(args, format);
    aa_err_vappend(format, args);
    va_end(args);
}

void aa_err_clear(void)
{
    aa_thread_error.errcode = 0;
    aa_thread_error.offset = 0;
    aa_thread_error.message[0] = '\0';
}

int aa_errcode(void)
{
    return aa_thread_error.errcode;
}

const char *aa_errmsg(void)
{
    return aa_thread_error.message;
}
