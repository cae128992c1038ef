/*
 * router.h — consistent hashing with bounded load over a uint32 ring of
 * xxHash points (the reference routeWithBoundedLoad).
 *
 * The ring is built once per run (and again when a shard leaves or rejoins);
 * routing a key is a table lookup plus a short scan, then a clockwise walk
 * only while the target shard is at its cap.
 */
#ifndef STORMSWEEP_ROUTER_H
#define STORMSWEEP_ROUTER_H

#include <stdint.h>

typedef struct eng_ring_point {
  uint32_t hash;
  uint32_t shard;
} eng_ring_point;

typedef struct eng_ring {
  eng_ring_point *points; /* sorted by (hash, shard, vnode) ascending */
  int32_t count;          /* points in use */
  int32_t capacity;       /* points allocated, not counting ENG_RING_PAD sentinels */
  eng_ring_point *scratch; /* capacity points: eng_ring_build's sort buffer */
  int32_t healthy;        /* shards with points on the ring */
  uint32_t *lut;          /* lookup table: top lut_bits of a hash -> first index >= it */
  int32_t lut_bits;
  int32_t lut_capacity;
} eng_ring;

/* Hash of (shard, vnode) for the ring, and of a key, both XXH32 with `seed`. */
uint32_t eng_ring_point_hash(uint32_t shard, uint32_t vnode, uint32_t seed);
uint32_t eng_key_hash(uint64_t key, uint32_t seed);

/* Builds the ring of `vnodes` points for every shard s < shards with
 * healthy == NULL or healthy[s] != 0. Reuses ring's memory (grows only).
 * Returns 0, or -1 if memory is exhausted. */
int eng_ring_build(eng_ring *ring, int32_t shards, int32_t vnodes,
                   const uint8_t *healthy, uint32_t seed);
void eng_ring_free(eng_ring *ring);

/* Index of the first point clockwise from keyhash: the first with
 * hash >= keyhash, wrapping to 0. The ring must not be empty. */
int32_t eng_ring_find(const eng_ring *ring, uint32_t keyhash);

/* max(1, ceil(c * (in_flight + 1) / healthy)); INT32_MAX when c is inf. */
int32_t eng_router_cap(double capacity_factor, int64_t in_flight, int32_t healthy);

typedef struct eng_route {
  int32_t shard; /* -1: refused (cluster_capacity_exhausted) */
  int32_t hops;  /* points stepped over clockwise */
  int32_t cap;   /* the cap in force for this decision */
} eng_route;

/* The reference decision. loads[s] = attempts in flight on shard s;
 * excluded (may be NULL) marks shards to step over as if full (a client's
 * open breakers). Does not change loads: the caller admits. */
eng_route eng_router_route(const eng_ring *ring, const int32_t *loads, int64_t in_flight,
                           uint32_t keyhash, double capacity_factor, const uint8_t *excluded);
/* The walk clockwise from point i, whose shard is full or excluded (out of
 * line: the rare path of eng_router_route_cap). */
eng_route eng_router_walk(const eng_ring *ring, const int32_t *loads, int32_t cap, int32_t i,
                          const uint8_t *excluded);

/* eng_ring_find without its checks, inlined into the engine's hot loop. */
static inline int32_t eng_ring_find_fast(const eng_ring *ring, uint32_t keyhash) {
  const uint32_t n = (uint32_t)ring->count;
  const eng_ring_point *pts = ring->points;
  uint32_t i = ring->lut[keyhash >> (32 - ring->lut_bits)];
  while (i < n && pts[i].hash < keyhash) i++;
  return i < n ? (int32_t)i : 0;
}

/* The routing decision once the key's ring index i is known: the common
 * case, the first point's shard under its cap, is inlined; the walk is not. */
static inline eng_route eng_router_route_at(const eng_ring *ring, const int32_t *loads,
                                            int32_t cap, int32_t i, const uint8_t *excluded) {
  eng_route r = {-1, 0, cap};
  uint32_t s = ring->points[i].shard;
  if (loads[s] < cap && !(excluded && excluded[s])) {
    r.shard = (int32_t)s;
    return r;
  }
  return eng_router_walk(ring, loads, cap, i, excluded);
}

/* The same decision under a cap the caller computed with eng_router_cap (an
 * engine reuses it while the load and the healthy count stay the same). */
static inline eng_route eng_router_route_cap(const eng_ring *ring, const int32_t *loads,
                                             int32_t cap, uint32_t keyhash,
                                             const uint8_t *excluded) {
  if (ring->count <= 0) return (eng_route){-1, 0, cap};
  return eng_router_route_at(ring, loads, cap, eng_ring_find_fast(ring, keyhash), excluded);
}

/* Rings from eng_ring_build end in ENG_RING_PAD sentinel points of hash
 * UINT32_MAX (not counted in `count`), so a scan can read four points past
 * any index <= count without a bounds check. */
#define ENG_RING_PAD 4

/* eng_ring_find_fast for a ring from eng_ring_build, without a branch per
 * point: the points are sorted, so those below keyhash among the next four
 * are a prefix, and their count is how far to step. The bucket holds under
 * one point on average, so the loop runs once in all but a few lookups in a
 * thousand; the scan's exit no longer depends on the key, which made the
 * old loop's exit branch a misprediction in about a third of all lookups. */
static inline int32_t eng_ring_find_built(const eng_ring *ring, uint32_t keyhash) {
  const eng_ring_point *p = ring->points + ring->lut[keyhash >> (32 - ring->lut_bits)];
  for (;;) {
    uint32_t c = (uint32_t)(p[0].hash < keyhash) + (uint32_t)(p[1].hash < keyhash) +
                 (uint32_t)(p[2].hash < keyhash) + (uint32_t)(p[3].hash < keyhash);
    p += c;
    if (__builtin_expect(c < 4, 1)) break;
  }
  int32_t i = (int32_t)(p - ring->points);
  return i < ring->count ? i : 0;
}

/* eng_router_route_cap for a ring from eng_ring_build (the engine's). */
static inline eng_route eng_router_route_built(const eng_ring *ring, const int32_t *loads,
                                               int32_t cap, uint32_t keyhash,
                                               const uint8_t *excluded) {
  if (ring->count <= 0) return (eng_route){-1, 0, cap};
  return eng_router_route_at(ring, loads, cap, eng_ring_find_built(ring, keyhash), excluded);
}

#endif
