/*
 * cmd_verify_junit.c — `stormsweep verify --junit FILE`: the verdict as a
 * JUnit XML report for CI, one testcase per target of the sequential test
 * (a failure when refuted or undecided, skipped when the other target was
 * refuted first), the evidence text as the body. libxml2's writer does the
 * escaping; the file goes through the command's output-file owner.
 */
#include <stdio.h>

#include <libxml/xmlwriter.h>

#include "cli.h"
#include "cmd_verify_junit.h"
#include "fmt.h"
#include "fmt_outfile.h"

/* One testcase per target. Returns 0, or -1 when the writer failed. */
static int junit_case(xmlTextWriterPtr w, const cli_verify_verdict *v, const ana_sprt *t,
                      const char *name, int interrupted, const char *evidence, double time_s) {
  int rc = 0;
  rc |= xmlTextWriterStartElement(w, BAD_CAST "testcase") < 0;
  rc |= xmlTextWriterWriteAttribute(w, BAD_CAST "classname", BAD_CAST "stormsweep.verify") < 0;
  rc |= xmlTextWriterWriteAttribute(w, BAD_CAST "name", BAD_CAST name) < 0;
  rc |= xmlTextWriterWriteFormatAttribute(w, BAD_CAST "time", "%.3f", time_s) < 0;
  char msg[256];
  if (t->state == ANA_SEQ_REFUTED) {
    snprintf(msg, sizeof msg, "%s refuted after %lld runs (%lld bad)", name,
             (long long)t->decided_at, (long long)t->bad);
    rc |= xmlTextWriterStartElement(w, BAD_CAST "failure") < 0;
    rc |= xmlTextWriterWriteAttribute(w, BAD_CAST "type", BAD_CAST "refuted") < 0;
    rc |= xmlTextWriterWriteAttribute(w, BAD_CAST "message", BAD_CAST msg) < 0;
    rc |= xmlTextWriterWriteString(w, BAD_CAST evidence) < 0;
    rc |= xmlTextWriterEndElement(w) < 0;
  } else if (t->state == ANA_SEQ_OPEN && v->seq->state == ANA_SEQ_REFUTED) {
    /* The claim fell on the other target first: this one was never decided. */
    rc |= xmlTextWriterStartElement(w, BAD_CAST "skipped") < 0;
    rc |= xmlTextWriterWriteAttribute(
              w, BAD_CAST "message",
              BAD_CAST "not decided: the other target was refuted first") < 0;
    rc |= xmlTextWriterEndElement(w) < 0;
  } else if (t->state == ANA_SEQ_OPEN) {
    snprintf(msg, sizeof msg, "%s undecided after %lld runs (%s)", name, (long long)t->n,
             interrupted ? "interrupted" : "--max-runs spent");
    rc |= xmlTextWriterStartElement(w, BAD_CAST "failure") < 0;
    rc |= xmlTextWriterWriteAttribute(w, BAD_CAST "type", BAD_CAST "undecided") < 0;
    rc |= xmlTextWriterWriteAttribute(w, BAD_CAST "message", BAD_CAST msg) < 0;
    rc |= xmlTextWriterWriteString(w, BAD_CAST evidence) < 0;
    rc |= xmlTextWriterEndElement(w) < 0;
  } else {
    rc |= xmlTextWriterWriteElement(w, BAD_CAST "system-out", BAD_CAST evidence) < 0;
  }
  rc |= xmlTextWriterEndElement(w) < 0;
  return rc ? -1 : 0;
}

/* With libxml2's writer into our stream (it does the escaping). */
int cli_verify_junit(const char *path, int force, const cli_verify_verdict *v) {
  int interrupted = v->interrupted;
  const char *evidence = v->evidence;
  fmt_outfile out;
  FILE *f = cli_out_open(&out, "verify", "--junit", path, force);
  if (!f) return -1;
  /* libxml2 writes into our stream (the buffer does not close it). */
  xmlOutputBufferPtr buf = xmlOutputBufferCreateFile(f, NULL);
  xmlTextWriterPtr w = buf ? xmlNewTextWriter(buf) : NULL;
  if (!w) {
    if (buf) xmlOutputBufferClose(buf);
    fmt_outfile_abandon(&out);
    cli_error("verify", "--junit %s: out of memory", path);
    return -1;
  }
  const ana_sprt *t[2] = {&v->seq->pass, &v->seq->meta};
  char names[2][64];
  ana_seq_target_name(&v->seq->d, 1, names[0], sizeof names[0]);
  ana_seq_target_name(&v->seq->d, 0, names[1], sizeof names[1]);
  int tests = 0, failures = 0, skipped = 0;
  for (int i = 0; i < 2; i++) {
    if (!t[i]->enabled) continue;
    tests++;
    if (t[i]->state == ANA_SEQ_REFUTED ||
        (t[i]->state == ANA_SEQ_OPEN && v->seq->state != ANA_SEQ_REFUTED))
      failures++;
    else if (t[i]->state == ANA_SEQ_OPEN)
      skipped++;
  }
  char suite[640], stamp[32];
  snprintf(suite, sizeof suite, "stormsweep verify: %s", v->label);
  fmt_time_iso8601(stamp, sizeof stamp);
  int rc = 0;
  xmlTextWriterSetIndent(w, 1);
  rc |= xmlTextWriterStartDocument(w, NULL, "UTF-8", NULL) < 0;
  rc |= xmlTextWriterStartElement(w, BAD_CAST "testsuites") < 0;
  rc |= xmlTextWriterWriteAttribute(w, BAD_CAST "name", BAD_CAST "stormsweep verify") < 0;
  rc |= xmlTextWriterWriteFormatAttribute(w, BAD_CAST "tests", "%d", tests) < 0;
  rc |= xmlTextWriterWriteFormatAttribute(w, BAD_CAST "failures", "%d", failures) < 0;
  rc |= xmlTextWriterWriteFormatAttribute(w, BAD_CAST "time", "%.3f", v->wall_s) < 0;
  rc |= xmlTextWriterStartElement(w, BAD_CAST "testsuite") < 0;
  rc |= xmlTextWriterWriteAttribute(w, BAD_CAST "name", BAD_CAST suite) < 0;
  rc |= xmlTextWriterWriteFormatAttribute(w, BAD_CAST "tests", "%d", tests) < 0;
  rc |= xmlTextWriterWriteFormatAttribute(w, BAD_CAST "failures", "%d", failures) < 0;
  rc |= xmlTextWriterWriteAttribute(w, BAD_CAST "errors", BAD_CAST "0") < 0;
  rc |= xmlTextWriterWriteFormatAttribute(w, BAD_CAST "skipped", "%d", skipped) < 0;
  rc |= xmlTextWriterWriteFormatAttribute(w, BAD_CAST "time", "%.3f", v->wall_s) < 0;
  rc |= xmlTextWriterWriteAttribute(w, BAD_CAST "timestamp", BAD_CAST stamp) < 0;
  rc |= xmlTextWriterStartElement(w, BAD_CAST "properties") < 0;
  char val[64];
  struct {
    const char *name;
    const char *value;
  } props[6];
  char seed[32], runs[32], alpha[32];
  snprintf(seed, sizeof seed, "%llu", (unsigned long long)v->master_seed);
  snprintf(runs, sizeof runs, "%lld", (long long)v->seq->n);
  snprintf(alpha, sizeof alpha, "%g", v->seq->d.alpha);
  snprintf(val, sizeof val, "%s", v->word);
  props[0].name = "verdict", props[0].value = val;
  props[1].name = "runs", props[1].value = runs;
  props[2].name = "master_seed", props[2].value = seed;
  props[3].name = "alpha", props[3].value = alpha;
  props[4].name = "configuration", props[4].value = v->label;
  props[5].name = "test", props[5].value = "Wald SPRT per target, intersection-union for the pair";
  for (int i = 0; i < 6; i++) {
    rc |= xmlTextWriterStartElement(w, BAD_CAST "property") < 0;
    rc |= xmlTextWriterWriteAttribute(w, BAD_CAST "name", BAD_CAST props[i].name) < 0;
    rc |= xmlTextWriterWriteAttribute(w, BAD_CAST "value", BAD_CAST props[i].value) < 0;
    rc |= xmlTextWriterEndElement(w) < 0;
  }
  rc |= xmlTextWriterEndElement(w) < 0;
  for (int i = 0; i < 2; i++)
    if (t[i]->enabled)
      rc |= junit_case(w, v, t[i], names[i], interrupted, evidence, v->wall_s) != 0;
  rc |= xmlTextWriterEndDocument(w) < 0; /* closes every open element */
  rc |= xmlTextWriterFlush(w) < 0;
  xmlFreeTextWriter(w);
  if (rc) {
    fmt_outfile_abandon(&out);
    cli_error("verify", "--junit %s: writing the report failed", path);
    return -1;
  }
  return cli_out_close(&out, "verify", "--junit");
}
