/*
 * The "csv_table" name resolver: a static map of names, for tests and fixed deployments.
 *
 * Init args (AERON_NAME_RESOLVER_INIT_ARGS): either inline rows, separated by '|' or new lines, or
 * the path of a file of such rows (init args without a ','). A row is
 *
 *     name,host[:port][,re-resolution host[:port]]
 *
 * (blank rows and rows starting with '#' are skipped). lookup maps a URI value whose whole text
 * ("pod-1:40123") or host ("pod-1") is a row's name to the row's host[:port] (the URI's port is kept
 * when the row gives none); a re-lookup (the channel fell silent) takes the third column when the
 * row has one. A host that is no name of the table, or that a row maps to a name, goes to the
 * default resolver. A file is read again, on the executor, when its modification time changes, so
 * a test or an operator can move a name by rewriting it.
 */
#ifndef AA_CSV_TABLE_NAME_RESOLVER_H
#define AA_CSV_TABLE_NAME_RESOLVER_H

#include "resolver/aa_name_resolver.h"
#include "util/aa_udp_address.h"

int aa_csv_table_name_resolver_supplier(
    aa_name_resolver_t **resolver, const char *init_args, const aa_name_resolver_context_t *context, void *clientd);

#endif
