/*
 * chunk.c — encodes one /ticks chunk the way HDF5's filter pipeline would
 * (shuffle with 4-byte elements, then deflate), so worker threads can
 * compress their own runs in parallel and the single writer thread only
 * hands finished bytes to H5Dwrite_chunk. HDF5's shuffle filter transposes
 * the bytes (all first bytes, then all second bytes, ...), and its deflate
 * filter is zlib's compress2 at the dataset's level: the output is the same
 * bytes HDF5 would store (tests/test_sweep_h5.c checks this against
 * H5Dread_chunk of a normally written dataset).
 *
 * compress2 sets up a fresh z_stream per call — about 256 KiB of window and
 * hash tables, mapped and faulted in each time — which cost more than the
 * compression itself on mostly-zero metrics. An encoder keeps one stream per
 * thread and deflateResets it, which yields the very same bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fmt.h"

struct fmt_chunk_encoder {
  z_stream z;
  uint8_t *scratch; /* shuffled bytes */
  size_t n;         /* values per chunk */
};

size_t fmt_chunk_bound(size_t n) { return (size_t)compressBound((uLong)(n * 4)); }

fmt_chunk_encoder *fmt_chunk_encoder_create(size_t n) {
  fmt_chunk_encoder *e = calloc(1, sizeof *e);
  if (!e) return NULL;
  e->n = n;
  e->scratch = malloc(n ? 4 * n : 1);
  if (!e->scratch || deflateInit(&e->z, FMT_DEFLATE_LEVEL) != Z_OK) {
    free(e->scratch);
    free(e);
    return NULL;
  }
  return e;
}

void fmt_chunk_encoder_destroy(fmt_chunk_encoder *e) {
  if (!e) return;
  deflateEnd(&e->z);
  free(e->scratch);
  free(e);
}

size_t fmt_chunk_encode(fmt_chunk_encoder *e, const int32_t *values, uint8_t *out,
                        size_t outcap) {
  const uint8_t *src = (const uint8_t *)values;
  size_t n = e->n;
  if (n > 1) {
    for (size_t b = 0; b < 4; b++) {
      uint8_t *dst = e->scratch + b * n;
      for (size_t i = 0; i < n; i++) dst[i] = src[4 * i + b];
    }
  } else {
    memcpy(e->scratch, src, n * 4); /* HDF5 leaves a single element as is */
  }
  if (deflateReset(&e->z) != Z_OK) return 0;
  e->z.next_in = e->scratch;
  e->z.avail_in = (uInt)(n * 4);
  e->z.next_out = out;
  e->z.avail_out = (uInt)outcap;
  if (deflate(&e->z, Z_FINISH) != Z_STREAM_END) return 0;
  return (size_t)e->z.total_out;
}

int fmt_chunk_check(const uint8_t *data, size_t size, size_t n) {
  /* Inflated into a small window and thrown away: what matters is that the
   * stream is whole and holds exactly n values, not what they are. */
  uint8_t sink[16384];
  z_stream z;
  memset(&z, 0, sizeof z);
  if (inflateInit(&z) != Z_OK) return -1;
  z.next_in = (Bytef *)(uintptr_t)data;
  z.avail_in = (uInt)size;
  int rc;
  do {
    z.next_out = sink;
    z.avail_out = sizeof sink;
    rc = inflate(&z, Z_FINISH);
  } while (rc == Z_BUF_ERROR && z.avail_out == 0 && z.total_out <= 4 * (uLong)n);
  int ok = rc == Z_STREAM_END && z.total_out == 4 * (uLong)n && z.avail_in == 0;
  inflateEnd(&z);
  return ok ? 0 : -1;
}
