/*
 * The option engine (docs/configuration.md): every kind of settings (the media driver's,
 * driver/aa_driver_context.c; the archive's, archive/aa_archive_context.c) is a table of option
 * descriptors, and this code does the rest for every table alike: set an option by its environment
 * or property name, apply the defaults, read the environment, format values back, write the options
 * file (property=value lines) and describe the options (--help-options, the Python contexts).
 * A context keeps only its table and the checks between its fields (its validate function).
 */
#ifndef AA_OPTIONS_H
#define AA_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* CDEF BEGIN */

/* The tables (aa_options_count, aa_option_describe). */
#define AA_OPTIONS_DRIVER 0
#define AA_OPTIONS_ARCHIVE 1

/* The type of an option's value. */
#define AA_OPTION_BOOL 0        /* true or false (also 1/0, yes/no, any case) */
#define AA_OPTION_INT32 1
#define AA_OPTION_INT64 2
#define AA_OPTION_SIZE 3        /* bytes with an optional k, m or g suffix (65536, 64k, 16m) */
#define AA_OPTION_DURATION 4    /* a number with ns, us, ms or s (500ms, 10s); a bare number is ns */
#define AA_OPTION_STRING 5
#define AA_OPTION_ENUM 6        /* one of a list of names (any case) */
#define AA_OPTION_CUSTOM 7      /* a syntax of its own, said by its description (loss rules, a group tag) */

/* What aa_option_describe tells about an option. */
typedef struct aa_option_info_stct
{
    const char *name;           /* the keyword of the Python context (DriverContext, ArchiveContext) */
    const char *env_name;       /* AERON_... */
    const char *property_name;  /* Aeron's property name, aeron.... */
    int32_t type;               /* AA_OPTION_* */
    const char *default_value;  /* as the environment would give it; "" may stand for one worked out at start */
    const char *description;
}
aa_option_info_t;

/* CDEF END */

typedef struct aa_option_stct aa_option_t;

/* A string option's check, run before the value is stored (a registered strategy's name, ...): -1
 * with the error set refuses the value. */
typedef int (*aa_option_check_func_t)(const aa_option_t *opt, const char *value);
/* An empty string option's value, worked out (the default aeron directory): -1 with the error set. */
typedef int (*aa_option_fill_func_t)(char *buffer, size_t length);
/* A custom option's parser (stores into the context, -1 with the error set) and formatter (the value
 * as the option would be set to it; snprintf's result). */
typedef int (*aa_option_parse_func_t)(void *ctx, const aa_option_t *opt, const char *value);
typedef int (*aa_option_format_func_t)(const void *ctx, const aa_option_t *opt, char *out, size_t length);

/* The names of an enum option, stored as the index of the name given (an int32). */
typedef struct aa_option_enum_stct
{
    const char *const *names;
    int32_t count;
    const char *refusal;    /* "%s=%s <refusal>": what the value is not and which names to use */
}
aa_option_enum_t;

struct aa_option_stct
{
    const char *name;
    const char *env_name;
    const char *property_name;
    int32_t type;
    size_t offset;          /* of the field in the context */
    size_t size;            /* of the field (a string's buffer, with its NUL) */
    const char *default_value;
    const char *description;
    /* by type; zero where unused */
    int64_t unit_ns;                    /* DURATION: the field's unit, 1 (ns) or 1000000 (ms) */
    const aa_option_enum_t *choices;    /* ENUM */
    aa_option_check_func_t check;       /* STRING: optional */
    aa_option_fill_func_t fill_empty;   /* STRING: optional */
    bool secret;                        /* STRING: formatted as "(set)" when set, never the value */
    aa_option_parse_func_t parse;       /* CUSTOM */
    aa_option_format_func_t format;     /* CUSTOM */
};

/* A table, with the words of its parse errors (the driver's and the archive's examples differ). */
typedef struct aa_options_table_stct
{
    const char *what;               /* "driver": "unknown driver option X; see `aeron-async driver --help-options`" */
    const aa_option_t *options;
    size_t count;
    const char *size_examples;      /* "65536, 64k, 16m" */
    const char *duration_examples;  /* "500ms, 10s" */
    const char *int64_noun;         /* what a bad INT64 value is not: "a 64-bit integer" */
    const char *int32_noun;         /* what an INT32 value that is no number is not ("a 32-bit integer" out of range) */
}
aa_options_table_t;

#define AA_OPTION_FIELD(type, field) offsetof(type, field), sizeof(((type *)0)->field)

/* The option of an environment name (AERON_TERM_BUFFER_LENGTH) or a property name
 * (aeron.term.buffer.length), any case; NULL when the table has none. */
const aa_option_t *aa_options_find(const aa_options_table_t *table, const char *name);
/* Parses value and stores it into ctx; the error names the option, the value and the accepted form. */
int aa_options_apply(const aa_options_table_t *table, void *ctx, const aa_option_t *opt, const char *value);
/* aa_options_apply by name; an unknown name is refused naming the table's --help-options. */
int aa_options_set(const aa_options_table_t *table, void *ctx, const char *name, const char *value);
/* Every option's default, then every environment variable of the table that is set. */
int aa_options_init(const aa_options_table_t *table, void *ctx);
/* The value ctx holds, as the option would be set to it (a secret as "(set)"); snprintf's result, -1
 * for a custom option without a formatter. */
int aa_options_format(const void *ctx, const aa_option_t *opt, char *out, size_t length);
/* aa_options_format by name: the length written, or -1 with the error set (unknown name, too short). */
int aa_options_get(const aa_options_table_t *table, const void *ctx, const char *name, char *out, size_t length);
/* Every option as a `property=value` line; 0, or -1 with the error set. */
int aa_options_write(const aa_options_table_t *table, const void *ctx, FILE *out);
/* The index-th option (0 up); -1 past the end. */
int aa_options_describe(const aa_options_table_t *table, int32_t index, aa_option_info_t *info);

#endif
