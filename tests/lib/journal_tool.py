#!/usr/bin/python3
"""Reads a result file's journal (FILE.journal, format/journal.c) and appends
hostile records to it, for the durability tests (tests/cli_journal.sh).

  journal_tool.py info J                       header fields and record counts
  journal_tool.py header-only J                cut J back to its header
  journal_tool.py copy J SRC DST               append run SRC's record as run DST
  journal_tool.py edit J RUN point=P outcome=O append RUN's record with fields changed
  journal_tool.py garbage J RUN                append RUN's record with random chunk bytes
  journal_tool.py huge J LEN                   append a record header declaring LEN
                                               payload bytes and make J sparse to fit it

Every record it appends has a valid CRC: what stops it must be the checks of
what the record says, not its framing.
"""
import os
import random
import struct
import sys
import zlib

MAGIC = b"SSWJRN4\0"
K_RUN = 0x53524E31
METRICS = 24  # ENG_M_COUNT
WIDE = 17  # FMT_WIDE_COUNT: shard queues, 15 service series, the service summary


def header(b):
    assert b[:8] == MAGIC, "not a journal of this format"
    hlen, = struct.unpack_from("<I", b, 12)
    f = {"hlen": hlen}
    (f["seed"], f["n_runs"], f["ticks"], f["ssize"], f["si"], f["sc"], f["crc"], tl, cl,
     f["instance"]) = struct.unpack_from("<QqiiqqIIIQ", b, 16)
    f["wide"] = list(struct.unpack_from("<%di" % WIDE, b, 76))
    return f


def records(b, h):
    off = h["hlen"]
    while off + 12 <= len(b):
        kind, ln = struct.unpack_from("<II", b, off)
        if off + 12 + ln > len(b):
            break
        crc, = struct.unpack_from("<I", b, off + 8 + ln)
        if zlib.crc32(b[off:off + 8 + ln]) != crc:
            break
        yield off, kind, b[off + 8:off + 8 + ln]
        off += 12 + ln


def framed(kind, payload):
    head = struct.pack("<II", kind, len(payload))
    return head + payload + struct.pack("<I", zlib.crc32(head + payload))


def run_record(b, h, run):
    last = None
    for _, kind, p in records(b, h):
        if kind == K_RUN and struct.unpack_from("<q", p, 0)[0] == run:
            last = p
    assert last is not None, "run %d has no record" % run
    return bytearray(last)


def append(path, data):
    with open(path, "ab") as f:
        f.write(data)


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    b = open(path, "rb").read()
    h = header(b)
    summary_at = 36 + 4 * sum(1 for w in h["wide"] if w > 0)  # a size per recorded wide chunk
    fixed = summary_at + h["ssize"] + 4 * METRICS
    if cmd == "info":
        kinds = {}
        for _, kind, _ in records(b, h):
            kinds[kind] = kinds.get(kind, 0) + 1
        print(" ".join("%s=%s" % kv for kv in sorted(h.items())),
              "runs=%d appends=%d groups=%d" % (kinds.get(K_RUN, 0), kinds.get(0x53524E41, 0),
                                                 kinds.get(0x53524E47, 0)))
    elif cmd == "header-only":
        os.truncate(path, h["hlen"])
    elif cmd == "copy":
        p = run_record(b, h, int(sys.argv[3]))
        struct.pack_into("<q", p, 0, int(sys.argv[4]))
        append(path, framed(K_RUN, bytes(p)))
    elif cmd == "edit":
        p = run_record(b, h, int(sys.argv[3]))
        for kv in sys.argv[4:]:
            k, v = kv.split("=")
            if k == "point":
                struct.pack_into("<q", p, 8, int(v))
            elif k == "outcome":
                struct.pack_into("<i", p, summary_at + 8, int(v))
            else:
                raise SystemExit("unknown field " + k)
        append(path, framed(K_RUN, bytes(p)))
    elif cmd == "garbage":
        p = run_record(b, h, int(sys.argv[3]))
        rnd = random.Random(7)
        for i in range(fixed, len(p)):
            p[i] = rnd.randrange(256)
        append(path, framed(K_RUN, bytes(p)))
    elif cmd == "huge":
        ln = int(sys.argv[3])
        append(path, struct.pack("<II", K_RUN, ln) + struct.pack("<q", 0))
        os.truncate(path, len(b) + 12 + ln)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
