#!/usr/bin/env bash
# Generation (section 1 of the benchmark) on every supported major, each on a throwaway
# server of its own on Debian's packages (scripts/matrix.sh runs bench/run.sh in each), set
# side by side in bench/results/versions.md: each generator's cost as a ratio to the
# executor's floor measured in the same run. On 18 and later, core's uuidv7() is measured
# beside ours. Needs root, like the matrix. Arguments go to bench/run.sh (--runs 9, say).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VERSIONS=${SNOWFLAKE_VERSIONS:-15 17 18 19}
RUN_OUT=/var/tmp/snowflake-bench-versions   # where each major's run writes, in its root
OUT=$ROOT/bench/results/versions.md

"$ROOT/scripts/matrix.sh" --versions "$VERSIONS" -- \
  bench/run.sh --sections 1 --out "$RUN_OUT" "$@"

tsvs=()
for major in $VERSIONS; do
  tsvs+=("$("$ROOT/scripts/matrix.sh" --root-of "$major")$RUN_OUT/generation.tsv")
done
python3 - "$OUT" "${tsvs[@]}" <<'PY'
import sys, time
out, paths = sys.argv[1], sys.argv[2:]
runs = []  # (server, {name: (ns, best ratio, median ratio)})
for p in paths:
    with open(p) as f:
        server = f.readline().lstrip("# ").strip()
        rows = {}
        for line in f:
            name, ns, ratio, median = line.rstrip("\n").split("\t")
            rows[name] = (float(ns), ratio, median)
    runs.append((server, rows))
names = []
for _, rows in runs:
    names += [n for n in rows if n not in names]
md = [f"# Generation on every major, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n",
      "Made by `bench/versions.sh`: `SELECT count(f) FROM generate_series(1, N)` on each "
      "major's own server, one after another. Each cell is the median of the runs' ratios "
      "to the executor's floor measured just before them, then the best run over the "
      "floor's best run, in brackets; the floor row gives its best ns per row. Compare "
      "within a column: each column is one run on one server.\n"]
md.append("| f | " + " | ".join(s for s, _ in runs) + " |")
md.append("|---|" + "---:|" * len(runs))
for n in names:
    cells = []
    for _, rows in runs:
        if n not in rows:
            cells.append("–")
        elif n == "floor":
            cells.append(f"{rows[n][0]:.1f} ns")
        else:
            cells.append(f"{rows[n][2]} ({rows[n][1]})")
    md.append(f"| {n} | " + " | ".join(cells) + " |")
text = "\n".join(md) + "\n"
with open(out, "w") as f:
    f.write(text)
print(text)
PY
