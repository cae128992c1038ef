/*
 * router.c — consistent hashing with bounded load (the reference
 * routeWithBoundedLoad).
 *
 * The ring is an array of (hash, shard) points sorted ascending by hash, ties
 * broken by shard and then vnode. Two points with equal hash and shard are
 * interchangeable, so sorting on the 64-bit key (hash, shard) already gives
 * the (hash, shard, vnode) order, and the same (shards, vnodes, healthy,
 * seed) yields the same ring on any host: every hash input is written out
 * byte by byte in little-endian order.
 *
 * The reference finds the first point clockwise by binary search. Here a
 * lookup table indexed by the top lut_bits bits of the key hash does it:
 * lut[p] is the first point whose hash is >= p << (32 - lut_bits), and with
 * about one bucket per point the forward scan from there passes a point or
 * two on average. The scan never leaves the key's bucket by more than one
 * point, because the first point >= the key is either in that bucket or is
 * the first point of a later one. The ring ends in ENG_RING_PAD sentinel
 * points (hash UINT32_MAX), which let the engine's lookup
 * (eng_ring_find_built) compare four points at a time without bounds checks
 * or a branch per point.
 *
 * Routing then is the reference decision: the cap comes from the same double
 * arithmetic, a point whose shard is at its cap (or excluded) is stepped over
 * and counted as one hop, and after stepping over every point the attempt is
 * refused. Loads do not change during a decision, so a point of the same
 * shard as the one just stepped over is full as well: it costs a hop but no
 * load lookup. A walk is therefore at most `count` steps.
 *
 * Nothing here is global and routing only reads the ring, so any number of
 * threads may route through one ring while nobody rebuilds it.
 */
#include "router.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
/* Header-only xxHash: XXH32 of 8 bytes inlines to a dozen instructions
 * instead of a call into the shared library (it runs once per request). */
#define XXH_INLINE_ALL
#include <xxhash.h>

#define RING_LUT_MIN_BITS 4
#define RING_LUT_MAX_BITS 20

/* ---- hashing ------------------------------------------------------------ */

static void store_le32(unsigned char *b, uint32_t v) {
  b[0] = (unsigned char)v;
  b[1] = (unsigned char)(v >> 8);
  b[2] = (unsigned char)(v >> 16);
  b[3] = (unsigned char)(v >> 24);
}

uint32_t eng_ring_point_hash(uint32_t shard, uint32_t vnode, uint32_t seed) {
  unsigned char b[8];
  store_le32(b, shard);
  store_le32(b + 4, vnode);
  return XXH32(b, sizeof b, seed);
}

uint32_t eng_key_hash(uint64_t key, uint32_t seed) {
  unsigned char b[8];
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  memcpy(b, &key, sizeof b); /* one store; the bytes are the same */
#else
  store_le32(b, (uint32_t)key);
  store_le32(b + 4, (uint32_t)(key >> 32));
#endif
  return XXH32(b, sizeof b, seed);
}

/* ---- ring construction -------------------------------------------------- */

static uint64_t point_key(eng_ring_point p) { return (uint64_t)p.hash << 32 | p.shard; }

static void points_sift_down(eng_ring_point *a, size_t root, size_t n) {
  eng_ring_point v = a[root];
  uint64_t k = point_key(v);
  for (;;) {
    size_t child = 2 * root + 1;
    if (child >= n) break;
    if (child + 1 < n && point_key(a[child + 1]) > point_key(a[child])) child++;
    if (point_key(a[child]) <= k) break;
    a[root] = a[child];
    root = child;
  }
  a[root] = v;
}

static void points_swap(eng_ring_point *a, size_t i, size_t j) {
  eng_ring_point t = a[i];
  a[i] = a[j];
  a[j] = t;
}

static void points_heapsort(eng_ring_point *a, size_t n) {
  if (n < 2) return;
  for (size_t i = n / 2; i-- > 0;) points_sift_down(a, i, n);
  for (size_t end = n - 1; end > 0; end--) {
    points_swap(a, 0, end);
    points_sift_down(a, 0, end);
  }
}

static void points_insertion_sort(eng_ring_point *a, size_t n) {
  for (size_t i = 1; i < n; i++) {
    eng_ring_point v = a[i];
    uint64_t k = point_key(v);
    size_t j = i;
    for (; j > 0 && point_key(a[j - 1]) > k; j--) a[j] = a[j - 1];
    a[j] = v;
  }
}

/* Introsort: in place (a rebuild mid-run must not allocate) and several times
 * faster than qsort's callbacks or a plain heapsort on large rings. Hashes
 * are effectively random, so the depth limit that hands a subarray to
 * heapsort only guards the O(n^2) case. Not stable, which cannot matter:
 * equal keys are identical points. */
static void points_sort(eng_ring_point *a, size_t n, int depth) {
  while (n > 16) {
    if (depth-- == 0) {
      points_heapsort(a, n);
      return;
    }
    /* Median of three at a[0] <= a[mid] <= a[n-1]; the ends then act as
     * sentinels, so the partition scans need no bounds checks. */
    size_t mid = n / 2;
    if (point_key(a[mid]) < point_key(a[0])) points_swap(a, mid, 0);
    if (point_key(a[n - 1]) < point_key(a[0])) points_swap(a, n - 1, 0);
    if (point_key(a[n - 1]) < point_key(a[mid])) points_swap(a, n - 1, mid);
    const uint64_t pivot = point_key(a[mid]);
    size_t i = 0, j = n - 1;
    for (;;) { /* Hoare: afterwards a[0..j] <= pivot <= a[j+1..n-1], 0 < j+1 < n */
      do i++; while (point_key(a[i]) < pivot);
      do j--; while (point_key(a[j]) > pivot);
      if (i >= j) break;
      points_swap(a, i, j);
    }
    /* Recurse into the smaller side, loop on the larger: O(log n) stack. */
    size_t left = j + 1;
    if (left < n - left) {
      points_sort(a, left, depth);
      a += left;
      n -= left;
    } else {
      points_sort(a + left, n - left, depth);
      n = left;
    }
  }
  points_insertion_sort(a, n);
}

/* Stable LSD radix sort by hash, four passes of eight bits through scratch
 * (n points), ending back in a. The points come in (shard, vnode) order, so
 * sorting them stably by hash alone gives the (hash, shard, vnode) order,
 * the same array the introsort above gives; it does so in 4n moves rather
 * than ~2n log n comparisons (the engine builds a ring for every run). */
static void points_radix_sort(eng_ring_point *a, eng_ring_point *scratch, size_t n) {
  eng_ring_point *src = a, *dst = scratch;
  for (int shift = 0; shift < 32; shift += 8) {
    size_t pos[256] = {0};
    for (size_t i = 0; i < n; i++) pos[(src[i].hash >> shift) & 255]++;
    size_t sum = 0;
    for (int d = 0; d < 256; d++) {
      size_t c = pos[d];
      pos[d] = sum;
      sum += c;
    }
    for (size_t i = 0; i < n; i++) dst[pos[(src[i].hash >> shift) & 255]++] = src[i];
    eng_ring_point *t = src;
    src = dst;
    dst = t;
  }
}

static int32_t ring_lut_bits(int32_t count) {
  int32_t bits = RING_LUT_MIN_BITS;
  while (bits < RING_LUT_MAX_BITS && ((int64_t)1 << bits) < (int64_t)count) bits++;
  return bits;
}

static void ring_lut_fill(eng_ring *ring) {
  const uint32_t n = (uint32_t)ring->count;
  const int shift = 32 - ring->lut_bits;
  const uint32_t size = (uint32_t)1 << ring->lut_bits;
  uint32_t i = 0;
  for (uint32_t p = 0; p < size; p++) {
    const uint32_t lo = p << shift;
    while (i < n && ring->points[i].hash < lo) i++;
    ring->lut[p] = i;
  }
}

int eng_ring_build(eng_ring *ring, int32_t shards, int32_t vnodes, const uint8_t *healthy,
                   uint32_t seed) {
  assert(ring);
  int32_t live = 0;
  if (vnodes > 0)
    for (int32_t s = 0; s < shards; s++) live += !healthy || healthy[s];
  const int64_t count = (int64_t)live * (vnodes > 0 ? vnodes : 0);
  if (count > INT32_MAX - ENG_RING_PAD ||
      (uint64_t)count + ENG_RING_PAD > SIZE_MAX / sizeof(eng_ring_point))
    return -1;
  const int32_t bits = ring_lut_bits((int32_t)count);
  const int32_t lut_size = (int32_t)1 << bits;

  /* Grow both arrays before touching the ring, so that a failure leaves the
   * previous ring intact and usable (realloc keeps the old contents). */
  if (count > ring->capacity || !ring->points || !ring->scratch) {
    eng_ring_point *p = realloc(ring->points, ((size_t)count + ENG_RING_PAD) * sizeof *p);
    if (!p) return -1;
    ring->points = p;
    eng_ring_point *q = realloc(ring->scratch, ((size_t)count + 1) * sizeof *q);
    if (!q) return -1;
    ring->scratch = q;
    ring->capacity = (int32_t)count;
  }
  if (lut_size > ring->lut_capacity) {
    uint32_t *l = realloc(ring->lut, (size_t)lut_size * sizeof *l);
    if (!l) return -1;
    ring->lut = l;
    ring->lut_capacity = lut_size;
  }

  int32_t k = 0;
  for (int32_t s = 0; s < shards && vnodes > 0; s++) {
    if (healthy && !healthy[s]) continue;
    for (int32_t v = 0; v < vnodes; v++) {
      ring->points[k].hash = eng_ring_point_hash((uint32_t)s, (uint32_t)v, seed);
      ring->points[k].shard = (uint32_t)s;
      k++;
    }
  }
  assert(k == count);
  if (count >= 64) {
    points_radix_sort(ring->points, ring->scratch, (size_t)count);
  } else {
    int depth = 0; /* 2 log2(count): introsort's budget before heapsort */
    for (int64_t c = count; c > 1; c >>= 1) depth += 2;
    points_sort(ring->points, (size_t)count, depth);
  }
  for (int32_t j = 0; j < ENG_RING_PAD; j++)
    ring->points[count + j] = (eng_ring_point){UINT32_MAX, 0};
  ring->count = (int32_t)count;
  ring->healthy = live;
  ring->lut_bits = bits;
  ring_lut_fill(ring);
  return 0;
}

void eng_ring_free(eng_ring *ring) {
  if (!ring) return;
  free(ring->points);
  free(ring->scratch);
  free(ring->lut);
  memset(ring, 0, sizeof *ring);
}

/* ---- lookup and routing ------------------------------------------------- */

int32_t eng_ring_find(const eng_ring *ring, uint32_t keyhash) {
  assert(ring && ring->count > 0 && ring->lut);
  assert(ring->lut_bits >= RING_LUT_MIN_BITS && ring->lut_bits <= RING_LUT_MAX_BITS);
  return eng_ring_find_fast(ring, keyhash);
}

int32_t eng_router_cap(double capacity_factor, int64_t in_flight, int32_t healthy) {
  /* The reference divides by the shard count in doubles; with no healthy
   * shard that is +inf, i.e. no cap (the empty ring refuses anyway). */
  if (healthy <= 0 || isinf(capacity_factor)) return INT32_MAX;
  /* (L + 1) in doubles, as JavaScript does: no int64 overflow at INT64_MAX. */
  const double x = capacity_factor * ((double)in_flight + 1.0) / (double)healthy;
  if (!(x > 0.0)) return 1; /* also NaN: a nonsense factor gets the tightest cap */
  if (x >= (double)INT32_MAX) return INT32_MAX;
  /* ceil() by truncation: exact for 0 < x < 2^31, and no libm call on the
   * per-attempt path (baseline x86-64 has no rounding instruction). */
  int32_t cap = (int32_t)x;
  if ((double)cap < x) cap++;
  return cap < 1 ? 1 : cap;
}

eng_route eng_router_route(const eng_ring *ring, const int32_t *loads, int64_t in_flight,
                           uint32_t keyhash, double capacity_factor, const uint8_t *excluded) {
  return eng_router_route_cap(ring, loads, eng_router_cap(capacity_factor, in_flight, ring->healthy),
                              keyhash, excluded);
}

eng_route eng_router_walk(const eng_ring *ring, const int32_t *loads, int32_t cap, int32_t i,
                          const uint8_t *excluded) {
  eng_route r = {-1, 0, cap};
  const int32_t n = ring->count;
  const eng_ring_point *pts = ring->points;
  uint32_t s = pts[i].shard;
  uint32_t full = s;
  for (int32_t step = 1; step < n; step++) {
    if (++i == n) i = 0;
    s = pts[i].shard;
    if (s == full) continue;
    if (loads[s] < r.cap && !(excluded && excluded[s])) {
      r.shard = (int32_t)s;
      r.hops = step;
      return r;
    }
    full = s;
  }
  r.hops = n; /* stepped over every point: cluster_capacity_exhausted */
  return r;
}
