/* The "csv_table" name resolver (aa_csv_table_name_resolver.h). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "resolver/aa_csv_table_name_resolver.h"
#include "util/aa_error.h"

#define AA_CSV_TABLE_FIELD_LENGTH AA_URI_MAX_VALUE_LENGTH
#define AA_CSV_TABLE_MAX_FILE_LENGTH (1024 * 1024)

typedef struct aa_csv_table_row_stct
{
    char name[AA_CSV_TABLE_FIELD_LENGTH];
    char host[AA_CSV_TABLE_FIELD_LENGTH];
    char re_host[AA_CSV_TABLE_FIELD_LENGTH];    /* "" when the row has no third column */
}
aa_csv_table_row_t;

typedef struct aa_csv_table_state_stct
{
    pthread_mutex_t mutex;      /* lookups run on every executor thread; a file may be re-read */
    char *path;                 /* NULL for inline rows */
    struct timespec mtime;
    aa_csv_table_row_t *rows;
    size_t rows_count;
    aa_name_resolver_t *fallback;
}
aa_csv_table_state_t;

static char *aa_csv_table_trim(char *s)
{
    while (' ' == *s || '\t' == *s || '\r' == *s)
    {
        s++;
    }
    size_t n = strlen(s);
    while (n > 0 && (' ' == s[n - 1] || '\t' == s[n - 1] || '\r' == s[n - 1]))
    {
        s[--n] = '\0';
    }
    return s;
}

static int aa_csv_table_copy_field(char *dst, const char *field, const char *what, const char *row)
{
    size_t n = strlen(field);
    if (0 == n || n >= AA_CSV_TABLE_FIELD_LENGTH)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
            "csv_table name resolver: row '%s': the %s is %s; a row is name,host[:port][,re-resolution host[:port]]",
            row, what, 0 == n ? "empty" : "longer than 255 characters");
        return -1;
    }
    memcpy(dst, field, n + 1);
    return 0;
}

/* Parses text (modified in place) into *rows. Returns the number of rows, or -1 with an error. */
static int aa_csv_table_parse(char *text, aa_csv_table_row_t **rows, size_t *count)
{
    size_t capacity = 0;
    *rows = NULL;
    *count = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "|\n", &save); NULL != line; line = strtok_r(NULL, "|\n", &save))
    {
        line = aa_csv_table_trim(line);
        if ('\0' == *line || '#' == *line)
        {
            continue;
        }
        char row_text[AA_CSV_TABLE_FIELD_LENGTH];
        snprintf(row_text, sizeof(row_text), "%s", line);
        char *fields[4] = { NULL, NULL, NULL, NULL };
        int n = 0;
        char *field_save = NULL;
        for (char *f = strtok_r(line, ",", &field_save); NULL != f && n < 4; f = strtok_r(NULL, ",", &field_save))
        {
            fields[n++] = aa_csv_table_trim(f);
        }
        if (n < 2 || n > 3)
        {
            AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION,
                "csv_table name resolver: row '%s' has %d columns; a row is name,host[:port][,re-resolution host[:port]] "
                "(e.g. pod-1,10.0.0.7 or pod-1:40123,10.0.0.7:40124)", row_text, n);
            free(*rows);
            *rows = NULL;
            return -1;
        }
        if (*count == capacity)
        {
            size_t new_capacity = 0 == capacity ? 8 : capacity * 2;
            aa_csv_table_row_t *grown = realloc(*rows, new_capacity * sizeof(aa_csv_table_row_t));
            if (NULL == grown)
            {
                free(*rows);
                *rows = NULL;
                AA_SET_ERR(ENOMEM, "%s", "csv_table name resolver: out of memory");
                return -1;
            }
            *rows = grown;
            capacity = new_capacity;
        }
        aa_csv_table_row_t *row = &(*rows)[*count];
        memset(row, 0, sizeof(*row));
        if (aa_csv_table_copy_field(row->name, fields[0], "name", row_text) < 0 ||
            aa_csv_table_copy_field(row->host, fields[1], "host", row_text) < 0 ||
            (3 == n && aa_csv_table_copy_field(row->re_host, fields[2], "re-resolution host", row_text) < 0))
        {
            free(*rows);
            *rows = NULL;
            return -1;
        }
        (*count)++;
    }
    return (int)*count;
}

/* Reads the file when it changed (mutex held). */
static int aa_csv_table_load_file(aa_csv_table_state_t *state, bool force)
{
    struct stat st;
    if (stat(state->path, &st) < 0)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "csv_table name resolver: cannot read file '%s': %s", state->path,
            strerror(errno));
        return -1;
    }
    if (!force && st.st_mtim.tv_sec == state->mtime.tv_sec && st.st_mtim.tv_nsec == state->mtime.tv_nsec)
    {
        return 0;
    }
    if (st.st_size > AA_CSV_TABLE_MAX_FILE_LENGTH)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "csv_table name resolver: file '%s' is larger than 1 MiB", state->path);
        return -1;
    }
    FILE *file = fopen(state->path, "r");
    if (NULL == file)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "csv_table name resolver: cannot open file '%s': %s", state->path,
            strerror(errno));
        return -1;
    }
    char *text = calloc(1, (size_t)st.st_size + 1);
    if (NULL == text)
    {
        fclose(file);
        AA_SET_ERR(ENOMEM, "%s", "csv_table name resolver: out of memory");
        return -1;
    }
    size_t length = fread(text, 1, (size_t)st.st_size, file);
    fclose(file);
    text[length] = '\0';
    aa_csv_table_row_t *rows = NULL;
    size_t count = 0;
    int rc = aa_csv_table_parse(text, &rows, &count);
    free(text);
    if (rc < 0)
    {
        AA_APPEND_ERR("file %s", state->path);
        return -1;
    }
    free(state->rows);
    state->rows = rows;
    state->rows_count = count;
    state->mtime = st.st_mtim;
    return 0;
}

/* A row whose name is value or its host part (value without ":port"). */
static const aa_csv_table_row_t *aa_csv_table_find(const aa_csv_table_state_t *state, const char *value)
{
    for (size_t i = 0; i < state->rows_count; i++)
    {
        if (0 == strcmp(state->rows[i].name, value))
        {
            return &state->rows[i];
        }
    }
    const char *colon = strrchr(value, ':');
    if (NULL == colon || '[' == value[0])
    {
        return NULL;
    }
    size_t host_length = (size_t)(colon - value);
    for (size_t i = 0; i < state->rows_count; i++)
    {
        if (strlen(state->rows[i].name) == host_length && 0 == strncmp(state->rows[i].name, value, host_length))
        {
            return &state->rows[i];
        }
    }
    return NULL;
}

static int aa_csv_table_lookup(
    void *state_ptr, const char *key, const char *name, bool is_re_lookup, char *out, size_t out_length)
{
    aa_csv_table_state_t *state = state_ptr;
    int rc = 0;
    pthread_mutex_lock(&state->mutex);
    if (NULL != state->path && aa_csv_table_load_file(state, false) < 0)
    {
        AA_APPEND_ERR("channel parameter %s=%s", key, name);
        rc = -1;
    }
    else
    {
        const aa_csv_table_row_t *row = aa_csv_table_find(state, name);
        const char *answer = NULL == row ? name : is_re_lookup && '\0' != row->re_host[0] ? row->re_host : row->host;
        if (strlen(answer) >= out_length)
        {
            AA_SET_ERR(AA_ERROR_CODE_UNKNOWN_HOST, "channel parameter %s=%s: csv_table answer '%s' is too long", key, name,
                answer);
            rc = -1;
        }
        else
        {
            memcpy(out, answer, strlen(answer) + 1);
        }
    }
    pthread_mutex_unlock(&state->mutex);
    return rc;
}

static int aa_csv_table_resolve(
    void *state_ptr, const char *key, const char *host, int family, bool is_re_resolution, struct sockaddr_storage *address)
{
    aa_csv_table_state_t *state = state_ptr;
    aa_name_resolver_t *fallback = state->fallback;
    return fallback->resolve(fallback->state, key, host, family, is_re_resolution, address);
}

static void aa_csv_table_close(aa_name_resolver_t *resolver)
{
    aa_csv_table_state_t *state = resolver->state;
    if (NULL != state)
    {
        pthread_mutex_destroy(&state->mutex);
        free(state->rows);
        free(state->path);
        free(state);
    }
    free(resolver);
}

int aa_csv_table_name_resolver_supplier(
    aa_name_resolver_t **resolver, const char *init_args, const aa_name_resolver_context_t *context, void *clientd)
{
    (void)clientd;
    *resolver = NULL;
    if (NULL == init_args || '\0' == *init_args)
    {
        AA_SET_ERR(AA_ERROR_CODE_CONFIGURATION, "%s",
            "the csv_table name resolver needs its table in AERON_NAME_RESOLVER_INIT_ARGS: a CSV file path, or rows "
            "'name,host[:port][,re-resolution host[:port]]' separated by '|'");
        return -1;
    }
    aa_name_resolver_t *r = aa_name_resolver_new(sizeof(aa_csv_table_state_t), "the csv_table name resolver");
    if (NULL == r)
    {
        return -1;
    }
    aa_csv_table_state_t *state = r->state;
    pthread_mutex_init(&state->mutex, NULL);
    state->fallback = NULL != context && NULL != context->default_resolver ?
        context->default_resolver : aa_name_resolver_default();
    r->name = "csv_table";
    r->lookup = aa_csv_table_lookup;
    r->resolve = aa_csv_table_resolve;
    r->close = aa_csv_table_close;
    int rc;
    if (NULL == strchr(init_args, ','))
    {
        state->path = strdup(init_args);
        rc = NULL == state->path ? -1 : aa_csv_table_load_file(state, true);
    }
    else
    {
        char *text = strdup(init_args);
        rc = NULL == text ? -1 : aa_csv_table_parse(text, &state->rows, &state->rows_count);
        free(text);
    }
    if (rc < 0)
    {
        aa_csv_table_close(r);
        return -1;
    }
    *resolver = r;
    return 0;
}
