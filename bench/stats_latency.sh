#!/usr/bin/env bash
# Range statistics latency over HTTP (GET /api/tables/{t}/stats, what the
# viewer's Stats tab asks): the whole span, 10%, 1%, 0.1% and a narrow range
# (0.01%) in the middle of the trace (FRACS="1 0.1" to choose); per range
# the first call after the server started (cold block cache) and the median
# of 3 warm calls, with the server's CPU time per warm call (median; less
# sensitive than wall time to other work on a shared machine), the answer's
# events read one by one, truncation and name count. RANGES="a:b ..." adds
# ranges given in absolute microseconds (e.g. edges just inside buckets).
# usage: bench/stats_latency.sh TABLE [tracetable binary] [port]
set -euo pipefail
TAB=$1
T=${2:-build/cli/tracetable}
PORT=${3:-18931}
FRACS=${FRACS:-1 0.1 0.01 0.001 0.0001}
read -r lo hi < <("$T" info --json "$TAB" | python3 -c "import json,sys; d=json.load(sys.stdin); print(d['start_us'], d['end_us'])")
name=$(basename "$TAB" .tracetable)
cpu_ms() { awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) * 1000 / hz}' "/proc/$1/stat"; }
for frac in $FRACS ${RANGES:-}; do
  "$T" serve "$TAB" --port "$PORT" >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 50); do curl -sf "localhost:$PORT/api/tables" >/dev/null && break; sleep 0.2; done
  if [[ $frac == *:* ]]; then
    a=${frac%:*} b=${frac#*:}
  else
    read -r a b < <(python3 -c "lo,hi,f=$lo,$hi,$frac; m=(lo+hi)/2; w=(hi-lo)*f/2; print('%.3f %.3f' % (max(lo,m-w), min(hi,m+w)))")
  fi
  url="localhost:$PORT/api/tables/$name/stats?start_us=$a&end_us=$b&top=5"
  times=()
  cpus=()
  for i in 0 1 2 3; do
    c0=$(cpu_ms "$pid")
    t=$(curl -s -o /tmp/stats_latency.$$ -w '%{time_total}' "$url")
    c1=$(cpu_ms "$pid")
    times+=("$t")
    cpus+=("$(python3 -c "print($c1 - $c0)")")
  done
  summary=$(python3 -c "import json; d=json.load(open('/tmp/stats_latency.$$')); print('events', d['events'], 'truncated', d['truncated'], 'names', d['num_names'])")
  python3 -c "import statistics,sys; t=[float(x)*1000 for x in sys.argv[2:6]]; c=[float(x) for x in sys.argv[6:]]; print('%-7s first %.0f ms, warm median %.0f ms, warm cpu median %.0f ms (%s)' % (sys.argv[1], t[0], statistics.median(t[1:]), statistics.median(c[1:]), '$summary'))" "${frac}" "${times[@]}" "${cpus[@]}"
  kill "$pid"; wait "$pid" 2>/dev/null || true
done
rm -f /tmp/stats_latency.$$
