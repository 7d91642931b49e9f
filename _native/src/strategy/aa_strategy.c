/*
 * The public face of the strategy registry (aa_strategy_* in aeron_async.h): every call first makes
 * sure the built-in strategies of every kind are registered, so listings are complete and a user's
 * entry can never take a built-in's name.
 */
#include "aeron_async.h"
#include "agent/aa_agent.h"
#include "util/aa_error.h"
#include "util/aa_registry.h"
#include "media/aa_udp_channel.h"
#include "protocols/aa_congestion_control.h"
#include "protocols/aa_flow_control.h"

static int aa_strategy_builtins(void)
{
    return aa_flow_control_strategy_register_builtins() < 0 ||
        aa_congestion_control_register_builtins() < 0 ||
        aa_name_resolver_register_builtins() < 0 ||
        aa_idle_strategy_register_builtins() < 0 ? -1 : 0;
}

int aa_strategy_register(int32_t kind, const char *name, const void *table, void *clientd, const char *description)
{
    return aa_strategy_builtins() < 0 ? -1 : aa_registry_register(kind, name, table, clientd, description);
}

int aa_strategy_register_alias(
    int32_t kind, const char *name, const char *target, const char *options, const char *description)
{
    return aa_strategy_builtins() < 0 ? -1 : aa_registry_register_alias(kind, name, target, options, description);
}

int aa_strategy_lookup(int32_t kind, const char *name, aa_strategy_t *strategy)
{
    return aa_strategy_builtins() < 0 ? -1 : aa_registry_lookup(kind, name, strategy);
}

int aa_strategy_count(int32_t kind)
{
    return aa_strategy_builtins() < 0 ? -1 : aa_registry_count(kind);
}

int aa_strategy_names(int32_t kind, char *buffer, size_t length)
{
    return aa_strategy_builtins() < 0 ? -1 : aa_registry_names(kind, buffer, length);
}

int aa_strategy_entry(int32_t kind, int32_t index, aa_strategy_t *strategy)
{
    return aa_strategy_builtins() < 0 ? -1 : aa_registry_entry(kind, index, strategy);
}

const char *aa_strategy_kind_name(int32_t kind)
{
    return aa_registry_kind_name(kind);
}
