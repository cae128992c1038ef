/*
 * tel.h — telemetry a team already has, read into plain arrays: a latency
 * histogram (Prometheus text exposition, OpenTelemetry JSON, or CSV) and a
 * request-rate series over time (CSV or a Prometheus range-query result).
 *
 * Every reader is bounded: a file over TEL_MAX_FILE_BYTES, a histogram over
 * TEL_MAX_BUCKETS buckets, a CSV over TEL_MAX_SAMPLES latencies or a series
 * over TEL_MAX_POINTS points is refused before it costs more memory. Errors
 * are "FILE:LINE: what is wrong" (JSON: "FILE:LINE: at PATH: what is
 * wrong", PATH the place in the document). Nothing here knows the engine: it turns files into
 * numbers, and the engine builds its samplers from them.
 */
#ifndef STORMSWEEP_TEL_H
#define STORMSWEEP_TEL_H

#include <stddef.h>

#define TEL_MAX_FILE_BYTES (64u << 20) /* 64 MiB */
#define TEL_MAX_BUCKETS 4096           /* finite bucket bounds of one histogram */
#define TEL_MAX_SERIES 10000           /* histogram series in one scrape */
#define TEL_MAX_SAMPLES 1000000        /* latencies in one CSV */
#define TEL_MAX_POINTS 1000000         /* points of one rate series */
#define TEL_MAX_LINE 65536             /* bytes in one line of a text format */
#define TEL_MAX_SELECTOR 16            /* label matchers in one series selector */

/* A latency distribution as buckets, in milliseconds. Bucket i (0 <= i < n)
 * holds count[i] values in (lo_i, le[i]], where lo_0 = lower and lo_i =
 * le[i-1]; bounds never decrease (a zero-width bucket is a point mass).
 * count[n] values lie above le[n-1] (Prometheus's +Inf bucket); sum is the
 * sum of every value in ms, NaN when the source gives none. */
typedef struct tel_hist {
  size_t n;
  double lower;
  double *le;    /* n bounds */
  double *count; /* n + 1 counts, not cumulative */
  double sum, total;
} tel_hist;

/* A rate over time: n >= 1 points (t_s[i], rate[i]) in seconds from the
 * first point (which is 0) and requests per second; times strictly grow. */
typedef struct tel_series {
  size_t n;
  double *t_s, *rate;
} tel_series;

void tel_hist_free(tel_hist *h);
void tel_series_free(tel_series *s);

/* A histogram from path, its format by content and name: JSON (a name
 * ending in .json, or a first character '{') is OpenTelemetry, a name
 * ending in .csv is CSV, anything else the Prometheus text format. series
 * (NULL or "" for "the only one") selects one series by labels:
 *   [METRIC] [{]name="value", ...[}]
 * Returns 0, or -1 with "FILE:LINE: what is wrong" in err (-2 when the
 * file is sound but several series match). */
int tel_hist_load(const char *path, const char *series, tel_hist *out, char *err, size_t errlen);

/* The readers themselves, on a buffer already read (text need not end in
 * NUL; name is what messages call the file). */
int tel_prom_text_parse(const char *name, const char *text, size_t len, const char *series,
                        tel_hist *out, char *err, size_t errlen);
int tel_otel_json_parse(const char *name, const char *text, size_t len, const char *series,
                        tel_hist *out, char *err, size_t errlen);
int tel_latency_csv_parse(const char *name, const char *text, size_t len, tel_hist *out,
                          char *err, size_t errlen);

/* A rate series from path: JSON is a Prometheus range-query result (the
 * one matrix series, or the one series selects), anything else a CSV of
 * time_s,rate rows. */
int tel_series_load(const char *path, const char *series, tel_series *out, char *err,
                    size_t errlen);
int tel_rate_csv_parse(const char *name, const char *text, size_t len, tel_series *out, char *err,
                       size_t errlen);
int tel_prom_range_parse(const char *name, const char *text, size_t len, const char *series,
                         tel_series *out, char *err, size_t errlen);

/* ---- writing (prom_write.c) ---- */

#include <stdio.h>

/* fine summed onto the nb ascending bounds (ms): a bucket of fine counts in
 * the first bound at or above its own upper bound, the rest in +Inf; sum
 * and total kept. 0, or -1 out of memory. */
int tel_hist_rebucket(const tel_hist *fine, const double *bounds_ms, size_t nb, tel_hist *out);
/* The bounds 2^(k / per_doubling) ms from the last at or below lo_ms to the
 * first at or above hi_ms (malloc'd). 0, or -1 for bad arguments, more than
 * TEL_MAX_BUCKETS bounds or no memory. */
int tel_ladder_log(double lo_ms, double hi_ms, int per_doubling, double **bounds, size_t *n);
/* h as one classic histogram series in the Prometheus text format, in
 * seconds: HELP, TYPE, cumulative _bucket{labels,le} lines, _sum, _count.
 * Label names must be valid Prometheus names; values are escaped. */
void tel_prom_write(FILE *f, const char *metric, const char *help, const char *const *names,
                    const char *const *values, size_t nlabels, const tel_hist *h);

#endif
