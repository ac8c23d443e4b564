#!/usr/bin/env python3
"""Building a run of many hosts (issue 15): one process vs parallel --shard-of
workers vs ingest FOLDER --jobs.

Generates --hosts traces of --events each (tt_gen_trace, one host each, seeds
and start times differ) into DATA/hosts/ once, then per round:
  sequential  one process: `ingest HOST --shard-of RUN` for every host in turn,
              then `ingest --regrid` (the same end state as the others)
  workers=W   W worker processes at once, worker w adding hosts w, w+W, ...
              (what W machines of a batch engine do), then `ingest --regrid`
              (the hosts were added while the run's span grew)
  jobs=W      `ingest DATA/hosts -o RUN --jobs W` (shards on W threads of one
              process, then the off-grid shards once more on the run's grid)
  sequential-pinned, workers-pinned
              the same with every process held to one core by taskset(1)
              (worker w on core w, the sequential one on core 0; the final
              --regrid on as many cores as workers): each ingest's pipeline
              threads then share its core, as on a machine with one core
              per worker
Every ingest parses with --threads 1, so the speed-up is the shards' own.
Reports medians over --reps rounds: wall, speed-up over sequential (and
pinned over sequential-pinned), CPU-s (user+sys of all processes), per
`--shard-of` process the median wall, CPU-s and cores used (CPU / wall), the
--regrid step's wall, the largest peak RSS of one process, and the 1-minute
load average. Data is never written into the repository.

  bench/shards_build.py --hosts 64 --events 1000000 --workers 2 --reps 3 \\
      --data /work/shards-data --out bench/results/DATE-HOST-shards-build.md
"""
import argparse, json, os, resource, shutil, statistics, subprocess, sys, threading, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def children_usage():
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime, u.ru_maxrss


def generate(gen, data, hosts, events):
    folder = os.path.join(data, "hosts")
    os.makedirs(folder, exist_ok=True)
    paths = []
    for i in range(hosts):
        p = os.path.join(folder, "host%04d.json.gz" % i)
        if not os.path.exists(p):
            subprocess.run([gen, "--events", str(events), "--hosts", "1", "--devices", "4",
                            "--seed", str(i + 1), "--base-us", str(1700000000000000 + 137 * i),
                            "-o", p + ".part"], check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            os.rename(p + ".part", p)
        paths.append(p)
    return folder, paths


def shard_cmd(tt, path, run, budget):
    return [tt, "ingest", path, "--shard-of", run, "--threads", "1", "--memory-budget", budget, "-q"]


def pinned(cmd, cores):
    return ["taskset", "-c", cores] + cmd if cores is not None else cmd


def run_child(cmd, procs):
    """Runs cmd; appends its wall, CPU-s (user+sys, its threads and children) and peak RSS."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("failed: %s: %s" % (" ".join(cmd), err))
    procs.append({"wall_s": wall, "cpu_s": ru.ru_utime + ru.ru_stime, "rss_kb": ru.ru_maxrss})


def run_workers(tt, paths, run, workers, budget, pin, procs):
    """W processes at once, each adding its hosts one after another (worker
    w on core w when pinned)."""
    def worker(w):
        for path in paths[w::workers]:
            run_child(pinned(shard_cmd(tt, path, run, budget), str(w) if pin else None), procs)
    threads = [threading.Thread(target=worker, args=(w,)) for w in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def regrids(tt, run):
    """Shards a further --regrid would rebuild (0: the run is on one grid)."""
    r = subprocess.run([tt, "ingest", "--regrid", run, "-q"], check=True, capture_output=True, text=True)
    return int(r.stderr.split()[0])


def measure(name, fn):
    cpu0, _ = children_usage()
    load = loadavg()
    t0 = time.monotonic()
    fn()
    wall = time.monotonic() - t0
    cpu1, rss = children_usage()
    return {"mode": name, "wall_s": wall, "cpu_s": cpu1 - cpu0, "max_rss_kb_so_far": rss,
            "load1": load}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tt", default=os.path.join(ROOT, "build/cli/tracetable"))
    ap.add_argument("--gen", default=os.path.join(ROOT, "build/bench/tt_gen_trace"))
    ap.add_argument("--data", default="/work/shards-data")
    ap.add_argument("--hosts", type=int, default=64)
    ap.add_argument("--events", type=int, default=1000000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--memory-budget", default="512M", help="per ingest process (--jobs splits it)")
    ap.add_argument("--modes", default="sequential,workers,jobs")
    ap.add_argument("--out", help="append a markdown report here")
    a = ap.parse_args()
    if os.path.abspath(a.data).startswith(ROOT + os.sep):
        sys.exit("--data must be outside the repository")
    folder, paths = generate(a.gen, a.data, a.hosts, a.events)
    runs = os.path.join(a.data, "runs")
    os.makedirs(runs, exist_ok=True)
    modes = a.modes.split(",")
    rows = []
    for rep in range(a.reps):
        for mode in modes:
            run = os.path.join(runs, "%s.tracetable" % mode)
            shutil.rmtree(run, ignore_errors=True)
            regrid = [a.tt, "ingest", "--regrid", run, "--threads", "1", "--memory-budget", a.memory_budget, "-q"]
            procs, regrid_procs = [], []
            pin = mode.endswith("-pinned")
            all_cores = "0-%d" % (a.workers - 1)
            if mode in ("sequential", "sequential-pinned"):
                def fn():
                    for p in paths:
                        run_child(pinned(shard_cmd(a.tt, p, run, a.memory_budget), "0" if pin else None), procs)
                    run_child(pinned(regrid, "0" if pin else None), regrid_procs)
            elif mode in ("workers", "workers-pinned"):
                def fn():
                    run_workers(a.tt, paths, run, a.workers, a.memory_budget, pin, procs)
                    run_child(pinned(regrid + ["--jobs", str(a.workers)], all_cores if pin else None), regrid_procs)
            elif mode == "jobs":
                fn = lambda: subprocess.run([a.tt, "ingest", folder, "-o", run, "--jobs", str(a.workers),
                                             "--threads", str(a.workers), "--memory-budget", a.memory_budget,
                                             "-q"], check=True, stderr=subprocess.DEVNULL)
            else:
                sys.exit("unknown mode " + mode)
            r = measure(mode, fn)
            if procs:
                r["shard_wall_s"] = statistics.median(x["wall_s"] for x in procs)
                r["shard_cpu_s"] = statistics.median(x["cpu_s"] for x in procs)
                r["shard_cores"] = statistics.median(x["cpu_s"] / x["wall_s"] for x in procs)
                r["shards_cpu_s"] = sum(x["cpu_s"] for x in procs)
            if regrid_procs:
                r["regrid_wall_s"] = regrid_procs[0]["wall_s"]
                r["regrid_cpu_s"] = regrid_procs[0]["cpu_s"]
            r["rebuilt_on_grid"] = regrids(a.tt, run)
            v = subprocess.run([a.tt, "info", run, "--json"], check=True, capture_output=True, text=True)
            info = json.loads(v.stdout)
            r.update({"rep": rep, "hosts": info["hosts"], "events": info["events"]})
            if info["hosts"] != a.hosts:
                sys.exit("%s: run has %d hosts, want %d" % (mode, info["hosts"], a.hosts))
            print(json.dumps(r), flush=True)
            rows.append(r)
    # ru_maxrss of children is the largest of any one child, over the whole script.
    _, peak_rss = children_usage()
    def median_wall(mode):
        walls = [r["wall_s"] for r in rows if r["mode"] == mode]
        return statistics.median(walls) if walls else None

    def med(rs, key, fmt):
        vals = [r[key] for r in rs if key in r]
        return fmt % statistics.median(vals) if vals else "-"

    lines = ["", "### Run build: %d hosts x %d events (%s)" % (a.hosts, a.events, time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())),
             "", "`%s`" % " ".join(["bench/shards_build.py"] + sys.argv[1:]), "",
             "| mode | wall s (median of %d) | speed-up | CPU s | per --shard-of: wall s, CPU s, cores | --regrid wall s | load1 |" % a.reps,
             "|---|---|---|---|---|---|---|"]
    for mode in modes:
        rs = [r for r in rows if r["mode"] == mode]
        wall = median_wall(mode)
        base = median_wall("sequential-pinned" if mode.endswith("-pinned") else "sequential")
        label = mode if mode.startswith("sequential") else "%s=%d" % (mode, a.workers)
        lines.append("| %s | %.1f | %s | %.1f | %s, %s, %s | %s | %.1f |" % (
            label, wall, "%.2fx (%.2f of %s)" % (base / wall, wall / base, "sequential-pinned" if mode.endswith("-pinned") else "sequential") if base else "-",
            statistics.median(r["cpu_s"] for r in rs), med(rs, "shard_wall_s", "%.2f"), med(rs, "shard_cpu_s", "%.2f"),
            med(rs, "shard_cores", "%.2f"), med(rs, "regrid_wall_s", "%.1f"), statistics.median(r["load1"] for r in rs)))
    lines.append("")
    lines.append("Largest peak RSS of one process: %.0f MB. Walls: %s" % (
        peak_rss / 1024, "; ".join("%s %s" % (m, ", ".join("%.1f" % r["wall_s"] for r in rows if r["mode"] == m))
                                   for m in modes)))
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(a.out, "a") as f:
            f.write(text)


if __name__ == "__main__":
    main()
