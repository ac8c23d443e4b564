#!/usr/bin/env python3
"""Measurement driver behind bench/run (stdlib only).

bench/run builds, then calls this with the build dir, the data dir and the
sizes. For every size it generates (or reuses) a synthetic trace, then runs
whole-program measurements through the `tracetable` CLI and the two
baselines (plain-viewer model in Python, SQLite), and writes
bench/results/<date>-<host>.md and .json. Every command line executed is
recorded in the JSON (`commands`).

Whole-program timings are taken around `/usr/bin/time -v` (which also gives
CPU time and peak RSS), so each includes process start-up (~1 ms).
"""
import argparse
import datetime
import json
import os
import platform
import random
import re
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

COMMANDS = []  # every command line run, with its measurements
NOTES = []


FAILURES = []


def log(msg):
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def fail(msg):
    """A measurement that could not be taken: noted in the report, logged,
    and the run exits non-zero."""
    log("ERROR: " + msg)
    NOTES.append(msg)
    FAILURES.append(msg)


def rc_text(r):
    rc = r["rc"]
    if rc < 0 or rc > 128:
        sig = -rc if rc < 0 else rc - 128
        return f"rc {rc} (signal {sig})" if rc != -9 else "timeout"
    return f"rc {rc}"


def drop_caches():
    """Drops the page cache (root only). Returns False if not allowed."""
    try:
        subprocess.run(["sync"], check=True)
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


def parse_time_v(text):
    out = {}
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("Maximum resident set size"):
            out["max_rss_kb"] = int(line.rsplit(":", 1)[1])
        elif line.startswith("User time"):
            out["user_s"] = float(line.rsplit(":", 1)[1])
        elif line.startswith("System time"):
            out["sys_s"] = float(line.rsplit(":", 1)[1])
        elif line.startswith("Exit status"):
            out["exit"] = int(line.rsplit(":", 1)[1])
    if "user_s" in out and "sys_s" in out:
        out["cpu_s"] = round(out["user_s"] + out["sys_s"], 3)
    return out


def run(cmd, purpose, stdout_path=None, cold=False, timeout=3600, record=True):
    """Runs cmd under /usr/bin/time -v. Returns a dict with wall_s, cpu_s,
    max_rss_kb, rc, stderr (tail)."""
    if cold:
        drop_caches()
    with tempfile.NamedTemporaryFile("r", suffix=".time", delete=False) as tf:
        tpath = tf.name
    full = ["/usr/bin/time", "-v", "-o", tpath] + [str(c) for c in cmd]
    out_f = open(stdout_path, "wb") if stdout_path else subprocess.DEVNULL
    t0 = time.perf_counter()
    try:
        p = subprocess.run(full, stdout=out_f, stderr=subprocess.PIPE, timeout=timeout)
        rc = p.returncode
        err = p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        rc, err = -9, "timeout"
    wall = time.perf_counter() - t0
    if stdout_path:
        out_f.close()
    with open(tpath) as f:
        tv = parse_time_v(f.read())
    os.unlink(tpath)
    res = {"wall_s": round(wall, 6), "rc": rc, **tv}
    if rc != 0:
        res["stderr"] = err[-2000:]
    if record:
        entry = {"purpose": purpose, "cmd": shlex.join(str(c) for c in cmd)}
        if stdout_path:
            entry["stdout"] = stdout_path
        if cold:
            entry["cold"] = True
        entry.update({k: v for k, v in res.items() if k != "stderr"})
        COMMANDS.append(entry)
    return res


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def pct(xs, q):
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return None
    if len(xs) == 1:
        return xs[0]
    k = (len(xs) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def fmt_us(x):
    """Microseconds as text with at most 3 decimals (ns precision)."""
    return f"{x:.3f}".rstrip("0").rstrip(".")


def du_bytes(path):
    out = subprocess.run(["du", "-sb", path], capture_output=True, text=True)
    COMMANDS.append({"purpose": "size on disk", "cmd": shlex.join(["du", "-sb", path])})
    return int(out.stdout.split()[0]) if out.returncode == 0 else None


def human_events(n):
    if n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n % 1000 == 0:
        return f"{n // 1000}k"
    return str(n)


# ------------------------------------------------------------------ sweep --
def sweep_windows(start_us, end_us, positions, seed, min_window_us=10.0):
    """Zoom levels from the whole span down to 10 us (x10 per level), each
    with `positions` seeded random windows. Returns [(level_w, [(a, b)])]."""
    span = end_us - start_us
    widths = []
    w = span
    while w > min_window_us * 1.0001:
        widths.append(w)
        w /= 10.0
    widths.append(min_window_us)
    levels = []
    for li, w in enumerate(widths):
        rng = random.Random(seed * 1_000_003 + li)
        wins = []
        for _ in range(positions):
            a = start_us + rng.random() * max(span - w, 0.0)
            wins.append((round(a, 3), round(a + w, 3)))
        levels.append((w, wins))
    return levels


def count_rows_json(path, needle=b'{"ph":'):
    n = 0
    with open(path, "rb") as f:
        tail = b""
        while True:
            chunk = f.read(1 << 22)
            if not chunk:
                break
            buf = tail + chunk
            n += buf.count(needle)
            tail = buf[-(len(needle) - 1):]
    return n


def tracetable_result(path):
    """Reads a `tracetable query` output: (tracetable object, #traceEvents)."""
    try:
        with open(path, "rb") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        return {"parse_error": str(e)[:200]}, None
    if not isinstance(doc, dict):
        return {"parse_error": "not an object"}, None
    return doc.get("tracetable", {}), len(doc.get("traceEvents", []))


def run_sweep(name, levels, make_cmd, parse, tmp, budget_s, min_samples, cold=False):
    """Runs one process per window. make_cmd(a, b, w) -> argv. parse(path) ->
    dict of item counts. Stops a level once it used budget_s (after at least
    min_samples windows)."""
    rows = []
    for w, wins in levels:
        lat, cpu, items, rss, errors = [], [], [], [], 0
        extra = {}
        t_level = time.perf_counter()
        for i, (a, b) in enumerate(wins):
            if i >= min_samples and time.perf_counter() - t_level > budget_s:
                break
            out = os.path.join(tmp, re.sub(r"[^A-Za-z0-9]+", "_", name) + ".out")
            r = run(make_cmd(a, b, w), f"{name}: zoom sweep window", stdout_path=out, cold=cold)
            COMMANDS[-1]["window_us"] = w
            if r["rc"] != 0:
                errors += 1
                if errors == 1:
                    fail(f"{name}: query failed, {rc_text(r)}: {r.get('stderr', '')[-300:]}")
                if errors >= 3:
                    break
                continue
            lat.append(r["wall_s"] * 1000)
            cpu.append(r["cpu_s"] * 1000 if r.get("cpu_s") is not None else None)
            rss.append(r.get("max_rss_kb"))
            p = parse(out)
            items.append(p.get("items"))
            for k, v in p.items():
                if k != "items" and isinstance(v, (int, float)):
                    extra.setdefault(k, []).append(v)
            os.unlink(out)
        row = {"window_us": w, "n": len(lat), "errors": errors,
               "p50_ms": pct(lat, 0.5), "p99_ms": pct(lat, 0.99), "max_ms": max(lat) if lat else None,
               "items_median": median(items), "max_rss_kb": max(rss) if rss else None,
               "cpu_p50_ms": pct(cpu, 0.5), "cpu_p99_ms": pct(cpu, 0.99)}
        for k, v in extra.items():
            row[k + "_median"] = median(v)
        rows.append(row)
        log(f"  {name}: window {fmt_us(w)} us: n={row['n']} p50={row['p50_ms'] and round(row['p50_ms'], 1)} ms "
            f"p99={row['p99_ms'] and round(row['p99_ms'], 1)} ms items={row['items_median']}")
    return rows


# --------------------------------------------------------------- measures --
def ensure_trace(args, n):
    """Generates bench/data/trace-<N>-... (JSON, CSV, meta) unless present
    with matching parameters."""
    tag = f"trace-{human_events(n)}-h{args.hosts}d{args.devices}-s{args.seed}"
    base = os.path.join(args.data, tag)
    js, csv, meta = base + ".json", base + ".csv", base + ".meta.json"
    need_csv = args.baselines and n <= args.baseline_max_events
    have = os.path.exists(js) and os.path.exists(meta) and (not need_csv or os.path.exists(csv))
    gen = None
    if have:
        log(f"reusing {js}")
    else:
        # About 98 bytes/event of JSON, 53 of CSV; then the table, its spill
        # files and the scratch copies while measuring: fail before writing.
        need = n * (98 + (53 if need_csv else 0) + 100)
        free = shutil.disk_usage(args.data).free
        if free < need:
            raise SystemExit(f"bench/run: {human_events(n)} events need about {need / 1e9:.0f} GB free in "
                             f"{args.data}, but only {free / 1e9:.0f} GB are free")
        cmd = [args.gen, "--events", n, "--hosts", args.hosts, "--devices", args.devices,
               "--seed", args.seed, "-o", js, "--meta", meta]
        if need_csv:
            cmd += ["--csv", csv]
        log(f"generating {js}")
        r = run(cmd, "generate trace")
        if r["rc"] != 0:
            raise SystemExit(f"tt_gen_trace failed: {r.get('stderr')}")
        gen = r
    with open(meta) as f:
        m = json.load(f)
    m["json_path"] = js
    m["csv_path"] = csv if os.path.exists(csv) else None
    m["json_file_bytes"] = os.path.getsize(js)
    if gen:
        m["gen_wall_s"] = gen["wall_s"]
        m["gen_events_per_s"] = m["events"] / gen["wall_s"]
        m["gen_max_rss_kb"] = gen.get("max_rss_kb")
    return m


def cli_available(cli):
    return os.path.isfile(cli) and os.access(cli, os.X_OK)


def measure_tracetable(args, m, tmp):
    res = {}
    cli = args.cli
    js = m["json_path"]
    table = os.path.join(args.data, "tables", os.path.basename(js)[:-5] + ".tracetable")
    os.makedirs(os.path.dirname(table), exist_ok=True)
    mb = m["json_file_bytes"] / 1e6

    # Ingest with a small budget, then the default one; the last default run
    # leaves the table the queries use (no extra ingest).
    ingest = {}
    reps = args.reps if m["events_target"] < args.single_ingest_events else 1
    if reps < args.reps:
        NOTES.append(f"{human_events(m['events_target'])}: one ingest per budget instead of {args.reps} "
                     f"(each takes minutes at this size)")
    for label, extra in ((f"budget {args.small_budget}", ["--memory-budget", args.small_budget]), ("default", [])):
        runs = []
        for rep in range(reps):
            shutil.rmtree(table, ignore_errors=True)
            r = run([cli, "ingest", js, "-o", table] + extra, f"ingest ({label})")
            if r["rc"] != 0:
                fail(f"ingest ({label}) failed, {rc_text(r)}: {r.get('stderr', '')[-500:]}")
                break
            runs.append(r)
        if not runs:
            ingest[label] = {"error": True}
            continue
        wall = median([r["wall_s"] for r in runs])
        ingest[label] = {
            "n": len(runs), "wall_s": wall, "cpu_s": median([r.get("cpu_s") for r in runs]),
            "max_rss_kb": median([r.get("max_rss_kb") for r in runs]),
            "mb_per_s": mb / wall, "events_per_s": m["events"] / wall,
            "walls": [r["wall_s"] for r in runs]}
        log(f"  ingest {label}: {wall:.2f} s, {mb / wall:.1f} MB/s, rss {ingest[label]['max_rss_kb']} KB")
    res["ingest"] = ingest
    if ingest["default"].get("error"):
        res["error"] = "ingest failed; no table to query"
        fail("ingest failed: no table, so no query measurements")
        return res
    res["table"] = table
    res["disk_bytes"] = du_bytes(table)
    res["bytes_per_event"] = res["disk_bytes"] / m["events"] if res["disk_bytes"] else None

    info_out = os.path.join(tmp, "info.json")
    r = run([cli, "info", table, "--json"], "info", stdout_path=info_out)
    try:
        with open(info_out) as f:
            res["info"] = json.load(f)
    except (OSError, ValueError):
        res["info"] = {"error": rc_text(r)}
        fail(f"tracetable info --json failed or printed no JSON ({rc_text(r)})")

    help_runs = [run([cli, "--help"], "process start floor (--help: exec + dynamic linking)") for _ in range(args.reps)]
    res["help_ms"] = median([r["wall_s"] * 1000 for r in help_runs])
    info_runs = [run([cli, "info", table, "--json"], "info (process start + open floor)") for _ in range(args.reps)]
    res["info_ms"] = median([r["wall_s"] * 1000 for r in info_runs])

    start, end = m["start_us"], m["end_us"]
    span = end - start
    whole = lambda cold: [cli, "query", table, "--start-us", fmt_us(start), "--end-us", fmt_us(end),
                          "--resolution-us", fmt_us(span / 2000)]

    def first_window(cold):
        runs, parsed = [], None
        for rep in range(args.reps):
            out = os.path.join(tmp, "first.json")
            r = run(whole(cold), f"first whole-trace window ({'cold' if cold else 'warm'} cache, fresh process)",
                    stdout_path=out, cold=cold)
            if r["rc"] != 0:
                fail(f"first-window query failed, {rc_text(r)}: {r.get('stderr', '')[-500:]}")
                break
            parsed = tracetable_result(out)
            runs.append(r)
        if not runs:
            return {"error": True}
        tt, nev = parsed
        return {"n": len(runs), "wall_ms": median([r["wall_s"] * 1000 for r in runs]),
                "cpu_ms": median([r["cpu_s"] * 1000 for r in runs if r.get("cpu_s") is not None]),
                "max_rss_kb": median([r.get("max_rss_kb") for r in runs]),
                "trace_events": nev, "tracetable": tt}

    res["first_window_warm"] = first_window(False)
    if args.cold:
        res["first_window_cold"] = first_window(True)
    log(f"  first window: {res['first_window_warm']}")

    levels = sweep_windows(start, end, args.positions, args.seed)
    track = m["one_track"]

    def parse(path):
        tt, nev = tracetable_result(path)
        d = {"items": tt.get("items", nev)}
        for k in ("events", "summaries", "tiles_read", "bytes_read", "level"):
            if isinstance(tt.get(k), (int, float)):
                d[k] = tt[k]
        if isinstance(tt.get("truncated"), bool):
            d["truncated"] = int(tt["truncated"])
        return d

    def qcmd(extra):
        return lambda a, b, w: [cli, "query", table, "--start-us", fmt_us(a), "--end-us", fmt_us(b),
                                "--resolution-us", fmt_us(w / 2000)] + extra

    if inprocess_available(args):
        res["sweep_mode"] = "in-process (tracetable bench-queries)"
        res["sweep_all"], res["sweep_one"] = sweep_inprocess(args, table, levels, track, tmp)
    else:
        res["sweep_mode"] = "one tracetable query process per window (fresh process, warm page cache)"
        res["sweep_all"] = run_sweep("tracetable all tracks", levels, qcmd([]), parse, tmp,
                                     args.level_budget_s, args.min_samples)
        res["sweep_one"] = run_sweep("tracetable one track", levels,
                                     qcmd(["--pid", f"{track['pid']}:{track['tid']}"]), parse, tmp,
                                     args.level_budget_s, args.min_samples)
    if args.cold and args.cold_positions > 0:
        cold_levels = [(w, wins[:args.cold_positions]) for w, wins in levels]
        res["sweep_all_cold"] = run_sweep("tracetable all tracks (cold cache)", cold_levels, qcmd([]), parse,
                                          tmp, args.level_budget_s, args.cold_positions, cold=True)
    res["xprof_ablation"] = measure_xprof_ablation(args, m, table, levels, track, tmp)
    res["serve"] = measure_serve(args, m, table, tmp)
    return res


# ------------------------------------------------------ XProf ablation --
def measure_xprof_ablation(args, m, table, levels, track, tmp):
    """The one-track zoom sweep on tracetable's keys and on XProf's layout
    (bench/xprof_layout.cc), in one process: keys and value bytes read and
    query latency per zoom level."""
    if m["events_target"] > args.ablation_max_events:
        reason = (f"XProf layout ablation skipped at {human_events(m['events_target'])} events: copying them "
                  f"into the scratch layout writes one LevelDB key per event (limit --ablation-max-events "
                  f"{args.ablation_max_events:,})")
        NOTES.append(reason)
        return {"skipped": reason}
    if not (os.path.isfile(args.xprof) and os.access(args.xprof, os.X_OK)):
        reason = f"XProf layout ablation skipped: {args.xprof} not built"
        NOTES.append(reason)
        return {"skipped": reason}
    wfile = os.path.join(tmp, "xprof-windows.txt")
    index = []
    with open(wfile, "w") as f:
        for li, (w, wins) in enumerate(levels):
            for a, b in wins:
                f.write(f"{fmt_us(a)} {fmt_us(b)} {fmt_us(w / 2000)} {track['pid']}:{track['tid']}\n")
                index.append(li)
    scratch = table[:-len(".tracetable")] + ".xprof-layout"
    out = os.path.join(tmp, "xprof.jsonl")
    r = run([args.xprof, table, "--scratch", scratch, "--windows", wfile, "--repeat", args.ablation_repeat],
            "XProf layout ablation (one-track sweep on both layouts)", stdout_path=out)
    if r["rc"] != 0:
        fail(f"tt_xprof_layout failed, {rc_text(r)}: {r.get('stderr', '')[-500:]}")
        return {"error": True}
    per = [[] for _ in levels]
    res = {"repeat": args.ablation_repeat, "wall_s": r["wall_s"], "max_rss_kb": r.get("max_rss_kb")}
    with open(out) as f:
        for line in f:
            d = json.loads(line)
            if "scratch" in d:
                res["scratch"] = d["scratch"]
            else:
                per[index[d["i"]]].append(d)
    rows = []
    for (w, _), ds in zip(levels, per):
        row = {"window_us": w, "n": len(ds), "level": median([d["level"] for d in ds])}
        for side in ("tt", "xp"):
            lat = [d[side + "_us"] / 1000 for d in ds]
            row[side] = {"p50_ms": pct(lat, 0.5), "p99_ms": pct(lat, 0.99),
                         "keys": median([d[side + "_keys"] for d in ds]),
                         "bytes": median([d[side + "_bytes"] for d in ds]),
                         "items": median([d[side + "_items"] for d in ds])}
        rows.append(row)
        log(f"  xprof ablation {fmt_us(w)} us: tt {row['tt']['bytes']} B / {row['tt']['p50_ms'] and round(row['tt']['p50_ms'], 2)} ms, "
            f"xprof {row['xp']['bytes']} B / {row['xp']['p50_ms'] and round(row['xp']['p50_ms'], 2)} ms")
    res["rows"] = rows
    return res


# ------------------------------------------------------ server (wrk) --
SERVE_LOAD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "serve_load")


def measure_serve(args, m, table, tmp):
    """bench/serve_load (wrk against `tracetable serve` on loopback) on this
    table. A missing wrk is a note, not a failure."""
    if args.serve_seconds <= 0:
        return {"skipped": "--serve-seconds 0"}
    md = os.path.join(tmp, "serve.md")
    js = os.path.join(tmp, "serve.json")
    if os.path.exists(js):
        os.unlink(js)
    env_cli = dict(os.environ, CLI=args.cli)
    cmd = [SERVE_LOAD, "--table", table, "--seconds", args.serve_seconds, "--connections", args.serve_connections,
           "--out", md, "--json", js]
    t0 = time.perf_counter()
    p = subprocess.run([str(c) for c in cmd], env=env_cli, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       timeout=120 + 3 * args.serve_seconds)
    wall = time.perf_counter() - t0
    COMMANDS.append({"purpose": "server throughput (wrk on loopback)", "cmd": shlex.join(str(c) for c in cmd),
                     "wall_s": round(wall, 3), "rc": p.returncode})
    err = p.stderr.decode("utf-8", "replace")
    if p.returncode == 5:
        reason = "server throughput skipped: " + err.strip().splitlines()[-1]
        log(reason)
        NOTES.append(reason)
        return {"skipped": reason}
    if p.returncode != 0 or not os.path.exists(js):
        fail(f"bench/serve_load failed (rc {p.returncode}): {err[-500:]}")
        return {"error": True}
    with open(js) as f:
        res = json.load(f)
    for c in res["cases"]:
        # An error answer is a server bug; socket timeouts are load.
        if "Non-2xx" in (c.get("errors") or ""):
            fail(f"server answered errors at {c['fraction']} x span: {c['errors']}")
        elif c.get("errors"):
            NOTES.append(f"wrk at {c['fraction']} x span: {c['errors']}")
        log(f"  serve {c['fraction']} x span: {c['requests_per_s']} req/s, p50 {c['p50_ms']} ms, p99 {c['p99_ms']} ms")
    return res


# ------------------------------------------------------- micro (gbench) --
def measure_micro(args):
    """Runs every Google Benchmark binary bench/micro built (tt_bench_*)."""
    found = sorted(n for n in os.listdir(args.micro_dir) if n.startswith("tt_bench_")) \
        if os.path.isdir(args.micro_dir) else []
    found = [n for n in found if os.access(os.path.join(args.micro_dir, n), os.X_OK)]
    if not found:
        reason = (f"micro-benchmarks skipped: no tt_bench_* in {args.micro_dir} "
                  f"(is libbenchmark-dev installed? scripts/install-deps)")
        NOTES.append(reason)
        return {"skipped": reason}
    out = {"min_time_s": args.micro_min_time, "benchmarks": []}
    for name in found:
        path = os.path.join(args.micro_dir, name)
        res_path = os.path.join(args.data, "tmp", name + ".json")
        r = run([path, f"--benchmark_min_time={args.micro_min_time}", f"--benchmark_out={res_path}",
                 "--benchmark_out_format=json"], "micro-benchmark (Google Benchmark)")
        if r["rc"] != 0:
            fail(f"{name} failed, {rc_text(r)}: {r.get('stderr', '')[-300:]}")
            continue
        with open(res_path) as f:
            doc = json.load(f)
        for b in doc.get("benchmarks", []):
            out["benchmarks"].append({"binary": name, **{k: b.get(k) for k in (
                "name", "real_time", "cpu_time", "time_unit", "iterations", "items_per_second",
                "bytes_per_second", "error_message")}})
        log(f"  {name}: {len(doc.get('benchmarks', []))} benchmarks")
    return out


# The in-process sweep, for when the CLI grows a query-benchmark mode. The
# expected interface (see docs/performance.md):
#   tracetable bench-queries TABLE --windows FILE [--repeat N]
# FILE has one window per line: "start_us end_us resolution_us [pid[:tid]]";
# stdout has one JSON object per line and window:
#   {"i": <line>, "latency_us": <float>, "items": N, "summaries": N, ...}
# with the table opened once (warm: the process and caches are warm).
def inprocess_available(args):
    if args.inprocess == "off":
        return False
    r = subprocess.run([args.cli, "bench-queries", "--help"], capture_output=True)
    ok = r.returncode == 0
    if args.inprocess == "on" and not ok:
        NOTES.append("--inprocess on but `tracetable bench-queries` is not available; used one process per window")
    return ok


def sweep_inprocess(args, table, levels, track, tmp):
    out = []
    for one in (False, True):
        wfile = os.path.join(tmp, "windows.txt")
        index = []
        with open(wfile, "w") as f:
            for li, (w, wins) in enumerate(levels):
                for a, b in wins:
                    f.write(f"{fmt_us(a)} {fmt_us(b)} {fmt_us(w / 2000)}"
                            + (f" {track['pid']}:{track['tid']}" if one else "") + "\n")
                    index.append(li)
        res_path = os.path.join(tmp, "bench-queries.jsonl")
        r = run([args.cli, "bench-queries", table, "--windows", wfile], "in-process window sweep",
                stdout_path=res_path)
        per = [[] for _ in levels]
        if r["rc"] == 0:
            with open(res_path) as f:
                for line in f:
                    d = json.loads(line)
                    per[index[d["i"]]].append(d)
        rows = []
        for (w, _), ds in zip(levels, per):
            lat = [d["latency_us"] / 1000 for d in ds]
            rows.append({"window_us": w, "n": len(ds), "p50_ms": pct(lat, 0.5), "p99_ms": pct(lat, 0.99),
                         "max_ms": max(lat) if lat else None,
                         "items_median": median([d.get("items") for d in ds]),
                         "summaries_median": median([d.get("summaries") for d in ds])})
        out.append(rows)
    return out[0], out[1]


PLAIN_VIEWER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tools", "plain_viewer.py")


def measure_plain_viewer(args, m, tmp):
    runs, parsed = [], None
    for rep in range(args.reps):
        out = os.path.join(tmp, "plain.json")
        r = run(["python3", PLAIN_VIEWER, m["json_path"], fmt_us(m["start_us"]), fmt_us(m["end_us"])],
                "plain-viewer model: json.load + filter whole window", stdout_path=out)
        if r["rc"] != 0:
            fail(f"plain viewer failed, {rc_text(r)}: {r.get('stderr', '')[-300:]}")
            break
        with open(out) as f:
            parsed = json.load(f)
        runs.append(r)
    if not runs:
        return {"error": True}
    res = {"n": len(runs), "wall_ms": median([r["wall_s"] * 1000 for r in runs]),
           "cpu_s": median([r.get("cpu_s") for r in runs]),
           "max_rss_kb": median([r.get("max_rss_kb") for r in runs]), "items": parsed["items"]}
    log(f"  plain viewer: {res['wall_ms']:.0f} ms, rss {res['max_rss_kb']} KB")
    return res


SQLITE_LOAD = """PRAGMA journal_mode=OFF;
PRAGMA synchronous=OFF;
CREATE TABLE events(ph TEXT, pid INTEGER, tid INTEGER, ts INTEGER, dur INTEGER, cat TEXT, name TEXT, id INTEGER, args TEXT);
.import --csv --skip 1 {csv} events
CREATE INDEX events_pid_tid_ts ON events(pid, tid, ts);
ANALYZE;
"""


def measure_sqlite(args, m, tmp):
    if not m.get("csv_path"):
        return {"skipped": "no CSV"}
    db = os.path.join(args.data, "tables", os.path.basename(m["json_path"])[:-5] + ".sqlite")
    os.makedirs(os.path.dirname(db), exist_ok=True)
    script = os.path.join(args.data, "tables", "load.sql")
    with open(script, "w") as f:
        f.write(SQLITE_LOAD.format(csv=m["csv_path"]))
    runs = []
    for rep in range(args.reps):
        if os.path.exists(db):
            os.unlink(db)
        r = run(["sqlite3", db, "-init", script, ".quit"], "sqlite load (.import CSV, index, ANALYZE)")
        if r["rc"] != 0:
            fail(f"sqlite load failed, {rc_text(r)}: {r.get('stderr', '')[-300:]}")
            return {"error": True}
        runs.append(r)
    wall = median([r["wall_s"] for r in runs])
    res = {"load": {"n": len(runs), "wall_s": wall, "max_rss_kb": median([r.get("max_rss_kb") for r in runs]),
                    "events_per_s": m["events"] / wall, "mb_per_s_of_json": m["json_file_bytes"] / 1e6 / wall,
                    "script": SQLITE_LOAD.format(csv=m["csv_path"])}}
    res["disk_bytes"] = du_bytes(db)
    res["bytes_per_event"] = res["disk_bytes"] / m["events"]
    log(f"  sqlite load {wall:.2f} s, {res['bytes_per_event']:.1f} B/event")
    maxdur_ns = round(m["max_dur_us"] * 1000)

    def sql(a, b, one):
        a_ns, b_ns = round(a * 1000), round(b * 1000)
        q = (f"SELECT ph,pid,tid,ts,dur,name,args FROM events WHERE ts >= {a_ns - maxdur_ns} "
             f"AND ts <= {b_ns} AND ts + dur >= {a_ns}")
        if one:
            q += f" AND pid = {m['one_track']['pid']} AND tid = {m['one_track']['tid']}"
        return q + ";"

    levels = sweep_windows(m["start_us"], m["end_us"], args.positions, args.seed)
    parse = lambda p: {"items": count_rows_json(p)}
    res["query_plan"] = subprocess.run(["sqlite3", db, "EXPLAIN QUERY PLAN " + sql(0, 1, False)],
                                       capture_output=True, text=True).stdout.strip()
    floor = [run(["sqlite3", db, "SELECT 1;"], "sqlite process start + open floor") for _ in range(args.reps)]
    res["process_floor_ms"] = median([r["wall_s"] * 1000 for r in floor])
    res["sweep_all"] = run_sweep("sqlite all tracks", levels, lambda a, b, w: ["sqlite3", "-json", db, sql(a, b, False)],
                                 parse, tmp, args.level_budget_s, args.min_samples)
    res["sweep_one"] = run_sweep("sqlite one track", levels, lambda a, b, w: ["sqlite3", "-json", db, sql(a, b, True)],
                                 parse, tmp, args.level_budget_s, args.min_samples)
    # The first zoom level is the whole span at every position: it is the
    # first whole-trace window.
    top = res["sweep_all"][0]
    res["first_window_warm"] = {"n": top["n"], "wall_ms": top["p50_ms"], "max_rss_kb": top["max_rss_kb"],
                                "items": top["items_median"]}
    return res


# ---------------------------------------------------------------- report --
def machine_info():
    info = {"hostname": socket.gethostname(), "nproc": os.cpu_count(), "kernel": platform.release(),
            "loadavg_at_start": os.getloadavg()[0]}
    try:
        with open("/proc/meminfo") as f:
            info["mem_total_gib"] = round(int(f.readline().split()[1]) / 2**20, 1)
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        info["git_commit"] = subprocess.run(["git", "-C", os.path.dirname(os.path.abspath(__file__)), "rev-parse",
                                             "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        info["git_dirty"] = bool(subprocess.run(["git", "-C", os.path.dirname(os.path.abspath(__file__)), "status",
                                                 "--porcelain", "--untracked-files=no"],
                                                capture_output=True, text=True).stdout.strip())
    except OSError:
        pass
    for tool, flag in (("sqlite3", "--version"), ("python3", "--version")):
        try:
            info[tool] = subprocess.run([tool, flag], capture_output=True, text=True).stdout.split("\n")[0][:40]
        except OSError:
            pass
    return info


def f(x, nd=1, unit=""):
    if x is None:
        return "–"
    if isinstance(x, float):
        return f"{x:,.{nd}f}{unit}"
    return f"{x:,}{unit}"


def mib(kb):
    return None if kb is None else kb / 1024


def window_label(w):
    return f"{w / 1e6:.3g} s" if w >= 1e6 else f"{w / 1e3:.3g} ms" if w >= 1e3 else f"{w:.3g} µs"


def report_ablation(L, doc):
    for s in doc["sizes"]:
        ab = (s.get("tracetable") or {}).get("xprof_ablation") or {}
        if not ab.get("rows"):
            continue
        n = human_events(s["meta"]["events_target"])
        sc = ab.get("scratch", {})
        L.append(f"## XProf layout ablation, {n} events")
        L.append("")
        L.append(
            "The one-track zoom sweep (same windows as above) on tracetable's table and on a scratch copy of "
            "its events in XProf's layout (`bench/xprof_layout.cc`): one key space per zoom level, key "
            "`level | ts | serial`, no resource in the key; an event sits at the coarsest level whose "
            "resolution it reaches (same levels as `format/levels.h`), and a window reads each level from the "
            "coarsest down to the query's, from start − (the level's longest event) to end, then drops the "
            "other tracks' events. Both in one process, warm LevelDB block cache (64 MiB each), same LevelDB "
            "options, both compacted. **keys** = LevelDB entries read (tracetable: tiles; XProf: events); "
            "**bytes** = value bytes returned by LevelDB iterators on both sides (medians). Latency is the query "
            "alone (no answer text), p50 / p99 over the positions"
            + (f" × {ab['repeat']} repetitions" if ab.get("repeat", 1) > 1 else "") + ". tracetable also reads "
            "summary tiles and returns summaries of the short events; the XProf layout returns only events of "
            "the levels it reads (the tool checks that both return the same slices of dur ≥ resolution). "
            f"Scratch layout: {f(sc.get('events'))} events, {f((sc.get('disk_bytes') or 0) / 1e6, 1)} MB on disk"
            + (f", built in {sc['build_s']:.1f} s" if sc.get("build_s") else " (reused)") + ".")
        L.append("")
        L.append("| window | level | tt keys | tt bytes | tt p50 / p99 ms | tt items | XProf keys | XProf bytes | "
                 "XProf p50 / p99 ms | XProf items | XProf/tt bytes |")
        L.append("|---|---|---|---|---|---|---|---|---|---|---|")
        for r in ab["rows"]:
            tt, xp = r["tt"], r["xp"]
            ratio = f(xp["bytes"] / tt["bytes"], 1, "×") if tt.get("bytes") else "–"
            L.append(f"| {window_label(r['window_us'])} | {f(r['level'], 0)} | {f(tt['keys'], 0)} | "
                     f"{f(tt['bytes'], 0)} | {f(tt['p50_ms'], 2)} / {f(tt['p99_ms'], 2)} | {f(tt['items'], 0)} | "
                     f"{f(xp['keys'], 0)} | {f(xp['bytes'], 0)} | {f(xp['p50_ms'], 2)} / {f(xp['p99_ms'], 2)} | "
                     f"{f(xp['items'], 0)} | {ratio} |")
        L.append("")


def report_serve(L, doc):
    rows = []
    for s in doc["sizes"]:
        sv = (s.get("tracetable") or {}).get("serve") or {}
        for c in sv.get("cases", []):
            rows.append((human_events(s["meta"]["events_target"]), sv, c))
    skipped = [((s.get("tracetable") or {}).get("serve") or {}).get("skipped") for s in doc["sizes"]]
    if not rows and not any(skipped):
        return
    L.append("## Server throughput (wrk on loopback)")
    L.append("")
    if rows:
        sv = rows[0][1]
        L.append(f"`bench/serve_load`: `tracetable serve --threads {sv.get('server_threads')}` on the table, "
                 f"`wrk -t{sv.get('threads')} -c{sv.get('connections')} -d{sv.get('seconds')}s --latency` with "
                 f"gzip, each request a random window of the given fraction of the span at 2000 pixels "
                 f"(resolution = width/2000), answer text included. Client and server share the 2 cores.")
        L.append("")
        L.append("| events | window | requests/s | p50 ms | p90 ms | p99 ms | requests | transfer/s | errors |")
        L.append("|---|---|---|---|---|---|---|---|---|")
        for n, _, c in rows:
            if not c.get("requests"):
                # wrk counts only requests that complete before its deadline.
                L.append(f"| {n} | {c['fraction']:g} × span ({window_label(c['window_us'])}) | 0: no request "
                         f"completed within {sv.get('seconds')} s with {sv.get('connections')} connections | "
                         f"– | – | – | 0 | – | {c.get('errors') or 'none'} |")
                continue
            L.append(f"| {n} | {c['fraction']:g} × span ({window_label(c['window_us'])}) | "
                     f"{f(c['requests_per_s'], 1)} | {f(c['p50_ms'], 2)} | {f(c['p90_ms'], 2)} | "
                     f"{f(c['p99_ms'], 2)} | {f(c['requests'])} | {c.get('transfer_per_s') or '–'} | "
                     f"{c.get('errors') or 'none'} |")
    for sk in skipped:
        if sk:
            L.append("")
            L.append(f"_{sk}_")
    L.append("")


def report_scaling(L, doc):
    sizes = [s for s in doc["sizes"] if (s.get("tracetable") or {}).get("sweep_all")]
    if len(sizes) < 2:
        return
    names = [human_events(s["meta"]["events_target"]) for s in sizes]
    depth = max(len(s["tracetable"]["sweep_all"]) for s in sizes)
    L.append("## Scaling")
    L.append("")
    L.append("The same sweep at every size, p50 / p99 ms (" + sizes[0]["tracetable"].get("sweep_mode", "") +
             "). Rows are the fraction of each trace's span, so a row is the same view (same number of "
             "pixels, same share of the trace) of a longer and denser trace; the last row is the fixed "
             "10 µs window. Window widths per size are in the sweep tables above.")
    L.append("")
    L.append("| window | " + " | ".join(f"{n} all" for n in names) + " | " +
             " | ".join(f"{n} one track" for n in names) + " |")
    L.append("|---|" + "---|" * (2 * len(names)))

    def cell(rows, i):
        if i is None or i >= len(rows) or rows[i].get("p50_ms") is None:
            return "–"
        return f"{f(rows[i]['p50_ms'], 2)} / {f(rows[i]['p99_ms'], 2)}"

    labels = ["whole span"] + [f"span / 10^{k}" for k in range(1, depth - 1)] + ["10 µs"]
    for k, label in enumerate(labels):
        cells_all, cells_one = [], []
        for s in sizes:
            rows_a, rows_o = s["tracetable"]["sweep_all"], s["tracetable"].get("sweep_one") or []
            last = len(rows_a) - 1
            i = last if label == "10 µs" else (k if k < last else None)
            cells_all.append(cell(rows_a, i))
            cells_one.append(cell(rows_o, i))
        L.append(f"| {label} | " + " | ".join(cells_all) + " | " + " | ".join(cells_one) + " |")
    L.append("")


def report_micro(L, doc):
    mi = doc.get("micro") or {}
    if mi.get("skipped"):
        L.append("## Micro-benchmarks")
        L.append("")
        L.append(f"_{mi['skipped']}_")
        L.append("")
    if not mi.get("benchmarks"):
        return
    L.append("## Micro-benchmarks (Google Benchmark)")
    L.append("")
    L.append(f"Every `tt_bench_*` built from `bench/micro/`, `--benchmark_min_time={mi['min_time_s']}`; time per "
             "iteration (wall / CPU), and the rates the benchmark reports. See docs/performance.md for what each "
             "one runs.")
    L.append("")
    L.append("| binary | benchmark | wall | CPU | items/s | bytes/s |")
    L.append("|---|---|---|---|---|---|")
    for b in mi["benchmarks"]:
        if b.get("error_message"):
            L.append(f"| {b['binary']} | {b['name']} | error: {b['error_message']} | | | |")
            continue
        unit = b.get("time_unit") or "ns"
        ips = b.get("items_per_second")
        bps = b.get("bytes_per_second")
        L.append(f"| {b['binary']} | `{b['name']}` | {f(b['real_time'], 2)} {unit} | {f(b['cpu_time'], 2)} {unit} | "
                 f"{f(ips / 1e6, 2, ' M') if ips else '–'} | {f(bps / 1e6, 1, ' MB') if bps else '–'} |")
    L.append("")


def write_report(path_md, path_json, doc):
    with open(path_json, "w") as fj:
        json.dump(doc, fj, indent=1, default=str)
    sizes = doc["sizes"]
    L = []
    L.append(f"# tracetable benchmark — {doc['date']} on {doc['machine']['hostname']}")
    L.append("")
    mi = doc["machine"]
    L.append(f"Machine: {mi.get('nproc')} cores ({mi.get('cpu', '?')}), {mi.get('mem_total_gib')} GiB RAM, "
             f"kernel {mi.get('kernel')}; git {mi.get('git_commit')}{' (dirty)' if mi.get('git_dirty') else ''}; "
             f"{mi.get('sqlite3', '')}; {mi.get('python3', '')}. 1-minute load average "
             f"{mi.get('loadavg_at_start', 0):.2f} at start, {mi.get('loadavg_at_end', 0):.2f} at end "
             f"(anything above ~0.5 means other work shared the 2 cores).")
    load = max(mi.get("loadavg_at_start", 0), mi.get("loadavg_at_end", 0))
    if load > 1:
        L.append("")
        L.append(f"**The machine was shared during this run** (load average up to {load:.1f} on "
                 f"{mi.get('nproc')} cores): wall times and percentiles are inflated; CPU times, bytes and "
                 f"keys read are not.")
        L.append("")
    L.append(f"Command: `{doc['argv']}` (mode {doc['mode']}, {doc['reps']} repetitions, medians; "
             f"measurements took {doc.get('elapsed_s', 0):.0f} s). "
             f"Every command line with its timings is in `{os.path.basename(path_json)}`.")
    L.append("")
    if doc.get("cli_missing"):
        L.append(f"**The tracetable CLI was not found at `{doc['cli']}`: tracetable measurements are missing.**")
        L.append("")
    names = [human_events(s["meta"]["events_target"]) for s in sizes]
    L.append("## Summary")
    L.append("")
    L.append("| | " + " | ".join(names) + " |")
    L.append("|---|" + "---|" * len(names))

    def row(label, fn):
        vals = []
        for s in sizes:
            try:
                vals.append(fn(s))
            except (KeyError, TypeError, ZeroDivisionError):
                vals.append("–")
        L.append(f"| {label} | " + " | ".join(vals) + " |")

    row("events (generated)", lambda s: f(s["meta"]["events"]))
    row("JSON size", lambda s: f(s["meta"]["json_file_bytes"] / 1e6, 1, " MB"))
    row("trace span", lambda s: f(s["meta"]["span_us"] / 1e6, 3, " s"))
    row("generator", lambda s: f(s["meta"]["gen_events_per_s"] / 1e6, 2, " M events/s") if "gen_events_per_s" in s["meta"] else "reused")
    for label in ("default", f"budget {doc['small_budget']}"):
        row(f"ingest {label}: MB/s", lambda s: f(s["tracetable"]["ingest"][label]["mb_per_s"], 1))
        row(f"ingest {label}: events/s", lambda s: f(s["tracetable"]["ingest"][label]["events_per_s"] / 1e6, 2, " M"))
        row(f"ingest {label}: wall / CPU", lambda s: f"{f(s['tracetable']['ingest'][label]['wall_s'], 2)} s / "
            f"{f(s['tracetable']['ingest'][label]['cpu_s'], 2)} s")
        row(f"ingest {label}: peak RSS", lambda s: f(mib(s["tracetable"]["ingest"][label]["max_rss_kb"]), 0, " MiB"))
    row("tracetable size on disk", lambda s: f(s["tracetable"]["disk_bytes"] / 1e6, 1, " MB"))
    row("tracetable bytes/event", lambda s: f(s["tracetable"]["bytes_per_event"], 2))
    row("`tracetable --help` (process start floor)", lambda s: f(s["tracetable"]["help_ms"], 1, " ms"))
    row("`info` (process start + open)", lambda s: f(s["tracetable"]["info_ms"], 1, " ms"))
    row("first whole-trace window, fresh process, warm cache", lambda s: f(s["tracetable"]["first_window_warm"]["wall_ms"], 1, " ms"))
    row("first whole-trace window, fresh process, cold cache", lambda s: f(s["tracetable"]["first_window_cold"]["wall_ms"], 1, " ms"))
    row("first window: CPU (user+sys)", lambda s: f(s["tracetable"]["first_window_warm"]["cpu_ms"], 0, " ms"))
    row("first window: peak RSS", lambda s: f(mib(s["tracetable"]["first_window_warm"]["max_rss_kb"]), 0, " MiB"))
    row("first window: items / summaries", lambda s: f"{f(s['tracetable']['first_window_warm']['tracetable'].get('items'))} / "
        f"{f(s['tracetable']['first_window_warm']['tracetable'].get('summaries'))}")
    row("sweep p99 all tracks (worst level)", lambda s: f(max(r["p99_ms"] for r in s["tracetable"]["sweep_all"] if r["p99_ms"] is not None), 1, " ms"))
    row("sweep p99 one track (worst level)", lambda s: f(max(r["p99_ms"] for r in s["tracetable"]["sweep_one"] if r["p99_ms"] is not None), 1, " ms"))
    row("XProf layout / tracetable: bytes read, one-track whole span",
        lambda s: f(s["tracetable"]["xprof_ablation"]["rows"][0]["xp"]["bytes"] /
                    s["tracetable"]["xprof_ablation"]["rows"][0]["tt"]["bytes"], 1, "×"))
    row("server: req/s whole span / 1% / 0.01% (wrk)",
        lambda s: " / ".join(f(c["requests_per_s"], 1) for c in s["tracetable"]["serve"]["cases"]))
    row("plain viewer (json.load): first window", lambda s: f(s["plain_viewer"]["wall_ms"], 0, " ms"))
    row("plain viewer: peak RSS", lambda s: f(mib(s["plain_viewer"]["max_rss_kb"]), 0, " MiB"))
    row("first-window speed-up vs plain viewer", lambda s: f(s["plain_viewer"]["wall_ms"] / s["tracetable"]["first_window_warm"]["wall_ms"], 1, "×"))
    row("memory ratio vs plain viewer", lambda s: f(s["plain_viewer"]["max_rss_kb"] / s["tracetable"]["first_window_warm"]["max_rss_kb"], 1, "×"))
    row("SQLite load (CSV .import + index)", lambda s: f(s["sqlite"]["load"]["wall_s"], 2, " s"))
    row("SQLite bytes/event", lambda s: f(s["sqlite"]["bytes_per_event"], 1))
    row("SQLite process+open floor (SELECT 1)", lambda s: f(s["sqlite"]["process_floor_ms"], 1, " ms"))
    row("SQLite first whole-trace window", lambda s: f(s["sqlite"]["first_window_warm"]["wall_ms"], 0, " ms"))
    L.append("")
    for s in sizes:
        n = human_events(s["meta"]["events_target"])
        tt = s.get("tracetable") or {}
        sq = s.get("sqlite") or {}
        if not tt.get("sweep_all") and not sq.get("sweep_all"):
            continue
        L.append(f"## Zoom sweep, {n} events")
        L.append("")
        L.append(f"Windows from the whole span down to 10 µs (÷10 per level), up to {doc['positions']} seeded random "
                 f"positions per level (fewer when a level hits its time budget; n = samples), resolution = window/2000. tracetable: {tt.get('sweep_mode', '–')}. "
                 f"SQLite: one `sqlite3 -json` process per window. Latency in ms (p50 / p99), items = median "
                 f"items returned (tracetable `items`+`summaries` object fields; SQLite rows). One track = "
                 f"`--pid {s['meta']['one_track']['pid']}:{s['meta']['one_track']['tid']}` "
                 f"({s['meta']['one_track']['name']}).")
        L.append("")
        L.append("| window | tt all p50/p99 (n) | tt all items (summaries) | tt one p50/p99 (n) | tt one items (summaries) | "
                 "SQLite all p50/p99 (n) | SQLite all rows | SQLite one p50/p99 (n) | SQLite one rows |")
        L.append("|---|---|---|---|---|---|---|---|---|")
        nlev = max(len(tt.get("sweep_all") or []), len(sq.get("sweep_all") or []))

        def cell(rows, i, what):
            if not rows or i >= len(rows):
                return "–"
            r = rows[i]
            if what == "lat":
                return f"{f(r['p50_ms'])} / {f(r['p99_ms'])} ({r['n']})"
            it = f(float(r["items_median"]), 0) if r["items_median"] is not None else "–"
            sm = r.get("summaries_median")
            if sm is not None:
                it += f" ({f(float(sm), 0)})"
            return it

        for i in range(nlev):
            ref = (tt.get("sweep_all") or sq.get("sweep_all"))[i]
            w = ref["window_us"]
            wl = f"{w / 1e6:.3g} s" if w >= 1e6 else f"{w / 1e3:.3g} ms" if w >= 1e3 else f"{w:.3g} µs"
            L.append(f"| {wl} | {cell(tt.get('sweep_all'), i, 'lat')} | {cell(tt.get('sweep_all'), i, 'it')} | "
                     f"{cell(tt.get('sweep_one'), i, 'lat')} | {cell(tt.get('sweep_one'), i, 'it')} | "
                     f"{cell(sq.get('sweep_all'), i, 'lat')} | {cell(sq.get('sweep_all'), i, 'it')} | "
                     f"{cell(sq.get('sweep_one'), i, 'lat')} | {cell(sq.get('sweep_one'), i, 'it')} |")
        L.append("")
        L.append("CPU time (user+sys, 10 ms granularity) per query, p50 / p99 ms — less sensitive to other load "
                 "on the machine than wall time:")
        L.append("")
        L.append("| window | tt all | tt one | SQLite all | SQLite one |")
        L.append("|---|---|---|---|---|")

        def cpu_cell(rows, i):
            if not rows or i >= len(rows) or rows[i].get("cpu_p50_ms") is None:
                return "–"
            return f"{f(rows[i]['cpu_p50_ms'], 0)} / {f(rows[i]['cpu_p99_ms'], 0)}"

        for i in range(nlev):
            ref = (tt.get("sweep_all") or sq.get("sweep_all"))[i]
            w = ref["window_us"]
            wl = f"{w / 1e6:.3g} s" if w >= 1e6 else f"{w / 1e3:.3g} ms" if w >= 1e3 else f"{w:.3g} µs"
            L.append(f"| {wl} | {cpu_cell(tt.get('sweep_all'), i)} | {cpu_cell(tt.get('sweep_one'), i)} | "
                     f"{cpu_cell(sq.get('sweep_all'), i)} | {cpu_cell(sq.get('sweep_one'), i)} |")
        if tt.get("sweep_all_cold"):
            L.append("")
            L.append("Cold cache (page cache dropped before each query), all tracks: " + ", ".join(
                f"{r['window_us']:.3g} µs: {f(r['p50_ms'])}/{f(r['p99_ms'])} ms" for r in tt["sweep_all_cold"]))
        L.append("")
    report_ablation(L, doc)
    report_serve(L, doc)
    report_scaling(L, doc)
    report_micro(L, doc)
    if doc.get("notes"):
        L.append("## Notes and failures")
        L.append("")
        for n in doc["notes"]:
            L.append("- " + n.replace("\n", " ")[:600])
        L.append("")
    L.append("## Commands (representative; all are in the JSON)")
    L.append("")
    L.append("```")
    seen = set()
    for c in doc["commands"]:
        if c["purpose"] in seen:
            continue
        seen.add(c["purpose"])
        cmd = c["cmd"] if len(c["cmd"]) < 400 else c["cmd"][:400] + " …"
        L.append(f"# {c['purpose']}\n{cmd}" + (f" > {os.path.basename(c['stdout'])}" if c.get("stdout") else ""))
    L.append("```")
    with open(path_md, "w") as fm:
        fm.write("\n".join(L) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", required=True)
    ap.add_argument("--gen", required=True, help="tt_gen_trace binary")
    ap.add_argument("--cli", required=True, help="tracetable binary")
    ap.add_argument("--data", required=True)
    ap.add_argument("--results", required=True)
    ap.add_argument("--sizes", required=True, help="comma-separated event counts")
    ap.add_argument("--mode", default="default")
    ap.add_argument("--argv", default="bench/run")
    ap.add_argument("--hosts", type=int, default=4)
    ap.add_argument("--devices", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--positions", type=int, default=20)
    ap.add_argument("--min-samples", type=int, default=3)
    ap.add_argument("--level-budget-s", type=float, default=15)
    ap.add_argument("--small-budget", default="64M")
    ap.add_argument("--cold", type=int, default=1, help="also measure with the page cache dropped (root only)")
    ap.add_argument("--cold-positions", type=int, default=3)
    ap.add_argument("--baselines", type=int, default=1)
    ap.add_argument("--baseline-max-events", type=int, default=10_000_000)
    ap.add_argument("--inprocess", choices=["auto", "on", "off"], default="auto")
    ap.add_argument("--xprof", default="", help="tt_xprof_layout binary (XProf layout ablation)")
    ap.add_argument("--ablation-max-events", type=int, default=10_000_000)
    ap.add_argument("--ablation-repeat", type=int, default=1)
    ap.add_argument("--serve-seconds", type=int, default=10, help="wrk seconds per window size; 0 = skip")
    ap.add_argument("--serve-connections", type=int, default=16)
    ap.add_argument("--tag", default="", help="appended to the result file names")
    ap.add_argument("--micro-dir", default="", help="directory of the tt_bench_* binaries; empty = skip")
    ap.add_argument("--micro-min-time", type=float, default=0.2)
    ap.add_argument("--single-ingest-events", type=int, default=50_000_000,
                    help="from this size on, ingest once per budget instead of --reps times")
    args = ap.parse_args()
    os.makedirs(args.data, exist_ok=True)
    os.makedirs(args.results, exist_ok=True)
    tmp = os.path.join(args.data, "tmp")
    os.makedirs(tmp, exist_ok=True)
    if args.cold and not drop_caches():
        NOTES.append("cannot drop the page cache (not root?): cold measurements skipped")
        args.cold = 0

    have_cli = cli_available(args.cli)
    if not have_cli:
        msg = (f"tracetable CLI not found at {args.cli} (is cli/ built yet?): "
               f"skipping ingest/info/query measurements; generator and baselines still run")
        log("ERROR: " + msg)
        NOTES.append(msg)
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    host = socket.gethostname()
    # The default mode owns <date>-<host>; --quick (CI) and --big get a suffix
    # so they do not overwrite it.
    suffix = "" if args.mode == "default" else f"-{args.mode}"
    if args.tag:
        suffix += f"-{args.tag}"
    if not have_cli:
        suffix += "-nocli"  # never overwrite a complete report with a CLI-less one
    base = os.path.join(args.results, f"{date}-{host}{suffix}")
    doc = {"date": date, "started_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "machine": machine_info(), "argv": args.argv, "mode": args.mode, "reps": args.reps,
           "positions": args.positions, "small_budget": args.small_budget, "cli": args.cli,
           "cli_missing": not have_cli, "sizes": [], "notes": NOTES, "commands": COMMANDS}
    t_all = time.perf_counter()
    if args.micro_dir:
        log("== micro-benchmarks ==")
        doc["micro"] = measure_micro(args)
    for n in [int(x) for x in args.sizes.split(",")]:
        log(f"== {human_events(n)} events ==")
        m = ensure_trace(args, n)
        m["events_target"] = n
        entry = {"meta": m}
        doc["sizes"].append(entry)
        if have_cli:
            entry["tracetable"] = measure_tracetable(args, m, tmp)
        if args.baselines and n <= args.baseline_max_events:
            entry["plain_viewer"] = measure_plain_viewer(args, m, tmp)
            entry["sqlite"] = measure_sqlite(args, m, tmp)
        elif args.baselines:
            NOTES.append(
                f"{human_events(n)}: plain-viewer and SQLite baselines skipped (above --baseline-max-events "
                f"{args.baseline_max_events:,}): json.load would hold ~75 GB at 100M (7.3 GB at 10M) on a "
                f"24 GB machine, and at 100M the SQLite side would need a ~5 GB CSV and a ~7 GB database; "
                f"the largest size with baselines is the comparison")
        doc["elapsed_s"] = round(time.perf_counter() - t_all, 1)
        doc["machine"]["loadavg_at_end"] = os.getloadavg()[0]
        write_report(base + ".md", base + ".json", doc)  # after every size
    log(f"wrote {base}.md and {base}.json in {time.perf_counter() - t_all:.0f} s")
    if not have_cli:
        log("ERROR: " + NOTES[0])
        return 3
    if FAILURES:
        log(f"ERROR: {len(FAILURES)} measurement(s) failed; first: {FAILURES[0][:300]}")
        return 4
    return 0


if __name__ == "__main__":
    sys.exit(main())
