#!/bin/bash
# How far can two cores of this machine scale an ingest at all? (issue 14)
#
#   bench/tools/pair_ceiling.sh INPUT ROUNDS BIN
#
# Each round runs one `--threads 1` ingest of INPUT pinned to cpu 0 alone
# ("solo"), then two such ingests at once, pinned to cpu 0 and cpu 1
# ("pair"). The pair shares nothing but the machine (caches, memory
# bandwidth, the host's scheduling of the two vCPUs, the page allocator), so
# 2 * solo / pair is the best 1 -> 2 core speed-up any parallel ingest of
# the same work could reach here. The input is read first in every round,
# to be in the page cache. Prints per round: wall, user and sys of the solo
# run and of both pair runs, and that ratio; then the wall of one ingest
# with both cores (`--threads 2`, pinned to cpus 0-1) and its speed-up over
# the solo run, which the ceiling bounds. Take medians.
set -euo pipefail
IN=$1; R=$2; BIN=$3
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
run() {  # cpus, table, time file[, threads]
  /usr/bin/time -f "%e %U %S" -o "$3" taskset -c "$1" "$BIN" ingest "$IN" -o "$2" --threads "${4:-1}" -q > /dev/null 2>&1
}
for r in $(seq 1 "$R"); do
  rm -rf "$D/a" "$D/b"; cat "$IN" > /dev/null; sync
  run 0 "$D/a" "$D/solo"
  rm -rf "$D/a"; sync
  run 0 "$D/a" "$D/pa" & run 1 "$D/b" "$D/pb" & wait
  rm -rf "$D/a" "$D/b"; sync
  run 0-1 "$D/a" "$D/two" 2
  read -r sw su ss < "$D/solo"; read -r aw au as < "$D/pa"; read -r bw bu bs < "$D/pb"
  read -r tw tu ts < "$D/two"
  pw=$(echo "$aw $bw" | awk '{print ($1 > $2) ? $1 : $2}')
  echo "round $r solo $sw $su $ss | pair $aw $au $as | $bw $bu $bs | ceiling $(echo "$sw $pw" | awk '{printf "%.2f", 2 * $1 / $2}')x | two $tw $tu $ts speedup $(echo "$sw $tw" | awk '{printf "%.2f", $1 / $2}')x"
done
