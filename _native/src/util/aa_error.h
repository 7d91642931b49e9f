/*
 * Errors: functions return -1 (or NULL) and record a code and a message in thread-local storage.
 * AA_SET_ERR where a failure starts, AA_APPEND_ERR on the way up to add context.
 */
#ifndef AA_ERROR_H
#define AA_ERROR_H

#include <errno.h>

/* Error codes shared with the control protocol (reference 9.3) plus local ones. */
#define AA_ERROR_CODE_INVALID_CHANNEL 1
#define AA_ERROR_CODE_UNKNOWN_SUBSCRIPTION 2
#define AA_ERROR_CODE_UNKNOWN_PUBLICATION 3
#define AA_ERROR_CODE_CHANNEL_ENDPOINT_ERROR 4
#define AA_ERROR_CODE_UNKNOWN_COUNTER 5
#define AA_ERROR_CODE_UNKNOWN_COMMAND_TYPE_ID 6
#define AA_ERROR_CODE_MALFORMED_COMMAND 7
#define AA_ERROR_CODE_NOT_SUPPORTED 8
#define AA_ERROR_CODE_UNKNOWN_HOST 9
#define AA_ERROR_CODE_RESOURCE_TEMPORARILY_UNAVAILABLE 10
#define AA_ERROR_CODE_GENERIC_ERROR 11
#define AA_ERROR_CODE_STORAGE_SPACE 12
#define AA_ERROR_CODE_IMAGE_REJECTED 13
#define AA_ERROR_CODE_PUBLICATION_REVOKED 14

/* Local (client side) codes, negative so they never collide with errno or driver codes. */
#define AA_ERROR_CODE_DRIVER_NOT_FOUND (-1000)
#define AA_ERROR_CODE_DRIVER_TIMEOUT (-1001)
#define AA_ERROR_CODE_CLIENT_TIMEOUT (-1002)
#define AA_ERROR_CODE_CLOSED (-1003)
#define AA_ERROR_CODE_INVALID_ARGUMENT (-1004)
#define AA_ERROR_CODE_MESSAGE_TOO_LONG (-1005)
#define AA_ERROR_CODE_TIMEOUT (-1006)
#define AA_ERROR_CODE_CONFIGURATION (-1007)
/* The driver's CnC file holds what no driver writes (docs/security.md, "The CnC file"). */
#define AA_ERROR_CODE_DRIVER_CORRUPT (-1008)

void aa_err_set(int errcode, const char *function, const char *filename, int line, const char *format, ...)
    __attribute__((format(printf, 5, 6)));
void aa_err_append(const char *function, const char *filename, int line, const char *format, ...)
    __attribute__((format(printf, 4, 5)));
void aa_err_clear(void);
int aa_errcode(void);
const char *aa_errmsg(void);

#define AA_SET_ERR(errcode, fmt, ...) aa_err_set(errcode, __func__, __FILE__, __LINE__, fmt, __VA_ARGS__)
#define AA_APPEND_ERR(fmt, ...) aa_err_append(__func__, __FILE__, __LINE__, fmt, __VA_ARGS__)

#endif
