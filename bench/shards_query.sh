#!/usr/bin/env bash
# A run of shards answering as one table (docs/performance.md, "Runs"):
#  - 64 hosts (one tt_gen_trace host of 100k events under 64 names, so every
#    shard has the run's span and summary grid): the all-host window at
#    ~2000 bins over the 64-shard run vs one merged table of the same hosts,
#    in process (tt_shards_query window: open, first call, median warm call);
#  - a run of 1,000 tiny hosts: open + the first whole-run window, with at
#    most 64 shards open;
#  - `tracetable serve` on that run with --max-open-shards 64: its open fds
#    after the whole-run window (ls /proc/PID/fd).
# usage: bench/shards_query.sh DATA_DIR [BUILD_DIR]
set -euo pipefail
D=$1
B=${2:-build}
Q=$B/bench/tt_shards_query
T=$B/cli/tracetable
mkdir -p "$D/hosts64"
[ -f "$D/host.json" ] || "$B/bench/tt_gen_trace" -n 100000 --hosts 1 --seed 7 -o "$D/host.json" >/dev/null
for i in $(seq -w 0 63); do ln -f "$D/host.json" "$D/hosts64/host$i.json"; done
[ -f "$D/out64/run/RUN" ] || "$Q" build "$D/hosts64" "$D/out64"
echo "== 64 hosts: merged table, then the 64-shard run (3 processes each)"
for k in 1 2 3; do "$Q" window "$D/out64/merged.tracetable" 7; "$Q" window "$D/out64/run" 7; done
[ -f "$D/out1000/run1000/RUN" ] || "$Q" tiny 1000 "$D/out1000"
echo "== 1000 tiny shards: open + first whole-run window, 64 open at most"
for k in 1 2 3; do "$Q" window "$D/out1000/run1000" 2 64; done
echo "== serve the 1000-shard run, --max-open-shards 64"
port=18745
"$T" serve "$D/out1000/run1000" --port $port --max-open-shards 64 >/dev/null 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -sf "localhost:$port/healthz" >/dev/null && break; sleep 0.1; done
echo "fds after start: $(ls /proc/$pid/fd | wc -l)"
curl -sf -o /dev/null -w "whole-run window: %{http_code} %{size_download} bytes %{time_total} s\n" \
  "localhost:$port/api/tables/run1000/window?resolution_us=25"
echo "fds after the whole-run window: $(ls /proc/$pid/fd | wc -l)"
curl -sf -o /dev/null "localhost:$port/api/tables/run1000/window?resolution_us=25"
echo "fds after a second one: $(ls /proc/$pid/fd | wc -l)"
