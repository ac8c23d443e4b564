#!/usr/bin/env bash
# bench/viewer/run.sh — browser benchmark of the built-in viewer (never part
# of ctest): headless Debian chromium + playwright-core (installed as for
# tests/viewer), 1600x900, on synthetic tables (tt_gen_trace --hosts 2
# --devices 4). Writes bench/results/<date>-<host>-viewer[-TAG].md and
# .jsonl (every run, and the command lines).
#
#   bench/viewer/run.sh [--build DIR] [--data DIR] [--sizes N,N] [--reps N]
#                       [--json-path] [--settle MS] [--log FILE] [--tag NAME]
#
#   --build DIR    where cli/tracetable and bench/tt_gen_trace are (build)
#   --data DIR     where traces and tables go (bench/data, git-ignored)
#   --sizes        event counts (1000000)
#   --reps         fresh browser contexts per table and path (3; medians)
#   --settle MS    pause after each step's ready before the next (150)
#   --log FILE     every tile viewer response, one JSON line each: step,
#                  level, track group, why it was asked, wire bytes
#   --json-path    also measure the previous Chrome-trace JSON viewer (the
#                  query/viewer of git rev 2ae76ae, proxied to the same server)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="$ROOT/build"
DATA="$ROOT/bench/data"
SIZES=1000000
REPS=3
JSON=""
SETTLE=150
LOG=()
TAG=""
ARGV="bench/viewer/run.sh $*"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) BUILD="$2"; shift ;;
    --data) DATA="$2"; shift ;;
    --sizes) SIZES="$2"; shift ;;
    --reps) REPS="$2"; shift ;;
    --json-path) JSON=--json-path ;;
    --settle) SETTLE="$2"; shift ;;
    --log) LOG=(--log "$2"); shift ;;
    --tag) TAG="-$2"; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/viewer/run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
"$ROOT/tests/viewer/run.sh" --setup >&2
mkdir -p "$DATA" "$ROOT/bench/results"
tables=()
for n in ${SIZES//,/ }; do
  t="$DATA/viewer-$n.tracetable"
  if [[ ! -f "$t/TABLEFILES" ]]; then
    echo "[viewer bench] generating and ingesting $n events" >&2
    "$BUILD/bench/tt_gen_trace" --events "$n" --hosts 2 --devices 4 --seed 1 -o "$DATA/viewer-$n.json.gz" >/dev/null
    "$BUILD/cli/tracetable" ingest "$DATA/viewer-$n.json.gz" -o "$t" --force -q
  fi
  tables+=("$t")
done
out="$ROOT/bench/results/$(date -u +%F)-$(hostname)-viewer$TAG"
cmd=(node "$ROOT/bench/viewer/viewer_bench.js" --build "$BUILD" --reps "$REPS" --settle "$SETTLE" "${LOG[@]}" $JSON "${tables[@]}")
echo "[viewer bench] ${cmd[*]}" >&2
{
  printf '{"command":%s,"invoked_as":%s,"date":"%s","host":"%s","nproc":%s,"load":"%s"}\n' \
    "$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "${cmd[*]}")" \
    "$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$ARGV")" \
    "$(date -u +%FT%TZ)" "$(hostname)" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
  "${cmd[@]}"
} > "$out.jsonl"
python3 "$ROOT/bench/viewer/report.py" "$out.jsonl" > "$out.md"
cat "$out.md"
