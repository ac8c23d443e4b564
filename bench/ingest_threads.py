#!/usr/bin/env python3
"""Ingest speed against parse threads (issue 14), A/B between binaries.

For each trace: the one-thread simdjson scan floor (tt_json_scan: its first,
"cold" pass, which is what the issue measured, and its second, "warm" pass,
free of the page faults of simdjson's whole-document index), then
--reps rounds; each round runs every binary at every thread count back to
back (so A and B see the same load), in reverse order every other round
(ABBA: this VM's speed drifts over minutes, and whichever run comes first
in every round was the slow one: gen 1M one-thread 0.86 s in first place,
0.66 s in third), under /usr/bin/time. Reports medians:
wall, MB/s (10^6 input bytes / wall), CPU-s (user+sys) and CPU-s per GB, each
also as a ratio to the scan, peak RSS, the speed-up over the binary's first
thread count, and the 1-minute load average around each round.

  bench/ingest_threads.py --bin after=build/cli/tracetable \\
      --bin before=/path/to/old/tracetable:nothreads \\
      --threads 1,2 --reps 3 --scan build/bench/tt_json_scan \\
      --out bench/results/DATE-HOST-ingest-threads.md TRACE.json [...]

A binary marked ":nothreads" predates --threads and runs once per round.
With --pin, a run with N threads is confined to cores 0..N-1 (taskset), so the
curve is over cores, not only over --threads (every ingest also has a reading,
a building and tile-worker threads, which otherwise spread over all cores);
give --threads up to the machine's core count to get the whole curve.
With --ceiling (and --pin), each round also runs, for each N > 1, N
one-thread ingests of the first binary at once, one pinned to each core:
N × the one-thread wall / the slowest of those is what N cores of this
machine give N processes that share nothing but the machine (on a VM,
often well under N; see bench/tools/pair_ceiling.sh), the bound for the
speed-up column.
With --pause S, every timed run starts after S seconds idle. This VM hands
memory freed by a process back to its host about 2 s later, and touching
it again then costs 10× more or worse (1.4–1.9 against 0.06–0.12 ms/MB in
tt_first_touch: docs/performance.md, s44). Back-to-back runs measure an
ingest right after another one; paused runs, a user's first ingest on an
idle machine.
"""
import argparse, json, os, re, shutil, statistics, subprocess, sys, tempfile, time


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def timed_at_once(runs):
    """Runs each (cmd, cpus) at once, cmd under `taskset -c cpus` if cpus;
    returns their wall, CPU and peak RSS in the same order."""
    started = []
    for cmd, cpus in runs:
        if cpus:
            cmd = ["taskset", "-c", cpus] + cmd
        tf = tempfile.NamedTemporaryFile("r", suffix=".time")
        p = subprocess.Popen(["/usr/bin/time", "-f", "%e %U %S %M", "-o", tf.name] + cmd,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        started.append((cmd, tf, p))
    out = []
    for cmd, tf, p in started:
        _, err = p.communicate()
        if p.returncode != 0:
            sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}\n{err[-2000:]}")
        wall, user, sys_, rss = tf.read().split()[-4:]
        tf.close()
        out.append({"wall_s": float(wall), "cpu_s": float(user) + float(sys_), "rss_kb": int(rss)})
    return out


def timed(cmd, cores=None):
    return timed_at_once([(cmd, f"0-{cores - 1}" if cores else None)])[0]


def ceiling_lines(t):
    """The machine's own limit: per round, N × the pinned one-thread run's
    wall / the slowest of N one-thread runs at once (one per core)."""
    L = []
    for n in sorted({c["cores"] for c in t.get("ceiling", [])}):
        rounds = [c for c in t["ceiling"] if c["cores"] == n]
        ratios = []
        for c in rounds:
            solo = [r["wall_s"] for r in t["runs"] if r["bin"] == c["bin"] and r["threads"] == 1 and r["rep"] == c["rep"]]
            if solo:
                ratios.append(n * solo[0] / max(c["walls"]))
        if ratios:
            L += [f"Ceiling at {n} cores ({rounds[0]['bin']}: {n} one-thread ingests at once, one per core; "
                  f"{n} × the one-thread run / the slowest of them, per round): median {statistics.median(ratios):.2f}× "
                  f"({min(ratios):.2f}–{max(ratios):.2f}), what this machine gives any {n}-core ingest of the "
                  "same work.", ""]
    return L


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", action="append", required=True, help="label=path[:nothreads]")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--scan", required=True, help="tt_json_scan binary")
    ap.add_argument("--budget", default="1G")
    ap.add_argument("--pin", action="store_true", help="run N threads on cores 0..N-1 only")
    ap.add_argument("--ceiling", action="store_true",
                    help="also run, each round and for each N > 1, N one-thread ingests of the first "
                         "binary at once, one per core: what N cores give N independent processes")
    ap.add_argument("--pause", type=float, default=0,
                    help="seconds idle before every timed run (fresh memory as in a first ingest)")
    ap.add_argument("--out", required=True, help="markdown report (a .json twin is written too)")
    ap.add_argument("traces", nargs="+")
    args = ap.parse_args()
    threads = [int(t) for t in args.threads.split(",")]
    if args.ceiling and (not args.pin or 1 not in threads):
        sys.exit("--ceiling needs --pin and 1 among --threads (its runs are compared with the pinned 1-thread run)")
    bins = []
    for spec in args.bin:
        label, path = spec.split("=", 1)
        nothreads = path.endswith(":nothreads")
        bins.append((label, path.removesuffix(":nothreads"), nothreads))
    scratch = tempfile.mkdtemp(prefix="tt_ingest_threads_")
    doc = {"argv": " ".join(sys.argv), "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
           "nproc": os.cpu_count(), "traces": []}
    try:
        for trace in args.traces:
            size = os.path.getsize(trace)
            scans = []
            for _ in range(args.reps):
                out = subprocess.run([args.scan, trace], capture_output=True, text=True, check=True).stdout
                scans.append(json.loads(out))
            # Older tt_json_scan binaries scanned once: that pass was cold.
            cold = lambda s, k: s.get("cold_" + k, s[k])
            t = {"trace": trace, "bytes": size, "scan": {
                "wall_s": statistics.median(cold(s, "wall_s") for s in scans),
                "cpu_s": statistics.median(cold(s, "cpu_s") for s in scans),
                "warm_wall_s": statistics.median(s["wall_s"] for s in scans),
                "warm_cpu_s": statistics.median(s["cpu_s"] for s in scans)}, "runs": [], "loads": []}
            configs = [(label, path, n) for label, path, nothreads in bins
                       for n in ([None] if nothreads else threads)]
            for rep in range(args.reps):
                t["loads"].append(loadavg())
                for label, path, n in (configs if rep % 2 == 0 else configs[::-1]):
                    cmd = [path, "ingest", trace, "-o", os.path.join(scratch, "t.tracetable"), "--force", "-q",
                           "--memory-budget", args.budget] + ([] if n is None else ["--threads", str(n)])
                    time.sleep(args.pause)
                    r = timed(cmd, n if args.pin and n else None)
                    r.update({"bin": label, "threads": n, "rep": rep, "cmd": " ".join(cmd), "pinned": bool(args.pin and n)})
                    t["runs"].append(r)
                    print(f"{os.path.basename(trace)} {label} threads={n}: {r['wall_s']:.2f} s, "
                          f"{size / 1e6 / r['wall_s']:.1f} MB/s, cpu {r['cpu_s']:.2f} s, load {loadavg():.1f}",
                          file=sys.stderr)
                if args.ceiling:
                    label, path, _ = next(b for b in bins if not b[2])
                    for n in (n for n in threads if n > 1):
                        runs = [([path, "ingest", trace, "-o", os.path.join(scratch, f"c{i}.tracetable"), "--force",
                                  "-q", "--memory-budget", args.budget, "--threads", "1"], str(i)) for i in range(n)]
                        time.sleep(args.pause)
                        walls = [r["wall_s"] for r in timed_at_once(runs)]
                        t.setdefault("ceiling", []).append({"bin": label, "cores": n, "rep": rep, "walls": walls})
                        print(f"{os.path.basename(trace)} {label} {n} one-thread runs at once: "
                              + ", ".join(f"{w:.2f}" for w in walls) + " s", file=sys.stderr)
                t["loads"].append(loadavg())
            doc["traces"].append(t)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    doc["finished"] = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    with open(re.sub(r"\.md$", "", args.out) + ".json", "w") as f:
        json.dump(doc, f, indent=1)
    L = [f"# Ingest against parse threads", "", f"`{doc['argv']}`", "",
         f"{doc['started']} – {doc['finished']}, {doc['nproc']} cores"
         + (", each run of N threads pinned to N cores (taskset)" if args.pin else "")
         + (f", {args.pause:g} s idle before every run" if args.pause else "")
         + f", medians of {args.reps} rounds in ABBA order; "
         "MB/s = 10⁶ input bytes / wall; CPU = user + sys.", ""]
    for t in doc["traces"]:
        gb = t["bytes"] / 1e9
        scan_mbs = t["bytes"] / 1e6 / t["scan"]["wall_s"]
        scan_cpu_gb = t["scan"]["cpu_s"] / gb
        warm_cpu_gb = t["scan"]["warm_cpu_s"] / gb
        L += [f"## {os.path.basename(t['trace'])} ({t['bytes'] / 1e6:.0f} MB)", "",
              f"scan floor (tt_json_scan, one thread, in memory), cold pass: {scan_mbs:.0f} MB/s, "
              f"{scan_cpu_gb:.2f} CPU-s/GB; warm pass: {t['bytes'] / 1e6 / t['scan']['warm_wall_s']:.0f} MB/s, "
              f"{warm_cpu_gb:.2f} CPU-s/GB. Load average (1 min) around the rounds: "
              + ", ".join(f"{x:.1f}" for x in t["loads"]), "",
              "| binary | threads | wall s | MB/s | × cold scan MB/s | CPU s | CPU-s/GB | × cold scan CPU/GB "
              "| × warm scan CPU/GB | speed-up | peak RSS MiB |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
        for label, _, nothreads in bins:
            first = None
            for n in ([None] if nothreads else threads):
                rs = [r for r in t["runs"] if r["bin"] == label and r["threads"] == n]
                wall = statistics.median(r["wall_s"] for r in rs)
                cpu = statistics.median(r["cpu_s"] for r in rs)
                rss = statistics.median(r["rss_kb"] for r in rs) / 1024
                first = first or wall
                mbs = t["bytes"] / 1e6 / wall
                L.append(f"| {label} | {n if n else '(none)'} | {wall:.2f} | {mbs:.1f} | {mbs / scan_mbs:.2f} | {cpu:.2f} | "
                         f"{cpu / gb:.1f} | {cpu / gb / scan_cpu_gb:.1f} | {cpu / gb / warm_cpu_gb:.0f} | "
                         f"{first / wall:.2f}× | {rss:.0f} |")
        L.append("")
        L += ceiling_lines(t)
    with open(args.out, "w") as f:
        f.write("\n".join(L))
    print("\n".join(L))


if __name__ == "__main__":
    main()
