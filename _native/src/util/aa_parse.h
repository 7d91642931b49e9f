/*
 * Parsers of option and URI values shared by every layer: durations and sizes, as Aeron writes them
 * in properties and channel parameters.
 */
#ifndef AA_PARSE_H
#define AA_PARSE_H

#include <stdint.h>

/* Parses durations like "1ms", "500us", "10ns", "2s", "100" (ns); -1 on error. */
int64_t aa_parse_duration_ns(const char *text);
/* Parses sizes like "64k", "16m", "1g", "4096"; -1 on error. */
int64_t aa_parse_size(const char *text);

#endif
