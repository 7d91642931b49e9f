/* Driver control options (docs/architecture.md, "Operations"): AERON_DRIVER_TERMINATION_VALIDATOR /
 * _TOKEN are checked together, and aa_driver_context_write_options writes every option as the context
 * holds it, the token hidden. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aa_test.h"
#include "driver/aa_driver_context.h"
#include "util/aa_error.h"

static void test_termination_validator_defaults_to_deny(void)
{
    aa_driver_context_t ctx;
    AA_CHECK_EQ(aa_driver_context_init(&ctx), 0);
    AA_CHECK_EQ(aa_driver_context_termination_validator(&ctx), AA_TERMINATION_DENY);
    AA_CHECK_EQ(aa_driver_context_validate(&ctx), 0);
}

static void test_termination_options_are_checked_together(void)
{
    aa_driver_context_t ctx;
    AA_CHECK_EQ(aa_driver_context_init(&ctx), 0);
    AA_CHECK_EQ(aa_driver_context_set(&ctx, "aeron.driver.termination.validator", "token"), 0);
    AA_CHECK_EQ(aa_driver_context_validate(&ctx), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "needs AERON_DRIVER_TERMINATION_TOKEN"));
    AA_CHECK_EQ(aa_driver_context_set(&ctx, "AERON_DRIVER_TERMINATION_TOKEN", "s3cret"), 0);
    AA_CHECK_EQ(aa_driver_context_validate(&ctx), 0);
    AA_CHECK_EQ(aa_driver_context_termination_validator(&ctx), AA_TERMINATION_TOKEN);

    AA_CHECK_EQ(aa_driver_context_set(&ctx, "AERON_DRIVER_TERMINATION_VALIDATOR", "ALLOW"), 0);
    AA_CHECK_EQ(aa_driver_context_validate(&ctx), -1); /* a token nobody checks is refused */
    AA_CHECK(NULL != strstr(aa_errmsg(), "does not use it"));
    AA_CHECK_EQ(aa_driver_context_set(&ctx, "AERON_DRIVER_TERMINATION_TOKEN", ""), 0);
    AA_CHECK_EQ(aa_driver_context_validate(&ctx), 0);
    AA_CHECK_EQ(aa_driver_context_termination_validator(&ctx), AA_TERMINATION_ALLOW);

    AA_CHECK_EQ(aa_driver_context_set(&ctx, "AERON_DRIVER_TERMINATION_VALIDATOR", "maybe"), 0);
    AA_CHECK_EQ(aa_driver_context_validate(&ctx), -1);
    AA_CHECK(NULL != strstr(aa_errmsg(), "maybe is not a termination validator"));
}

static void test_options_written_with_their_values_and_the_token_hidden(void)
{
    aa_driver_context_t ctx;
    AA_CHECK_EQ(aa_driver_context_init(&ctx), 0);
    AA_CHECK_EQ(aa_driver_context_set(&ctx, "AERON_TERM_BUFFER_LENGTH", "64k"), 0);
    AA_CHECK_EQ(aa_driver_context_set(&ctx, "AERON_THREADING_MODE", "shared"), 0);
    AA_CHECK_EQ(aa_driver_context_set(&ctx, "AERON_CLIENT_LIVENESS_TIMEOUT", "2s"), 0);
    AA_CHECK_EQ(aa_driver_context_set(&ctx, "AERON_UDP_RECEIVE_LOSS", "drop:data:5%"), 0);
    AA_CHECK_EQ(aa_driver_context_set(&ctx, "AERON_DRIVER_TERMINATION_VALIDATOR", "token"), 0);
    AA_CHECK_EQ(aa_driver_context_set(&ctx, "AERON_DRIVER_TERMINATION_TOKEN", "s3cret"), 0);
    char *text = NULL;
    size_t length = 0;
    FILE *out = open_memstream(&text, &length);
    AA_CHECK(NULL != out);
    AA_CHECK_EQ(aa_driver_context_write_options(&ctx, out), 0);
    AA_CHECK_EQ(fclose(out), 0);
    AA_CHECK(NULL != strstr(text, "aeron.term.buffer.length=65536\n"));
    AA_CHECK(NULL != strstr(text, "aeron.threading.mode=SHARED\n"));
    AA_CHECK(NULL != strstr(text, "aeron.client.liveness.timeout=2000000000ns\n"));
    AA_CHECK(NULL != strstr(text, "aeron.udp.receive.loss=drop:data:5%\n"));
    AA_CHECK(NULL != strstr(text, "aeron.driver.termination.validator=token\n"));
    AA_CHECK(NULL != strstr(text, "aeron.driver.termination.token=(set)\n"));
    AA_CHECK(NULL == strstr(text, "s3cret"));
    AA_CHECK(NULL == strstr(text, "value not recorded")); /* every kind of option is written */
    free(text);
}

int main(void)
{
    AA_RUN(test_termination_validator_defaults_to_deny);
    AA_RUN(test_termination_options_are_checked_together);
    AA_RUN(test_options_written_with_their_values_and_the_token_hidden);
    return 0;
}
