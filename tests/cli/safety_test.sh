#!/usr/bin/env bash
# What happens to tables and to users' files when things go wrong, with real
# processes: --force replaces only a tracetable; two ingests of one output
# never both proceed; a killed ingest leaves the output absent or complete and
# the next ingest removes its leftovers; readers never write to a table and
# read it while `serve` has it open; a served table replaced on disk answers
# an error; bit flips in any file of a table give an error or the unchanged
# answer, never a different one.
set -u
tt=$1 gen=$2 shared=$3
source "$(dirname "$0")/test_lib.sh"

leftovers() { compgen -G "$1.tmp-*" || true; }
events() { "$tt" info "$1" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])'; }
# info's answer as sorted JSON (maps print in no fixed order).
info_json() { "$tt" info "$1" --json | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin), sort_keys=True))'; }
snapshot() { (cd "$1" && find . -printf '%p %s %T@ %i\n' | sort; stat -c '%Y %i' .); }

trace=$shared/catapult/x_event_trace.json
"$tt" ingest "$trace" -o "$work/ref.tracetable" -q 2>/dev/null && ok || fail "ingest reference"
ref_events=$(events "$work/ref.tracetable")

# 1. --force replaces a table and nothing else.
mkdir "$work/mine"
echo "my notes" >"$work/mine/notes.txt"
cp "$trace" "$work/mine/"
before=$(cd "$work/mine" && md5sum * | sort)
expect_fail "--force over a folder" "not part of a tracetable" "$tt" ingest "$trace" -o "$work/mine" --force
[ "$(cd "$work/mine" && md5sum * | sort)" = "$before" ] && ok || fail "--force changed an ordinary folder"
echo "a file" >"$work/file.txt"
expect_fail "--force over a file" "not a folder" "$tt" ingest "$trace" -o "$work/file.txt" --force
[ "$(cat "$work/file.txt")" = "a file" ] && ok || fail "--force changed a file"
cp -r "$work/ref.tracetable" "$work/annotated.tracetable"
echo "keep me" >"$work/annotated.tracetable/README"
expect_fail "--force over a table with a foreign file" "holds README" "$tt" ingest "$trace" -o "$work/annotated.tracetable" --force
[ -f "$work/annotated.tracetable/README" ] && ok || fail "--force removed a foreign file"
expect_fail "no --force" "already exists" "$tt" ingest "$trace" -o "$work/ref.tracetable"
cp -r "$work/ref.tracetable" "$work/old.tracetable"
"$tt" ingest "$trace" -o "$work/old.tracetable" --force -q 2>/dev/null && ok || fail "--force over a table"
"$tt" verify "$work/old.tracetable" | grep -q "^OK" && ok || fail "verify the replaced table"
[ -z "$(leftovers "$work/old.tracetable")" ] && ok || fail "--force left $(leftovers "$work/old.tracetable")"

# 2. One ingest per output at a time. The first reads a FIFO, so it is
# certainly still running while the second starts.
mkfifo "$work/slow.json"
"$tt" ingest "$work/slow.json" -o "$work/c.tracetable" -q 2>/dev/null &
apid=$!
bg_pids+=("$apid")
wait_for "$work/c.tracetable.tmp-$apid-spill/LOCK"
expect_fail "second ingest" "being written by another ingest (pid $apid)" \
  "$tt" ingest "$trace" -o "$work/c.tracetable" --force
[ "$(leftovers "$work/c.tracetable" | wc -l)" = 2 ] && ok || fail "the refused ingest left files: $(leftovers "$work/c.tracetable")"
cat "$trace" >"$work/slow.json"
wait "$apid" && ok || fail "the first ingest failed"
[ "$(events "$work/c.tracetable")" = "$ref_events" ] && ok || fail "the first ingest's table is not whole"
[ -z "$(leftovers "$work/c.tracetable")" ] && ok || fail "leftovers after two ingests"

# 3. kill -9: while blocked (leftovers certain), then at random moments.
info_before=$(info_json "$work/ref.tracetable")
"$tt" ingest "$work/slow.json" -o "$work/ref.tracetable" --force -q 2>/dev/null &
kpid=$!
bg_pids+=("$kpid")
wait_for "$work/ref.tracetable.tmp-$kpid-spill/LOCK"
kill -9 "$kpid"
wait "$kpid" 2>/dev/null
[ -n "$(leftovers "$work/ref.tracetable")" ] && ok || fail "a killed ingest left no temp folders (test is void)"
[ "$(info_json "$work/ref.tracetable")" = "$info_before" ] && ok || fail "a killed --force ingest changed the table"
"$tt" verify "$work/ref.tracetable" >"$work/verify.out"
grep -q "^OK" "$work/verify.out" && ok || fail "verify after kill: $(cat "$work/verify.out")"
grep -q "^leftover: .*tmp-$kpid.*killed" "$work/verify.out" && ok || fail "verify does not report leftovers: $(cat "$work/verify.out")"
"$tt" ingest "$trace" -o "$work/ref.tracetable" --force -q 2>"$work/ingest.err" && ok || fail "ingest after kill"
grep -q "removed .*tmp-$kpid" "$work/ingest.err" && ok || fail "ingest does not say what it removed: $(cat "$work/ingest.err")"
[ -z "$(leftovers "$work/ref.tracetable")" ] && ok || fail "leftovers after the next ingest: $(leftovers "$work/ref.tracetable")"

"$gen" --events 300000 --hosts 1 --devices 2 --seed 5 -o "$work/mid.json" >/dev/null 2>&1
t0=$(date +%s%N)
"$tt" ingest "$work/mid.json" -o "$work/mid_ref.tracetable" -q 2>/dev/null && ok || fail "ingest mid"
# Kill moments spread over how long an ingest takes here, with some jitter.
ingest_ms=$((($(date +%s%N) - t0) / 1000000))
mid_events=$(events "$work/mid_ref.tracetable")
complete=0 absent=0
for i in $(seq 8); do
  ms=$((ingest_ms * i / 8 + RANDOM % 50))
  "$tt" ingest "$work/mid.json" -o "$work/k.tracetable" -q 2>/dev/null &
  kpid=$!
  sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
  kill -9 "$kpid" 2>/dev/null
  wait "$kpid" 2>/dev/null
  if [ -e "$work/k.tracetable" ]; then
    "$tt" verify "$work/k.tracetable" | grep -q "^OK" && [ "$(events "$work/k.tracetable")" = "$mid_events" ] \
      && ok || fail "kill -9 #$i left a half table"
    complete=$((complete + 1))
    rm -rf "$work/k.tracetable"
  else
    absent=$((absent + 1))
  fi
done
echo "kill -9 at moments over ${ingest_ms} ms: $absent absent, $complete complete"
"$tt" ingest "$trace" -o "$work/k.tracetable" -q 2>/dev/null && ok || fail "ingest after random kills"
[ -z "$(leftovers "$work/k.tracetable")" ] && ok || fail "leftovers after random kills: $(leftovers "$work/k.tracetable")"

# 4. Readers never write: the listing, sizes, mtimes and inodes stay as they
# were after every command, and all of them run while serve has it open.
t=$work/ro.tracetable
"$tt" ingest "$trace" -o "$t" -q 2>/dev/null
snap=$(snapshot "$t")
"$tt" serve "$t" --port 0 >"$work/serve.out" 2>&1 &
spid=$!
bg_pids+=("$spid")
wait_for "$work/serve.out"
for _ in $(seq 200); do grep -q "^serving" "$work/serve.out" && break; sleep 0.05; done
port=$(sed -n 's|^serving.*:\([0-9]*\)/.*|\1|p' "$work/serve.out")
get() { python3 - "$1" <<'EOF'
import sys, urllib.request, urllib.error
try:
    r = urllib.request.urlopen(sys.argv[1]); print(r.status); print(r.read().decode())
except urllib.error.HTTPError as e:
    print(e.code); print(e.read().decode())
EOF
}
for cmd in "info $t" "info $t --json" "verify $t" "query $t" "search $t a" "export $t -o $work/ro.json"; do
  # shellcheck disable=SC2086
  $tt $cmd >/dev/null 2>&1 && ok || fail "$cmd while served"
done
reply=$(get "http://127.0.0.1:$port/api/tables/ro/window")
[ "$(head -1 <<<"$reply")" = 200 ] && ok || fail "window while read by others"
[ "$(snapshot "$t")" = "$snap" ] && ok || fail "a reader changed the table's files"
"$tt" ingest "$trace" -o "$t" --force -q 2>/dev/null && ok || fail "--force over a served table"
reply=$(get "http://127.0.0.1:$port/api/tables/ro/window")
[ "$(head -1 <<<"$reply")" = 503 ] && grep -q '"error":.*replaced' <<<"$reply" && ok || fail "server answered from a replaced table: $reply"
kill "$spid"

# 5. Bit flips: in every file of a table, 30 each; every command must error or
# give exactly the undamaged answer.
base=$work/x.tracetable
"$tt" ingest "$trace" -o "$base" -q 2>/dev/null
# The md5 of a command's output, or "error" if it failed.
ans() {
  local out
  if out=$("$@" 2>/dev/null); then md5sum <<<"$out" | cut -c1-32; else echo error; fi
}
answers() {  # one line per command
  local d=$1
  ans "$tt" query "$d" --resolution-us 0
  ans "$tt" query "$d"
  ans info_json "$d"
  # Without its timing line.
  ans bash -c '"$0" search "$1" a | grep -v " ms of "' "$tt" "$d"
  rm -f "$work/flip.json"
  if "$tt" export "$d" -o "$work/flip.json" 2>/dev/null; then md5sum <"$work/flip.json" | cut -c1-32; else echo error; fi
  [ -e "$work/flip.json.tmp" ] && fail "export left flip.json.tmp"
}
# Answers name the table's path: the undamaged one is asked at the same path.
cp -r "$base" "$work/flip.tracetable"
good=$(answers "$work/flip.tracetable")
wrong=0 errors=0 same=0
for f in "$base"/*; do
  name=$(basename "$f")
  for i in $(seq 30); do
    rm -rf "$work/flip.tracetable"
    cp -r "$base" "$work/flip.tracetable"
    python3 -c '
import os, random, sys
p = sys.argv[1]; random.seed(int(sys.argv[2]))
n = os.path.getsize(p); off = random.randrange(n)
with open(p, "r+b") as f:
    f.seek(off); b = f.read(1)[0]; f.seek(off); f.write(bytes([b ^ (1 << random.randrange(8))]))' \
      "$work/flip.tracetable/$name" "$i"
    got=$(answers "$work/flip.tracetable")
    # A table that opens but whose events are damaged, for the server below.
    if [ ! -e "$work/servebad.tracetable" ] && [ "$(sed -n 3p <<<"$got")" != error ] &&
       [ "$(sed -n 1p <<<"$got")" = error ]; then
      cp -r "$work/flip.tracetable" "$work/servebad.tracetable"
    fi
    k=0
    while read -r g a; do
      k=$((k + 1))
      if [ "$a" = error ]; then errors=$((errors + 1))
      elif [ "$a" = "$g" ]; then same=$((same + 1))
      else wrong=$((wrong + 1)); echo "wrong answer: $name flip $i, command $k of answers()"; fi
    done < <(paste -d' ' <(echo "$good") <(echo "$got"))
  done
done
if [ -e "$work/servebad.tracetable" ]; then
  "$tt" serve "$work/servebad.tracetable" --port 0 >"$work/serve2.out" 2>&1 &
  spid=$!
  bg_pids+=("$spid")
  for _ in $(seq 200); do grep -q "^serving" "$work/serve2.out" && break; sleep 0.05; done
  port=$(sed -n 's|^serving.*:\([0-9]*\)/.*|\1|p' "$work/serve2.out")
  reply=$(get "http://127.0.0.1:$port/api/tables/servebad/window?resolution_us=0")
  [ "$(head -1 <<<"$reply")" = 500 ] && grep -q '"error":"corrupt table' <<<"$reply" && ok ||
    fail "server on a damaged table: $(head -c 300 <<<"$reply")"
  kill "$spid"
else
  fail "no flip damaged events only (test is void)"
fi
echo "bit flips: $errors errors, $same unchanged answers, $wrong wrong answers"
[ "$wrong" -eq 0 ] && ok || fail "$wrong wrong answers from damaged tables"

# 6. info over many one-event processes lists each with its own track (the
# per-process track lookup is a map, not a scan; bench/results has its time).
python3 -c '
import json, sys
ev = [{"name": "e", "ph": "X", "ts": i, "dur": 1, "pid": i + 1, "tid": 7} for i in range(20000)]
json.dump({"traceEvents": ev}, open(sys.argv[1], "w"))' "$work/procs.json"
"$tt" ingest "$work/procs.json" -o "$work/procs.tracetable" -q 2>/dev/null && ok || fail "ingest 20k processes"
"$tt" info "$work/procs.tracetable" --json | python3 -c '
import json, sys
ps = json.load(sys.stdin)["processes"]
assert len(ps) == 20000, len(ps)
for p in ps:
    assert [(t["tid"], t["events"]) for t in p["tracks"]] == [(7, 1)], p
' && ok || fail "info over 20k processes"

finish
