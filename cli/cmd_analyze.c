/*
 * cmd_analyze.c — the `analyze`, `recommend` and `report` commands: option
 * parsing, help text and exit codes around the analysis library.
 *
 * Exit status (all three): 0 success — including "no point qualifies", which
 * is an answer, not a failure; 1 a failure while working (writing the CSV,
 * /analysis or the report); 2 bad usage or an unusable input file (not
 * HDF5, not a stormsweep result, a newer format_version, a /refine record
 * that disagrees with the runs), always with a one-line message on stderr.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ana.h"
#include "cli.h"
#include "fmt_outfile.h"
#include "refine_eval.h"
#include "services.h"
#include "textsafe.h"


/* ------------------------------------------------------------------------ */
/* Option parsing                                                            */
/* ------------------------------------------------------------------------ */

typedef struct cli_opts {
  const char *cmd;
  const char *file;
  double slo_ms;          /* NaN = the sweep's own slo_ms (1500 when unknown) */
  double max_meta, min_pass;
  ana_method method;
  const char *csv;
  int json, write, help, force;
  const char *out_dir;
  const char *x_axis, *y_axis, *points;
  int given_slo, given_meta, given_pass; /* a refined file: the others are its design's */
  const char *prefer[32];                /* recommend --prefer, in order */
  size_t n_prefer;
  ana_prefer prefs[32];
  int no_headroom, threads;
  eng_slo user_slo; /* --slo: terms on what users see (none: the queue check) */
  long long headroom_runs;
} cli_opts;

/* Parses the options every analysis command shares plus the ones allowed
 * for cmd (flags: which extras). Returns 0, or 2 after printing a message. */
enum { OPT_CSV = 1, OPT_JSON = 2, OPT_WRITE = 4, OPT_INTERVAL = 8, OPT_REPORT = 16,
       OPT_RECOMMEND = 32 };

static int opts_parse(int argc, char **argv, unsigned allowed, cli_opts *o) {
  enum { O_SLO = 256, O_USER_SLO, O_META, O_PASS, O_INTERVAL, O_CSV, O_JSON, O_WRITE, O_X, O_Y, O_POINTS,
         O_PREFER, O_NO_HEADROOM, O_HEADROOM_RUNS };
  static const struct option all[] = {
      {"slo-ms", required_argument, NULL, O_SLO}, {"slo", required_argument, NULL, O_USER_SLO},   {"max-metastable", required_argument, NULL, O_META},
      {"min-pass", required_argument, NULL, O_PASS}, {"interval", required_argument, NULL, O_INTERVAL},
      {"csv", required_argument, NULL, O_CSV},      {"json", no_argument, NULL, O_JSON},
      {"write", no_argument, NULL, O_WRITE},        {"output", required_argument, NULL, 'o'},
      {"x", required_argument, NULL, O_X},          {"y", required_argument, NULL, O_Y},
      {"points", required_argument, NULL, O_POINTS}, {"force", no_argument, NULL, 'f'},
      {"prefer", required_argument, NULL, O_PREFER},
      {"no-headroom", no_argument, NULL, O_NO_HEADROOM},
      {"headroom-runs", required_argument, NULL, O_HEADROOM_RUNS},
      {"threads", required_argument, NULL, 'j'},
      {"help", no_argument, NULL, 'h'}};
  /* Only the options this command takes are known to it. */
  struct option opts[sizeof all / sizeof all[0] + 1];
  size_t n = 0;
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
    int v = all[i].val;
    int ok = v == O_SLO || v == O_USER_SLO || v == O_META || v == O_PASS || v == 'h' ||
             (v == O_INTERVAL && (allowed & OPT_INTERVAL)) || (v == O_CSV && (allowed & OPT_CSV)) ||
             (v == O_JSON && (allowed & OPT_JSON)) || (v == O_WRITE && (allowed & OPT_WRITE)) ||
             (v == 'f' && (allowed & OPT_CSV)) ||
             ((v == 'o' || v == O_X || v == O_Y || v == O_POINTS) && (allowed & OPT_REPORT)) ||
             ((v == O_PREFER || v == O_NO_HEADROOM || v == O_HEADROOM_RUNS || v == 'j') &&
              (allowed & OPT_RECOMMEND));
    if (ok) opts[n++] = all[i];
  }
  opts[n] = (struct option){NULL, 0, NULL, 0};
  int c;
  cli_opts_begin(argc, argv);
  const char *shortopts = allowed & OPT_REPORT      ? ":o:h"
                          : allowed & OPT_CSV       ? ":fh"
                          : allowed & OPT_RECOMMEND ? ":j:h"
                                                    : ":h";
  while ((c = cli_getopt(o->cmd, argc, argv, shortopts, opts)) != -1) {
    switch (c) {
    case O_SLO:
      if (cli_parse_number(o->cmd, "--slo-ms", optarg, 0, 1e12, &o->slo_ms)) return 2;
      o->given_slo = 1;
      break;
    case O_USER_SLO: {
      char err[512];
      if (ana_slo_parse(optarg, &o->user_slo, err, sizeof err)) {
        fprintf(stderr, "stormsweep %s: %s\n", o->cmd, err);
        return 2;
      }
      break;
    }
    case O_META:
      if (cli_parse_prob(o->cmd, "--max-metastable", optarg, &o->max_meta)) return 2;
      o->given_meta = 1;
      break;
    case O_PASS:
      if (cli_parse_prob(o->cmd, "--min-pass", optarg, &o->min_pass)) return 2;
      o->given_pass = 1;
      break;
    case O_PREFER:
      if (o->n_prefer == sizeof o->prefer / sizeof o->prefer[0]) {
        cli_error(o->cmd, "--prefer: at most %zu preferences", o->n_prefer);
        return 2;
      }
      o->prefer[o->n_prefer++] = optarg;
      break;
    case O_NO_HEADROOM: o->no_headroom = 1; break;
    case O_HEADROOM_RUNS:
      if (cli_parse_count(o->cmd, "--headroom-runs", optarg, 32, 100000, &o->headroom_runs))
        return 2;
      break;
    case 'j':
      if (cli_parse_threads(o->cmd, "-j", optarg, &o->threads)) return 2;
      break;
    case O_INTERVAL:
      if (!strcmp(optarg, "wilson")) {
        o->method = ANA_INTERVAL_WILSON;
      } else if (!strcmp(optarg, "exact")) {
        o->method = ANA_INTERVAL_EXACT;
      } else {
        cli_error(o->cmd, "--interval: expected 'wilson' or 'exact', got '%s'", optarg);
        return 2;
      }
      break;
    case O_CSV: o->csv = optarg; break;
    case 'f': o->force = 1; break;
    case O_JSON: o->json = 1; break;
    case O_WRITE: o->write = 1; break;
    case 'o': o->out_dir = optarg; break;
    case O_X: o->x_axis = optarg; break;
    case O_Y: o->y_axis = optarg; break;
    case O_POINTS: o->points = optarg; break;
    case 'h': o->help = 1; return 0;
    default: return 2;
    }
  }
  if (optind < argc) o->file = argv[optind++];
  if (optind < argc) {
    cli_error(o->cmd, "unexpected argument '%s' (one result file only)", argv[optind]);
    return 2;
  }
  if (!o->file) {
    cli_error(o->cmd, "missing the result FILE (see 'stormsweep %s --help')", o->cmd);
    return 2;
  }
  return 0;
}

static void opts_init(cli_opts *o, const char *cmd) {
  memset(o, 0, sizeof *o);
  o->cmd = cmd;
  o->slo_ms = NAN;
  o->max_meta = ANA_DEFAULT_MAX_META;
  o->min_pass = ANA_DEFAULT_MIN_PASS;
  o->method = ANA_INTERVAL_WILSON;
  o->headroom_runs = 256;
}

static void file_error(const cli_opts *o, const char *err) {
  /* The message may quote the file's own strings. */
  fprintf(stderr, "stormsweep %s: ", o->cmd);
  ana_term_fputs(stderr, err, 0);
  fputc('\n', stderr);
}

/* Loads the file, recomputes a refined file's verdict from its runs (*v,
 * with *refined = 1; a /refine that disagrees with them is a damaged file)
 * and computes the summary. Returns 0, or an exit status. */
static int load(cli_opts *o, fmt_results *r, ana_summary *s, ana_refined *v,
                int *refined) {
  char err[2048];
  *refined = 0;
  if (fmt_results_read(r, o->file, err, sizeof err) != 0) {
    file_error(o, err);
    return 2;
  }
  /* A refined file's runs are judged by the SLO terms it was refined by
   * unless --slo asks another question (never "proven" then: recommend.c);
   * judged before the verdict is recomputed, which needs them. */
  eng_slo terms;
  int vrc = ana_refined_user_slo(o->file, &terms, err, sizeof err);
  if (vrc == 0 && !o->user_slo.n) o->user_slo = terms;
  if (vrc >= 0 && ana_judge_user_slo(r, &o->user_slo, err, sizeof err)) vrc = -1;
  if (vrc >= 0) vrc = ana_refined_load(v, r, err, sizeof err);
  if (vrc < 0) {
    file_error(o, err);
    fmt_results_free(r);
    return 2;
  }
  *refined = vrc == 0;
  /* A refined file answers its own question unless asked another: targets
   * not given are its design's (a stricter one given is never "proven"). */
  if (*refined) {
    if (!o->given_pass) o->min_pass = v->design.min_pass;
    if (!o->given_meta) o->max_meta = v->design.max_meta;
  }
  /* --prefer names values of this file's axes: checked now, or refused. */
  for (size_t i = 0; i < o->n_prefer; i++)
    if (ana_prefer_parse(r, o->prefer[i], &o->prefs[i], err, sizeof err)) {
      file_error(o, err);
      if (*refined) ana_refined_free(v);
      *refined = 0;
      fmt_results_free(r);
      return 2;
    }
  double slo = !isnan(o->slo_ms) ? o->slo_ms : !isnan(r->slo_ms) ? r->slo_ms : ANA_DEFAULT_SLO_MS;
  if (ana_summary_compute(s, r, slo, o->method, err, sizeof err) != 0) {
    fprintf(stderr, "stormsweep %s: %s\n", o->cmd, err);
    if (*refined) ana_refined_free(v);
    *refined = 0;
    fmt_results_free(r);
    return 1;
  }
  return 0;
}

/* Everything printed from the file (and its path) goes through
 * ana_term_fputs: a file must not be able to move the cursor or rewrite a
 * line of the verdict on the screen. */
static void file_header(FILE *out, const fmt_results *r) {
  ana_term_fputs(out, r->path, 0);
  /* (runs SLO terms could not judge were left out of r, but finished) */
  fprintf(out, ": %zu grid points, %zu finished runs", r->n_points, r->n_runs + r->n_unjudged);
  if (r->n_skipped)
    fprintf(out, " (%zu rows not written yet: the sweep is incomplete)", r->n_skipped);
  else if (r->complete == 0)
    fprintf(out, " (the file is marked incomplete)");
  fprintf(out, "; format_version %d", r->format_version);
  if (r->tool_version) {
    fprintf(out, ", written by stormsweep ");
    ana_term_fputs(out, r->tool_version, 0);
  }
  if (strcmp(r->record, "full") || r->row_ticks != 1) { /* what /ticks holds, when not every tick */
    fprintf(out, "; record = ");
    ana_term_fputs(out, r->record, 0);
  }
  if (r->services) { /* the file holds the front's figures only (docs/call-graphs.md) */
    fprintf(out, "\na call graph of %d services: every figure below is the front service ",
            (int)r->services);
    ana_term_fputs(out, r->front, 0);
    fprintf(out, "'s (per service: /ticks/service_summary, docs/call-graphs.md)");
  }
  fprintf(out, "\n\n");
}

static ana_answer_opts answer_opts(const cli_opts *o) {
  return (ana_answer_opts){o->given_slo, o->prefs, o->n_prefer};
}

/* The answer (a refined file's proof only for the targets it tested, and
 * why); *chosen: the point it explains, or -1. */
static char *recommendation_make(const cli_opts *o, const fmt_results *r, const ana_summary *s,
                                 const ana_refined *v, ana_reco *rec, long *chosen) {
  ana_reco_opts ro = {o->max_meta, o->min_pass};
  ana_answer_opts ao = answer_opts(o);
  *chosen = -1;
  if (ana_recommend(rec, r, s, &ro) != 0) return NULL;
  return ana_reco_answer(rec, r, s, &ro, &ao, v, chosen);
}

/* ------------------------------------------------------------------------ */
/* analyze                                                                   */
/* ------------------------------------------------------------------------ */

static void analyze_help(void) {
  printf(
      "usage: stormsweep analyze FILE [--slo-ms MS] [--slo TERMS] [--interval wilson|exact]\n"
      "                          [--csv OUT] [--json] [--write] [--max-metastable P]\n"
      "                          [--min-pass P]\n\n"
      "Summarises a result file written by 'stormsweep run': one row per grid point, then\n"
      "the effect of each axis, then the tuning recommendation (as 'recommend' prints it).\n\n"
      "Per point: runs and outcome counts (recovered/slow/metastable/collapsed); P(bad) (bad =\n"
      "metastable, collapsed or undetermined) and\n"
      "P(pass SLO) with 95%% confidence intervals; recovery time after fault clearance as\n"
      "Kaplan-Meier quantiles p50/p90/p99, where runs that did not recover are censored at\n"
      "the horizon (\">T\" = the quantile is not reached within the T ms the run had after\n"
      "clearance); mean retry amplification (attempts per request); mean goodput during\n"
      "the faults and after clearance, relative to baseline. Rows are sorted best first:\n"
      "lowest P(bad), then highest P(pass), then lowest p90.\n\n"
      "A run passes the SLO when it recovered and its recovery_ms <= the SLO; this is\n"
      "recomputed from recovery_ms, so --slo-ms may differ from the sweep's own.\n\n"
      "Effects: for each axis, runs are pooled by that axis's value over all other axes;\n"
      "effect = max - min of the pooled probability across the values, shown for P(pass),\n"
      "P(recovered), P(slow) and P(bad), with every outcome's count; axes are ranked\n"
      "by the larger of the effects on P(bad) and P(pass).\n\n"
      "options:\n"
      "  --slo-ms MS          recovery SLO in ms (default: the sweep's slo_ms, 1500 in the\n"
      "                       seed study)\n"
      "  --slo TERMS          judge runs by what their users saw: a run passes when every\n"
      "                       term holds again, for recovery_hold_ms, within the SLO in ms\n"
      "                       after clearance, e.g. \"p99<=200ms,errors<=0.1%%\" (p50, p90,\n"
      "                       p99, p99.9 and errors; judged from the stored per-window series)\n"
      "  --interval METHOD    intervals shown: wilson (Wilson score, default) or exact\n"
      "                       (Clopper-Pearson); CSV, JSON and /analysis carry both\n"
      "  --csv OUT            also write the per-point table to OUT as CSV (\"-\": standard\n"
      "                       output); an existing OUT is replaced only with --force\n"
      "  -f, --force          replace an existing --csv OUT\n"
      "  --json               print everything as one JSON object instead of tables\n"
      "                       (NaN and infinity are null; a null recovery quantile means\n"
      "                       not reached)\n"
      "  --write              store the results under /analysis in FILE (replacing an\n"
      "                       earlier /analysis; the only option that modifies FILE)\n"
      "  --max-metastable P, --min-pass P\n"
      "                       targets of the recommendation (see 'recommend --help')\n\n"
      "exit status: 0 ok, 1 failure while writing, 2 bad usage or unusable FILE\n");
}

int cmd_analyze(int argc, char **argv) {
  cli_opts o;
  opts_init(&o, "analyze");
  int rc = opts_parse(argc, argv, OPT_CSV | OPT_JSON | OPT_WRITE | OPT_INTERVAL, &o);
  if (rc) return rc;
  if (o.help) {
    analyze_help();
    return 0;
  }
  fmt_results r;
  ana_summary s;
  ana_refined v;
  int refined;
  if ((rc = load(&o, &r, &s, &v, &refined)) != 0) return rc;
  ana_reco rec;
  memset(&rec, 0, sizeof rec);
  long chosen;
  char *text = recommendation_make(&o, &r, &s, refined ? &v : NULL, &rec, &chosen);
  char err[1024];
  ana_services svc;
  if (ana_services_compute(&svc, &r, &s, err, sizeof err)) {
    /* the front's figures stand without them */
    fprintf(stderr, "stormsweep analyze: warning: no per-service figures: %s\n", err);
    memset(&svc, 0, sizeof svc);
  }
  if (o.json) {
    json_t *root = ana_summary_json(&r, &s, text);
    if (root && r.services) json_object_set_new(root, "services", ana_services_json(&r, &s, &svc));
    if (root) ana_json_print(stdout, root, 0);
  } else {
    file_header(stdout, &r);
    ana_summary_print_table(stdout, &r, &s);
    ana_services_print_table(stdout, &r, &s, &svc);
    ana_summary_print_effects(stdout, &r, &s);
    printf("\nRecommendation:\n");
    ana_term_fputs(stdout, text ? text : "(out of memory)\n", 1);
  }
  fmt_outfile csv;
  FILE *csv_f = o.csv ? cli_out_open(&csv, "analyze", "--csv", o.csv, o.force) : NULL;
  if (csv_f) ana_summary_print_csv(csv_f, &r, &s);
  if (o.csv && (!csv_f || cli_out_close(&csv, "analyze", "--csv"))) rc = 1;
  if (!rc && o.write) {
    if (ana_analysis_store(o.file, &r, &s, text, err, sizeof err) != 0) {
      fprintf(stderr, "stormsweep analyze: %s\n", err);
      rc = 1;
    } else if (!o.json) {
      printf("\nWrote /analysis to %s.\n", o.file);
    }
  }
  free(text);
  ana_services_free(&svc);
  ana_reco_free(&rec);
  if (refined) ana_refined_free(&v);
  ana_summary_free(&s);
  fmt_results_free(&r);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* recommend                                                                 */
/* ------------------------------------------------------------------------ */

static void recommend_help(void) {
  printf(
      "usage: stormsweep recommend FILE [--max-metastable P] [--min-pass P] [--slo-ms MS]\n"
      "                          [--slo TERMS]\n"
      "                                 [--prefer KEY=VALUE]... [--no-headroom]\n"
      "                                 [--headroom-runs N] [-j N]\n\n"
      "Names the cheapest grid point that provably meets the targets, with its evidence\n"
      "and the runner-up.\n\n"
      "A point qualifies when, with two-sided 95%% Clopper-Pearson (exact) intervals,\n"
      "  the upper bound of P(bad)        <= --max-metastable (default %g; bad = metastable,\n"
      "                                     collapsed or undetermined) and\n"
      "  the lower bound of P(pass SLO)   >= --min-pass       (default %g).\n"
      "Qualifying points are ranked by cost, in order: (1) mean retry amplification\n"
      "(attempts per request, rounded to 0.01), (2) the most goodput during the fault\n"
      "(mean goodput_during, a share of baseline, rounded to 0.01), (3) vnodes when it is\n"
      "an axis (ring memory), (4) point id.\n\n"
      "When no point qualifies it says so, splits the rejected points into those the data\n"
      "refutes (interval wholly outside a target) and those merely not proven, names the\n"
      "closest point (highest lower bound of P(pass), then lowest upper bound of\n"
      "P(bad), then cost) and by how much it misses, and lists the next candidates.\n"
      "Exact bounds need enough runs: 20 runs of 20 passing only show P(pass) >= 0.832, and\n"
      "the default targets need at least %lld runs per point; the message says so.\n\n"
      "A file 'refine' worked on: targets not given are its design's, and its proof is\n"
      "printed only when the design is at least as strict as every target asked (SLO no\n"
      "longer, --min-pass no higher, --max-metastable no lower). Stricter targets are judged\n"
      "again from all its runs as above and never called proven (\"meets the targets on the\n"
      "evidence, not proven\"), with the refine command that would prove them.\n\n"
      "Then why: the cost rule; the safe set (every point whose runs meet the targets on\n"
      "the evidence: none collapsed, observed P(pass) and P(bad) within them; not a\n"
      "proof) summarised per axis; at the chosen point, which axes change the answer when\n"
      "changed alone and which do not; a warning when a value that matters is the smallest\n"
      "or largest swept; ties on cost. Last the headroom: fresh runs of the chosen setting\n"
      "(not stored) and the boundary search locate the load (and a swept surge_factor or\n"
      "hot_key_share) where P(pass) falls below --min-pass, with a 95%% interval.\n\n"
      "options:\n"
      "  --max-metastable P   highest acceptable upper bound of P(bad), in [0, 1]\n"
      "  --min-pass P         lowest acceptable lower bound of P(pass), in [0, 1]\n"
      "  --slo-ms MS          recovery SLO in ms (default: the sweep's slo_ms, 1500 in the\n"
      "                       seed study)\n"
      "  --slo TERMS          judge runs by what their users saw: a run passes when every\n"
      "                       term holds again, for recovery_hold_ms, within the SLO in ms\n"
      "                       after clearance, e.g. \"p99<=200ms,errors<=0.1%%\" (p50, p90,\n"
      "                       p99, p99.9 and errors; judged from the stored per-window series)\n"
      "  --prefer KEY=VALUE   among the safe set, prefer settings with this value of axis\n"
      "                       KEY (repeatable, most important first; then the cost rule)\n"
      "  --no-headroom        skip the headroom search (no runs at all)\n"
      "  --headroom-runs N    runs per headroom search, at most (default 256, >= 32)\n"
      "  -j, --threads N      threads for the headroom runs\n\n"
      "exit status: 0 whether or not a point qualifies, 2 bad usage or unusable FILE,\n"
      "130/143 interrupted during the headroom runs\n",
      ANA_DEFAULT_MAX_META, ANA_DEFAULT_MIN_PASS,
      (long long)ana_runs_needed(ANA_DEFAULT_MAX_META, ANA_DEFAULT_MIN_PASS, ANA_CONF));
}

int cmd_recommend(int argc, char **argv) {
  cli_opts o;
  opts_init(&o, "recommend");
  int rc = opts_parse(argc, argv, OPT_RECOMMEND, &o);
  if (rc) return rc;
  if (o.help) {
    recommend_help();
    return 0;
  }
  fmt_results r;
  ana_summary s;
  ana_refined v;
  int refined;
  if ((rc = load(&o, &r, &s, &v, &refined)) != 0) return rc;
  ana_reco rec;
  memset(&rec, 0, sizeof rec);
  long chosen;
  char *text = recommendation_make(&o, &r, &s, refined ? &v : NULL, &rec, &chosen);
  if (!text) {
    fprintf(stderr, "stormsweep recommend: out of memory\n");
    rc = 1;
  } else {
    file_header(stdout, &r);
    ana_term_fputs(stdout, text, 1);
    fflush(stdout);
    if (chosen >= 0 && !o.no_headroom) {
      int hrc = cli_headroom_print(stdout, &r, s.points[chosen].index, o.min_pass, s.slo_ms,
                                   o.headroom_runs, o.threads);
      if (hrc) rc = hrc;
    }
  }
  free(text);
  ana_reco_free(&rec);
  if (refined) ana_refined_free(&v);
  ana_summary_free(&s);
  fmt_results_free(&r);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* report                                                                    */
/* ------------------------------------------------------------------------ */

static void report_help(void) {
  printf(
      "usage: stormsweep report FILE -o DIR [--x AXIS --y AXIS] [--points ID,ID,...]\n"
      "                         [--slo-ms MS] [--slo TERMS] [--max-metastable P]\n"
      "                         [--min-pass P]\n\n"
      "Writes plots (PNG and SVG, drawn by gnuplot) and DIR/index.html showing them with\n"
      "the per-point table, the parameter effects and the recommendation:\n"
      "  heatmap_pass, heatmap_recovered, heatmap_bad\n"
      "                         P(pass SLO), P(recovered) and P(bad) over two axes,\n"
      "                         other axes pooled (default: the two axes with the largest\n"
      "                         effect); each cell labelled with its outcomes; on the\n"
      "                         P(bad) map cells where most runs were slow are hatched\n"
      "  recovery_survival      Kaplan-Meier curves: fraction of runs not yet recovered vs\n"
      "                         time after fault clearance, for the chosen points\n"
      "  recovery_histogram     histogram of recovery times of the chosen points\n"
      "  queue_depth            total queue depth over time: median and 5-95%% band across\n"
      "                         replicates, per chosen point\n"
      "  open_breakers, goodput the same for /ticks/open_breakers and /ticks/successes\n"
      "Curves are averaged over bins of ticks (at most 1000 points per curve) per replicate\n"
      "before the quantiles across replicates are taken. Each point's rows are read one\n"
      "run at a time, so memory does not grow with the file.\n\n"
      "options:\n"
      "  -o, --output DIR     directory to write: built next to it and renamed into\n"
      "                       place; an existing DIR must be an earlier report (or\n"
      "                       empty), yours, not writable by others, not a link\n"
      "  --x AXIS, --y AXIS   axes of the heat map\n"
      "  --points ID,...      point ids for the curves (default: the recommended - or\n"
      "                       closest - point and the worst point)\n"
      "  --slo-ms, --max-metastable, --min-pass   as for 'recommend'\n\n"
      "needs gnuplot on PATH. exit status: 0 ok, 1 failure while writing or plotting\n"
      "(or an unsafe DIR), 2 bad usage or unusable FILE, 130/143 interrupted by\n"
      "SIGINT/SIGTERM (gnuplot stopped, an earlier report left as it was)\n");
}

static long axis_lookup(const fmt_results *r, const char *name) {
  for (size_t a = 0; a < r->n_axes; a++)
    if (!strcmp(r->axes[a], name)) return (long)a;
  return -1;
}

static void axes_list(const fmt_results *r, char *buf, size_t len) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t a = 0; a < r->n_axes && used < len; a++) {
    char name[256];
    ana_term_text(name, sizeof name, r->axes[a]);
    int w = snprintf(buf + used, len - used, "%s%s", a ? ", " : "", name);
    if (w < 0) break;
    used += (size_t)w;
  }
  if (!r->n_axes) snprintf(buf, len, "none");
}

/* Parses "3,17,42" into point ids that exist in r. Returns the count, or -1
 * after printing a message. */
static long points_parse(const cli_opts *o, const fmt_results *r, int64_t *ids, size_t cap) {
  size_t n = 0;
  const char *p = o->points;
  while (*p) {
    char *end = NULL;
    errno = 0;
    long long v = strtoll(p, &end, 10);
    if (end == p || errno || (*end && *end != ',')) {
      fprintf(stderr, "stormsweep report: --points: expected point ids like 3,17, got '%s'\n",
              o->points);
      return -1;
    }
    if (fmt_results_point_index(r, v) < 0) {
      fprintf(stderr, "stormsweep report: --points: %s has no point %lld (ids 0..%zu)\n",
              r->path, v, r->n_points ? r->n_points - 1 : 0);
      return -1;
    }
    if (n == cap) {
      fprintf(stderr, "stormsweep report: --points: at most %zu points\n", cap);
      return -1;
    }
    ids[n++] = v;
    p = *end ? end + 1 : end;
  }
  if (n == 0) {
    fprintf(stderr, "stormsweep report: --points: no point ids given\n");
    return -1;
  }
  return (long)n;
}

int cmd_report(int argc, char **argv) {
  cli_opts o;
  opts_init(&o, "report");
  int rc = opts_parse(argc, argv, OPT_REPORT, &o);
  if (rc) return rc;
  if (o.help) {
    report_help();
    return 0;
  }
  if (!o.out_dir) {
    fprintf(stderr, "stormsweep report: missing -o DIR (the directory to write)\n");
    return 2;
  }
  fmt_results r;
  ana_summary s;
  ana_refined v;
  int refined;
  if ((rc = load(&o, &r, &s, &v, &refined)) != 0) return rc;
  ana_report_opts ro = {0};
  ro.refined = refined ? &v : NULL;
  ro.dir = o.out_dir;
  ro.x_axis = ro.y_axis = -1;
  ro.reco = (ana_reco_opts){o.max_meta, o.min_pass};
  ro.answer = answer_opts(&o);
  int64_t ids[16];
  char list[512];
  axes_list(&r, list, sizeof list);
  if (o.x_axis && (ro.x_axis = axis_lookup(&r, o.x_axis)) < 0) {
    fprintf(stderr, "stormsweep report: --x: '%s' is not an axis of %s (axes: %s)\n", o.x_axis,
            r.path, list);
    rc = 2;
  } else if (o.y_axis && (ro.y_axis = axis_lookup(&r, o.y_axis)) < 0) {
    fprintf(stderr, "stormsweep report: --y: '%s' is not an axis of %s (axes: %s)\n", o.y_axis,
            r.path, list);
    rc = 2;
  } else if (o.x_axis && o.y_axis && ro.x_axis == ro.y_axis) {
    fprintf(stderr, "stormsweep report: --x and --y must be different axes\n");
    rc = 2;
  } else if (o.points) {
    long n = points_parse(&o, &r, ids, sizeof ids / sizeof ids[0]);
    if (n < 0)
      rc = 2;
    else {
      ro.points = ids;
      ro.n_points = (size_t)n;
    }
  }
  if (!rc) {
    char err[1024];
    ro.stop = cli_stop_install();
    int wrc = ana_report_write(&r, &s, &ro, stdout, err, sizeof err);
    cli_stop_restore();
    if (wrc != 0) {
      fprintf(stderr, "stormsweep report: %s\n", err);
      rc = wrc > 0 ? 128 + wrc : 1; /* interrupted: as the shell reports a signal */
    }
  }
  if (refined) ana_refined_free(&v);
  ana_summary_free(&s);
  fmt_results_free(&r);
  return rc;
}
