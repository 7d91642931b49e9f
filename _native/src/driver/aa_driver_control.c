/*
 * Driver control (docs/architecture.md, "Operations"): Aeron's TERMINATE_DRIVER command and what a
 * driver tells about itself.
 *
 * A process asks a driver to stop by writing TERMINATE_DRIVER (0x0E: client id, correlation id,
 * token length, token; aa_terminate_driver_command_t) into the CnC's to-driver ring buffer, as
 * Aeron's aeron_context_request_driver_termination / CommonContext.requestDriverTermination do. The
 * conductor validates it against AERON_DRIVER_TERMINATION_VALIDATOR (Aeron's TerminationValidator:
 * deny by default, allow, or token = the request must carry AERON_DRIVER_TERMINATION_TOKEN). An
 * accepted request sets the driver's termination flag, which its owner (the standalone
 * `aeron-async driver`, or an application through aa_driver_termination_requested) turns into the
 * ordinary close: CnC marked closed, clients told. A refused one is recorded in the distinct error
 * log, where the requester reads that it was refused.
 *
 * Every driver also writes its options, as it runs with them, to <aeron_dir>/AA_DRIVER_OPTIONS_FILE
 * (property=value lines, the token hidden) for `aeron-async driver --info`.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "aeron_async.h"
#include "driver/aa_driver.h"
#include "protocols/aa_cnc.h"
#include "protocols/aa_control_protocol.h"
#include "concurrent/aa_atomic.h"
#include "util/aa_error.h"
#include "util/aa_fs.h"
#include "util/aa_version.h"

static bool aa_termination_token_matches(const char *expected, const uint8_t *token, int32_t token_length)
{
    size_t expected_length = strlen(expected);
    if ((size_t)token_length != expected_length)
    {
        return false;
    }
    unsigned char difference = 0; /* compare every byte, whatever the first mismatch */
    for (size_t i = 0; i < expected_length; i++)
    {
        difference |= (unsigned char)((unsigned char)expected[i] ^ token[i]);
    }
    return 0 == difference;
}

void aa_driver_conductor_on_terminate_driver(aa_driver_conductor_t *conductor, const void *buffer, size_t length)
{
    const aa_terminate_driver_command_t *command = buffer;
    if (length < sizeof(*command) || command->token_length < 0 ||
        (size_t)command->token_length > length - sizeof(*command))
    {
        aa_driver_conductor_log_invalid_command(conductor, AA_ERROR_CODE_MALFORMED_COMMAND,
            length >= sizeof(aa_correlated_command_t) ? command->correlated.client_id : 0,
            length >= sizeof(aa_correlated_command_t),
            "TERMINATE_DRIVER refused: malformed command (token length outside the message)");
        return;
    }
    const uint8_t *token = (const uint8_t *)buffer + sizeof(*command);
    switch (aa_driver_context_termination_validator(conductor->ctx))
    {
        case AA_TERMINATION_ALLOW:
            break;
        case AA_TERMINATION_TOKEN:
            if (!aa_termination_token_matches(conductor->ctx->termination_token, token, command->token_length))
            {
                aa_driver_conductor_log_error(conductor, AA_ERROR_CODE_GENERIC_ERROR,
                    "TERMINATE_DRIVER refused: the request's token does not match AERON_DRIVER_TERMINATION_TOKEN");
                return;
            }
            break;
        default:
            aa_driver_conductor_log_error(conductor, AA_ERROR_CODE_GENERIC_ERROR,
                "TERMINATE_DRIVER refused: termination is disabled (AERON_DRIVER_TERMINATION_VALIDATOR=deny, the "
                "default); start the driver with AERON_DRIVER_TERMINATION_VALIDATOR=token and a token to allow it");
            return;
    }
    aa_put_int32_release(&conductor->termination_requested, 1);
}

bool aa_driver_termination_requested(aa_driver_t *driver)
{
    return 0 != aa_get_int32_acquire(&driver->conductor.termination_requested);
}

int aa_driver_write_options_file(aa_driver_t *driver)
{
    char path[PATH_MAX];
    char temporary[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", driver->ctx.aeron_dir, AA_DRIVER_OPTIONS_FILE);
    snprintf(temporary, sizeof(temporary), "%s.tmp", path);
    /* a new file, never through a link (docs/security.md, "Files"): one a crash left is removed first */
    if (unlink(temporary) < 0 && ENOENT != errno)
    {
        AA_SET_ERR(errno, "could not remove %s: %s", temporary, strerror(errno));
        return -1;
    }
    aa_fs_access_t read_access = aa_driver_read_access(&driver->ctx);
    int fd = aa_fs_create_file(temporary, O_WRONLY, &read_access);
    FILE *out = fd < 0 ? NULL : fdopen(fd, "w");
    if (NULL == out)
    {
        if (fd >= 0)
        {
            AA_SET_ERR(errno, "could not write %s: %s", temporary, strerror(errno));
            close(fd);
        }
        return -1;
    }
    aa_cnc_metadata_t *cnc = driver->conductor.cnc;
    int rc = fprintf(out, "# aeron_async media driver %s: the options it runs with\n# pid=%" PRId64
        " start_timestamp_ms=%" PRId64 "\n", AA_VERSION_STRING, cnc->pid, cnc->start_timestamp) < 0 ? -1 : 0;
    if (rc < 0)
    {
        AA_SET_ERR(errno, "writing %s", temporary);
    }
    else
    {
        rc = aa_driver_context_write_options(&driver->ctx, out);
    }
    if (0 != fclose(out) && 0 == rc)
    {
        AA_SET_ERR(errno, "writing %s: %s", temporary, strerror(errno));
        rc = -1;
    }
    if (0 == rc && rename(temporary, path) < 0)
    {
        AA_SET_ERR(errno, "could not rename %s to %s: %s", temporary, path, strerror(errno));
        rc = -1;
    }
    if (rc < 0)
    {
        remove(temporary);
    }
    return rc;
}
