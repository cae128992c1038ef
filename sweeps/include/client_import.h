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

#define SWP_CLIENT_MAX_ENTRIES 24
#define SWP_CLIENT_MAX_NOTES 16
#define SWP_CLIENT_MAX_BYTES (1 << 20) /* a retry config is a few hundred bytes */

typedef enum { SWP_CLIENT_GRPC = 1, SWP_CLIENT_ENVOY } swp_client_kind;

typedef struct swp_client_entry {
  char key[48];     /* engine setting, e.g. "max_retries" */
  char value[64];   /* as eng_config_set takes it, e.g. "3" */
  char source[288]; /* the field it came from, e.g. "methodConfig[0].retryPolicy.maxAttempts",
                       or a parenthesised reason for a value the file does not state */
  char raw[64];     /* the field's value as written ("" for a derived value) */
} swp_client_entry;

typedef struct swp_client_map {
  int kind; /* swp_client_kind */
  size_t n;
  swp_client_entry e[SWP_CLIENT_MAX_ENTRIES];
  size_t n_notes; /* fields read but not modelled, caps applied, fields ignored */
  char notes[SWP_CLIENT_MAX_NOTES][480];
} swp_client_map;

const char *swp_client_kind_name(int kind); /* "gRPC service config", "Envoy retry policy" */

/* Parses a client config (JSON, or YAML for Envoy) held in buf[0..len) and
 * maps it. name is the file name used in messages. Returns 0, or -1 with
 * "NAME: path.to.field: what is wrong" (or "NAME: line L column C: ..." for
 * a syntax error) in err. Never reads outside buf; len may be 0. */
int swp_client_parse(const char *name, const char *buf, size_t len, swp_client_map *m,
                     char *err, size_t errlen);

/* Reads path (at most SWP_CLIENT_MAX_BYTES) and parses it. */
int swp_client_load(const char *path, swp_client_map *m, char *err, size_t errlen);

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
 * "  note: ..." line per note, after a header naming the file and its kind. */
void swp_client_print(const swp_client_map *m, const char *name, FILE *out);

/* Every key the map sets exists in the engine's settings table (a branch
 * without the limiter settings cannot apply a gRPC or Envoy map). */
int swp_client_keys_known(const swp_client_map *m);

#endif
