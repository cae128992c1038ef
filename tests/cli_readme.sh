#!/usr/bin/env bash
# The README stays true: it documents every setting and metric the binary
# has (a setting may instead be documented on a docs/ page the README links,
# such as docs/clients.md), its two commands exist, and its h5py example runs
# on a fresh file.
# Usage: cli_readme.sh STORMSWEEP_BIN SOURCE_DIR
set -euo pipefail
bin="$1"; src="$2"
readme="$src/README.md"
fail() { echo "FAIL: $*" >&2; exit 1; }

for key in $("$bin" sim --list-settings | awk '/^  [a-z_]+ +=/ {print $1}'); do
  grep -q "\`$key\`" "$readme" "$src"/docs/*.md || fail "README (or docs/) does not document setting '$key'"
done
header=$("$bin" sim --set horizon_ms=10 --set surge=none --set brownout=none --ticks-csv /dev/stdout --json | sed -n '/^tick,/p')
for metric in $(tr ',' '\n' <<<"$header" | tail -n +3); do
  grep -q "\`$metric\`" "$readme" || fail "README does not document metric '$metric'"
done
for s in scripts/seed-study.sh scripts/test.sh; do
  [ -x "$src/$s" ] || fail "$s is not executable"
  grep -q "$s" "$readme" || fail "README does not name $s"
done

py=/usr/bin/python3
if ! "$py" -c 'import h5py' 2>/dev/null; then
  echo "skipped the h5py example: $py has no h5py (apt-get install python3-h5py)"
  echo "README checks passed"
  exit 0
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/tiny.ini" <<'INI'
[sweep]
replicates = 2
[scenario]
shards = 4
horizon_ms = 3000
surge = 1000+300
brownout = none
[grid]
budget_ratio = 0.1, inf
INI
"$bin" run "$tmp/tiny.ini" -o "$tmp/results.h5" -j 2 --quiet
# the example, verbatim from the README's python block (the file name adapted)
awk '/^```python$/ {f=1; next} f && /^```$/ {exit} f' "$readme" > "$tmp/example.py"
grep -q 'h5py.File' "$tmp/example.py" || fail "no h5py example found in the README"
sed -i "s#\"results.h5\"#\"$tmp/results.h5\"#; s#2000:2600#1000:1100#" "$tmp/example.py"
out=$(cd "$tmp" && "$py" example.py) || fail "the README's h5py example failed"
grep -Eq '^(recovered|slow|metastable|collapsed|undetermined) ' <<<"$out" || fail "example printed no outcome: $out"
grep -q "\['run', 'time_ms'\]" <<<"$out" || fail "example printed no dimension labels: $out"
echo "README checks passed"
