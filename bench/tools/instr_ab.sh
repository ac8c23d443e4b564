#!/bin/bash
# Instructions, not seconds: an A/B of ingest binaries under callgrind.
#
#   bench/tools/instr_ab.sh INPUT ROUNDS "EXTRA INGEST ARGS" name=BIN name=BIN
#
# On the 2-vCPU VM of bench/results a change of 2% in CPU work needs 30 or
# more ABBA rounds of wall time to show (docs/performance.md, s43), and
# often not even then. callgrind counts the instructions each run executes,
# which do not depend on what the host does with the other vCPU: repeated
# runs of one binary agree within ~0.5% (threads and the page warmer's
# yields vary a little). Use it to see whether a change removes work; claim
# a speed-up only from wall times (abx.sh). Instructions are not time:
# cache misses and page faults, most of an ingest's cost here, do not count.
#
# Prints per run the total instructions (Ir), then the median per binary,
# and the functions whose count moved most between the first two binaries
# (from their last runs). Needs valgrind (Debian `valgrind`); a run takes
# ~40× its native time (gen 1M: ~30 s). Under valgrind glibc picks its AVX2
# routines and simdjson its haswell kernel (no AVX-512).
set -euo pipefail
IN=$1; R=$2; EXTRA=$3; shift 3
command -v valgrind > /dev/null || { echo "instr_ab.sh: valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
names=()
for r in $(seq 1 "$R"); do
  for nb in "$@"; do
    n=${nb%%=*}; b=${nb#*=}
    (( r == 1 )) && names+=("$n")
    rm -rf "$OUT/t.tracetable"
    # The CLI re-executes itself to set this tunable (cli/main.cc); under
    # valgrind that exec would leave the tool, so set it here.
    # shellcheck disable=SC2086  # EXTRA is a list of arguments
    GLIBC_TUNABLES=glibc.malloc.hugetlb=1 valgrind -q --tool=callgrind --callgrind-out-file="$OUT/$n.out" \
      "$b" ingest "$IN" -o "$OUT/t.tracetable" $EXTRA -q > "$OUT/log" 2>&1 || { cat "$OUT/log" >&2; exit 1; }
    ir=$(callgrind_annotate "$OUT/$n.out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
    echo "round $r $n Ir $ir"
    echo "$ir" >> "$OUT/$n.ir"
  done
done
for n in "${names[@]}"; do
  sort -n "$OUT/$n.ir" | awk -v n="$n" '{v[NR]=$1} END {m=(NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2; printf "%s median Ir %.0f (%d runs)\n", n, m, NR}'
done
if (( ${#names[@]} >= 2 )); then
  a=${names[0]}; b=${names[1]}
  echo "functions that moved most, $a -> $b (millions of instructions):"
  python3 - <(callgrind_annotate --threshold=100 "$OUT/$a.out" 2>/dev/null) \
    <(callgrind_annotate --threshold=100 "$OUT/$b.out" 2>/dev/null) <<'PY'
import re, sys
LINE = re.compile(r"^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*?)(?:\s+\[[^\]]*\])?$")
def load(p):
    d = {}
    for line in open(p):
        m = LINE.match(line.rstrip("\n"))
        if m and "PROGRAM TOTALS" not in line:
            f = m.group(2)[:110]
            d[f] = d.get(f, 0) + int(m.group(1).replace(",", ""))
    return d
a, b = load(sys.argv[1]), load(sys.argv[2])
moved = sorted(set(a) | set(b), key=lambda f: -abs(b.get(f, 0) - a.get(f, 0)))
for f in moved[:15]:
    print(f"{a.get(f, 0) / 1e6:9.1f} {b.get(f, 0) / 1e6:9.1f} {(b.get(f, 0) - a.get(f, 0)) / 1e6:+9.1f}  {f}")
PY
fi
