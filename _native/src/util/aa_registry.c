#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/aa_registry.h"
#include "util/aa_error.h"

typedef struct aa_registry_entry_stct
{
    int32_t kind;
    char *name;
    char *target;           /* NULL unless an alias */
    const void *table;
    void *clientd;
    char *options;
    char *description;
}
aa_registry_entry_t;

static pthread_mutex_t aa_registry_lock = PTHREAD_MUTEX_INITIALIZER;
static aa_registry_entry_t *aa_registry_entries = NULL;
static size_t aa_registry_entries_count = 0;
static size_t aa_registry_entries_capacity = 0;

static const char *const aa_registry_kind_names[AA_STRATEGY_KIND_COUNT] =
{
    "flow control", "congestion control", "name resolver", "idle strategy"
};

const char *aa_registry_kind_name(int32_t kind)
{
    return kind >= 0 && kind < AA_STRATEGY_KIND_COUNT ? aa_registry_kind_names[kind] : NULL;
}

static int aa_registry_check_kind(int32_t kind)
{
    if (NULL == aa_registry_kind_name(kind))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT,
            "unknown strategy kind %d; the kinds are 0 (flow control), 1 (congestion control), 2 (name resolver) "
            "and 3 (idle strategy)", (int)kind);
        return -1;
    }
    return 0;
}

static int aa_registry_check_name(int32_t kind, const char *name)
{
    size_t length = NULL == name ? 0 : strlen(name);
    if (0 == length || length >= AA_STRATEGY_NAME_MAX_LENGTH ||
        length != strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT,
            "%s name '%s' is invalid: use 1 to %d letters, digits, '_', '.' or '-'",
            aa_registry_kind_name(kind), NULL == name ? "" : name, AA_STRATEGY_NAME_MAX_LENGTH - 1);
        return -1;
    }
    return 0;
}

/* Caller holds the lock. */
static aa_registry_entry_t *aa_registry_find_locked(int32_t kind, const char *name)
{
    for (size_t i = 0; i < aa_registry_entries_count; i++)
    {
        aa_registry_entry_t *e = &aa_registry_entries[i];
        if (e->kind == kind && 0 == strcmp(e->name, name))
        {
            return e;
        }
    }
    return NULL;
}

/* Caller holds the lock. */
static void aa_registry_fill_locked(const aa_registry_entry_t *e, aa_strategy_t *strategy)
{
    strategy->kind = e->kind;
    strategy->name = e->name;
    strategy->is_alias = NULL != e->target;
    strategy->options = e->options;
    strategy->description = e->description;
    if (NULL != e->target)
    {
        const aa_registry_entry_t *target = aa_registry_find_locked(e->kind, e->target);
        strategy->target = target->name;
        strategy->table = target->table;
        strategy->clientd = target->clientd;
    }
    else
    {
        strategy->target = e->name;
        strategy->table = e->table;
        strategy->clientd = e->clientd;
    }
}

static char *aa_registry_strdup_or_null(const char *text, bool *failed)
{
    if (NULL == text || '\0' == *text)
    {
        return NULL;
    }
    char *copy = strdup(text);
    *failed = *failed || NULL == copy;
    return copy;
}

static int aa_registry_add(
    int32_t kind, const char *name, const char *target, const void *table, void *clientd, const char *options,
    const char *description)
{
    if (aa_registry_check_kind(kind) < 0 || aa_registry_check_name(kind, name) < 0)
    {
        return -1;
    }
    if (NULL != options && strlen(options) >= AA_STRATEGY_OPTIONS_MAX_LENGTH)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "%s alias '%s': options are longer than %d characters",
            aa_registry_kind_name(kind), name, AA_STRATEGY_OPTIONS_MAX_LENGTH - 1);
        return -1;
    }
    if (NULL == target && NULL == table)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "%s '%s': the function table is NULL", aa_registry_kind_name(kind), name);
        return -1;
    }

    pthread_mutex_lock(&aa_registry_lock);
    aa_registry_entry_t *existing = aa_registry_find_locked(kind, name);
    if (NULL != existing)
    {
        /* the message is made under the lock: another thread's registration may move the entries */
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT,
            "%s '%s' is already registered%s%s; choose another name (registered names are never replaced)",
            aa_registry_kind_name(kind), name, NULL != existing->target ? " as an alias of " : "",
            NULL != existing->target ? existing->target : "");
        pthread_mutex_unlock(&aa_registry_lock);
        return -1;
    }
    if (NULL != target)
    {
        aa_registry_entry_t *t = aa_registry_find_locked(kind, target);
        if (NULL != t && NULL != t->target)
        {
            AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT,
                "%s alias '%s' names '%s', itself an alias of '%s'; name '%s' instead",
                aa_registry_kind_name(kind), name, target, t->target, t->target);
            pthread_mutex_unlock(&aa_registry_lock);
            return -1;
        }
        if (NULL == t)
        {
            pthread_mutex_unlock(&aa_registry_lock);
            char known[1024];
            aa_registry_names(kind, known, sizeof(known)); /* takes the lock itself */
            AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "%s alias '%s' names '%s', which is not registered; registered: %s",
                aa_registry_kind_name(kind), name, target, known);
            return -1;
        }
    }
    if (aa_registry_entries_count == aa_registry_entries_capacity)
    {
        size_t capacity = 0 == aa_registry_entries_capacity ? 32 : aa_registry_entries_capacity * 2;
        aa_registry_entry_t *grown = realloc(aa_registry_entries, capacity * sizeof(aa_registry_entry_t));
        if (NULL == grown)
        {
            pthread_mutex_unlock(&aa_registry_lock);
            AA_SET_ERR(ENOMEM, "%s", "out of memory growing the strategy registry");
            return -1;
        }
        aa_registry_entries = grown;
        aa_registry_entries_capacity = capacity;
    }
    bool failed = false;
    aa_registry_entry_t entry =
    {
        .kind = kind,
        .name = aa_registry_strdup_or_null(name, &failed),
        .target = aa_registry_strdup_or_null(target, &failed),
        .table = table,
        .clientd = clientd,
        .options = aa_registry_strdup_or_null(options, &failed),
        .description = strdup(NULL == description ? "" : description),
    };
    if (failed || NULL == entry.description)
    {
        pthread_mutex_unlock(&aa_registry_lock);
        free(entry.name);
        free(entry.target);
        free(entry.options);
        free(entry.description);
        AA_SET_ERR(ENOMEM, "%s", "out of memory registering a strategy");
        return -1;
    }
    aa_registry_entries[aa_registry_entries_count++] = entry;
    pthread_mutex_unlock(&aa_registry_lock);
    return 0;
}

int aa_registry_register(int32_t kind, const char *name, const void *table, void *clientd, const char *description)
{
    return aa_registry_add(kind, name, NULL, table, clientd, NULL, description);
}

int aa_registry_register_alias(
    int32_t kind, const char *name, const char *target, const char *options, const char *description)
{
    if (NULL == target || '\0' == *target)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "%s alias '%s' names no strategy",
            NULL == aa_registry_kind_name(kind) ? "strategy" : aa_registry_kind_name(kind), NULL == name ? "" : name);
        return -1;
    }
    return aa_registry_add(kind, name, target, NULL, NULL, options, description);
}

int aa_registry_register_builtins(aa_registry_builtins_t *builtins)
{
    pthread_mutex_lock(&builtins->lock);
    if (!builtins->done)
    {
        builtins->result = builtins->register_all();
        builtins->done = true;
    }
    int result = builtins->result;
    pthread_mutex_unlock(&builtins->lock);
    if (result < 0)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "the built-in %s could not be registered (a name was taken before they were)", builtins->what);
        return -1;
    }
    return 0;
}

int aa_registry_lookup(int32_t kind, const char *name, aa_strategy_t *strategy)
{
    if (aa_registry_check_kind(kind) < 0)
    {
        return -1;
    }
    pthread_mutex_lock(&aa_registry_lock);
    const aa_registry_entry_t *e = NULL == name ? NULL : aa_registry_find_locked(kind, name);
    if (NULL != e)
    {
        aa_registry_fill_locked(e, strategy);
        pthread_mutex_unlock(&aa_registry_lock);
        return 0;
    }
    pthread_mutex_unlock(&aa_registry_lock);
    char known[1024];
    if (aa_registry_names(kind, known, sizeof(known)) < 0)
    {
        snprintf(known, sizeof(known), "%s", "(too many to list)");
    }
    AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "unknown %s '%s'; registered: %s",
        aa_registry_kind_name(kind), NULL == name ? "" : name, '\0' == known[0] ? "none" : known);
    return -1;
}

int aa_registry_count(int32_t kind)
{
    if (aa_registry_check_kind(kind) < 0)
    {
        return -1;
    }
    int count = 0;
    pthread_mutex_lock(&aa_registry_lock);
    for (size_t i = 0; i < aa_registry_entries_count; i++)
    {
        count += aa_registry_entries[i].kind == kind;
    }
    pthread_mutex_unlock(&aa_registry_lock);
    return count;
}

int aa_registry_entry(int32_t kind, int32_t index, aa_strategy_t *strategy)
{
    if (aa_registry_check_kind(kind) < 0)
    {
        return -1;
    }
    int32_t seen = 0;
    pthread_mutex_lock(&aa_registry_lock);
    for (size_t i = 0; i < aa_registry_entries_count; i++)
    {
        if (aa_registry_entries[i].kind == kind && seen++ == index)
        {
            aa_registry_fill_locked(&aa_registry_entries[i], strategy);
            pthread_mutex_unlock(&aa_registry_lock);
            return 0;
        }
    }
    pthread_mutex_unlock(&aa_registry_lock);
    AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "%s %d is out of range (%d registered)",
        aa_registry_kind_name(kind), (int)index, (int)seen);
    return -1;
}

int aa_registry_names(int32_t kind, char *buffer, size_t length)
{
    if (aa_registry_check_kind(kind) < 0)
    {
        return -1;
    }
    if (0 == length)
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "%s", "no room for the strategy names");
        return -1;
    }
    int count = 0;
    size_t offset = 0;
    buffer[0] = '\0';
    pthread_mutex_lock(&aa_registry_lock);
    for (size_t i = 0; i < aa_registry_entries_count; i++)
    {
        const aa_registry_entry_t *e = &aa_registry_entries[i];
        if (e->kind != kind)
        {
            continue;
        }
        int n = snprintf(buffer + offset, length - offset, "%s%s", 0 == count ? "" : ", ", e->name);
        if (n < 0 || (size_t)n >= length - offset)
        {
            pthread_mutex_unlock(&aa_registry_lock);
            AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "the %s names do not fit in %zu bytes", aa_registry_kind_name(kind), length);
            return -1;
        }
        offset += (size_t)n;
        count++;
    }
    pthread_mutex_unlock(&aa_registry_lock);
    return count;
}

int aa_registry_split_spec(const char *spec, char separator, char *name, size_t name_length, const char **options)
{
    const char *end = NULL == spec ? NULL : strchr(spec, separator);
    size_t length = NULL == spec ? 0 : (NULL == end ? strlen(spec) : (size_t)(end - spec));
    if (length >= name_length)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "strategy name in '%s' is longer than %zu characters", spec, name_length - 1);
        return -1;
    }
    if (length > 0)
    {
        memcpy(name, spec, length);
    }
    name[length] = '\0';
    *options = NULL == end ? NULL : end + 1;
    return 0;
}
