#!/usr/bin/env bash
# cli_route.sh — `stormsweep route` from the outside: the balance report
# (every shard within the final cap), the per-key CSV, the ring dump,
# reproducibility from --seed, and exit status 2 with a message naming the
# option for bad input.
# Usage: bash cli_route.sh STORMSWEEP_BIN SOURCE_DIR
set -euo pipefail

bin="$1"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fails=0

fail() {
  echo "FAIL: $*" >&2
  fails=$((fails + 1))
}

# run NAME EXPECTED_STATUS ARGS... : runs `stormsweep route ARGS`, keeps
# stdout/stderr in $tmp/NAME.out / .err, and checks the exit status.
run() {
  local name="$1" want="$2"
  shift 2
  local rc=0
  "$bin" route "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" || rc=$?
  if [ "$rc" != "$want" ]; then
    fail "$name: 'stormsweep route $*' exited $rc, expected $want; stderr: $(head -c 400 "$tmp/$name.err")"
    return 1
  fi
  return 0
}

expect_in() {
  if ! grep -qF -- "$2" "$1"; then
    fail "$3: expected '$2' in $(basename "$1"), got: $(head -c 400 "$1")"
  fi
}

# --- the report -------------------------------------------------------------
start=$(date +%s%N)
if run report 0 --shards 16 --vnodes 150 --capacity-factor 1.25 --keys 100000; then
  ms=$((($(date +%s%N) - start) / 1000000))
  if [ "$ms" -gt 5000 ]; then fail "report: took ${ms} ms for 100000 keys"; fi
  expect_in "$tmp/report.out" "every shard at or under the final cap: yes" "report"
  expect_in "$tmp/report.out" "final cap: 7813" "report (ceil(1.25 * 100000 / 16))"
  expect_in "$tmp/report.out" "refusals: 0" "report"
  # The per-shard table itself: 16 rows, loads summing to the keys, each
  # within the cap printed on its row.
  read -r rows total over < <(awk '
    $1 ~ /^[0-9]+$/ && $3 ~ /%$/ { rows++; total += $2; if ($2 + 0 > $4 + 0) over++ }
    END { print rows + 0, total + 0, over + 0 }' "$tmp/report.out")
  [ "$rows" = 16 ] || fail "report: $rows shard rows, expected 16"
  [ "$total" = 100000 ] || fail "report: loads sum to $total, expected 100000"
  [ "$over" = 0 ] || fail "report: $over shards over their cap"
fi

# c = inf: plain consistent hashing never walks.
if run inf 0 --shards 8 --vnodes 50 --capacity-factor inf --keys 2000; then
  expect_in "$tmp/inf.out" "final cap: inf" "inf"
  expect_in "$tmp/inf.out" "keys that walked 0 " "inf"
fi

# --- per-key CSV --------------------------------------------------------------
n=5000
if run csv 0 --shards 16 --vnodes 150 --capacity-factor 1.25 --keys "$n" --csv; then
  lines=$(wc -l <"$tmp/csv.out")
  [ "$lines" = $((n + 1)) ] || fail "csv: $lines lines, expected $((n + 1))"
  [ "$(head -n 1 "$tmp/csv.out")" = "key,key_hash,shard,hops,cap" ] ||
    fail "csv: header is '$(head -n 1 "$tmp/csv.out")'"
  bad=$(tail -n +2 "$tmp/csv.out" | grep -cvE '^[0-9]+,[0-9]+,-?[0-9]+,[0-9]+,[0-9]+$' || true)
  [ "$bad" = 0 ] || fail "csv: $bad lines are not key,key_hash,shard,hops,cap integers: $(tail -n +2 "$tmp/csv.out" | grep -vE '^[0-9]+,[0-9]+,-?[0-9]+,[0-9]+,[0-9]+$' | head -n 3)"
  # Replaying the CSV: every key admitted within the cap of its decision.
  viol=$(awk -F, 'NR > 1 { if ($3 < 0) { print "refused at line " NR; exit }
                           load[$3]++; if (load[$3] > $5) { print "line " NR ": shard " $3 " load " load[$3] " > cap " $5; exit } }' "$tmp/csv.out")
  [ -z "$viol" ] || fail "csv: $viol"
  # The same seed gives the same keys; another seed does not.
  run csv_again 0 --shards 16 --vnodes 150 --capacity-factor 1.25 --keys "$n" --csv &&
    { cmp -s "$tmp/csv.out" "$tmp/csv_again.out" || fail "csv: two runs with the same seed differ"; }
  run csv_seed2 0 --shards 16 --vnodes 150 --capacity-factor 1.25 --keys "$n" --csv --seed 2 &&
    { ! cmp -s "$tmp/csv.out" "$tmp/csv_seed2.out" || fail "csv: --seed 2 gives the same output as seed 1"; }
fi

# --- ring dump ----------------------------------------------------------------
if run dump 0 --shards 7 --vnodes 33 --capacity-factor 1.25 --keys 10 --dump-ring "$tmp/ring.csv"; then
  lines=$(wc -l <"$tmp/ring.csv")
  [ "$lines" = $((7 * 33 + 1)) ] || fail "dump-ring: $lines lines, expected $((7 * 33 + 1))"
  [ "$(head -n 1 "$tmp/ring.csv")" = "index,hash,shard" ] || fail "dump-ring: bad header"
  # index counts 0.., hashes never decrease, shards are 0..6 with 33 points each.
  check=$(awk -F, 'NR > 1 { if ($1 != NR - 2) { print "index " $1 " on line " NR; exit }
                            if ($2 + 0 < prev) { print "hash decreases on line " NR; exit }
                            prev = $2 + 0; n[$3]++ }
                   END { for (s = 0; s < 7; s++) if (n[s] != 33) { print "shard " s " has " n[s] + 0 " points"; exit } }' "$tmp/ring.csv")
  [ -z "$check" ] || fail "dump-ring: $check"
fi
run dump_bad 1 --shards 2 --vnodes 2 --capacity-factor 1.25 --keys 1 --dump-ring "$tmp/no/such/dir/ring.csv" &&
  expect_in "$tmp/dump_bad.err" "$tmp/no/such/dir/ring.csv" "dump-ring to a missing directory"

# --- bad input: exit 2, one message naming the option ---------------------------
# bad NAME OPTION_IN_MESSAGE ARGS...
bad() {
  local name="$1" opt="$2"
  shift 2
  if run "$name" 2 "$@"; then
    expect_in "$tmp/$name.err" "$opt" "$name"
    [ ! -s "$tmp/$name.out" ] || fail "$name: wrote to stdout: $(head -c 200 "$tmp/$name.out")"
  fi
}
ok=(--shards 16 --vnodes 150 --keys 100)
bad factor_low --capacity-factor "${ok[@]}" --capacity-factor 0.5
bad factor_nan --capacity-factor "${ok[@]}" --capacity-factor nan
bad factor_word --capacity-factor "${ok[@]}" --capacity-factor lots
bad vnodes_zero --vnodes --shards 16 --vnodes 0 --capacity-factor 1.25 --keys 100
bad vnodes_big --vnodes --shards 16 --vnodes 65537 --capacity-factor 1.25 --keys 100
bad shards_zero --shards --shards 0 --vnodes 150 --capacity-factor 1.25 --keys 100
bad shards_big --shards --shards 4097 --vnodes 150 --capacity-factor 1.25 --keys 100
bad shards_junk --shards --shards 16x --vnodes 150 --capacity-factor 1.25 --keys 100
bad keys_zero --keys --shards 16 --vnodes 150 --capacity-factor 1.25 --keys 0
bad seed_neg --seed "${ok[@]}" --capacity-factor 1.25 --seed -1
bad bogus --bogus "${ok[@]}" --capacity-factor 1.25 --bogus
bad missing --keys --shards 16 --vnodes 150 --capacity-factor 1.25
bad csv_value "--csv takes no value" "${ok[@]}" --csv=1
bad extra "unexpected argument 'stray'" "${ok[@]}" stray
bad no_value --keys --shards 16 --vnodes 150 --capacity-factor 1.25 --keys

# --- one grammar: --opt=value, '_' or '-', the engine's defaults ----
# Without --shards, --vnodes and --capacity-factor route uses the seed study's
# (the engine defaults: 16 x 150, c = 1.25).
if run defaults 0 --keys=1000; then
  expect_in "$tmp/defaults.out" "16 shards x 150 vnodes (2400 ring points), capacity factor 1.25, 1000 keys" "defaults"
fi
run spaced 0 --shards 8 --vnodes 40 --capacity-factor 1.1 --keys 3000 --csv &&
  run equals 0 --shards=8 --vnodes=40 --capacity-factor=1.1 --keys=3000 --csv &&
  run underscore 0 --capacity_factor 1.1 --shards 8 --keys 3000 --vnodes=40 --csv &&
  { cmp -s "$tmp/spaced.out" "$tmp/equals.out" || fail "--opt=value routes differently from --opt value"
    cmp -s "$tmp/spaced.out" "$tmp/underscore.out" || fail "--capacity_factor routes differently from --capacity-factor"; }
bad underscore_bad --capacity-factor --capacity_factor=0.5 --keys 10

# --- help -------------------------------------------------------------------------
if run help 0 --help; then
  expect_in "$tmp/help.out" "usage: stormsweep route" "help"
  expect_in "$tmp/help.out" "vnodes" "help"
  expect_in "$tmp/help.out" "inf" "help"
fi

if [ "$fails" -ne 0 ]; then
  echo "cli_route: $fails failure(s)" >&2
  exit 1
fi
echo "cli_route: all checks passed"
