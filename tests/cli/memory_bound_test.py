#!/usr/bin/env python3
"""Peak memory of `tracetable ingest` stays within --memory-budget + 200 MB
at 2 and 8 threads (issue 14), on a trace big enough to spill.

A resource bound, not a timing: the peak is the ingest process's VmHWM
(ru_maxrss from wait4, the kernel's high-water mark of its resident set).
The test first ingests the same trace with a budget that never spills and
checks that peak is above the bound, so the trace is big enough for a
budget that is not held to fail the test.

usage: memory_bound_test.py TRACETABLE TT_GEN_TRACE
"""
import os
import re
import subprocess
import sys
import tempfile

from ingest_peak import ingest_peak, over_bound, verdict

BUDGET_MB = 16  # the smallest --memory-budget ingest accepts
SLACK_MB = 200
EVENTS = 3_000_000


def ingest(tracetable, trace, out, threads, budget):
    """Runs one ingest; returns (peak RSS MiB, spill runs)."""
    peak, err = ingest_peak(tracetable, trace, out, threads, budget)
    spills = re.search(r"(\d+) spill runs", err)
    if not spills:
        sys.exit(f"FAIL: no spill count in: {err}")
    return peak, int(spills.group(1))


def main():
    tracetable, gen = sys.argv[1], sys.argv[2]
    failures = 0
    with tempfile.TemporaryDirectory() as work:
        trace = os.path.join(work, "trace.json")
        subprocess.run([gen, "-n", str(EVENTS), "-o", trace], check=True, stdout=subprocess.DEVNULL)
        out = os.path.join(work, "t.tracetable")
        bound = BUDGET_MB + SLACK_MB

        peak, spills = ingest(tracetable, trace, out, 2, "4G")
        print(f"--memory-budget 4G, 2 threads: peak {peak:.0f} MiB, {spills} spill runs")
        if spills != 0 or peak <= bound:
            print(f"FAIL: the trace is too small to test the bound (peak {peak:.0f} MiB without "
                  f"spilling, bound {bound} MiB)")
            failures += 1

        for threads in (2, 8):
            peak, spills = ingest(tracetable, trace, out, threads, f"{BUDGET_MB}M")
            print(f"--memory-budget {BUDGET_MB}M, {threads} threads: peak {peak:.0f} MiB, "
                  f"{spills} spill runs (bound {bound} MiB)")
            if spills == 0:
                print("FAIL: the ingest did not spill")
                failures += 1
            failures += over_bound(peak, bound, SLACK_MB)
    return verdict(failures)


if __name__ == "__main__":
    sys.exit(main())
