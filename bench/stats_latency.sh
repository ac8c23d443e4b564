#!/usr/bin/env bash
# Range statistics latency over HTTP (GET /api/tables/{t}/stats, what the
# viewer's Stats tab asks): the whole span, 10%, 1% and a narrow range
# (0.01%) in the middle of the trace; per range the first call after the
# server started (cold block cache) and the median of 3 warm calls, with
# the answer's events read one by one, truncation and name count.
# usage: bench/stats_latency.sh TABLE [tracetable binary] [port]
set -euo pipefail
TAB=$1
T=${2:-build/cli/tracetable}
PORT=${3:-18931}
read -r lo hi < <("$T" info --json "$TAB" | python3 -c "import json,sys; d=json.load(sys.stdin); print(d['start_us'], d['end_us'])")
name=$(basename "$TAB" .tracetable)
for frac in 1 0.1 0.01 0.0001; do
  "$T" serve "$TAB" --port "$PORT" >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 50); do curl -sf "localhost:$PORT/api/tables" >/dev/null && break; sleep 0.2; done
  read -r a b < <(python3 -c "lo,hi,f=$lo,$hi,$frac; m=(lo+hi)/2; w=(hi-lo)*f/2; print('%.3f %.3f' % (max(lo,m-w), min(hi,m+w)))")
  url="localhost:$PORT/api/tables/$name/stats?start_us=$a&end_us=$b&top=5"
  times=()
  for i in 0 1 2 3; do
    t=$(curl -s -o /tmp/stats_latency.$$ -w '%{time_total}' "$url")
    times+=("$t")
  done
  summary=$(python3 -c "import json; d=json.load(open('/tmp/stats_latency.$$')); print('events', d['events'], 'truncated', d['truncated'], 'names', d['num_names'])")
  python3 -c "import statistics,sys; t=[float(x)*1000 for x in sys.argv[2:]]; print('%-7s first %.0f ms, warm median %.0f ms (%s)' % (sys.argv[1], t[0], statistics.median(t[1:]), '$summary'))" "${frac}" "${times[@]}"
  kill "$pid"; wait "$pid" 2>/dev/null || true
done
rm -f /tmp/stats_latency.$$
