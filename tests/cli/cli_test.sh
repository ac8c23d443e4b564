#!/usr/bin/env bash
# End-to-end checks of the tracetable command: every subcommand's --help, the
# happy path, bad input (clear message, non-zero exit, nothing left behind),
# and peak memory with a budget far below the input size.
set -u
tt=$1 gen=$2 shared=$3
source "$(dirname "$0")/test_lib.sh"

no_table_left() {
  if compgen -G "$work/out*" >/dev/null; then fail "$1: left files: $(ls -d "$work"/out*)"; else ok; fi
}

for sub in ingest info query export verify; do
  if "$tt" "$sub" --help | grep -q "usage: tracetable $sub"; then ok; else fail "$sub --help"; fi
done
expect_fail "unknown command" "unknown command" "$tt" frobnicate

# Happy path on a real trace.
trace=$shared/catapult/x_event_trace.json
"$tt" ingest "$trace" -o "$work/x.tracetable" -q 2>/dev/null && ok || fail "ingest x_event_trace"
"$tt" verify "$work/x.tracetable" | grep -q "^OK" && ok || fail "verify"
# With range statistics aggregates: verify decodes them, info shows them.
"$tt" ingest "$trace" -o "$work/xs.tracetable" -q --stats-bucket-events 4 2>/dev/null && ok || fail "ingest with aggregates"
"$tt" verify "$work/xs.tracetable" | grep -q "^OK" && ok || fail "verify a table with aggregates"
"$tt" info "$work/xs.tracetable" | grep -q "stats     aggregates in" && ok || fail "info shows the aggregates"
"$tt" info "$work/x.tracetable" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["events"] > 0' && ok || fail "info --json"
"$tt" query "$work/x.tracetable" --resolution-us 0 | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["displayTimeUnit"] == "ns"
assert d["tracetable"]["truncated"] is False
assert any(e["ph"] == "X" for e in d["traceEvents"])' && ok || fail "query output is Chrome JSON"
"$tt" query "$work/x.tracetable" --resolution-us 0 --limit 5 | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["tracetable"]["truncated"] is True and d["tracetable"]["items"] == 5' && ok || fail "query --limit truncates"
q1=$("$tt" query "$work/x.tracetable" | md5sum) q2=$("$tt" query "$work/x.tracetable" | md5sum)
[ "$q1" = "$q2" ] && ok || fail "the same query answered differently twice"
"$tt" export "$work/x.tracetable" -o "$work/x.json.gz" 2>/dev/null && ok || fail "export"
"$tt" ingest "$work/x.json.gz" -o "$work/x2.tracetable" -q 2>/dev/null && ok || fail "re-ingest export"
a=$("$tt" info "$work/x.tracetable" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])')
b=$("$tt" info "$work/x2.tracetable" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])')
[ "$a" = "$b" ] && ok || fail "export round trip: $a vs $b events"

# Bad input: clear error, non-zero exit, nothing written.
expect_fail "refuses to overwrite" "already exists" "$tt" ingest "$trace" -o "$work/x.tracetable"
expect_fail "missing input" "no such file" "$tt" ingest "$work/nope.json" -o "$work/out.tracetable"
no_table_left "missing input"
: >"$work/empty.json"
expect_fail "empty file" "empty.json" "$tt" ingest "$work/empty.json" -o "$work/out.tracetable"
no_table_left "empty file"
printf '{"traceEvents":[{"ph":"X","ts":1,"dur":2,"pid":1,"tid":1,"name":"a"},{"ph":"X","ts":}]}' >"$work/bad.json"
expect_fail "malformed JSON" "byte" "$tt" ingest "$work/bad.json" -o "$work/out.tracetable" --strict
no_table_left "malformed JSON"
printf '\x1f\x8b\x08\x00garbage-not-deflate' >"$work/bad.json.gz"
expect_fail "corrupt gzip" "bad.json.gz" "$tt" ingest "$work/bad.json.gz" -o "$work/out.tracetable"
no_table_left "corrupt gzip"
mkdir -p "$work/emptydir"
expect_fail "folder without traces" "no trace files" "$tt" ingest "$work/emptydir" -o "$work/out.tracetable"
head -c 100000 "$shared/xspace/gpu_multi_worker_host179.xplane.pb" >"$work/cut.xplane.pb"
expect_fail "truncated xplane" "cut.xplane.pb" "$tt" ingest "$work/cut.xplane.pb" -o "$work/out.tracetable"
no_table_left "truncated xplane"
expect_fail "not a table" "not a tracetable" "$tt" info "$work/emptydir"
expect_fail "no such table" "no such table" "$tt" query "$work/missing.tracetable"
expect_fail "bad time" "start-us" "$tt" query "$work/x.tracetable" --start-us abc
expect_fail "end before start" "before" "$tt" query "$work/x.tracetable" --start-us 10 --end-us 5
expect_fail "unknown pid" "no such process" "$tt" query "$work/x.tracetable" --pid 999999
expect_fail "bad budget" "size" "$tt" ingest "$trace" -o "$work/out.tracetable" --memory-budget lots

# A damaged event is skipped, counted and reported (file, byte offset);
# --strict fails on it instead. A cut-off gzip keeps every complete event.
events_of() { "$tt" info "$1" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])'; }
printf '{"traceEvents":[{"ph":"X","ts":1,"dur":2,"pid":1,"tid":1,"name":"a"},\n{"ph":"X","ts":"100a","dur":1,"pid":1,"tid":1},\n{"ph":"X","ts":3,"dur":1,"pid":1,"tid":1,"name":"b","args":{"x":1,}},\n{"ph":"X","ts":4,"dur":1,"pid":1,"tid":1,"name":"c"}]}' >"$work/skip.json"
if err=$("$tt" ingest "$work/skip.json" -o "$work/skip.tracetable" -q 2>&1 >/dev/null); then ok; else fail "ingest with a bad event: $err"; fi
grep -q "skipped or tolerated 2 item" <<<"$err" && grep -q "1  event with a bad time value" <<<"$err" &&
  grep -q "1  event with broken JSON" <<<"$err" && grep -q "skip.json: byte 85: expected" <<<"$err" &&
  ok || fail "bad events not reported: $err"
[ "$(events_of "$work/skip.tracetable")" = 2 ] && ok || fail "bad events: expected the 2 good ones"
expect_fail "--strict on a bad event" "skip.json: byte 85" "$tt" ingest "$work/skip.json" -o "$work/out.tracetable" --strict
no_table_left "--strict on a bad event"
head -c $(( $(stat -c %s "$work/x.json.gz") * 2 / 3 )) "$work/x.json.gz" >"$work/cut.json.gz"
if err=$("$tt" ingest "$work/cut.json.gz" -o "$work/cut.tracetable" -q 2>&1 >/dev/null); then ok; else fail "cut gzip: $err"; fi
grep -q "warning: .*cut.json.gz: .*gzip stream ends early" <<<"$err" && ok || fail "cut gzip not reported: $err"
c=$(events_of "$work/cut.tracetable")
[ "$c" -gt 0 ] && [ "$c" -lt "$a" ] && ok || fail "cut gzip kept $c of $a events"
expect_fail "--strict on a cut gzip" "cut.json.gz: decompressed byte [0-9]*: expected the rest of the trace" "$tt" ingest "$work/cut.json.gz" -o "$work/out.tracetable" --strict
no_table_left "--strict on a cut gzip"

# Thread time (tts/tdur) of a real Chrome trace: verified, shown by query,
# written by export and read back the same.
tts_of() { "$tt" query "$1" --resolution-us 0 | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sorted((e["ts"], e["name"], e.get("tts"), e.get("tdur")) for e in d["traceEvents"] if e["ph"] != "M"))'; }
"$tt" ingest "$shared/catapult/thread_time_visualisation.json.gz" -o "$work/tts.tracetable" -q 2>/dev/null && ok || fail "ingest thread_time_visualisation"
"$tt" verify "$work/tts.tracetable" | grep -q "^OK" && ok || fail "verify thread time table"
"$tt" query "$work/tts.tracetable" --resolution-us 0 | grep -q '"name":"ThreadTimers::sharedTimerFiredInternal","cat":"blink","dur":275,"tts":43070159,"tdur":275,' &&
  ok || fail "query shows tts/tdur"
"$tt" export "$work/tts.tracetable" -o "$work/tts.json" 2>/dev/null && "$tt" ingest "$work/tts.json" -o "$work/tts2.tracetable" -q 2>/dev/null && ok || fail "thread time export"
[ "$(tts_of "$work/tts.tracetable" | md5sum)" = "$(tts_of "$work/tts2.tracetable" | md5sum)" ] && ok || fail "thread time lost in export round trip"

# Top-level fields ("metadata", ...) are shown by info and written by export.
printf '{"metadata":{"clock-domain":"BOOT","cfg":[1,2]},"traceEvents":[{"ph":"X","ts":1,"dur":2,"pid":1,"tid":1,"name":"a"}],"otherData":{"v":"7"}}' >"$work/meta.json"
"$tt" ingest "$work/meta.json" -o "$work/meta.tracetable" -q 2>/dev/null && ok || fail "ingest meta.json"
"$tt" info "$work/meta.tracetable" | grep -q 'field   metadata = {"clock-domain":"BOOT","cfg":\[1,2\]}' && ok || fail "info shows metadata"
"$tt" info "$work/meta.tracetable" --json | python3 -c '
import json, sys
f = json.load(sys.stdin)["inputs"][0]["fields"]
assert f["metadata"] == {"clock-domain": "BOOT", "cfg": [1, 2]} and f["otherData"] == {"v": "7"}, f' && ok || fail "info --json fields"
"$tt" export "$work/meta.tracetable" -o "$work/meta_export.json" 2>/dev/null && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["metadata"] == {"clock-domain": "BOOT", "cfg": [1, 2]} and d["otherData"] == {"v": "7"}, d
assert len(d["traceEvents"]) >= 1' "$work/meta_export.json" && ok || fail "export writes metadata"

# Memory: a 16 MiB budget on ~95 MB of JSON spills and stays far below
# budget + 200 MB.
"$gen" --events 1000000 --hosts 2 --devices 4 --seed 3 -o "$work/big.json" >/dev/null 2>&1
if command -v /usr/bin/time >/dev/null; then
  /usr/bin/time -f "%M" -o "$work/rss" "$tt" ingest "$work/big.json" -o "$work/big.tracetable" --memory-budget 16M -q 2>"$work/ingest.log"
  rss_kb=$(tail -1 "$work/rss")
  echo "peak RSS with --memory-budget 16M on $(stat -c %s "$work/big.json") bytes of JSON: ${rss_kb} KB"
  if [ "$rss_kb" -lt $(( (16 + 200) * 1024 )) ]; then ok; else fail "peak RSS ${rss_kb} KB with a 16M budget"; fi
  grep -q "spill runs" "$work/ingest.log" && ! grep -q " 0 spill runs" "$work/ingest.log" && ok || fail "16M budget did not spill: $(cat "$work/ingest.log")"
  "$tt" verify "$work/big.tracetable" | grep -q "^OK" && ok || fail "verify spilled table"
  # Ctrl-C mid-ingest: non-zero exit, no table, no temporary files.
  "$tt" ingest "$work/big.json" -o "$work/out.tracetable" -q 2>/dev/null &
  pid=$!
  sleep 0.3
  kill -INT "$pid"
  if wait "$pid"; then fail "interrupted ingest exited 0"; else ok; fi
  no_table_left "interrupted ingest"
else
  echo "note: /usr/bin/time missing, memory check skipped"
fi

finish
