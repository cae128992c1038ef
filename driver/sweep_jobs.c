/*
 * sweep_jobs.c — a sweep's runs as the driver's jobs, and the result file's
 * writer as its sink: `run`, `run --resume`, slices, refine's appended rows
 * and verify's replicates all go through here.
 *
 * The runs are every run of the sweep, a subset (a slice; the runs a
 * resumed file lacks) or an explicit list (refine's appended rows, whose
 * (point, replicate) are theirs, not derived from the row). A run's seed
 * comes from (master seed, point, replicate) alone.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drv_internal.h"

static void sweep_job(void *user, int64_t j, drv_job *job) {
  const drv_sweep_jobs *js = user;
  const swp_sweep *sw = js->sw;
  job->no_rows = 0;
  if (js->refs) {
    job->run = js->refs[j].run;
    job->point = js->refs[j].point;
    job->replicate = js->refs[j].replicate;
    job->no_rows = js->opt->runs_summary && job->run >= swp_sweep_runs(sw) &&
                   job->replicate >= js->opt->summary_from;
  } else {
    int64_t r = js->runs ? js->runs[j] : j;
    job->run = r;
    job->point = r / sw->replicates;
    job->replicate = (int32_t)(r % sw->replicates);
  }
  job->seed = swp_run_seed(sw->seed, sw->crn, job->point, job->replicate);
}

static int sweep_config(void *user, int64_t j, const drv_job *job, eng_config *cfg, char *msg,
                        size_t msglen) {
  (void)j;
  const drv_sweep_jobs *js = user;
  return swp_sweep_point_config(js->sw, job->point, cfg, msg, msglen);
}

static int writer_record(void *user, const fmt_run_record *rec, char *err, size_t errlen) {
  drv_sweep_jobs *js = user;
  return js->out ? fmt_out_write_run(js->out, rec, err, errlen) : 0;
}

static int writer_flush(void *user, char *err, size_t errlen) {
  drv_sweep_jobs *js = user;
  return js->out ? fmt_out_flush(js->out, err, errlen) : 0;
}

int drv_sweep_jobs_init(drv_sweep_jobs *js, const swp_sweep *sw, fmt_out *out,
                        const drv_options *opt, int encode, drv_source *src, drv_sink *sink) {
  memset(js, 0, sizeof *js);
  js->sw = sw;
  js->out = out;
  js->opt = opt;
  if (opt->runs) {
    js->refs = opt->runs;
    js->n = opt->n_runs;
  } else if (opt->subset) {
    int64_t n_runs = swp_sweep_runs(sw), n = swp_subset_count(sw, opt->subset);
    js->runs = malloc((size_t)(n ? n : 1) * sizeof *js->runs);
    if (!js->runs) return -1;
    for (int64_t r = 0; r < n_runs; r++)
      if (swp_subset_has(sw, opt->subset, r)) js->runs[js->n++] = r;
  } else {
    js->n = swp_sweep_runs(sw);
  }
  *src = (drv_source){js->n, sweep_job, sweep_config, encode ? sw->rows : 0, {0}, js,
                      &sw->run_memory, sw};
  for (int w = 0; w < FMT_WIDE_COUNT && encode; w++) src->wide[w] = fmt_wide_width(sw, (fmt_wide)w);
  *sink = (drv_sink){writer_record, writer_flush, js};
  return 0;
}

void drv_sweep_jobs_free(drv_sweep_jobs *js) {
  free(js->runs);
  memset(js, 0, sizeof *js);
}

int drv_sweep_execute(const swp_sweep *sw, fmt_out *out, const drv_options *opt,
                      drv_result *res) {
  memset(res, 0, sizeof *res);
  if (!sw->checked) {
    snprintf(res->first_error, sizeof res->first_error, "the sweep was not checked");
    return -1;
  }
  drv_sweep_jobs js;
  drv_source src;
  drv_sink sink;
  if (drv_sweep_jobs_init(&js, sw, out, opt, out != NULL, &src, &sink)) {
    snprintf(res->first_error, sizeof res->first_error, "out of memory for the list of runs");
    return -1;
  }
  int rc = drv_execute(&src, &sink, opt, res);
  drv_sweep_jobs_free(&js);
  return rc;
}
