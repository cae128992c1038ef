/*
 * cmd_route.c — `stormsweep route`: routes N random keys through a fresh
 * bounded-load consistent-hash ring (engine/router.h) and reports how evenly
 * they land, so that vnodes and the capacity factor can be judged without a
 * whole simulation.
 *
 * Keys only accumulate (nothing completes), which is the worst case for the
 * cap: in-flight grows with every key, so the cap of the last decision is
 * the largest one and every shard must end at or under it. The ring seed,
 * the key-hash seed and the keys all come from --seed through their own RNG
 * streams, so a run is reproducible from its command line.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fmt_outfile.h"
#include "eng_config.h"
#include "rng.h"
#include "router.h"

#define ROUTE_STREAM_RING 0 /* ring seed, then key-hash seed */
#define ROUTE_STREAM_KEYS 1 /* the keys */

typedef struct route_args {
  int32_t shards, vnodes;
  double capacity_factor;
  int64_t keys;
  uint64_t seed;
  const char *dump_ring; /* NULL: no dump */
  int csv, force;
} route_args;

static void route_usage(FILE *out) {
  eng_config d;
  eng_config_defaults(&d);
  fprintf(out,
          "usage: stormsweep route --keys N [--shards M] [--vnodes V] [--capacity-factor C]\n"
          "                        [--seed S] [--dump-ring FILE] [--csv]\n"
          "\n"
          "Routes N random keys through a fresh consistent-hash ring with bounded load\n"
          "and reports how evenly they land. Every routed key stays in flight, so the\n"
          "load only grows: the worst case for the cap.\n"
          "\n"
          "Each shard owns V points (vnodes) on the ring; more points give each shard\n"
          "a more even share of the key space. With L keys in flight on M shards no\n"
          "shard may hold more than max(1, ceil(C * (L + 1) / M)); a key whose shard\n"
          "is at that cap walks clockwise to the next shard with room (a hop), so a\n"
          "smaller C bounds the imbalance tighter at the price of moving more keys.\n"
          "C = inf is plain consistent hashing.\n"
          "\n"
          "options (--opt VALUE or --opt=VALUE; '_' and '-' alike in names, so\n"
          "--capacity_factor works too; defaults are the engine's, as in sim and run):\n"
          "  --shards M            shards on the ring, 1..%d (default %d)\n"
          "  --vnodes V            ring points per shard, 1..%d (default %d)\n"
          "  --capacity-factor C   C >= 1, or inf (default %g)\n"
          "  --keys N              keys to route, 1..%" PRId32 "\n"
          "  --seed S              seed of the ring and the keys, 0..2^64-1 (default 1)\n"
          "  --dump-ring FILE      also write the ring to FILE as CSV: index,hash,shard\n"
          "  -f, --force           replace an existing --dump-ring FILE\n"
          "  --csv                 print one CSV line per key instead of the report:\n"
          "                        key,key_hash,shard,hops,cap (shard -1: refused)\n"
          "  -h, --help            show this help\n",
          ENG_MAX_SHARDS, d.shards, ENG_MAX_VNODES, d.vnodes, d.capacity_factor, INT32_MAX);
}

/* ---- option values: the whole string must parse ------------------------- */

static int parse_int(const char *opt, const char *s, int64_t lo, int64_t hi, int64_t *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (*s == '\0' || *s == ' ' || *s == '\t' || *end != '\0' || errno == ERANGE || v < lo ||
      v > hi) {
    fprintf(stderr,
            "stormsweep route: %s must be an integer in %" PRId64 "..%" PRId64 ", got '%s'\n",
            opt, lo, hi, s);
    return -1;
  }
  *out = v;
  return 0;
}

static int parse_factor(const char *s, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  /* ERANGE: "1e999" is a typo rather than a way to spell inf. */
  if (*s == '\0' || *s == ' ' || *s == '\t' || *end != '\0' || isnan(v) || errno == ERANGE) {
    fprintf(stderr, "stormsweep route: --capacity-factor must be a number >= 1 or inf, got '%s'\n",
            s);
    return -1;
  }
  if (!(v >= 1.0)) {
    fprintf(stderr,
            "stormsweep route: --capacity-factor must be >= 1 or inf, got %s (below 1 the caps "
            "can leave no room for a key, which is then refused)\n",
            s);
    return -1;
  }
  *out = v;
  return 0;
}

/* Returns 0 to run, 1 when --help was printed, 2 on bad usage (reported).
 * Shards, vnodes and the capacity factor default to the engine's (the seed
 * study's), so route answers for the cluster sim and run model. */
static int route_args_parse(route_args *a, int argc, char **argv) {
  enum { O_SHARDS = 256, O_VNODES, O_FACTOR, O_KEYS, O_SEED, O_DUMP, O_CSV };
  static const struct option longopts[] = {
      {"shards", required_argument, NULL, O_SHARDS},
      {"vnodes", required_argument, NULL, O_VNODES},
      {"capacity-factor", required_argument, NULL, O_FACTOR},
      {"keys", required_argument, NULL, O_KEYS},
      {"seed", required_argument, NULL, O_SEED},
      {"dump-ring", required_argument, NULL, O_DUMP},
      {"force", no_argument, NULL, 'f'},
      {"csv", no_argument, NULL, O_CSV},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  eng_config d;
  eng_config_defaults(&d);
  memset(a, 0, sizeof *a);
  a->shards = d.shards;
  a->vnodes = d.vnodes;
  a->capacity_factor = d.capacity_factor;
  a->seed = 1;
  int have_keys = 0, c;
  int64_t v;
  cli_opts_begin(argc, argv);
  while ((c = cli_getopt("route", argc, argv, ":fh", longopts)) != -1) {
    switch (c) {
    case 'h': route_usage(stdout); return 1;
    case 'f': a->force = 1; break;
    case O_CSV: a->csv = 1; break;
    case O_SHARDS:
      if (parse_int("--shards", optarg, 1, ENG_MAX_SHARDS, &v)) return 2;
      a->shards = (int32_t)v;
      break;
    case O_VNODES:
      if (parse_int("--vnodes", optarg, 1, ENG_MAX_VNODES, &v)) return 2;
      a->vnodes = (int32_t)v;
      break;
    case O_KEYS:
      /* loads are int32: one shard may end up holding every key */
      if (parse_int("--keys", optarg, 1, INT32_MAX, &v)) return 2;
      a->keys = v;
      have_keys = 1;
      break;
    case O_FACTOR:
      if (parse_factor(optarg, &a->capacity_factor)) return 2;
      break;
    case O_SEED:
      if (cli_parse_seed("route", "--seed", optarg, &a->seed)) return 2;
      break;
    case O_DUMP:
      if (*optarg == '\0') {
        fprintf(stderr, "stormsweep route: --dump-ring needs a file name\n");
        return 2;
      }
      a->dump_ring = optarg;
      break;
    default: return 2;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "stormsweep route: unexpected argument '%s' (see 'stormsweep route --help')\n",
            argv[optind]);
    return 2;
  }
  if (!have_keys) {
    fprintf(stderr, "stormsweep route: missing --keys (see 'stormsweep route --help')\n");
    return 2;
  }
  return 0;
}

/* ---- the run ------------------------------------------------------------ */

static int route_ring_dump(const eng_ring *ring, const char *path, int force) {
  fmt_outfile out;
  FILE *f = cli_out_open(&out, "route", "--dump-ring", path, force);
  if (!f) return -1;
  fprintf(f, "index,hash,shard\n");
  for (int32_t i = 0; i < ring->count; i++)
    fprintf(f, "%" PRId32 ",%" PRIu32 ",%" PRIu32 "\n", i, ring->points[i].hash,
            ring->points[i].shard);
  return cli_out_close(&out, "route", "--dump-ring");
}

static void route_cap_print(FILE *out, int32_t cap, int width) {
  if (cap == INT32_MAX)
    fprintf(out, "%*s", width, "inf");
  else
    fprintf(out, "%*" PRId32, width, cap);
}

typedef struct route_totals {
  int64_t admitted, refused, walked, hops_sum;
  int32_t hops_max;
  int32_t final_cap;       /* cap of the last decision: the largest, as loads only grow */
  int64_t final_in_flight; /* in flight at the last decision */
} route_totals;

static void route_report(const route_args *a, const eng_ring *ring, uint32_t ring_seed,
                         uint32_t key_seed, const int32_t *loads, const route_totals *t) {
  printf("stormsweep route: %" PRId32 " shards x %" PRId32 " vnodes (%" PRId32
         " ring points), capacity factor %g, %" PRId64 " keys, seed %" PRIu64 "\n",
         a->shards, a->vnodes, ring->count, a->capacity_factor, a->keys, a->seed);
  printf("ring seed 0x%08" PRIx32 ", key-hash seed 0x%08" PRIx32 "\n\n", ring_seed, key_seed);

  printf("%6s %10s %8s %10s\n", "shard", "load", "share", "final cap");
  int32_t min = INT32_MAX, max = 0;
  int over = 0;
  double sum = 0, sumsq = 0;
  for (int32_t s = 0; s < a->shards; s++) {
    int32_t l = loads[s];
    double share = t->admitted ? 100.0 * l / (double)t->admitted : 0.0;
    printf("%6" PRId32 " %10" PRId32 " %7.3f%% ", s, l, share);
    route_cap_print(stdout, t->final_cap, 10);
    printf("%s\n", l > t->final_cap ? "  OVER CAP" : l == t->final_cap ? "  at cap" : "");
    if (l < min) min = l;
    if (l > max) max = l;
    over |= l > t->final_cap;
    sum += l;
    sumsq += (double)l * l;
  }
  double mean = sum / a->shards;
  double var = sumsq / a->shards - mean * mean;
  double stddev = var > 0 ? sqrt(var) : 0.0;

  printf("\nload per shard: min %" PRId32 "  max %" PRId32 "  mean %.2f  stddev %.2f  max/mean %.4f\n",
         min, max, mean, stddev, mean > 0 ? max / mean : 0.0);
  printf("final cap: ");
  route_cap_print(stdout, t->final_cap, 0);
  if (t->final_cap == INT32_MAX)
    printf(" (plain consistent hashing)\n");
  else
    printf(" = max(1, ceil(%g * %" PRId64 " / %" PRId32 "))\n", a->capacity_factor,
           t->final_in_flight + 1, ring->healthy);
  printf("every shard at or under the final cap: %s\n", over ? "NO" : "yes");
  double mean_hops = t->admitted ? (double)t->hops_sum / (double)t->admitted : 0.0;
  printf("hops: mean %.4f  max %" PRId32 "  keys that walked %" PRId64 " (%.3f%%)\n", mean_hops,
         t->hops_max, t->walked, t->admitted ? 100.0 * t->walked / (double)t->admitted : 0.0);
  printf("refusals: %" PRId64 "\n", t->refused);
}

/* Routes the keys, admitting each (nothing completes), and prints the CSV
 * lines or the report. Returns 0, or -1 when standard output fails. */
static int route_keys(const route_args *a, const eng_ring *ring, uint32_t ring_seed,
                      uint32_t key_seed, eng_rng *rng, int32_t *loads) {
  if (a->csv) printf("key,key_hash,shard,hops,cap\n");
  route_totals t = {0};
  int64_t in_flight = 0;
  for (int64_t i = 0; i < a->keys; i++) {
    const uint64_t key = eng_rng_next(rng);
    const uint32_t h = eng_key_hash(key, key_seed);
    const eng_route r = eng_router_route(ring, loads, in_flight, h, a->capacity_factor, NULL);
    t.final_cap = r.cap;
    t.final_in_flight = in_flight;
    if (r.shard < 0) {
      t.refused++;
    } else {
      loads[r.shard]++;
      in_flight++;
      t.admitted++;
      t.hops_sum += r.hops;
      t.walked += r.hops > 0;
      if (r.hops > t.hops_max) t.hops_max = r.hops;
    }
    if (a->csv)
      printf("%" PRIu64 ",%" PRIu32 ",%" PRId32 ",%" PRId32 ",%" PRId32 "\n", key, h, r.shard,
             r.hops, r.cap);
  }
  if (!a->csv) route_report(a, ring, ring_seed, key_seed, loads, &t);
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "stormsweep route: cannot write to standard output: %s\n", strerror(errno));
    return -1;
  }
  return 0;
}

int cmd_route(int argc, char **argv) {
  route_args a;
  int rc = route_args_parse(&a, argc, argv);
  if (rc) return rc == 1 ? 0 : 2;

  eng_rng rng;
  eng_rng_seed(&rng, a.seed, ROUTE_STREAM_RING);
  const uint32_t ring_seed = (uint32_t)(eng_rng_next(&rng) >> 32);
  const uint32_t key_seed = (uint32_t)(eng_rng_next(&rng) >> 32);
  eng_rng_seed(&rng, a.seed, ROUTE_STREAM_KEYS);

  eng_ring ring = {0};
  int32_t *loads = calloc((size_t)a.shards, sizeof *loads);
  if (!loads || eng_ring_build(&ring, a.shards, a.vnodes, NULL, ring_seed) != 0) {
    fprintf(stderr, "stormsweep route: out of memory for a ring of %" PRId64 " points\n",
            (int64_t)a.shards * a.vnodes);
    free(loads);
    eng_ring_free(&ring);
    return 1;
  }
  rc = a.dump_ring ? route_ring_dump(&ring, a.dump_ring, a.force) : 0;
  if (rc == 0) rc = route_keys(&a, &ring, ring_seed, key_seed, &rng, loads);
  free(loads);
  eng_ring_free(&ring);
  return rc == 0 ? 0 : 1;
}
