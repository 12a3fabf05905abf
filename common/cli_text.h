/* What the simulators' command lines (sharedcache/sim, cachesim) read and write alike:
 * size arguments, whitespace-separated tokens of a text line, JSON strings, result
 * files written whole. */
#ifndef FORESIGHT_CLI_TEXT_H
#define FORESIGHT_CLI_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A size as users write it: digits and an optional K, M, G or T (powers of 1024; k/m/g
 * too, an optional i and B after it).  False for anything else or an overflow. */
bool cli_parse_size(const char *s, uint64_t *out);

/* The next whitespace-separated token of [*p, end), or NULL at the line's end or at a
 * `#` (a comment); *p moves past it. */
const char *cli_token(const char **p, const char *end, size_t *len);

/* S as a JSON string (NULL: null). */
void cli_json_string(FILE *f, const char *s);

/* PATH (stdout when NULL) written by WRITE(f, ARG): a regular file through a temporary
 * renamed into place, so a reader never sees half of it; a device or a pipe in place.
 * 0, or 2 after one line on stderr naming PROG and the file. */
int cli_write_file(const char *path, const char *prog, void (*write)(FILE *, const void *),
                   const void *arg);

#endif
