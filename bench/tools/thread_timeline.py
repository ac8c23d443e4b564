#!/usr/bin/env python3
"""Per-thread CPU timeline of one command (issue 14: where the second core idles).

  bench/tools/thread_timeline.py [--interval 0.05] [--cores 0-1] [--json OUT] -- \\
      build/cli/tracetable ingest TRACE -o T --force -q --threads 2

Starts the command (under `taskset -c CORES` if given) and every --interval
seconds reads each of its threads' CPU time from /proc/PID/task/TID/schedstat
(nanoseconds on a CPU, not the 10 ms ticks of /stat) and name from comm.
Threads are grouped by name (the building thread is the process's main
thread, shown as "build"; ingest's others name themselves tt-read, tt-parse,
tt-inflate, tt-tile, tt-sort in store/thread_name.h). Prints:

- a timeline: per interval, the busy cores of each group and of the whole
  process (1.0 = one core fully used for the interval);
- per group: CPU seconds, and its share of the wall time it was busy;
- "idle core" phases: runs of intervals where the process used less than
  --low of the cores it had, with which groups were busy then.

Threads that ended between two samples lose their last interval's CPU;
short-lived sort helpers may be missed. Sampling costs about 1% of a core.
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import time


def read_threads(pid, by_thread=False):
    """{tid: (name, cpu_ns)} for every live thread of pid."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                ns = int(f.read().split()[0])
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = f.read().strip()
        except (FileNotFoundError, ProcessLookupError, ValueError):
            continue
        name = "build" if int(tid) == pid else name
        out[int(tid)] = (f"{name}/{tid}" if by_thread and int(tid) != pid else name, ns)
    return out


def sample(cmd, interval, by_thread):
    """Runs cmd; returns (rows, wall_s, returncode): rows = [(t, {tid: (name, ns)})]."""
    start = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    rows = []
    while p.poll() is None:
        rows.append((time.monotonic() - start, read_threads(p.pid, by_thread)))
        time.sleep(interval)
    return rows, time.monotonic() - start, p.returncode


def intervals(rows):
    """Per interval: (t0, t1, {group: busy cores})."""
    out = []
    for (t0, a), (t1, b) in zip(rows, rows[1:]):
        busy = collections.Counter()
        for tid, (name, ns) in b.items():
            before = a.get(tid, (name, 0))[1]
            busy[name] += (ns - before) / 1e9 / (t1 - t0)
        out.append((t0, t1, busy))
    return out


def phases(ivs, cores, low):
    """Maximal runs of intervals whose total busy cores < low * cores."""
    runs, cur = [], []
    for iv in ivs:
        if sum(iv[2].values()) < low * cores:
            cur.append(iv)
        elif cur:
            runs.append(cur)
            cur = []
    if cur:
        runs.append(cur)
    return runs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--interval", type=float, default=0.05)
    ap.add_argument("--cores", help="taskset -c list, e.g. 0-1; also the core count the idle phases are against")
    ap.add_argument("--low", type=float, default=0.75, help="an interval is idle below this share of the cores")
    ap.add_argument("--json", help="write every interval here")
    ap.add_argument("--by-thread", action="store_true", help="one column per thread, not per name")
    ap.add_argument("--quiet-timeline", action="store_true", help="print only the summary")
    ap.add_argument("cmd", nargs="+")
    args = ap.parse_args()
    cmd = (["taskset", "-c", args.cores] if args.cores else []) + args.cmd
    ncores = os.cpu_count()
    if args.cores:
        ncores = sum(int(b) - int(a) + 1 if "-" in part else 1
                     for part in args.cores.split(",") for a, _, b in [part.partition("-")])
    rows, wall, rc = sample(cmd, args.interval, args.by_thread)
    if rc != 0:
        sys.exit(f"command failed ({rc}): {' '.join(cmd)}")
    ivs = intervals(rows)
    groups = sorted({g for iv in ivs for g in iv[2]}, key=lambda g: (g != "build", g))
    total_cpu = collections.Counter()
    active = collections.Counter()
    for t0, t1, busy in ivs:
        for g, c in busy.items():
            total_cpu[g] += c * (t1 - t0)
            if c > 0.05:
                active[g] += t1 - t0
    print(f"# {' '.join(cmd)}")
    print(f"wall {wall:.2f} s sampled every {args.interval * 1000:.0f} ms, {len(ivs)} intervals, "
          f"{ncores} cores; CPU {sum(total_cpu.values()):.2f} s = {sum(total_cpu.values()) / wall:.2f} busy cores on average")
    if not args.quiet_timeline:
        print("   t s  total  " + "  ".join(f"{g[-10:]:>10}" for g in groups))
        for t0, t1, busy in ivs:
            print(f"{t0:6.2f}  {sum(busy.values()):5.2f}  " + "  ".join(f"{busy.get(g, 0):10.2f}" for g in groups))
    print("group             CPU s   busy wall s   cores while busy")
    for g in groups:
        # A group never above 5% of a core in any interval has no busy wall.
        ratio = f"{total_cpu[g] / active[g]:6.2f}" if active[g] > 0 else "     -"
        print(f"{g:<15} {total_cpu[g]:7.2f}   {active[g]:11.2f}   {ratio}")
    low = phases(ivs, ncores, args.low)
    print(f"phases below {args.low:.0%} of {ncores} cores (≥ 2 intervals):")
    for run in low:
        if len(run) < 2:
            continue
        t0, t1 = run[0][0], run[-1][1]
        mean = collections.Counter()
        for a, b, busy in run:
            for g, c in busy.items():
                mean[g] += c * (b - a) / (t1 - t0)
        top = ", ".join(f"{g} {c:.2f}" for g, c in mean.most_common() if c >= 0.02)
        print(f"  {t0:6.2f}–{t1:6.2f} s ({t1 - t0:.2f} s): {sum(mean.values()):.2f} cores [{top}]")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cmd": cmd, "wall_s": wall, "cores": ncores,
                       "intervals": [{"t0": a, "t1": b, "busy": dict(c)} for a, b, c in ivs]}, f, indent=1)


if __name__ == "__main__":
    main()
