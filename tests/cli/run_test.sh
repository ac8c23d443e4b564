#!/usr/bin/env bash
# Runs of shards with real processes (docs/format.md, "Runs"): a folder of
# hosts becomes a run whose shards match a single table of the same inputs;
# --shard-of appends and replaces hosts; a missing or corrupt shard is named
# by host while the others still verify; a damaged manifest is an error;
# failed builds leave the run as it was; --force replaces a missing, corrupt
# or unreadable shard; concurrent writers lose nothing;
# the run's view (RUN.view) is written with the manifest, and a missing,
# damaged or stale one changes no answer; serve reopens a run whose
# manifest changed (a host added while serving); range statistics over a run
# whose shards have range aggregates equal one table's.
set -u
tt=$1 gen=$2 shared=$3
source "$(dirname "$0")/test_lib.sh"
# jq-less JSON field access: field EXPR evaluated on info --json.
info_field() { "$tt" info "$1" --json | python3 -c "import json,sys; d=json.load(sys.stdin); print($2)"; }
temps() { compgen -G "$1/shards/*.tmp-*" || true; compgen -G "$1.tmp-*" || true; compgen -G "$1/RUN.tmp-*" || true; }

mkdir "$work/hosts"
for i in 0 1 2 3; do
  "$gen" --events 20000 --hosts 1 --devices 2 --seed $((i + 1)) --base-us $((1700000000000000 + i * 700)) \
    -o "$work/hosts/host$i.json" >/dev/null 2>&1
done

# 1. A folder of several hosts is a run by default; --single-table is one table.
r=$work/run.tracetable
"$tt" ingest "$work/hosts" -o "$r" --jobs 2 -q 2>"$work/ingest.err" && ok || fail "ingest a run: $(cat "$work/ingest.err")"
[ -f "$r/RUN" ] && [ -d "$r/shards/host0.tracetable" ] && ok || fail "no run layout: $(ls -R "$r")"
"$tt" ingest "$work/hosts" -o "$work/single.tracetable" --single-table -q 2>/dev/null && ok || fail "--single-table"
[ -f "$work/single.tracetable/TABLEFILES" ] && ok || fail "--single-table made no table"
[ "$(info_field "$r" 'd["hosts"]')" = 4 ] && ok || fail "info of a run: $("$tt" info "$r")"
for f in '["events"]' '["start_us"]' '["end_us"]'; do
  [ "$(info_field "$r" "d$f")" = "$(info_field "$work/single.tracetable" "d$f")" ] && ok \
    || fail "run and single table differ in $f"
done
[ "$(info_field "$r" '" ".join(s["host"] for s in d["shards"])')" = "host0 host1 host2 host3" ] && ok \
  || fail "shard order is not input order"
# Every shard on the single table's summary grid (start and levels).
grid=$(info_field "$work/single.tracetable" 'd["start_us"], d["levels"]')
for i in 0 1 2 3; do
  [ "$(info_field "$r/shards/host$i.tracetable" 'd["start_us"], d["levels"]')" = "$grid" ] && ok \
    || fail "shard host$i is not on the single table's grid"
done
"$tt" info "$r" | grep -q "run of 4 hosts" && ok || fail "info text: $("$tt" info "$r")"
"$tt" verify "$r" >"$work/verify.out" && grep -q "^OK: run of 4 hosts" "$work/verify.out" && ok \
  || fail "verify a run: $(cat "$work/verify.out")"
# Each shard is an ordinary table.
"$tt" verify "$r/shards/host2.tracetable" | grep -q "^OK" && ok || fail "verify a shard alone"
"$tt" query "$r/shards/host2.tracetable" --resolution-us 100 >/dev/null 2>&1 && ok || fail "query a shard alone"
# A one-host folder still makes a table; --run makes a run of it.
mkdir "$work/one" && cp "$work/hosts/host0.json" "$work/one/"
"$tt" ingest "$work/one" -o "$work/one.tracetable" -q 2>/dev/null && [ -f "$work/one.tracetable/TABLEFILES" ] && ok \
  || fail "a one-host folder is not a table"
"$tt" ingest "$work/one" -o "$work/one_run.tracetable" --run -q 2>/dev/null && [ -f "$work/one_run.tracetable/RUN" ] && ok \
  || fail "--run"
expect_fail "run exists" "already exists" "$tt" ingest "$work/hosts" -o "$r"
expect_fail "two inputs of one host" "both host host0" "$tt" ingest "$work/hosts/host0.json" "$work/one/host0.json" \
  -o "$work/dup.tracetable" --run

# 2. --shard-of: a new run from one host, then appended hosts.
a=$work/appended.tracetable
"$tt" ingest "$work/hosts/host2.json" --shard-of "$a" -q 2>/dev/null && ok || fail "--shard-of a new run"
for i in 0 1; do "$tt" ingest "$work/hosts/host$i.json" --shard-of "$a" -q 2>/dev/null && ok || fail "append host$i"; done
[ "$(info_field "$a" '" ".join(s["host"] for s in d["shards"])')" = "host0 host1 host2" ] && ok || fail "appended order"
[ "$(info_field "$a" 'd["events"]')" = "$(info_field "$r" 'd["shards"][0]["events"]+d["shards"][1]["events"]+d["shards"][2]["events"]')" ] \
  && ok || fail "appended events differ from the folder's run"
"$tt" verify "$a" | grep -q "^OK: run of 3 hosts" && ok || fail "verify appended run: $("$tt" verify "$a")"
# Hosts appended one by one extend the span: --regrid puts them all on one grid.
"$tt" ingest --regrid "$a" --jobs 2 -q 2>"$work/regrid.err" && ok || fail "--regrid: $(cat "$work/regrid.err")"
grids=$(for i in 0 1 2; do info_field "$a/shards/host$i.tracetable" 'd["start_us"], d["levels"]'; done | sort -u)
[ "$(wc -l <<<"$grids")" = 1 ] && [ "${grids%% *}" = "$(info_field "$a" 'd["start_us"]')" ] && ok \
  || fail "after --regrid the shards are not on one grid at the run's start: $grids"
"$tt" ingest --regrid "$a" -q 2>"$work/regrid.err" && grep -q "^0 shard" "$work/regrid.err" && ok || fail "a second --regrid rebuilt: $(cat "$work/regrid.err")"
"$tt" verify "$a" | grep -q "^OK: run of 3 hosts" && ok || fail "verify after --regrid"
"$tt" ingest "$work/hosts/host3.json" --shard-of "$a" --host "rack 7/host3" -q 2>/dev/null && ok || fail "--host"
[ -d "$a/shards/rack%207%2fhost3.tracetable" ] && ok || fail "escaped shard folder: $(ls "$a/shards")"
expect_fail "--shard-of into a table" "not a run" "$tt" ingest "$work/hosts/host3.json" --shard-of "$work/single.tracetable"
expect_fail "--shard-of with -o" "exclude each other" "$tt" ingest "$work/hosts/host3.json" --shard-of "$a" -o "$work/x"
expect_fail "--shard-of a folder" "one input file" "$tt" ingest "$work/hosts" --shard-of "$a"

# 3. Replacing a shard: only with --force; the manifest follows.
expect_fail "replace without --force" "host host1 already has a shard" "$tt" ingest "$work/hosts/host1.json" --shard-of "$a"
old_id=$(info_field "$a" '[s["table_id"] for s in d["shards"] if s["host"]=="host1"][0]')
old_gen=$(info_field "$a" 'd["generation"]')
"$tt" ingest "$work/hosts/host3.json" --shard-of "$a" --host host1 --force -q 2>/dev/null && ok || fail "replace host1"
new_id=$(info_field "$a" '[s["table_id"] for s in d["shards"] if s["host"]=="host1"][0]')
[ "$old_id" != "$new_id" ] && [ "$(info_field "$a" 'd["generation"]')" -gt "$old_gen" ] && ok || fail "replace did not change the entry"
[ "$(info_field "$a" 'len(d["shards"])')" = 4 ] && ok || fail "replace changed the host count"
"$tt" verify "$a" | grep -q "^OK" && ok || fail "verify after replace"
[ -z "$(temps "$a")" ] && ok || fail "temp files left: $(temps "$a")"

# 4. A failed shard build leaves the run as it was, and no half shard.
cp "$a/RUN" "$work/RUN.before"
printf '{"traceEvents":[{"ph":"X","ts":1,"dur":1,"pid":1,"tid":1,"name":"a"},{"ph":"X","ts":"bad"}]}' >"$work/bad.json"
expect_fail "failed --shard-of" "bad.json" "$tt" ingest "$work/bad.json" --shard-of "$a" --host host1 --force --strict
cmp -s "$a/RUN" "$work/RUN.before" && ok || fail "a failed shard build changed the manifest"
[ "$(info_field "$a" '[s["table_id"] for s in d["shards"] if s["host"]=="host1"][0]')" = "$new_id" ] && ok || fail "old shard lost"
"$tt" verify "$a" | grep -q "^OK" && ok || fail "verify after a failed build"
[ -z "$(temps "$a")" ] && ok || fail "a failed build left $(temps "$a")"
expect_fail "failed --shard-of of a new run" "bad.json" "$tt" ingest "$work/bad.json" --shard-of "$work/new.tracetable" --strict
[ ! -e "$work/new.tracetable" ] && ok || fail "a failed new run left $(ls -R "$work/new.tracetable")"
# A folder run with one bad host: nothing at OUT, the host named.
mkdir "$work/badhosts" && cp "$work/hosts/host0.json" "$work/hosts/host1.json" "$work/bad.json" "$work/badhosts/"
expect_fail "a run with a bad host" "host bad (" "$tt" ingest "$work/badhosts" -o "$work/badrun.tracetable" --strict --jobs 2
[ ! -e "$work/badrun.tracetable" ] && [ -z "$(compgen -G "$work/badrun.tracetable.tmp-*")" ] && ok || fail "a failed run left files"

# 5. Missing and corrupt shards are named by host; the others still verify.
cp -r "$r" "$work/damaged.tracetable"
d=$work/damaged.tracetable
rm -rf "$d/shards/host1.tracetable"
"$tt" verify "$d" >"$work/verify.out" && fail "verify passed a run missing a shard" || ok
grep -q "^host host1 .*shard missing" "$work/verify.out" && ok || fail "missing shard not named: $(cat "$work/verify.out")"
[ "$(grep -c "^host host[023] .*OK" "$work/verify.out")" = 3 ] && ok || fail "other hosts not verified: $(cat "$work/verify.out")"
ldb=$(ls "$d"/shards/host2.tracetable/*.ldb | head -1)
python3 - "$ldb" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
for i in range(100, len(b) - 100, 997):
    b[i] ^= 0x5a
open(p, 'wb').write(b)
PY
"$tt" verify "$d" >"$work/verify.out" && fail "verify passed a corrupt shard" || ok
grep -q "^host host2 .*\(corrupt\|error\)" "$work/verify.out" && ok || fail "corrupt shard not named: $(cat "$work/verify.out")"
grep -q "^FAILED: run of 4 hosts.* 2 bad shard" "$work/verify.out" && ok || fail "verify summary: $(cat "$work/verify.out")"
"$tt" query "$d/shards/host3.tracetable" --resolution-us 100 >/dev/null 2>&1 && ok || fail "a sound shard of a damaged run"
# A shard whose table does not match its entry (swapped for another host's).
cp -r "$r" "$work/swapped.tracetable"
rm -rf "$work/swapped.tracetable/shards/host0.tracetable"
cp -r "$r/shards/host3.tracetable" "$work/swapped.tracetable/shards/host0.tracetable"
"$tt" verify "$work/swapped.tracetable" >"$work/verify.out" && fail "verify passed a swapped shard" || ok
grep -q "^host host0 .*does not match the manifest: table_id" "$work/verify.out" && ok || fail "swap not found: $(cat "$work/verify.out")"

# 5b. --force replaces a missing, corrupt or unreadable shard (it cannot be
# read, so it is not asked to be a table: the manifest names it as ours), and
# a query of the host then equals a single table of the same input.
"$tt" ingest "$work/hosts/host2.json" -o "$work/host2.tracetable" -q 2>/dev/null && ok || fail "single table of host2"
rm "$d/shards/host3.tracetable/TABLEFILES"  # the table's CURRENT: its list of files
echo junk >"$d/shards/host0.tracetable/TABLEFILES"
"$tt" verify "$d" >"$work/verify.out" && fail "verify passed four bad shards" || ok
for h in 0 1 2 3; do grep -q "^host host$h " "$work/verify.out" && ! grep -q "^host host$h .*OK" "$work/verify.out" && ok \
  || fail "bad shard host$h not named: $(cat "$work/verify.out")"; done
cp "$d/RUN" "$work/RUN.damaged"
expect_fail "a failed --force over a damaged shard" "bad.json" \
  "$tt" ingest "$work/bad.json" --shard-of "$d" --host host2 --force --strict
cmp -s "$d/RUN" "$work/RUN.damaged" && [ -f "$ldb" ] && ok || fail "a failed build changed a damaged run"
for h in 0 1 2 3; do
  "$tt" ingest "$work/hosts/host$h.json" --shard-of "$d" --host host$h --force -q 2>"$work/force.err" && ok \
    || fail "--force over damaged host$h: $(cat "$work/force.err")"
done
"$tt" verify "$d" >"$work/verify.out" && grep -q "^OK: run of 4 hosts" "$work/verify.out" && ok \
  || fail "verify after --force: $(cat "$work/verify.out")"
[ -z "$(temps "$d")" ] && ok || fail "--force over damaged shards left $(temps "$d")"
# The run names a host's processes "host2 ..." and numbers its pids and ids
# after earlier hosts' (and the tracks it makes, shown as tids >= 1e9):
# compare events by process name, id offset and track kind.
host_events() {
  python3 -c '
import json, sys
prefix, names, events = sys.argv[1], {}, []
for line in sys.stdin:
    line = line.strip().rstrip(",")
    if not line.startswith("{\"ph\""): continue
    e = json.loads(line)
    if e["ph"] == "M" and e["name"] == "process_name":
        e["args"]["name"] = e["args"]["name"].removeprefix(prefix)
        names[e["pid"]] = e["args"]["name"]
    events.append(e)
ids = [e["tt_id"] for e in events if "tt_id" in e]
for e in events:
    e["pid"] = names.get(e.get("pid"))
    if e.get("tid", 0) >= 10**9: e["tid"] = "made"
    if "tt_id" in e: e["tt_id"] -= min(ids)
    print(json.dumps(e, sort_keys=True))
print(len(events))' "$1"
}
want=$("$tt" query "$work/host2.tracetable" --resolution-us 0 | host_events "" | md5sum)
[ "$("$tt" query "$d" --host host2 --resolution-us 0 | host_events "host2 " | md5sum)" = "$want" ] && ok \
  || fail "host2 of the repaired run differs from its single table"
for res in 0 50; do
  [ "$("$tt" query "$d" --resolution-us $res 2>&1 | md5sum)" = "$("$tt" query "$r" --resolution-us $res 2>&1 | md5sum)" ] && ok \
    || fail "the repaired run differs from the run it was copied from at $res us"
done
# Still never anything but a table's files: a stray file in the shard folder.
echo keep >"$d/shards/host1.tracetable/notes.txt"
expect_fail "--force over a shard holding a foreign file" "holds notes.txt" \
  "$tt" ingest "$work/hosts/host1.json" --shard-of "$d" --host host1 --force
[ -f "$d/shards/host1.tracetable/notes.txt" ] && ok || fail "--force removed a foreign file"

# 6. A damaged manifest is an error from every command, and never rewritten.
cp -r "$r" "$work/badrun2.tracetable"
m=$work/badrun2.tracetable
python3 -c "import sys; p=sys.argv[1]; b=bytearray(open(p,'rb').read()); b[-3]^=1; open(p,'wb').write(b)" "$m/RUN"
cp "$m/RUN" "$work/RUN.bad"
expect_fail "info of a damaged manifest" "corrupt run manifest" "$tt" info "$m"
"$tt" verify "$m" >"$work/verify.out" && fail "verify passed a damaged manifest" || ok
grep -q "corrupt run manifest" "$work/verify.out" && ok || fail "verify: $(cat "$work/verify.out")"
expect_fail "--shard-of into a damaged manifest" "corrupt run manifest" \
  "$tt" ingest "$work/hosts/host3.json" --shard-of "$m" --host extra
cmp -s "$m/RUN" "$work/RUN.bad" && ok || fail "a writer replaced a damaged manifest"
expect_fail "--force over a damaged run" "corrupt run manifest" "$tt" ingest "$work/hosts" -o "$m" --force

# 7. --force replaces a run, and nothing that is not one.
"$tt" ingest "$work/hosts" -o "$r" --force -q 2>/dev/null && ok || fail "--force over a run"
"$tt" verify "$r" | grep -q "^OK: run of 4 hosts" && ok || fail "verify the replaced run"
mkdir "$work/notes" && echo keep >"$work/notes/x.txt"
expect_fail "--force over a folder" "not a run" "$tt" ingest "$work/hosts" -o "$work/notes" --force
[ -f "$work/notes/x.txt" ] && ok || fail "--force touched a folder"
echo keep >"$r/README"
expect_fail "--force over a run with a foreign file" "holds README" "$tt" ingest "$work/hosts" -o "$r" --force
[ -f "$r/README" ] && ok || fail "--force removed a foreign file"

# 8. Four writers of different hosts at once into a new run lose nothing.
c=$work/concurrent.tracetable
pids=()
for i in 0 1 2 3; do
  "$tt" ingest "$work/hosts/host$i.json" --shard-of "$c" -q 2>"$work/w$i.err" &
  pids+=($!)
done
for i in 0 1 2 3; do wait "${pids[$i]}" && ok || fail "concurrent writer $i: $(cat "$work/w$i.err")"; done
[ "$(info_field "$c" '" ".join(s["host"] for s in d["shards"])')" = "host0 host1 host2 host3" ] && ok \
  || fail "concurrent writers lost a host: $("$tt" info "$c")"
"$tt" verify "$c" | grep -q "^OK: run of 4 hosts" && ok || fail "verify after concurrent writers: $("$tt" verify "$c")"
[ -z "$(temps "$c")" ] && ok || fail "concurrent writers left $(temps "$c")"

# 9. Two writers of one host: the second is refused while the first writes;
# the first's shard is the one entered.
mkfifo "$work/slow.json"
"$tt" ingest "$work/slow.json" --shard-of "$c" --host host1 --force -q 2>"$work/slow.err" &
spid=$!
bg_pids+=("$spid")
wait_for "$c/shards/host1.tracetable.tmp-$spid-spill/LOCK"
expect_fail "second writer of one host" "being written by another ingest (pid $spid)" \
  "$tt" ingest "$work/hosts/host0.json" --shard-of "$c" --host host1 --force
cat "$work/hosts/host3.json" >"$work/slow.json"
wait "$spid" && ok || fail "the first writer failed: $(cat "$work/slow.err")"
[ "$(info_field "$c" '[s["input"] for s in d["shards"] if s["host"]=="host1"][0]')" = "$work/slow.json" ] && ok \
  || fail "the entry is not the first writer's"
"$tt" verify "$c" | grep -q "^OK: run of 4 hosts" && ok || fail "verify after two writers of one host"
[ -z "$(temps "$c")" ] && ok || fail "two writers left $(temps "$c")"

# 10. The view: written with every manifest; none, a damaged one or a stale
# one gives the same answers (the shards it cannot vouch for are opened).
v=$work/view.tracetable
cp -r "$r" "$v"
[ -f "$v/RUN.view" ] && ok || fail "a run made from a folder has no RUN.view"
"$tt" verify "$v" | grep -q "^OK: run of 4 hosts" && ok || fail "verify of a run with a view"
q() { "$tt" query "$v" --resolution-us "$1" 2>&1 | md5sum; }
want0=$(q 0) want50=$(q 50)
cp "$v/RUN.view" "$work/view.good"
python3 -c "import sys; p=sys.argv[1]; b=bytearray(open(p,'rb').read()); b[len(b)//2]^=1; open(p,'wb').write(b)" "$v/RUN.view"
[ "$(q 0)" = "$want0" ] && [ "$(q 50)" = "$want50" ] && ok || fail "a damaged view changed an answer"
head -c 100 "$work/view.good" >"$v/RUN.view"
[ "$(q 50)" = "$want50" ] && ok || fail "a cut view changed an answer"
rm "$v/RUN.view"
[ "$(q 0)" = "$want0" ] && [ "$(q 50)" = "$want50" ] && ok || fail "no view changed an answer"
"$tt" ingest --regrid "$v" -q 2>/dev/null && [ -f "$v/RUN.view" ] && ok || fail "--regrid did not write the view"
[ "$(q 50)" = "$want50" ] && ok || fail "the rewritten view changed an answer"
# Stale: the view of three hosts, then a fourth replaced by another input.
cp "$v/RUN.view" "$work/view.before"
"$tt" ingest "$work/hosts/host0.json" --shard-of "$v" --host host3 --force -q 2>/dev/null && ok || fail "replace host3"
want_new=$("$tt" query "$v" --resolution-us 0 2>&1 | md5sum)
[ "$want_new" != "$want0" ] && ok || fail "replacing host3 changed nothing"
cp "$work/view.before" "$v/RUN.view"
[ "$(q 0)" = "$want_new" ] && ok || fail "a stale view answered from the old shard"

# 11. serve reopens a run whose manifest changed: the next request sees a
# host added while serving; a request before it is answered from the old run.
s=$work/served.tracetable
cp -r "$r" "$s"
"$tt" serve "$s" --port 0 >"$work/serve.out" 2>&1 &
spid=$!
bg_pids+=("$spid")
for _ in $(seq 200); do grep -q "^serving" "$work/serve.out" && break; sleep 0.05; done
port=$(sed -n 's|^serving.*:\([0-9]*\)/.*|\1|p' "$work/serve.out")
table() {
  python3 - "http://127.0.0.1:$port/api/tables/served" <<'PY'
import json, sys, urllib.request, urllib.error
try:
    d = json.load(urllib.request.urlopen(sys.argv[1]))
    print(d["num_processes"], " ".join(d["hosts"]))
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode())
PY
}
before=$(table)
grep -q "host3" <<<"$before" && ! grep -q "late" <<<"$before" && ok || fail "served run before: $before"
"$tt" ingest "$work/hosts/host1.json" --shard-of "$s" --host late -q 2>/dev/null && ok || fail "--shard-of while serving"
after=$(table)
grep -q " late" <<<"$after" && [ "${after%% *}" -gt "${before%% *}" ] && ok || fail "the server did not reopen the run: $after"
code=$(curl -s -o /dev/null -w "%{http_code}" "http://127.0.0.1:$port/api/tables/served/window?resolution_us=50&host=late")
[ "$code" = 200 ] && ok || fail "window of the added host: $code"
kill "$spid"

# 12. Range statistics over a run made with --stats-bucket-events: each
# shard's aggregates answer (no truncation at the event cap, few events read)
# and every answer but the count of events read equals one table's.
sr=$work/stats_run.tracetable st=$work/stats_single.tracetable
"$tt" ingest "$work/hosts" -o "$sr" --jobs 2 --stats-bucket-events 200 -q 2>/dev/null && ok || fail "ingest a run with aggregates"
"$tt" ingest "$work/hosts" -o "$st" --single-table --stats-bucket-events 200 -q 2>/dev/null && ok || fail "single table with aggregates"
"$tt" info "$sr/shards/host2.tracetable" | grep -q "stats     aggregates" && ok || fail "a shard has no aggregates"
cp -r "$sr" "$work/stats_added.tracetable"
"$tt" ingest "$work/hosts/host0.json" --shard-of "$work/stats_added.tracetable" --host extra --stats-bucket-events 200 \
  -q 2>/dev/null && "$tt" info "$work/stats_added.tracetable/shards/extra.tracetable" | grep -q "stats     aggregates" \
  && ok || fail "--shard-of wrote no aggregates"
# --regrid without --stats-bucket-events keeps each rebuilt shard's aggregates.
g=$work/stats_grid.tracetable
for i in 1 0 3; do
  "$tt" ingest "$work/hosts/host$i.json" --shard-of "$g" --stats-bucket-events 200 -q 2>/dev/null || fail "--shard-of host$i"
done
"$tt" ingest --regrid "$g" 2>"$work/regrid.err" && grep -q "^shard host" "$work/regrid.err" && ok \
  || fail "regrid rebuilt nothing: $(cat "$work/regrid.err")"
for i in 0 1 3; do
  "$tt" info "$g/shards/host$i.tracetable" | grep -q "stats     aggregates" && ok || fail "host$i lost its aggregates in --regrid"
done
"$tt" serve "$sr" "$st" --port 0 >"$work/serve2.out" 2>&1 &
spid=$!
bg_pids+=("$spid")
for _ in $(seq 200); do grep -q "^serving" "$work/serve2.out" && break; sleep 0.05; done
port=$(sed -n 's|^serving.*:\([0-9]*\)/.*|\1|p' "$work/serve2.out")
stats_diff=$(python3 - "http://127.0.0.1:$port/api/tables" <<'PY'
import json, random, sys, urllib.request
base = sys.argv[1]
def get(t, q):
    d = json.load(urllib.request.urlopen(f"{base}/{t}/stats?{q}"))
    return d
run = json.load(urllib.request.urlopen(f"{base}/stats_run"))
lo, hi = run["start_us"], run["end_us"]
rng = random.Random(7)
bad = []
for k in range(40):
    a = lo + rng.random() * (hi - lo)
    b = a + rng.random() * (hi - a) / (1 + rng.randrange(1000))
    if k == 0: a, b = lo, hi
    q = f"start_us={a:.3f}&end_us={b:.3f}&top=1000" + ("&host=host1" if k % 5 == 1 else "")
    r, s = get("stats_run", q), get("stats_single", q)
    if r["truncated"] or s["truncated"]: bad.append(f"truncated {q}")
    if k == 0 and r["events"] * 4 > sum(n["count"] for n in s["names"]): bad.append(f"read {r['events']} events one by one")
    for d in (r, s): d.pop("events")
    if r != s: bad.append(f"differ at {q}")
print("; ".join(bad[:3]) or "same")
PY
)
[ "$stats_diff" = same ] && ok || fail "run stats vs single table: $stats_diff"
kill "$spid"

finish
