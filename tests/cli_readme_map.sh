#!/usr/bin/env bash
# The README's Development section matches the tree:
#  - its map (the first code block under "## Development") lists every
#    top-level source folder, and names every .c and .h file of telemetry/, engine/,
#    sweeps/, format/, driver/, analysis/ and cli/ (include/ subfolders as
#    include/NAME) in that folder's entry, and no file that is not there;
#  - its scripts/ entry names every script of scripts/, its docs/ entry
#    every document of docs/;
#  - the Debian packages it says scripts/setup.sh installs are exactly the
#    PACKAGES array of scripts/setup.sh, in the same order.
# The files and folders are `git ls-files` when SOURCE_DIR is a git work
# tree, else what is on disk (build trees and hidden folders left out). README defaults to SOURCE_DIR/README.md (a
# third argument checks another copy, e.g. an edited one).
# Usage: cli_readme_map.sh STORMSWEEP_BIN SOURCE_DIR [README]
set -euo pipefail
src="$2"
readme="${3:-$src/README.md}"
exec python3 - "$src" "$readme" <<'EOF'
import os
import re
import subprocess
import sys

src, readme = sys.argv[1], sys.argv[2]
FOLDERS = ("telemetry", "engine", "sweeps", "format", "driver", "analysis", "cli")
problems = []

text = open(readme, encoding="utf-8").read()
dev = re.search(r"^## Development\n(.*?)(?=^## |\Z)", text, re.S | re.M)
block = dev and re.search(r"^```\n(.*?)^```$", dev.group(1), re.S | re.M)
if not block:
    sys.exit(f"FAIL: {readme}: no code block under '## Development'")

# The map's entries: "folder/   text", continued on indented lines.
entries, current = {}, None
for line in block.group(1).splitlines():
    m = re.match(r"([A-Za-z0-9_.-]+)/(?:\s+|$)", line)
    if m:
        current = m.group(1)
        entries[current] = line[m.end():]
    elif current and line.startswith(" "):
        entries[current] += " " + line.strip()
    elif line.strip():
        problems.append(f"map line is no folder entry: {line!r}")

# The tree.
try:
    listed = subprocess.run(["git", "-C", src, "ls-files", "-z"], check=True,
                            capture_output=True).stdout.decode().split("\0")
    tracked = [p for p in listed if p]
    in_git = True
except (OSError, subprocess.CalledProcessError):
    tracked, in_git = [], False
    for folder in FOLDERS:
        for root, _, files in os.walk(os.path.join(src, folder)):
            for f in files:
                tracked.append(os.path.relpath(os.path.join(root, f), src))
sources = {p for p in tracked
           if p.split("/")[0] in FOLDERS and re.search(r"\.[ch]$", p)}
if in_git:
    folders = {p.split("/")[0] for p in tracked if "/" in p}
else:  # every directory but build trees
    folders = {d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d))
               and not os.path.exists(os.path.join(src, d, "CMakeCache.txt"))}
folders = {f for f in folders if not f.startswith(".")}

for f in sorted(folders - set(entries)):
    problems.append(f"the map does not list the folder {f}/")
for f in sorted(set(entries) - folders):
    problems.append(f"the map lists {f}/, which is no source folder")

named = set()
for folder in FOLDERS:
    for name in re.findall(r"(?<![\w/.*-])((?:include/)?\w+\.[ch])(?!\w)",
                           entries.get(folder, "")):
        named.add(f"{folder}/{name}")
for p in sorted(sources - named):
    problems.append(f"the map does not name {p}")
for p in sorted(named - sources):
    problems.append(f"the map names {p}, which does not exist")

# scripts/ and docs/: the map names every script (by file name) and every
# document (by its name without .md, "-" read as a blank), and none that
# is not there.
scripts = {p.split("/", 1)[1] for p in tracked
           if p.startswith("scripts/") and p.count("/") == 1 and re.search(r"\.(sh|py)$", p)}
said_scripts = set(re.findall(r"[\w-]+\.(?:sh|py)\b", entries.get("scripts", "")))
for p in sorted(scripts - said_scripts):
    problems.append(f"the map's scripts/ entry does not name {p}")
for p in sorted(said_scripts - scripts):
    problems.append(f"the map's scripts/ entry names {p}, which does not exist")
doc_entry = " " + re.sub(r"[,()]", " ", entries.get("docs", "")) + " "
for p in sorted(p for p in tracked if p.startswith("docs/") and p.endswith(".md")):
    name = p[len("docs/"):-len(".md")]
    if f" {name} " not in doc_entry and f" {name.replace('-', ' ')} " not in doc_entry:
        problems.append(f"the map's docs/ entry does not name {p}")

# The package sentence against scripts/setup.sh.
sentence = re.search(r"`scripts/setup\.sh` alone installs the Debian\s+packages \(([^)]*)\)",
                     text)
setup = open(os.path.join(src, "scripts", "setup.sh"), encoding="utf-8").read()
array = re.search(r"^PACKAGES=\((.*?)\)", setup, re.S | re.M)
if not sentence:
    problems.append("no sentence '`scripts/setup.sh` alone installs the Debian packages (...)'")
elif not array:
    problems.append("scripts/setup.sh has no PACKAGES=(...) array")
else:
    said = [p.strip() for p in sentence.group(1).split(",") if p.strip()]
    wanted = array.group(1).split()
    for p in wanted:
        if p not in said:
            problems.append(f"the README's package list lacks {p} (scripts/setup.sh installs it)")
    for p in said:
        if p not in wanted:
            problems.append(f"the README's package list names {p}, which scripts/setup.sh "
                            "does not install")
    if sorted(said) == sorted(wanted) and said != wanted:
        problems.append("the README's package list is not in scripts/setup.sh's order")

for p in problems:
    print(f"FAIL: {readme}: {p}", file=sys.stderr)
if problems:
    sys.exit(1)
print(f"cli_readme_map: {len(sources)} source files and {len(folders)} folders in the map; "
      f"{len(wanted)} packages")
EOF
