/*
 * client_doc.h — reading a client config document (client_doc.c) for the
 * mappers (client_grpc.c, client_envoy.c, called by client_import.c): the
 * import's context (its file, its messages, the path of the field being
 * read), the JSON/YAML tree, the checked readers of its fields and the
 * check that an object holds no unknown field. Internal to the sweeps
 * library.
 */
#ifndef STORMSWEEP_CLIENT_DOC_H
#define STORMSWEEP_CLIENT_DOC_H

#include <stddef.h>

#include <jansson.h>

#include "client_import.h"
#include "swp.h"

typedef struct ictx {
  char name[256]; /* the file, as given (messages are escaped where printed) */
  swp_client_map *m;
  char *err;
  size_t errlen;
  char path[256];
  size_t plen;
  int camel; /* name an absent field in lowerCamelCase (gRPC's docs) or snake_case (Envoy's) */
  unsigned flags; /* SWP_CLIENT_LENIENT */
} ictx;

/* A field the mapper knows but does not model, and what its note says
 * (NULL: "not modelled, ignored"). */
typedef struct swp__cl_known {
  const char *snake;
  const char *note;
} swp__cl_known;

size_t swp__cl_path_push(ictx *c, const char *field);
size_t swp__cl_path_index(ictx *c, size_t i);
void swp__cl_path_pop(ictx *c, size_t old);
int swp__cl_fail(ictx *c, const char *field, const char *fmt, ...) __attribute__((format(printf,
    3, 4)));
void swp__cl_note(ictx *c, const char *field, const char *fmt, ...) __attribute__((format(printf,
    3, 4)));
int swp__cl_entry(ictx *c, const char *key, const char *value, const char *field, const char *raw,
    const char *why);
int swp__cl_entry_num(ictx *c, const char *key, double v, const char *field, const char *raw,
    const char *why);
/* swp__cl_entry with src (a path saved by swp__cl_path_of) as its source. */
int swp__cl_entry_from(ictx *c, const char *key, const char *value, const char *src,
    const char *raw);
/* The current path plus field. */
void swp__cl_path_of(ictx *c, const char *field, char *out, size_t n);
/* A mask of eng_failure bits in retry_on's syntax ("rejected+shed"), or "none". */
void swp__cl_fails_text(unsigned mask, char *buf, size_t n);
/* Appends text to buf (*used bytes so far), never past n. */
void swp__cl_cat(char *buf, size_t n, size_t *used, const char *text);
json_t *swp__cl_yaml_load(ictx *c, const char *buf, size_t len);
json_t *swp__cl_json_load(ictx *c, const char *buf, size_t len);
const char *swp__cl_type_name(const json_t *v);
json_t *swp__cl_field(ictx *c, json_t *obj, const char *snake, char *shown, size_t n, int *bad);
int swp__cl_want_object(ictx *c, json_t *v, const char *shown);
int swp__cl_get_int(ictx *c, json_t *v, const char *shown, long long lo, long long hi, long long
    *out, char *raw, size_t rawlen);
int swp__cl_get_num(ictx *c, json_t *v, const char *shown, double lo, int closed, double hi,
    double *out, char *raw, size_t rawlen);
int swp__cl_get_bool(ictx *c, json_t *v, const char *shown, int *out);
int swp__cl_get_duration(ictx *c, json_t *v, const char *shown, int zero_ok, double *ms, char *raw,
    size_t rawlen);
int swp__cl_check_fields(ictx *c, json_t *obj, const char *what, const char *const *read,
    const swp__cl_known *known);

/* The two mappers (client_grpc.c, client_envoy.c): the document's root
 * into c->m. */
int swp__cl_map_grpc(ictx *c, json_t *root);
int swp__cl_map_envoy(ictx *c, json_t *root);

/* Looks a field up; sets *v (NULL when absent). Returns -1 after an error. */
#define FIELD(obj, snake, v, shown)                                                   \
  do {                                                                                \
    int bad_ = 0;                                                                     \
    (v) = swp__cl_field(c, (obj), (snake), (shown), sizeof(shown), &bad_);                    \
    if (bad_) return -1;                                                              \
  } while (0)

#endif
