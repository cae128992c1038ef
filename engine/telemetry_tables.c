/*
 * telemetry_tables.c — the process-wide store of tables read from
 * telemetry files (telemetry_tables.h): the readers of telemetry/ give the
 * numbers, this builds the empirical sampler and the rate profile once per
 * (file, series) under a lock, and keeps them for the process's life (a
 * store of at most MAX_TABLES entries; they are reachable, not leaked).
 */
#include "telemetry_tables.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tel.h"

#define MAX_TABLES 64

typedef struct entry {
  char *path, *series;
  int rate; /* 0: service table, 1: rate profile */
  eng_empirical emp;
  eng_rate_profile prof;
} entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry *store[MAX_TABLES];
static size_t n_store;

static entry *find(const char *path, const char *series, int rate) {
  for (size_t i = 0; i < n_store; i++)
    if (store[i]->rate == rate && !strcmp(store[i]->path, path) &&
        !strcmp(store[i]->series, series))
      return store[i];
  return NULL;
}

static entry *new_entry(const char *path, const char *series, int rate, char *err,
                        size_t errlen) {
  if (n_store == MAX_TABLES) {
    snprintf(err, errlen, "%s: more than %d telemetry files in one process", path, MAX_TABLES);
    return NULL;
  }
  entry *e = calloc(1, sizeof *e);
  if (e) e->path = strdup(path), e->series = strdup(series), e->rate = rate;
  if (!e || !e->path || !e->series) {
    if (e) free(e->path), free(e->series);
    free(e);
    snprintf(err, errlen, "%s: out of memory", path);
    return NULL;
  }
  return e;
}

int eng_tables_service(const char *path, const char *series, const eng_empirical **out, char *err,
                       size_t errlen) {
  if (!series) series = "";
  pthread_mutex_lock(&lock);
  int rc = 0;
  entry *e = find(path, series, 0);
  if (!e) {
    tel_hist h;
    rc = tel_hist_load(path, series, &h, err, errlen);
    if (rc == 0) {
      e = new_entry(path, series, 0, err, errlen);
      if (!e) {
        rc = -1;
      } else if (eng_empirical_build(&e->emp, h.n, h.lower, h.le, h.count, h.sum)) {
        snprintf(err, errlen, "%s: out of memory", path);
        free(e->path), free(e->series), free(e);
        e = NULL;
        rc = -1;
      } else {
        store[n_store++] = e;
      }
      tel_hist_free(&h);
    }
  }
  pthread_mutex_unlock(&lock);
  if (rc == 0) *out = &e->emp;
  return rc;
}

int eng_tables_rate(const char *path, const char *series, const eng_rate_profile **out, char *err,
                    size_t errlen) {
  if (!series) series = "";
  pthread_mutex_lock(&lock);
  int rc = 0;
  entry *e = find(path, series, 1);
  if (!e) {
    tel_series s;
    rc = tel_series_load(path, series, &s, err, errlen);
    if (rc == 0) {
      e = new_entry(path, series, 1, err, errlen);
      if (!e) {
        rc = -1;
      } else {
        eng_rate_profile *p = &e->prof;
        p->n = s.n;
        p->t_ms = s.t_s; /* taken over, scaled to ms */
        p->rps = s.rate;
        double area = 0;
        for (size_t i = 0; i < s.n; i++) {
          p->t_ms[i] *= 1000;
          if (p->rps[i] > p->peak_rps) p->peak_rps = p->rps[i];
          if (i) area += 0.5 * (p->rps[i] + p->rps[i - 1]) * (p->t_ms[i] - p->t_ms[i - 1]);
        }
        p->end_ms = p->t_ms[s.n - 1];
        p->mean_rps = p->end_ms > 0 ? area / p->end_ms : p->rps[0];
        store[n_store++] = e;
        s.t_s = s.rate = NULL;
      }
      tel_series_free(&s);
    }
  }
  pthread_mutex_unlock(&lock);
  if (rc == 0) *out = &e->prof;
  return rc;
}
