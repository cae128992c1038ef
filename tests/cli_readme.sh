#!/usr/bin/env bash
# The README stays true: the reference (docs/reference.md, docs/model.md)
# documents every setting and metric the binary has, the README's two
# commands exist, its walkthrough ("Model your own cluster") runs as written,
# its links to docs/ files we ship resolve, and its h5py example runs on a
# fresh file. (Its result figures: tests/cli_readme_figures.sh.)
# Usage: cli_readme.sh STORMSWEEP_BIN SOURCE_DIR
set -euo pipefail
bin="$1"; src="$2"
readme="$src/README.md"
reference="$src/docs/reference.md"
model="$src/docs/model.md"
fail() { echo "FAIL: $*" >&2; exit 1; }

for key in $("$bin" sim --list-settings | awk '/^  [a-z_]+ +=/ {print $1}'); do
  grep -q "| \`$key\` |" "$reference" || fail "docs/reference.md does not document setting '$key' in its settings table"
done
header=$("$bin" sim --set horizon_ms=10 --set surge=none --set brownout=none --ticks-csv - --json | sed -n '/^tick,/p')
for metric in $(tr ',' '\n' <<<"$header" | tail -n +3); do
  grep -q "\`$metric\`" "$model" || fail "docs/model.md does not document metric '$metric'"
done
for doc in docs/model.md docs/reference.md docs/scale-out.md; do
  [ -f "$src/$doc" ] || fail "$doc is missing"
  grep -q "($doc)" "$readme" || fail "README does not link $doc"
done

# The walkthrough, verbatim: its scenario file, then every command of its
# sh blocks in order, each must exit 0 (verify: proven).
wt=$(mktemp -d); trap 'rm -rf "$wt"' EXIT
awk '/<!-- walkthrough-file: my-cluster.ini -->/ {f=1; next} f && /^```ini$/ {g=1; next} g && /^```$/ {exit} g' \
  "$readme" > "$wt/my-cluster.ini"
grep -q '^\[scenario\]' "$wt/my-cluster.ini" || fail "no walkthrough scenario file found in the README"
awk '/<!-- walkthrough-commands -->/ {f=1; next} f && /^```sh$/ {g=1; next} g && /^```$/ {f=0; g=0; next} g' \
  "$readme" > "$wt/commands"
[ "$(grep -c '^stormsweep ' "$wt/commands")" -ge 8 ] || fail "the walkthrough's commands were not found"
while read -r line; do
  [ -n "$line" ] || continue
  [[ $line == stormsweep\ * ]] || fail "walkthrough command does not start with stormsweep: $line"
  read -ra argv <<<"${line#stormsweep }"
  (cd "$wt" && "$bin" "${argv[@]}" > "$wt/out" 2>&1) ||
    { cat "$wt/out" >&2; fail "walkthrough command failed (exit $?): $line"; }
  case $line in
    "stormsweep recommend "*) grep -iE 'recommended.*proven|proven.*recommended' "$wt/out" > "$wt/recommended" || true ;;
    "stormsweep verify "*) verify_line=$line ;;
  esac
done < "$wt/commands"
# the text says verify gates "the one recommend proved": its --set values must be in that line
[ -s "$wt/recommended" ] || fail "walkthrough: recommend proved no setting after refine"
for kv in $(grep -o -- '--set [a-z_]*=[^ ]*' <<<"$verify_line" | cut -d' ' -f2); do
  grep -q " $kv\b" "$wt/recommended" || fail "walkthrough: verify's $kv is not what recommend proved: $(cat "$wt/recommended")"
done
[ -f "$wt/mine-report/index.html" ] || fail "walkthrough: report wrote no index.html"
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
tmp=$(mktemp -d); trap 'rm -rf "$tmp" "$wt"' EXIT
cat > "$tmp/tiny.ini" <<'INI'
[sweep]
replicates = 2
record = every=10ms
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
sed -i "s#\"results.h5\"#\"$tmp/results.h5\"#" "$tmp/example.py"
out=$(cd "$tmp" && "$py" example.py) || fail "the README's h5py example failed"
grep -Eq '^(recovered|slow|metastable|collapsed|undetermined) ' <<<"$out" || fail "example printed no outcome: $out"
grep -q "\['run', 'time_ms'\]" <<<"$out" || fail "example printed no dimension labels: $out"
grep -Eq '^\[ *[0-9]' <<<"$out" || fail "example printed no queue depths (rows 200:260): $out"
echo "README checks passed"
