/*
 * client_import.c — `--client FILE`: a gRPC service config or an Envoy
 * route with its cluster's circuit breakers mapped onto engine settings
 * (client_import.h, docs/client-import.md).
 *
 * The document is read into one tree whatever its syntax, and its fields
 * by checked readers (client_doc.c); client_grpc.c and client_envoy.c map
 * the tree; this file decides which of the two a file is, reads the file
 * (a regular file only), applies the mapping and prints it.
 *
 * Which failures a client retries: each engine failure (eng_failure) has
 * the gRPC status codes and Envoy retry_on conditions that retry it, in the
 * tables of client_grpc.c and client_envoy.c; docs/client-import.md prints
 * them and says which reading was chosen where the libraries leave it open.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "client_doc.h"

/* ---- entry points --------------------------------------------------------- */

const char *swp_client_kind_name(int kind) {
  return kind == SWP_CLIENT_GRPC    ? "gRPC service config"
         : kind == SWP_CLIENT_ENVOY ? "Envoy retry policy"
                                    : "client config";
}

static int parse_root(ictx *c, json_t *root) {
  if (!json_is_object(root))
    return swp__cl_fail(c, NULL,
                        "expected an object (a gRPC service config or an Envoy retry_policy), "
                        "got %s",
                        swp__cl_type_name(root));
  char shown[96];
  int bad = 0;
  int grpc = swp__cl_field(c, root, "method_config", shown, sizeof shown, &bad) ||
             swp__cl_field(c, root, "retry_throttling", shown, sizeof shown, &bad);
  int envoy = swp__cl_field(c, root, "retry_policy", shown, sizeof shown, &bad) ||
              swp__cl_field(c, root, "circuit_breakers", shown, sizeof shown, &bad) ||
              swp__cl_field(c, root, "route", shown, sizeof shown, &bad);
  if (bad) return -1;
  if (grpc && envoy)
    return swp__cl_fail(c, NULL, "holds both gRPC (methodConfig) and Envoy (retry_policy) fields; "
                                 "give one client config");
  if (grpc) {
    c->m->kind = SWP_CLIENT_GRPC;
    c->camel = 1;
    return swp__cl_map_grpc(c, root);
  }
  if (envoy) {
    c->m->kind = SWP_CLIENT_ENVOY;
    return swp__cl_map_envoy(c, root);
  }
  return swp__cl_fail(c, NULL, "neither a gRPC service config (methodConfig) nor an Envoy route "
                               "(retry_policy)");
}

int swp_client_parse_opts(const char *name, const char *buf, size_t len, unsigned flags,
                          swp_client_map *m, char *err, size_t errlen) {
  ictx c;
  memset(m, 0, sizeof *m);
  memset(&c, 0, sizeof c);
  snprintf(c.name, sizeof c.name, "%.200s", name ? name : "client config");
  c.m = m;
  c.err = err;
  c.errlen = errlen;
  c.flags = flags;
  if (err && errlen) err[0] = 0;
  if (len > SWP_CLIENT_MAX_BYTES)
    return swp__cl_fail(&c, NULL, "larger than %d bytes: not a client retry config",
                        SWP_CLIENT_MAX_BYTES);
  size_t i = 0;
  if (len >= 3 && !memcmp(buf, "\xEF\xBB\xBF", 3)) i = 3; /* a byte-order mark */
  while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r' || buf[i] == '\n')) i++;
  if (len && memchr(buf, 0, len)) {
    if (err && errlen) snprintf(err, errlen, "%s: holds a NUL byte: not a text file", c.name);
    return -1;
  }
  /* JSON when it opens like JSON (jansson's errors are the clearer), else
   * YAML; an Envoy YAML file is a mapping, never a bare '{' document. */
  json_t *root = i < len && (buf[i] == '{' || buf[i] == '[')
                     ? swp__cl_json_load(&c, buf + i, len - i)
                     : swp__cl_yaml_load(&c, buf, len);
  if (!root) return -1;
  int rc = parse_root(&c, root);
  json_decref(root);
  return rc;
}

int swp_client_parse(const char *name, const char *buf, size_t len, swp_client_map *m,
                     char *err, size_t errlen) {
  return swp_client_parse_opts(name, buf, len, 0, m, err, errlen);
}

/* Opens path for reading without blocking (a FIFO would wait for a writer)
 * and reads it if it is a regular file (a link to one is fine: reading
 * through it writes nothing). */
int swp_client_load_opts(const char *path, unsigned flags, swp_client_map *m, char *err,
                         size_t errlen) {
  memset(m, 0, sizeof *m);
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    snprintf(err, errlen, "%.200s: cannot read: %s", path, strerror(errno));
    return -1;
  }
  struct stat st;
  if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
    const char *what = S_ISDIR(st.st_mode)    ? "a directory"
                       : S_ISFIFO(st.st_mode) ? "a FIFO"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "a device";
    snprintf(err, errlen, "%.200s: not a regular file (%s): a client config is read only from a "
                          "file", path, what);
    close(fd);
    return -1;
  }
  size_t cap = SWP_CLIENT_MAX_BYTES + 1, n = 0;
  char *buf = malloc(cap);
  if (!buf) {
    close(fd);
    snprintf(err, errlen, "%.200s: out of memory", path);
    return -1;
  }
  while (n < cap) {
    ssize_t got = read(fd, buf + n, cap - n);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      snprintf(err, errlen, "%.200s: cannot read: %s", path, strerror(errno));
      free(buf);
      close(fd);
      return -1;
    }
    if (!got) break;
    n += (size_t)got;
  }
  close(fd);
  int rc = swp_client_parse_opts(path, buf, n, flags, m, err, errlen);
  free(buf);
  return rc;
}

int swp_client_load(const char *path, swp_client_map *m, char *err, size_t errlen) {
  return swp_client_load_opts(path, 0, m, err, errlen);
}

/* "A->B=FILE": the edge A->B into edge, and FILE; else "" and arg itself. */
static const char *edge_target(const char *arg, char *edge, size_t len) {
  const char *eq = strchr(arg, '='), *arrow = strstr(arg, "->");
  edge[0] = 0;
  if (!eq || !arrow || arrow > eq || arrow == arg || arrow + 2 == eq || (size_t)(eq - arg) >= len)
    return arg;
  for (const char *p = arg; p < eq; p++)
    if (!(isalnum((unsigned char)*p) || *p == '_' || (p == arrow) || (p == arrow + 1)))
      return arg;
  memcpy(edge, arg, (size_t)(eq - arg));
  edge[eq - arg] = 0;
  return eq + 1;
}

int swp_client_load_target(const char *arg, unsigned flags, swp_client_map *m, char *err,
                           size_t errlen) {
  char edge[80];
  const char *path = edge_target(arg, edge, sizeof edge);
  if (swp_client_load_opts(path, flags, m, err, errlen)) return -1;
  for (size_t i = 0; edge[0] && i < m->n; i++) {
    swp_client_entry *e = &m->e[i];
    char key[sizeof e->key];
    snprintf(key, sizeof key, "%s.%s", edge, e->key);
    if (!eng_settings_find(key)) {
      snprintf(err, errlen,
               "%.200s: %s maps to %s = %s, which a call edge does not have "
               "(docs/call-graphs.md lists what an edge has)",
               path, e->source, e->key, e->value);
      return -1;
    }
    memcpy(e->key, key, sizeof key);
  }
  return 0;
}

int swp_client_apply(const swp_client_map *m, const char *name, eng_config *cfg, char *err,
                     size_t errlen) {
  for (size_t i = 0; i < m->n; i++) {
    const swp_client_entry *e = &m->e[i];
    char msg[384];
    if (!eng_settings_find(e->key)) {
      snprintf(err, errlen,
               "%.200s: %s: this build has no setting '%s' (it needs the client limiter settings)",
               name, e->source, e->key);
      return -1;
    }
    if (eng_config_set(cfg, e->key, e->value, msg, sizeof msg)) {
      snprintf(err, errlen, "%.200s: %s: %s", name, e->source, msg);
      return -1;
    }
  }
  return 0;
}

int swp_client_apply_sweep(const swp_client_map *m, const char *name, swp_sweep *sw, char *err,
                           size_t errlen) {
  for (size_t i = 0; i < m->n; i++) {
    const swp_client_entry *e = &m->e[i];
    char msg[512];
    if (!eng_settings_find(e->key)) {
      snprintf(err, errlen,
               "%.200s: %s: this build has no setting '%s' (it needs the client limiter settings)",
               name, e->source, e->key);
      return -1;
    }
    if (swp_sweep_scenario_set(sw, e->key, e->value, msg, sizeof msg)) {
      snprintf(err, errlen, "%.200s: %s: %s", name, e->source, msg);
      return -1;
    }
  }
  return 0;
}

int swp_client_keys_known(const swp_client_map *m) {
  for (size_t i = 0; i < m->n; i++)
    if (!eng_settings_find(m->e[i].key)) return 0;
  return 1;
}

static void print_line(FILE *out, swp_client_text_fn term, const char *line) {
  term(out, line, 0);
  fputc('\n', out);
}

void swp_client_print(const swp_client_map *m, const char *name, FILE *out,
                      swp_client_text_fn term) {
  char line[1024];
  snprintf(line, sizeof line, "--client %.200s (%s): source field -> setting", name,
           swp_client_kind_name(m->kind));
  print_line(out, term, line);
  for (size_t i = 0; i < m->n; i++) {
    const swp_client_entry *e = &m->e[i];
    char lhs[480];
    if (e->raw[0])
      snprintf(lhs, sizeof lhs, "%s = %s", e->source, e->raw);
    else
      snprintf(lhs, sizeof lhs, "%s", e->source);
    snprintf(line, sizeof line, "  %-56s -> %s = %s", lhs, e->key, e->value);
    print_line(out, term, line);
  }
  for (size_t i = 0; i < m->n_notes; i++) {
    snprintf(line, sizeof line, "  note: %s", m->notes[i]);
    print_line(out, term, line);
  }
  if (m->notes_dropped) {
    snprintf(line, sizeof line, "  note: %zu more notes not shown", m->notes_dropped);
    print_line(out, term, line);
  }
}
