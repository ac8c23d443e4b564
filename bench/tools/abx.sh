#!/bin/bash
# Interleaved A/B of ingest binaries on one input (bench/results/*-s36.md).
#
#   bench/tools/abx.sh INPUT ROUNDS "EXTRA INGEST ARGS" name=BIN [name=BIN ...]
#
# Each round ingests INPUT once with every binary, the order reversed every
# other round (ABBA: on a VM the run after another ingest is often the
# slower one), and prints per run: /usr/bin/time wall, peak RSS, user and
# sys, and the --timings stages. Take medians over the rounds.
set -euo pipefail
IN=$1; R=$2; EXTRA=$3; shift 3
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
for r in $(seq 1 "$R"); do
  if (( r % 2 == 0 )); then set -- $(printf "%s\n" "$@" | tac); fi
  for nb in "$@"; do
    n=${nb%%=*}; b=${nb#*=}
    rm -rf "$OUT/t.tracetable"; sync
    # shellcheck disable=SC2086  # EXTRA is a list of arguments
    /usr/bin/time -f "%e %M %U %S" -o "$OUT/time" "$b" ingest "$IN" -o "$OUT/t.tracetable" $EXTRA --timings -q > "$OUT/out" 2>&1
    st=$(grep stages "$OUT/out" | sed 's/stages: //')
    pick() { echo "$st" | grep -o "$1 [0-9.]*s" || true; }
    read -r w m u s < "$OUT/time"
    echo "round $r $n wall $w maxrss_MiB $((m / 1024)) user $u sys $s | $(pick reading) | $(pick "memory profile") | $(pick "writing tiles") | $(pick "search index")$(pick "indexes") | $(pick "sealing files")"
  done
done
