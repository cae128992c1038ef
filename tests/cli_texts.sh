#!/usr/bin/env bash
# cli_texts.sh — what the help texts and docs say matches the binary:
#  - no file of the tree cites the team's spec, its folder or issue numbers;
#  - every command's --help names exactly the options of its option table
#    (`COMMAND --list-options`), and every option docs/reference.md names for
#    a command is in that command's table;
#  - every docs/FILE.md "Section" or README "Section" a help text, a message
#    or a source comment points at exists, and every markdown link of README
#    and docs/ resolves (file and #anchor);
#  - the policy presets' help lists every setting a preset changes;
#  - no command takes an abbreviated option; misspelt commands and options
#    get a did-you-mean, a setting given as an option the --set it means,
#    and a key repeated in a scenario file is an error naming both lines.
# Usage: cli_texts.sh STORMSWEEP_BIN SOURCE_DIR
set -euo pipefail
exec python3 - "$1" "$2" <<'EOF'
import os
import re
import subprocess
import sys
import tempfile

bin_, src = sys.argv[1], sys.argv[2]
COMMANDS = ["sim", "route", "run", "list", "refine", "merge", "analyze", "recommend",
            "report", "verify", "bench", "boundary"]
problems = []


def run(*args):
    p = subprocess.run([bin_, *args], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def tree_files():
    try:
        out = subprocess.run(["git", "-C", src, "ls-files", "-z"], check=True,
                             capture_output=True).stdout.decode().split("\0")
        return [p for p in out if p]
    except (OSError, subprocess.CalledProcessError):
        found = []
        for root, dirs, files in os.walk(src):
            dirs[:] = [d for d in dirs if not d.startswith(".")
                       and not os.path.exists(os.path.join(root, d, "CMakeCache.txt"))]
            found += [os.path.relpath(os.path.join(root, f), src) for f in files]
        return found


def read(path):
    try:
        with open(os.path.join(src, path), encoding="utf-8") as f:
            return f.read()
    except (UnicodeDecodeError, OSError):
        return None


# ---- no citation of the spec, its folder or issue numbers --------------------
me = "tests/cli_texts.sh"
cite = re.compile(r"\bSPEC\b|\.\./shared|\b[Ii]ssues? #?[0-9]+|\bissue-[0-9]+|\bopen issue\b"
                  r"|\bthe issue's\b")
texts = {}
for p in tree_files():
    if p == me:
        continue
    t = read(p)
    if t is None:
        continue
    texts[p] = t
    for n, line in enumerate(t.splitlines(), 1):
        m = cite.search(line)
        if m and "resilience4j issue" not in line:
            problems.append(f"{p}:{n}: cites '{m.group(0)}': {line.strip()[:90]}")

# ---- option tables, help texts and docs/reference.md -------------------------
tables, helps = {}, {}
for c in COMMANDS:
    helps[c] = run(c, "--help")[1]
    rc, out, err = run(c, "--list-options")
    if rc != 0 or not out.strip():
        problems.append(f"{c} --list-options exited {rc}: {err.strip()}")
        continue
    tables[c] = {o.rstrip("=") for o in out.split()}
    rc, out, _ = run(c, "--help")
    helps[c] = out
    # another command's options, quoted: 'stormsweep run --slice K/N', run --refine
    others = r"\b(?!" + c + r"\b)(?:" + "|".join(COMMANDS) + r")\b"
    own = re.sub(r"stormsweep\s+" + others + r"[^'\n]*", "", out)
    own = re.sub(others + r"((?:\s+--[\w-]+(?:[= ][A-Z/]+)?)+)", "", own)
    said = {o.replace("_", "-") for o in re.findall(r"(?<![\w-])--[a-z][a-z0-9_-]*", own)}
    for o in sorted(said - tables[c] - {"--list-options", "--opt", "--some-opt"}):
        problems.append(f"'{c} --help' names {o}, which {c} does not take")
    for o in sorted(tables[c] - said - {"--help"}):
        problems.append(f"'{c} --help' does not name {o}, which {c} takes")

# docs/reference.md: an option belongs to a command when it is in a code span
# that starts with that command ("stormsweep report ... --x"), or in a block
# (a bullet or paragraph) that starts with such a span, or under a heading
# that names the command.
ref = read("docs/reference.md") or ""
head_cmd = block_cmd = None
span_re = re.compile(r"`([^`]*)`")
cmd_re = re.compile(r"^(?:stormsweep\s+|build/stormsweep\s+)?(" + "|".join(COMMANDS) + r")(?=\s|$)")
for n, line in enumerate(ref.splitlines(), 1):
    h = re.match(r"^#+\s+(.*)", line)
    if h:
        first = h.group(1).split()[0].strip("`:").lower()
        head_cmd = first if first in COMMANDS else (
            "boundary" if first == "boundary" else None)
        block_cmd = None
        continue
    if not line.strip() or line.startswith("- ") or line.startswith("| "):
        block_cmd = None
    spans = span_re.findall(line)
    if spans and (line.startswith("- `") or not line.startswith(" ")) and block_cmd is None:
        m = cmd_re.match(spans[0]) if line.lstrip("- ").startswith("`") else None
        if m and spans[0].startswith(("stormsweep", "build/")):
            block_cmd = m.group(1)
    for s in spans:
        m = cmd_re.match(s)
        owner = m.group(1) if m else block_cmd or head_cmd
        if not owner or owner not in tables:
            continue
        for o in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", s):
            if o not in tables[owner]:
                problems.append(f"docs/reference.md:{n}: names '{owner} {o}', which "
                                f"{owner} does not take")

# ---- references to sections and links ----------------------------------------
def slug(title):
    t = re.sub(r"[^\w\- ]", "", title.strip().lower().replace("`", ""))
    return t.replace(" ", "-")


def sections(path):
    t = read(path) or ""
    heads = [re.sub(r"^#+\s+", "", ln) for ln in t.splitlines() if re.match(r"^#+\s", ln)]
    bold = re.findall(r"\*\*([^*]+)\*\*", t)
    return heads, bold, {slug(h) for h in heads}


docs = {p for p in texts if p.startswith("docs/") and p.endswith(".md")} | {"README.md"}
help_text = "\n".join(helps.values())
where = dict(texts)
where["<help texts>"] = help_text
ref_re = re.compile(r"\b(README|docs/[\w.-]+\.md),?\s+\"([^\"]+)\"")
for p, t in where.items():
    if p.endswith((".md",)) and p in docs:
        continue
    flat = re.sub(r"\s*\n\s*(?:\*|#|;|//)?\s*", " ", t)
    for m in ref_re.finditer(flat):
        doc = "README.md" if m.group(1) == "README" else m.group(1)
        title = m.group(2).rstrip(".,;")
        if doc not in docs:
            problems.append(f"{p}: points at {doc}, which does not exist")
            continue
        heads, bold, _ = sections(doc)
        if not any(h.startswith(title) or title in h for h in heads) and \
                not any(b.startswith(title) for b in bold):
            problems.append(f"{p}: points at {doc} \"{title}\", which has no such section")
for p in sorted(docs):
    t = read(p) or ""
    t = re.sub(r"```.*?```", "", t, flags=re.S)
    for m in re.finditer(r"\]\(([^)\s]+)\)", t):
        target = m.group(1)
        if re.match(r"^[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        doc = os.path.normpath(os.path.join(os.path.dirname(p), path)) if path else p
        if not os.path.exists(os.path.join(src, doc)):
            problems.append(f"{p}: link to {target}: no file {doc}")
        elif anchor and doc.endswith(".md") and anchor not in sections(doc)[2]:
            problems.append(f"{p}: link to {target}: {doc} has no section #{anchor}")

# ---- presets: the help names every setting a preset changes -------------------
rc, listed, _ = run("sim", "--list-settings")
for preset in ("naive", "guarded"):
    rc, out, _ = run("sim", "--policy", preset, "--show-settings")
    changed = re.findall(r"^  ([a-z_]+) += \S+ +--policy$", out, re.M)
    described = re.search(r"^\s+" + preset + r"\s+(.*(?:\n\s{20,}[a-z_]+=.*)*)", helps["sim"], re.M)
    desc = described.group(1) if described else ""
    for key in changed:
        if key != "policy" and f"{key}=" not in desc:
            problems.append(f"'sim --help' does not say that --policy {preset} sets {key}")
        if key != "policy" and f"{key}=" not in listed:
            problems.append(f"'sim --list-settings' does not say that policy {preset} sets {key}")

# ---- [sweep] keys: list --help names the keys the reader takes ------------------
with tempfile.TemporaryDirectory() as d:
    ini = os.path.join(d, "keys.ini")
    with open(ini, "w") as f:
        f.write("[sweep]\nzzzz_qqqq = 1\n")
    rc, out, err = run("list", ini)
    m = re.search(r"\(expected (.*)\)", err)
    keys = set(re.split(r", | or ", m.group(1))) if m else set()
    if not keys:
        problems.append(f"list: no key list for an unknown [sweep] key: {err.strip()}")
    line = re.search(r"^\s+\[sweep\]\s+(.*)$", helps.get("list", ""), re.M)
    said = set(re.split(r",\s*", line.group(1).strip())) if line else set()
    for k in sorted(keys ^ said):
        problems.append(f"'list --help' [sweep] keys and the reader's differ in '{k}'")

# ---- the option grammar ----------------------------------------------------------
for c, opts in tables.items():
    for o in sorted(opts):
        short = o[:-1]
        if len(short) < 4 or short in opts:
            continue
        rc, out, err = run(c, short + "=1", "--zz-not-an-option")
        if f"unknown option '{short}'" not in err:
            problems.append(f"'{c} {short}' is not refused as an abbreviation of {o}: "
                            f"{err.strip()}")
        elif f"did you mean {o}?" not in err and "did you mean --" not in err:
            problems.append(f"'{c} {short}': no did-you-mean: {err.strip()}")


def expect(args, rc_want, text):
    rc, out, err = run(*args)
    if rc != rc_want or text not in err:
        problems.append(f"'stormsweep {' '.join(args)}': want exit {rc_want} and '{text}', "
                        f"got exit {rc}: {err.strip()}")


expect(["analyse", "x.h5"], 2, "unknown command 'analyse' (did you mean 'analyze'?)")
expect(["recomend"], 2, "(did you mean 'recommend'?)")
expect(["sim", "--seeed", "3"], 2, "unknown option '--seeed' (did you mean --seed?)")
expect(["sim", "--capacity-factor", "2"], 2,
       "unknown option '--capacity-factor': capacity_factor is a setting "
       "(did you mean --set capacity_factor=2?)")
expect(["run", "--capacity_factor=2"], 2, "(did you mean --set capacity_factor=2?)")
expect(["verify", "--budget-ratoi", "0.1"], 2, "(did you mean the setting --set budget_ratio=0.1?)")
expect(["recommend", "--min-pas", "0.9", "x.h5"], 2,
       "unknown option '--min-pas' (did you mean --min-pass? options are spelled in full)")
with tempfile.TemporaryDirectory() as d:
    ini = os.path.join(d, "twice.ini")
    with open(ini, "w") as f:
        f.write("[scenario]\nload = 0.5\nshards = 4\nload = 0.6\n")
    for c in ("sim", "list", "verify"):
        expect([c, ini], 2, f"{ini}:4: duplicate key 'load' in [scenario] (first at line 2)")
    with open(ini, "w") as f:
        f.write("[sweep]\nreplicates = 2\n[grid]\nvnodes = 10, 50\nreplicates = 3\n")
    expect(["list", ini], 2, "'replicates' belongs in [sweep]")

for p in problems:
    print(f"FAIL: {p}", file=sys.stderr)
if problems:
    sys.exit(1)
print(f"cli_texts: {len(texts)} files, {len(tables)} commands' options, links and references ok")
EOF
