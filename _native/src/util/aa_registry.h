/*
 * The strategy registry: one process-wide table of pluggable strategies, keyed by (kind, name).
 *
 * Kinds: flow control (the sender's limit, chosen with fc= on a channel), congestion control (the
 * receiver's window, cc=), name resolvers (host names to addresses, the driver's name_resolver
 * option) and idle strategies (what an agent thread does when it found no work). Each entry holds
 * a function table whose type the kind defines (see the kind's header: aa_flow_control.h,
 * aa_congestion_control.h, aa_udp_channel.h (name resolvers), aa_agent.h (idle strategies)) and a
 * clientd handed back to it. An alias entry names another entry plus options, so "min5" can stand
 * for "min" with "t:5s" once min exists.
 *
 * Built-in strategies register themselves, lazily, the first time their module looks its kind up
 * (aa_strategy_registry_builtins in _native/src/strategy/ registers every kind at once, which the
 * public API does before anything else). C code and Python (aeron_async.strategies) add entries at
 * run time; entries are never removed, and their names and tables must live as long as the process.
 *
 * Thread safety: every function takes one mutex, so registration may happen at any time, also while
 * drivers run. Lookups happen on conductors when a resource is created (and when a driver context is
 * validated), never on the sender's or receiver's duty cycle.
 */
#ifndef AA_REGISTRY_H
#define AA_REGISTRY_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AA_STRATEGY_KIND_FLOW_CONTROL 0
#define AA_STRATEGY_KIND_CONGESTION_CONTROL 1
#define AA_STRATEGY_KIND_NAME_RESOLVER 2
#define AA_STRATEGY_KIND_IDLE 3
#define AA_STRATEGY_KIND_COUNT 4

/* Names are 1 to 63 characters of [A-Za-z0-9_.-], so they fit in a URI value and an option spec. */
#define AA_STRATEGY_NAME_MAX_LENGTH 64
#define AA_STRATEGY_OPTIONS_MAX_LENGTH 256

typedef struct aa_strategy_stct
{
    int32_t kind;
    const char *name;           /* the name looked up */
    const char *target;         /* the entry whose table this is: name itself, or what an alias names */
    const void *table;          /* the kind's function table */
    void *clientd;              /* handed back to the table's functions (through their params) */
    const char *options;        /* an alias's options, else NULL */
    const char *description;    /* "" when none was given */
    bool is_alias;
}
aa_strategy_t;

/* Adds name -> table for kind. table must stay valid for the life of the process. Returns 0, or -1
 * when the kind is unknown, the name malformed or taken (the error names the entry that has it),
 * table is NULL or memory ran out. */
int aa_registry_register(int32_t kind, const char *name, const void *table, void *clientd, const char *description);

/* Adds name as another name for target (a registered entry of the same kind that is not itself an
 * alias), with options the kind's users apply when the name is given without options of its own
 * (NULL or "": none). Same errors as aa_registry_register, plus an unknown target. */
int aa_registry_register_alias(
    int32_t kind, const char *name, const char *target, const char *options, const char *description);

/* A module's built-in entries, registered once per process by register_all (0, or -1 when one of
 * them could not be: its name was taken before). Declare one with AA_REGISTRY_BUILTINS. */
typedef struct aa_registry_builtins_stct
{
    pthread_mutex_t lock;
    bool done;
    int result;
    int (*register_all)(void);
    const char *what;           /* in the error: "the built-in <what> could not be registered" */
}
aa_registry_builtins_t;
#define AA_REGISTRY_BUILTINS(register_all, what) { PTHREAD_MUTEX_INITIALIZER, false, 0, register_all, what }

/* Registers the built-ins unless done (whoever calls first, once); 0, or -1 with
 * AA_ERROR_CODE_CONFIGURATION when they could not be registered. */
int aa_registry_register_builtins(aa_registry_builtins_t *builtins);

/* Finds name. Returns 0 and fills *strategy (its strings live as long as the process), or -1 with
 * AA_ERROR_CODE_CONFIGURATION and a message naming the kind, the name and every registered name. */
int aa_registry_lookup(int32_t kind, const char *name, aa_strategy_t *strategy);

/* Number of entries of kind (aliases included), or -1 for an unknown kind. */
int aa_registry_count(int32_t kind);

/* The index-th entry of kind in registration order. Returns 0, or -1 when out of range. */
int aa_registry_entry(int32_t kind, int32_t index, aa_strategy_t *strategy);

/* Writes "a, b, c" (registration order) into buffer and returns the number of names, or -1 when
 * the kind is unknown or buffer is too short. */
int aa_registry_names(int32_t kind, char *buffer, size_t length);

/* "flow control", "congestion control", "name resolver", "idle strategy"; NULL for an unknown kind. */
const char *aa_registry_kind_name(int32_t kind);

/* Splits "name<separator>options" (fc=min,t:5s: ','; idle backoff:10-20-1us-1ms: ':') into name
 * and options (NULL when none). Returns 0, or -1 with an error when the name does not fit. */
int aa_registry_split_spec(
    const char *spec, char separator, char *name, size_t name_length, const char **options);

#endif
