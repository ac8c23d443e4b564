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
Every ingest parses with --threads 1, so the speed-up is the shards' own.
Reports medians over --reps rounds: wall, speed-up over sequential, CPU-s
(user+sys of all processes), the largest peak RSS of one process, and the
1-minute load average. Data is never written into the repository.

  bench/shards_build.py --hosts 64 --events 1000000 --workers 2 --reps 3 \\
      --data /work/shards-data --out bench/results/DATE-HOST-shards-build.md
"""
import argparse, json, os, resource, shutil, statistics, subprocess, sys, time

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


def run_workers(tt, paths, run, workers, budget):
    """W processes at once, each adding its hosts one after another."""
    procs = []
    for w in range(workers):
        mine = paths[w::workers]
        loop = "for f in \"$@\"; do %s || exit 1; done" % " ".join(
            shard_cmd(tt, "\"$f\"", run, budget))
        procs.append(subprocess.Popen(["bash", "-c", loop, "worker"] + mine,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
    for p in procs:
        _, err = p.communicate()
        if p.returncode != 0:
            sys.exit("worker failed: " + err)


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
            if mode == "sequential":
                def fn():
                    for p in paths:
                        subprocess.run(shard_cmd(a.tt, p, run, a.memory_budget), check=True,
                                       stderr=subprocess.DEVNULL)
                    subprocess.run(regrid, check=True, stderr=subprocess.DEVNULL)
            elif mode == "workers":
                def fn():
                    run_workers(a.tt, paths, run, a.workers, a.memory_budget)
                    subprocess.run(regrid + ["--jobs", str(a.workers)], check=True, stderr=subprocess.DEVNULL)
            elif mode == "jobs":
                fn = lambda: subprocess.run([a.tt, "ingest", folder, "-o", run, "--jobs", str(a.workers),
                                             "--threads", str(a.workers), "--memory-budget", a.memory_budget,
                                             "-q"], check=True, stderr=subprocess.DEVNULL)
            else:
                sys.exit("unknown mode " + mode)
            r = measure(mode, fn)
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
    seq = statistics.median(r["wall_s"] for r in rows if r["mode"] == "sequential") if "sequential" in modes else None
    lines = ["", "### Run build: %d hosts x %d events (%s)" % (a.hosts, a.events, time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())),
             "", "`%s`" % " ".join(["bench/shards_build.py"] + sys.argv[1:]), "",
             "| mode | wall s (median of %d) | speed-up | CPU s | load1 |" % a.reps, "|---|---|---|---|---|"]
    for mode in modes:
        rs = [r for r in rows if r["mode"] == mode]
        wall = statistics.median(r["wall_s"] for r in rs)
        label = mode if mode == "sequential" else "%s=%d" % (mode, a.workers)
        lines.append("| %s | %.1f | %s | %.1f | %.1f |" % (
            label, wall, "%.2fx (%.2f of sequential)" % (seq / wall, wall / seq) if seq else "-",
            statistics.median(r["cpu_s"] for r in rs), statistics.median(r["load1"] for r in rs)))
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
