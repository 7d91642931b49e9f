#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "aa_congestion_control.h"
#include "aa_receiver_window.h"
#include "../_native/src/util/aa_error.h"
#include "../_native/src/util/aa_registry.h"

static int aa_static_congestion_control_initial_window_length(
    const aa_congestion_control_params_t *params, int32_t *window_length)
{
    if (NULL != params->cc_options && '\0' != *params->cc_options)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "channel parameter cc=static takes no options, got '%s' (its window is rcv-wnd)", params->cc_options);
        return -1;
    }
    *window_length = aa_receiver_window_length(params->initial_window_length, params->term_length);
    return 0;
}

static const aa_congestion_control_strategy_table_t aa_static_congestion_control_table =
{
    aa_static_congestion_control_initial_window_length
};

static pthread_once_t aa_congestion_control_builtins_once = PTHREAD_ONCE_INIT;
static int aa_congestion_control_builtins_result = 0;

static void aa_congestion_control_register_builtins_once(void)
{
    if (aa_registry_register(AA_STRATEGY_KIND_CONGESTION_CONTROL, "static", &aa_static_congestion_control_table, NULL,
            "a fixed window of min(rcv-wnd or the driver's initial window, term length / 2); no options") < 0)
    {
        aa_congestion_control_builtins_result = -1;
    }
}

int aa_congestion_control_register_builtins(void)
{
    pthread_once(&aa_congestion_control_builtins_once, aa_congestion_control_register_builtins_once);
    if (aa_congestion_control_builtins_result < 0)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s",
            "the built-in congestion control strategies could not be registered (a name was taken before they were)");
        return -1;
    }
    return 0;
}

int aa_congestion_control_select(const char *cc, aa_congestion_control_choice_t *choice)
{
    char name[AA_STRATEGY_NAME_MAX_LENGTH];
    const char *options = NULL;
    aa_strategy_t entry;
    const char *spec = NULL != cc ? cc : "static";
    if (aa_congestion_control_register_builtins() < 0 ||
        aa_registry_split_spec(spec, ',', name, sizeof(name), &options) < 0 ||
        aa_registry_lookup(AA_STRATEGY_KIND_CONGESTION_CONTROL, name, &entry) < 0)
    {
        char reason[1024];
        snprintf(reason, sizeof(reason), "%s", aa_errmsg());
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL, "channel parameter cc=%s: %s%s", spec, reason,
            0 == strcmp(name, "cubic") ? " (cubic is not implemented by this driver yet)" : "");
        return -1;
    }
    if (NULL != entry.options && NULL != options)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_CHANNEL,
            "channel parameter cc=%s: '%s' is an alias of %s with options '%s' already; give no options, or name %s",
            spec, name, entry.target, entry.options, entry.target);
        return -1;
    }
    choice->name = entry.name;
    choice->table = entry.table;
    choice->clientd = entry.clientd;
    choice->options = NULL != options ? options : entry.options;
    return 0;
}

int aa_congestion_control_initial_window_length(
    const aa_congestion_control_choice_t *choice, const aa_congestion_control_params_t *params, int32_t *window_length)
{
    aa_congestion_control_params_t p = *params;
    p.cc_options = choice->options;
    p.clientd = choice->clientd;
    if (choice->table->initial_window_length(&p, window_length) < 0)
    {
        AA_APPEND_ERR("congestion control '%s'", choice->name);
        return -1;
    }
    if (*window_length <= 0 || *window_length > params->term_length / 2)
    {
        AA_SET_ERR(AA_ERROR_CODE_GENERIC_ERROR,
            "congestion control '%s' gave a window of %d bytes; a window is above 0 and at most half the term (%d)",
            choice->name, (int)*window_length, (int)(params->term_length / 2));
        return -1;
    }
    return 0;
}
