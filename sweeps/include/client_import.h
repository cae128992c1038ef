/*
 * client_import.h — `--client FILE`: the retry configuration a user ships
 * (a gRPC service config, or an Envoy route retry_policy with its cluster's
 * circuit breakers) turned into engine settings (docs/client-import.md).
 *
 * The import is two steps so that each can be tested on its own:
 *   swp_client_parse: bytes -> an ordered list of (setting, value, source
 *     field) entries; pure (no I/O, no globals), so a fuzzer can drive it;
 *   swp_client_apply: the list -> eng_config_set, in list order.
 * The list names settings only by key, so the importer compiles against any
 * settings table; a key the engine lacks is reported when applied.
 */
#ifndef STORMSWEEP_CLIENT_IMPORT_H
#define STORMSWEEP_CLIENT_IMPORT_H

#include <stddef.h>
#include <stdio.h>

#include "eng_config.h"

#define SWP_CLIENT_MAX_ENTRIES 32
#define SWP_CLIENT_MAX_NOTES 32
#define SWP_CLIENT_MAX_BYTES (1 << 20) /* a retry config is a few hundred bytes */

/* swp_client_parse_opts / swp_client_load_opts flags */
#define SWP_CLIENT_LENIENT 1u /* an unknown field or retry_on condition is a note, not an error */

typedef enum { SWP_CLIENT_GRPC = 1, SWP_CLIENT_ENVOY } swp_client_kind;

typedef struct swp_client_entry {
  char key[96];     /* engine setting, e.g. "max_retries" (or "api->db.max_retries") */
  char value[96];   /* as eng_config_set takes it, e.g. "3" */
  char source[288]; /* the field it came from, e.g. "methodConfig[0].retryPolicy.maxAttempts",
                       or a parenthesised reason for a value the file does not state */
  char raw[160];    /* the field's value as written ("" for a derived value) */
} swp_client_entry;
/* An entry is made only of names the importer knows, numbers it formatted
 * and durations it checked: printable ASCII, whatever the file holds. Notes
 * and error messages quote the file's own text (an unknown field's name, a
 * bad value) as it is: print them through a terminal escaper (the CLI's
 * cli_error and ana_term_fputs). */

typedef struct swp_client_map {
  int kind; /* swp_client_kind */
  size_t n;
  swp_client_entry e[SWP_CLIENT_MAX_ENTRIES];
  size_t n_notes; /* fields read but not modelled, caps applied, fields ignored */
  size_t notes_dropped; /* notes beyond SWP_CLIENT_MAX_NOTES (counted, not kept) */
  char notes[SWP_CLIENT_MAX_NOTES][480];
} swp_client_map;

const char *swp_client_kind_name(int kind); /* "gRPC service config", "Envoy retry policy" */

/* Parses a client config (JSON, or YAML for Envoy) held in buf[0..len) and
 * maps it. name is the file name used in messages. Returns 0, or -1 with
 * "NAME: path.to.field: what is wrong" (or "NAME: line L column C: ..." for
 * a syntax error) in err. Never reads outside buf; len may be 0. */
int swp_client_parse(const char *name, const char *buf, size_t len, swp_client_map *m,
                     char *err, size_t errlen);
/* The same with flags (SWP_CLIENT_LENIENT); swp_client_parse is flags 0:
 * an unknown field is an error ("unknown field (did you mean 'timeout'?)"). */
int swp_client_parse_opts(const char *name, const char *buf, size_t len, unsigned flags,
                          swp_client_map *m, char *err, size_t errlen);

/* Reads path (a regular file, or a link to one, of at most
 * SWP_CLIENT_MAX_BYTES; a FIFO, device or directory is refused at once,
 * without blocking) and parses it. */
int swp_client_load(const char *path, swp_client_map *m, char *err, size_t errlen);
int swp_client_load_opts(const char *path, unsigned flags, swp_client_map *m, char *err,
                         size_t errlen);

/* What --client takes: FILE, the front clients' policy, or EDGE=FILE
 * ("api->db=grpc.json"), the policy api's processes use towards db in a
 * call graph: the map's keys then name that edge ("api->db.max_retries"),
 * and a field that maps to a setting no edge has is refused, naming it. */
int swp_client_load_target(const char *arg, unsigned flags, swp_client_map *m, char *err,
                           size_t errlen);

/* Applies every entry with eng_config_set, in order. Returns 0, or -1 with
 * "NAME: SOURCE: message" in err. */
int swp_client_apply(const swp_client_map *m, const char *name, eng_config *cfg, char *err,
                     size_t errlen);

/* The same into a sweep's [scenario] (swp_sweep_scenario_set): after the
 * file's settings, before --set and the grid axes. */
struct swp_sweep;
int swp_client_apply_sweep(const swp_client_map *m, const char *name, struct swp_sweep *sw,
                           char *err, size_t errlen);

/* The mapping, one "  source = raw  ->  key = value" line per entry and a
 * "  note: ..." line per note, after a header naming the file and its kind.
 * Each line goes to out through term (without its newline, which follows
 * it): the terminal escaper, e.g. ana_term_fputs (textsafe.h), since notes
 * and the name quote text from the file. */
typedef void (*swp_client_text_fn)(FILE *f, const char *text, int keep_newlines);
void swp_client_print(const swp_client_map *m, const char *name, FILE *out,
                      swp_client_text_fn term);

/* Every key the map sets exists in the engine's settings table (a branch
 * without the limiter settings cannot apply a gRPC or Envoy map). */
int swp_client_keys_known(const swp_client_map *m);

#endif
