/*
 * test_router.c — the bounded-load consistent-hash router (engine/router.c)
 * against the reference.
 *
 * Three kinds of evidence: known-answer vectors pin the hash byte layout;
 * a hand-built ring with hand-computed decisions pins the semantics (cap,
 * wrap-around, hops, refusal); and randomised checks compare the fast paths
 * (lookup table, run skipping) with a line-by-line port of the reference
 * JavaScript, and hold the cap invariant under admissions and completions.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>
#include <xxhash.h>

#include "rng.h"
#include "router.h"

/* ---- reference model ---------------------------------------------------- */

/* Lower bound by binary search, exactly as the reference: the first point
 * with hash >= keyhash, or 0 when there is none (wrap-around). */
static int32_t ref_find(const eng_ring *ring, uint32_t keyhash) {
  int32_t lo = 0, hi = ring->count - 1, start = 0;
  while (lo <= hi) {
    int32_t mid = (int32_t)(((uint32_t)lo + (uint32_t)hi) >> 1);
    if (ring->points[mid].hash >= keyhash) {
      start = mid;
      hi = mid - 1;
    } else {
      lo = mid + 1;
    }
  }
  return start;
}

/* routeWithBoundedLoad, transcribed: the cap stays a double (it may be
 * +inf), every point is visited with a modulo, no shortcuts. */
static eng_route ref_route(const eng_ring *ring, const int32_t *loads, int64_t in_flight,
                           uint32_t keyhash, double c, const uint8_t *excluded) {
  double cap = fmax(1.0, ceil((c * ((double)in_flight + 1.0)) / (double)ring->healthy));
  eng_route r = {-1, ring->count, cap >= (double)INT32_MAX ? INT32_MAX : (int32_t)cap};
  int32_t start = ref_find(ring, keyhash);
  for (int32_t step = 0; step < ring->count; step++) {
    eng_ring_point p = ring->points[(start + step) % ring->count];
    if ((double)loads[p.shard] < cap && !(excluded && excluded[p.shard])) {
      r.shard = (int32_t)p.shard;
      r.hops = step;
      return r;
    }
  }
  return r;
}

static void expect_route(eng_route got, eng_route want, const char *what, long i) {
  if (got.shard != want.shard || got.hops != want.hops || got.cap != want.cap)
    fail_msg("%s #%ld: got shard %d hops %d cap %d, want shard %d hops %d cap %d", what, i,
             got.shard, got.hops, got.cap, want.shard, want.hops, want.cap);
}

/* A ring over caller-owned arrays; the lookup table follows its definition
 * (first point >= bucket start) by a plain linear scan. */
static void hand_ring(eng_ring *ring, eng_ring_point *pts, int32_t n, int32_t healthy,
                      uint32_t lut[16]) {
  memset(ring, 0, sizeof *ring);
  ring->points = pts;
  ring->count = ring->capacity = n;
  ring->healthy = healthy;
  ring->lut = lut;
  ring->lut_bits = 4;
  ring->lut_capacity = 16;
  for (uint32_t p = 0; p < 16; p++) {
    uint32_t i = 0;
    while (i < (uint32_t)n && pts[i].hash < (p << 28)) i++;
    lut[p] = i;
  }
}

/* ---- hashes ------------------------------------------------------------- */

static void test_hash_known_answers(void **state) {
  (void)state;
  /* Pinned values (checked against an independent XXH32 implementation):
   * a change of byte order or layout breaks these. */
  assert_int_equal(eng_ring_point_hash(0, 0, 0), 0xdeb39513u);
  assert_int_equal(eng_ring_point_hash(3, 7, 42), 0x78961d20u);
  assert_int_equal(eng_ring_point_hash(4095, 65535, 0xdeadbeefu), 0x84a268cfu);
  assert_int_equal(eng_key_hash(0, 0), 0xdeb39513u);
  assert_int_equal(eng_key_hash(0x0123456789abcdefULL, 1), 0x7e9264cdu);
  assert_int_equal(eng_key_hash(UINT64_MAX, 0x9e3779b9u), 0x22a9b563u);

  /* And the layout itself: (shard, vnode) as two little-endian uint32, the
   * key as one little-endian uint64. */
  eng_rng rng;
  eng_rng_seed(&rng, 7, 0);
  for (int i = 0; i < 1000; i++) {
    uint64_t x = eng_rng_next(&rng);
    uint32_t seed = (uint32_t)(eng_rng_next(&rng) >> 32);
    unsigned char b[8];
    for (int j = 0; j < 8; j++) b[j] = (unsigned char)(x >> (8 * j));
    assert_int_equal(eng_key_hash(x, seed), XXH32(b, 8, seed));
    assert_int_equal(eng_ring_point_hash((uint32_t)x, (uint32_t)(x >> 32), seed),
                     XXH32(b, 8, seed));
  }
}

/* ---- cap ---------------------------------------------------------------- */

static void test_cap_values(void **state) {
  (void)state;
  assert_int_equal(eng_router_cap(1.25, 0, 16), 1);            /* ceil(0.078) */
  assert_int_equal(eng_router_cap(1.0, 0, 1), 1);              /* ceil(1) */
  assert_int_equal(eng_router_cap(1.0, 1, 1), 2);              /* ceil(2) */
  assert_int_equal(eng_router_cap(1.0, 5, 3), 2);              /* ceil(6/3) exactly */
  assert_int_equal(eng_router_cap(1.0, 6, 3), 3);              /* ceil(7/3) */
  assert_int_equal(eng_router_cap(1.25, 99999, 16), 7813);     /* ceil(7812.5) */
  assert_int_equal(eng_router_cap(1.25, 127, 16), 10);         /* ceil(10) exactly */
  assert_int_equal(eng_router_cap(0.5, 3, 3), 1);              /* ceil(0.67) */
  assert_int_equal(eng_router_cap(0.0, 1000, 3), 1);           /* max(1, 0) */
  assert_int_equal(eng_router_cap(-2.0, 1000, 3), 1);          /* max(1, negative) */
  assert_int_equal(eng_router_cap(NAN, 10, 3), 1);             /* nonsense: tightest */
  assert_int_equal(eng_router_cap(INFINITY, 0, 16), INT32_MAX);
  assert_int_equal(eng_router_cap(INFINITY, INT64_MAX, 1), INT32_MAX);
  assert_int_equal(eng_router_cap(1e300, 10, 3), INT32_MAX);   /* clamped, no UB */
  assert_int_equal(eng_router_cap(1.0, INT64_MAX, 1), INT32_MAX);
  assert_int_equal(eng_router_cap(1.0, (int64_t)INT32_MAX - 1, 1), INT32_MAX);
  assert_int_equal(eng_router_cap(1.0, (int64_t)INT32_MAX - 2, 1), INT32_MAX - 1);
  assert_int_equal(eng_router_cap(1.25, 10, 0), INT32_MAX);    /* no healthy shard */
  /* The reference's double arithmetic: 1.1 * 100 is 110.00000000000001 in
   * doubles, whose ceiling is 111 (exact arithmetic would say 110). */
  assert_int_equal(eng_router_cap(1.1, 99, 1), 111);
  assert_int_equal(eng_router_cap(1.1, 49, 1), 56);
}

/* ---- ring construction and lookup --------------------------------------- */

static void check_ring_structure(const eng_ring *ring, int32_t shards, int32_t vnodes,
                                 const uint8_t *healthy, uint32_t seed) {
  int32_t live = 0;
  for (int32_t s = 0; s < shards; s++) live += !healthy || healthy[s];
  assert_int_equal(ring->healthy, live);
  assert_int_equal(ring->count, live * vnodes);
  assert_true(ring->capacity >= ring->count);

  /* Sorted by (hash, shard), and exactly the multiset of expected points:
   * count per shard, and every point's hash is one of its shard's. */
  int32_t *per_shard = calloc((size_t)shards, sizeof *per_shard);
  assert_non_null(per_shard);
  for (int32_t i = 0; i < ring->count; i++) {
    eng_ring_point p = ring->points[i];
    assert_true(p.shard < (uint32_t)shards);
    assert_true(!healthy || healthy[p.shard]);
    per_shard[p.shard]++;
    if (i > 0) {
      eng_ring_point q = ring->points[i - 1];
      if (!(q.hash < p.hash || (q.hash == p.hash && q.shard <= p.shard)))
        fail_msg("ring not sorted at %d: (%u,%u) before (%u,%u)", i, q.hash, q.shard, p.hash,
                 p.shard);
    }
  }
  for (int32_t s = 0; s < shards; s++)
    assert_int_equal(per_shard[s], (!healthy || healthy[s]) ? vnodes : 0);
  free(per_shard);
  for (int32_t s = 0; s < shards; s++) {
    if (healthy && !healthy[s]) continue;
    for (int32_t v = 0; v < vnodes; v += 1 + vnodes / 7) {
      uint32_t h = eng_ring_point_hash((uint32_t)s, (uint32_t)v, seed);
      int32_t i = ref_find(ring, h);
      while (i < ring->count && ring->points[i].hash == h && ring->points[i].shard != (uint32_t)s)
        i++;
      if (i >= ring->count || ring->points[i].hash != h)
        fail_msg("point (shard %d, vnode %d, hash %u) missing from the ring", s, v, h);
    }
  }

  /* The lookup table: 2^bits >= count (within [2^4, 2^20]) and each entry
   * the first point at or after its bucket's start. */
  assert_in_range(ring->lut_bits, 4, 20);
  assert_true(ring->lut_capacity >= (1 << ring->lut_bits));
  if (ring->lut_bits < 20) assert_true((1 << ring->lut_bits) >= ring->count);
  if (ring->lut_bits > 4) assert_true((1 << (ring->lut_bits - 1)) < ring->count);
  uint32_t want = 0; /* nondecreasing in p */
  for (uint32_t p = 0; p < (1u << ring->lut_bits); p++) {
    uint32_t lo = p << (32 - ring->lut_bits);
    while (want < (uint32_t)ring->count && ring->points[want].hash < lo) want++;
    if (ring->lut[p] != want) fail_msg("lut[%u] = %u, want %u", p, ring->lut[p], want);
  }
}

static void test_build_structure(void **state) {
  (void)state;
  static const struct {
    int32_t shards, vnodes;
    uint32_t seed;
  } cases[] = {{1, 1, 0}, {1, 5, 3}, {3, 1, 1}, {3, 7, 9}, {16, 150, 1}, {7, 40, 0xabcdef01u},
               {100, 100, 5}, {4096, 150, 2}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    eng_ring ring = {0};
    assert_int_equal(eng_ring_build(&ring, cases[c].shards, cases[c].vnodes, NULL, cases[c].seed),
                     0);
    check_ring_structure(&ring, cases[c].shards, cases[c].vnodes, NULL, cases[c].seed);
    eng_ring_free(&ring);
    assert_null(ring.points);
    assert_int_equal(ring.count, 0);
  }
}

static void test_build_deterministic_and_reuses_memory(void **state) {
  (void)state;
  eng_ring a = {0}, b = {0};
  assert_int_equal(eng_ring_build(&a, 16, 150, NULL, 11), 0);
  assert_int_equal(eng_ring_build(&b, 16, 150, NULL, 11), 0);
  assert_int_equal(a.count, b.count);
  assert_memory_equal(a.points, b.points, (size_t)a.count * sizeof *a.points);
  assert_memory_equal(a.lut, b.lut, ((size_t)1 << a.lut_bits) * sizeof *a.lut);

  /* A different seed gives a different ring. */
  assert_int_equal(eng_ring_build(&b, 16, 150, NULL, 12), 0);
  assert_memory_not_equal(a.points, b.points, (size_t)a.count * sizeof *a.points);

  /* Shard 3 leaves and rejoins: no reallocation, and the same ring back. */
  eng_ring_point *pts = a.points;
  uint32_t *lut = a.lut;
  uint8_t healthy[16];
  memset(healthy, 1, sizeof healthy);
  healthy[3] = 0;
  assert_int_equal(eng_ring_build(&a, 16, 150, healthy, 11), 0);
  assert_ptr_equal(a.points, pts);
  assert_ptr_equal(a.lut, lut);
  check_ring_structure(&a, 16, 150, healthy, 11);

  /* Consistent hashing: only keys that shard 3 owned move. */
  eng_ring full = {0};
  assert_int_equal(eng_ring_build(&full, 16, 150, NULL, 11), 0);
  eng_rng rng;
  eng_rng_seed(&rng, 5, 0);
  int moved = 0;
  for (int i = 0; i < 20000; i++) {
    uint32_t h = (uint32_t)(eng_rng_next(&rng) >> 32);
    uint32_t before = full.points[eng_ring_find(&full, h)].shard;
    uint32_t after = a.points[eng_ring_find(&a, h)].shard;
    if (before != 3) assert_int_equal(after, before);
    else moved++;
    assert_int_not_equal(after, 3);
  }
  assert_in_range(moved, 20000 / 16 / 2, 20000 / 16 * 2);

  healthy[3] = 1;
  assert_int_equal(eng_ring_build(&a, 16, 150, healthy, 11), 0);
  assert_ptr_equal(a.points, pts);
  assert_ptr_equal(a.lut, lut);
  assert_memory_equal(a.points, full.points, (size_t)a.count * sizeof *a.points);

  /* Every shard gone: an empty ring that refuses. */
  memset(healthy, 0, sizeof healthy);
  assert_int_equal(eng_ring_build(&a, 16, 150, healthy, 11), 0);
  assert_int_equal(a.count, 0);
  assert_int_equal(a.healthy, 0);
  int32_t loads[16] = {0};
  eng_route r = eng_router_route(&a, loads, 0, 12345, 1.25, NULL);
  assert_int_equal(r.shard, -1);

  eng_ring_free(&a);
  eng_ring_free(&b);
  eng_ring_free(&full);
}

static void test_build_too_large_fails_cleanly(void **state) {
  (void)state;
  eng_ring ring = {0};
  assert_int_equal(eng_ring_build(&ring, 3, 4, NULL, 1), 0);
  eng_ring_point before[12];
  memcpy(before, ring.points, sizeof before);
  /* 2 * INT32_MAX points cannot be counted in int32: refused, ring intact. */
  assert_int_equal(eng_ring_build(&ring, 2, INT32_MAX, NULL, 1), -1);
  assert_int_equal(ring.count, 12);
  assert_int_equal(ring.healthy, 3);
  assert_memory_equal(ring.points, before, sizeof before);
  eng_ring_free(&ring);
  eng_ring_free(&ring); /* idempotent */
}

/* Both lookups (the plain one and the one that relies on eng_ring_build's
 * sentinel points) against the binary search. Returns 1 when the answer
 * lies four or more points past the start of the key's bucket:
 * eng_ring_find_built's rare second round of compares. */
static int check_find(const eng_ring *ring, uint32_t h) {
  int32_t got = eng_ring_find(ring, h), want = ref_find(ring, h);
  if (got != want)
    fail_msg("find(%u) on %d points (lut_bits %d): got %d, want %d", h, ring->count,
             ring->lut_bits, got, want);
  got = eng_ring_find_built(ring, h);
  if (got != want)
    fail_msg("find_built(%u) on %d points (lut_bits %d): got %d, want %d", h, ring->count,
             ring->lut_bits, got, want);
  uint32_t start = ring->lut[h >> (32 - ring->lut_bits)];
  uint32_t end = want || ring->points[0].hash >= h ? (uint32_t)want : (uint32_t)ring->count;
  return end >= start + 4;
}

static void test_find_matches_binary_search(void **state) {
  (void)state;
  static const struct {
    int32_t shards, vnodes;
  } cases[] = {{1, 1}, {1, 2}, {3, 1}, {2, 9}, {5, 100}, {16, 150}, {64, 256}, {4096, 300}};
  eng_rng rng;
  eng_rng_seed(&rng, 99, 0);
  eng_ring ring = {0};
  long long_scans = 0;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    assert_int_equal(eng_ring_build(&ring, cases[c].shards, cases[c].vnodes, NULL, (uint32_t)c), 0);
    long_scans += check_find(&ring, 0);
    long_scans += check_find(&ring, 1);
    long_scans += check_find(&ring, 0xFFFFFFFFu);
    long_scans += check_find(&ring, 0xFFFFFFFEu);
    /* Exact point hashes, and their neighbours. */
    for (int32_t i = 0; i < ring.count; i += 1 + ring.count / 5000) {
      uint32_t h = ring.points[i].hash;
      long_scans += check_find(&ring, h);
      long_scans += check_find(&ring, h - 1);
      long_scans += check_find(&ring, h + 1);
    }
    /* Bucket boundaries, including empty buckets of sparse rings. */
    for (uint32_t p = 0; p < (1u << ring.lut_bits); p++) {
      uint32_t lo = p << (32 - ring.lut_bits);
      long_scans += check_find(&ring, lo);
      long_scans += check_find(&ring, lo - 1);
    }
    for (int i = 0; i < 200000; i++)
      long_scans += check_find(&ring, (uint32_t)(eng_rng_next(&rng) >> 32));
    /* The sentinels follow the last point. */
    for (int32_t j = 0; j < ENG_RING_PAD; j++)
      assert_int_equal(ring.points[ring.count + j].hash, UINT32_MAX);
  }
  /* Rebuilt smaller and larger in the same memory: sentinels move along. */
  assert_int_equal(eng_ring_build(&ring, 3, 2, NULL, 5), 0);
  for (int i = 0; i < 100000; i++)
    long_scans += check_find(&ring, (uint32_t)(eng_rng_next(&rng) >> 32));
  assert_int_equal(eng_ring_build(&ring, 4096, 301, NULL, 6), 0);
  for (int i = 0; i < 100000; i++)
    long_scans += check_find(&ring, (uint32_t)(eng_rng_next(&rng) >> 32));
  /* The cases above include buckets of four and more points below a key. */
  assert_true(long_scans > 0);
  eng_ring_free(&ring);
}

/* ---- hand-checked decisions --------------------------------------------- */

/*  index  hash        shard     lookup table (4 bits, bucket = top nibble)
 *    0    0x10000000  0         lut = {0,0,2,2,3,3,3,3,3,4,4,4,4,4,4,4}
 *    1    0x10000010  1
 *    2    0x30000000  0
 *    3    0x80000000  2
 *    4    0xF0000000  1                                                   */
static eng_ring_point hand_points[] = {
    {0x10000000u, 0}, {0x10000010u, 1}, {0x30000000u, 0}, {0x80000000u, 2}, {0xF0000000u, 1}};

static void test_hand_ring_lookup(void **state) {
  (void)state;
  eng_ring ring;
  uint32_t lut[16];
  hand_ring(&ring, hand_points, 5, 3, lut);
  static const uint32_t want_lut[16] = {0, 0, 2, 2, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4};
  assert_memory_equal(lut, want_lut, sizeof want_lut);

  assert_int_equal(eng_ring_find(&ring, 0), 0);
  assert_int_equal(eng_ring_find(&ring, 0x10000000u), 0); /* exact point hash */
  assert_int_equal(eng_ring_find(&ring, 0x10000001u), 1);
  assert_int_equal(eng_ring_find(&ring, 0x10000010u), 1);
  assert_int_equal(eng_ring_find(&ring, 0x10000011u), 2); /* leaves bucket 1 */
  assert_int_equal(eng_ring_find(&ring, 0x2FFFFFFFu), 2); /* empty bucket 2 */
  assert_int_equal(eng_ring_find(&ring, 0x30000001u), 3);
  assert_int_equal(eng_ring_find(&ring, 0x7FFFFFFFu), 3);
  assert_int_equal(eng_ring_find(&ring, 0x80000000u), 3);
  assert_int_equal(eng_ring_find(&ring, 0xF0000000u), 4);
  assert_int_equal(eng_ring_find(&ring, 0xF0000001u), 0); /* past the last point: wrap */
  assert_int_equal(eng_ring_find(&ring, 0xFFFFFFFFu), 0);
}

static void test_hand_ring_decisions(void **state) {
  (void)state;
  eng_ring ring;
  uint32_t lut[16];
  hand_ring(&ring, hand_points, 5, 3, lut);
  int32_t loads[3] = {0, 0, 0};
  eng_route r;

  /* The same key hash 5 (owner: point 0, shard 0) six times, admitting each,
   * c = 1, M = 3: cap = ceil((L + 1) / 3). */
  static const eng_route want[6] = {
      {0, 0, 1}, /* L=0 cap 1: shard 0 empty */
      {1, 1, 1}, /* L=1 cap 1: shard 0 full -> point 1 (shard 1) */
      {2, 3, 1}, /* L=2 cap 1: points 0,1,2 (shards 0,1,0) full -> point 3 */
      {0, 0, 2}, /* L=3 cap ceil(4/3)=2: shard 0 has 1 */
      {1, 1, 2}, /* L=4 cap 2 */
      {2, 3, 2}, /* L=5 cap ceil(6/3)=2: shard 2 at 1 */
  };
  int64_t in_flight = 0;
  for (long i = 0; i < 6; i++) {
    r = eng_router_route(&ring, loads, in_flight, 5, 1.0, NULL);
    expect_route(r, want[i], "accumulating", i);
    loads[r.shard]++;
    in_flight++;
  }

  /* Wrap-around and a long walk: key past the last point starts at point 0.
   * loads {2,2,0}, L=4, c=1: cap ceil(5/3)=2; points 0 (s0), 1 (s1), 2 (s0)
   * full, point 3 is shard 2: 3 hops. */
  int32_t l2[3] = {2, 2, 0};
  expect_route(eng_router_route(&ring, l2, 4, 0xF0000001u, 1.0, NULL), (eng_route){2, 3, 2},
               "wrap walk", 0);
  /* Wrap with room: shard 0 has room at cap 2. loads {1,2,0}, L=3: cap 2. */
  int32_t l3[3] = {1, 2, 0};
  expect_route(eng_router_route(&ring, l3, 3, 0xFFFFFFFFu, 1.0, NULL), (eng_route){0, 0, 2},
               "wrap", 0);
  /* Walk that wraps: key 0xE0000000 -> point 4 (s1) full, wrap to point 0
   * (s0) full, point 1 (s1) full, point 2 (s0) full, point 3 (s2): 4 hops. */
  expect_route(eng_router_route(&ring, l2, 4, 0xE0000000u, 1.0, NULL), (eng_route){2, 4, 2},
               "walk across the wrap", 0);

  /* Exclusion (open breakers) steps over like a full shard: key 0x70000000
   * -> point 3 (shard 2, excluded) -> point 4 (shard 1): 1 hop. */
  int32_t zero[3] = {0, 0, 0};
  uint8_t excl[3] = {0, 0, 1};
  expect_route(eng_router_route(&ring, zero, 0, 0x70000000u, 1.25, excl), (eng_route){1, 1, 1},
               "excluded", 0);

  /* Refusal with c < 1: c = 0.5, loads {1,1,1}, L = 3: cap = max(1,
   * ceil(0.5 * 4 / 3)) = 1, every shard at cap: all 5 points stepped over. */
  int32_t l4[3] = {1, 1, 1};
  expect_route(eng_router_route(&ring, l4, 3, 0x30000000u, 0.5, NULL), (eng_route){-1, 5, 1},
               "refused", 0);
  /* The same loads with c = 1 (cap ceil(4/3) = 2) are admitted at once. */
  expect_route(eng_router_route(&ring, l4, 3, 0x30000000u, 1.0, NULL), (eng_route){0, 0, 2},
               "not refused", 0);
  /* Every shard excluded: refused whatever the cap. */
  uint8_t all[3] = {1, 1, 1};
  expect_route(eng_router_route(&ring, zero, 0, 0, INFINITY, all),
               (eng_route){-1, 5, INT32_MAX}, "all excluded", 0);
}

/*  A ring with a run of three points of shard 0: hops count points, not
 *  shards, even where the walk skips the run without looking at loads.
 *    0 0x100 s0   1 0x200 s0   2 0x300 s0   3 0x400 s1   4 0x500 s2     */
static void test_hand_ring_runs(void **state) {
  (void)state;
  eng_ring_point pts[] = {{0x100, 0}, {0x200, 0}, {0x300, 0}, {0x400, 1}, {0x500, 2}};
  eng_ring ring;
  uint32_t lut[16];
  hand_ring(&ring, pts, 5, 3, lut);
  int32_t loads[3] = {1, 0, 0}; /* L = 1, c = 1: cap ceil(2/3) = 1, shard 0 full */
  expect_route(eng_router_route(&ring, loads, 1, 0x150, 1.0, NULL), (eng_route){1, 2, 1},
               "run from point 1", 0);
  expect_route(eng_router_route(&ring, loads, 1, 0x501, 1.0, NULL), (eng_route){1, 3, 1},
               "run after wrap", 0);
  expect_route(eng_router_route(&ring, loads, 1, 0x0, 1.0, NULL), (eng_route){1, 3, 1},
               "run from point 0", 0);
  int32_t l2[3] = {0, 1, 1};
  expect_route(eng_router_route(&ring, l2, 2, 0x401, 1.0, NULL), (eng_route){0, 1, 1},
               "wrap onto the run", 0);
  int32_t l3[3] = {1, 1, 0}; /* start at point 3 (s1, full) -> point 4 (s2) */
  expect_route(eng_router_route(&ring, l3, 2, 0x301, 1.0, NULL), (eng_route){2, 1, 1},
               "one hop", 0);
}

/* ---- randomised against the reference ----------------------------------- */

static void test_route_matches_reference(void **state) {
  (void)state;
  eng_rng rng;
  eng_rng_seed(&rng, 2024, 0);
  eng_ring ring = {0};
  int32_t loads[64];
  uint8_t healthy[64], excl[64];
  static const double factors[] = {0.3, 0.5, 0.9, 1.0, 1.1, 1.25, 2.0, INFINITY};
  for (int trial = 0; trial < 300; trial++) {
    int32_t shards = 1 + (int32_t)eng_rng_below(&rng, 64);
    int32_t vnodes = 1 + (int32_t)eng_rng_below(&rng, trial % 3 ? 8 : 200);
    for (int32_t s = 0; s < shards; s++) healthy[s] = eng_rng_below(&rng, 5) != 0;
    healthy[eng_rng_below(&rng, (uint32_t)shards)] = 1;
    assert_int_equal(eng_ring_build(&ring, shards, vnodes, trial % 2 ? healthy : NULL,
                                    (uint32_t)trial),
                     0);
    for (int k = 0; k < 300; k++) {
      double c = factors[eng_rng_below(&rng, sizeof factors / sizeof factors[0])];
      int64_t in_flight = 0;
      int32_t maxload = 1 + (int32_t)eng_rng_below(&rng, 6);
      for (int32_t s = 0; s < shards; s++) {
        loads[s] = (int32_t)eng_rng_below(&rng, (uint32_t)maxload);
        in_flight += loads[s];
        excl[s] = eng_rng_below(&rng, 8) == 0;
      }
      /* Sometimes claim a different in-flight, to move the cap around. */
      if (k % 4 == 0) in_flight = (int64_t)eng_rng_below(&rng, 100);
      uint32_t h = (uint32_t)(eng_rng_next(&rng) >> 32);
      if (k % 10 == 0) h = ring.points[eng_rng_below(&rng, (uint32_t)ring.count)].hash;
      const uint8_t *ex = k % 3 == 0 ? excl : NULL;
      eng_route want = ref_route(&ring, loads, in_flight, h, c, ex);
      expect_route(eng_router_route(&ring, loads, in_flight, h, c, ex), want,
                   "random vs reference", trial * 1000L + k);
      expect_route(eng_router_route_built(&ring, loads, eng_router_cap(c, in_flight, ring.healthy),
                                          h, ex),
                   want, "built ring vs reference", trial * 1000L + k);
    }
  }
  eng_ring_free(&ring);
}

/* Admit keys (loads[s]++, in_flight++) interleaved with random completions;
 * after every admission the shard is within the cap of that decision, and
 * with c >= 1 nothing is ever refused. */
static void run_cap_invariant(int32_t shards, int32_t vnodes, double c, uint64_t seed) {
  eng_ring ring = {0};
  assert_int_equal(eng_ring_build(&ring, shards, vnodes, NULL, (uint32_t)seed), 0);
  int32_t *loads = calloc((size_t)shards, sizeof *loads);
  int32_t *inflight = malloc(200000 * sizeof *inflight); /* shard of each attempt in flight */
  assert_non_null(loads);
  assert_non_null(inflight);
  int64_t in_flight = 0;
  eng_rng rng;
  eng_rng_seed(&rng, seed, 1);
  for (long i = 0; i < 200000; i++) {
    /* Completion probability drifts so in-flight both grows and drains. */
    double p_done = (i / 20000) % 2 ? 0.6 : 0.3;
    if (in_flight > 0 && eng_rng_uniform(&rng) < p_done) {
      uint32_t j = eng_rng_below(&rng, (uint32_t)in_flight);
      int32_t s = inflight[j];
      inflight[j] = inflight[in_flight - 1];
      loads[s]--;
      in_flight--;
      continue;
    }
    uint32_t h = eng_key_hash(eng_rng_next(&rng), 77);
    eng_route r = eng_router_route(&ring, loads, in_flight, h, c, NULL);
    if (r.shard < 0)
      fail_msg("shards %d vnodes %d c %g: refused at in-flight %ld (cap %d)", shards, vnodes, c,
               (long)in_flight, r.cap);
    assert_int_equal(r.cap, eng_router_cap(c, in_flight, shards));
    loads[r.shard]++;
    inflight[in_flight++] = r.shard;
    if (loads[r.shard] > r.cap)
      fail_msg("shards %d vnodes %d c %g: shard %d load %d > cap %d after admission %ld", shards,
               vnodes, c, r.shard, loads[r.shard], r.cap, i);
  }
  int64_t sum = 0;
  for (int32_t s = 0; s < shards; s++) sum += loads[s];
  assert_int_equal(sum, in_flight);
  free(loads);
  free(inflight);
  eng_ring_free(&ring);
}

static void test_cap_invariant(void **state) {
  (void)state;
  run_cap_invariant(1, 1, 1.0, 1);
  run_cap_invariant(3, 1, 1.0, 2);
  run_cap_invariant(16, 150, 1.0, 3);
  run_cap_invariant(16, 150, 1.25, 4);
  run_cap_invariant(7, 40, 2.0, 5);
  run_cap_invariant(64, 10, 1.01, 6);
  run_cap_invariant(5, 3, 1.0, 7);
}

static void test_never_refused_c_at_least_1(void **state) {
  (void)state;
  /* Any loads that sum to in_flight, however skewed: with c >= 1 the cap
   * exceeds the mean load, so some shard has room. */
  eng_rng rng;
  eng_rng_seed(&rng, 31, 0);
  eng_ring ring = {0};
  int32_t loads[40];
  for (int trial = 0; trial < 200; trial++) {
    int32_t shards = 1 + (int32_t)eng_rng_below(&rng, 40);
    assert_int_equal(eng_ring_build(&ring, shards, 1 + (int32_t)eng_rng_below(&rng, 50), NULL,
                                    (uint32_t)trial),
                     0);
    for (int k = 0; k < 500; k++) {
      double c = 1.0 + (k % 5 ? eng_rng_uniform(&rng) : 0.0);
      int64_t in_flight = 0;
      uint32_t skew = eng_rng_below(&rng, (uint32_t)shards);
      for (int32_t s = 0; s < shards; s++) {
        loads[s] = (int32_t)eng_rng_below(&rng, (uint32_t)s == skew ? 1000 : 20);
        in_flight += loads[s];
      }
      eng_route r = eng_router_route(&ring, loads, in_flight, (uint32_t)(eng_rng_next(&rng) >> 32),
                                     c, NULL);
      if (r.shard < 0 || loads[r.shard] >= r.cap)
        fail_msg("trial %d/%d: c %g shards %d in-flight %ld: shard %d cap %d", trial, k, c,
                 shards, (long)in_flight, r.shard, r.cap);
    }
  }
  eng_ring_free(&ring);
}

static void test_infinite_factor_is_plain_hashing(void **state) {
  (void)state;
  eng_ring ring = {0};
  assert_int_equal(eng_ring_build(&ring, 16, 150, NULL, 8), 0);
  int32_t loads[16];
  eng_rng rng;
  eng_rng_seed(&rng, 8, 0);
  for (int32_t s = 0; s < 16; s++) loads[s] = 1000000 * s; /* wildly unbalanced */
  for (long i = 0; i < 100000; i++) {
    uint32_t h = eng_key_hash(eng_rng_next(&rng), 3);
    eng_route r = eng_router_route(&ring, loads, 0, h, INFINITY, NULL);
    eng_route want = {(int32_t)ring.points[ref_find(&ring, h)].shard, 0, INT32_MAX};
    expect_route(r, want, "c = inf", i);
  }
  eng_ring_free(&ring);
}

static void test_balance_sanity(void **state) {
  (void)state;
  eng_ring ring = {0};
  assert_int_equal(eng_ring_build(&ring, 16, 150, NULL, 1), 0);
  int32_t loads[16] = {0};
  eng_rng rng;
  eng_rng_seed(&rng, 1, 1);
  int64_t in_flight = 0, hops = 0;
  eng_route r = {0, 0, 0};
  for (long i = 0; i < 100000; i++) {
    r = eng_router_route(&ring, loads, in_flight, eng_key_hash(eng_rng_next(&rng), 1), 1.25, NULL);
    assert_true(r.shard >= 0);
    loads[r.shard]++;
    in_flight++;
    hops += r.hops;
  }
  assert_int_equal(r.cap, 7813); /* ceil(1.25 * 100000 / 16) */
  int32_t max = 0, min = INT32_MAX;
  for (int s = 0; s < 16; s++) {
    if (loads[s] > max) max = loads[s];
    if (loads[s] < min) min = loads[s];
  }
  if (max > r.cap) fail_msg("max load %d > final cap %d", max, r.cap);
  /* 150 vnodes leave shards within a few tens of percent of the mean 6250,
   * so the walk happens but stays rare. */
  assert_true(min > 6250 / 2);
  assert_true(hops > 0);
  assert_true(hops < 100000);
  eng_ring_free(&ring);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hash_known_answers),
      cmocka_unit_test(test_cap_values),
      cmocka_unit_test(test_build_structure),
      cmocka_unit_test(test_build_deterministic_and_reuses_memory),
      cmocka_unit_test(test_build_too_large_fails_cleanly),
      cmocka_unit_test(test_find_matches_binary_search),
      cmocka_unit_test(test_hand_ring_lookup),
      cmocka_unit_test(test_hand_ring_decisions),
      cmocka_unit_test(test_hand_ring_runs),
      cmocka_unit_test(test_route_matches_reference),
      cmocka_unit_test(test_cap_invariant),
      cmocka_unit_test(test_never_refused_c_at_least_1),
      cmocka_unit_test(test_infinite_factor_is_plain_hashing),
      cmocka_unit_test(test_balance_sanity),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
