#!/usr/bin/env python3
"""Peak memory of `tracetable ingest` stays within --memory-budget + 200 MB
when the trace's strings, not its events, are what grows (issue 14): a
Kineto-shaped trace has a distinct flow id per flow, and every one is a
string of the table (1.95M of them in 10M Kineto events).

The trace here is flow pairs (s, f) with a distinct id each. The string tables of 1.5M ids held ~300 MB uncounted
before they were charged to the budget (store/table_builder.h, "Memory"),
so this failed at 1 and 2 threads; they must now come out of the sorters'
share. A resource bound, not a timing: the peak is the ingest process's
ru_maxrss (wait4).

usage: memory_bound_strings_test.py TRACETABLE
"""
import os
import sys
import tempfile

from ingest_peak import ingest_peak, over_bound, verdict

BUDGET_MB = 128
SLACK_MB = 200
FLOWS = 1_500_000


def write_trace(path):
    """FLOWS flows on 8 threads, each from one thread to the next; every
    flow id distinct."""
    with open(path, "w") as f:
        f.write('{"traceEvents":[\n')
        chunk = []
        for i in range(FLOWS):
            tid = i % 8
            chunk.append(
                f'{{"ph":"s","name":"f","pid":1,"tid":{tid},"ts":{i},"id":{1000000 + i}}},\n'
                f'{{"ph":"f","name":"f","pid":1,"tid":{(tid + 1) % 8},"ts":{i + 1},"id":{1000000 + i}}}'
                + ("\n" if i + 1 == FLOWS else ",\n"))
            if len(chunk) == 10000:
                f.write("".join(chunk))
                chunk = []
        f.write("".join(chunk))
        f.write("]}\n")


def main():
    tracetable = sys.argv[1]
    failures = 0
    with tempfile.TemporaryDirectory() as work:
        trace = os.path.join(work, "flows.json")
        write_trace(trace)
        out = os.path.join(work, "t.tracetable")
        bound = BUDGET_MB + SLACK_MB
        for threads in (1, 2):
            peak, _ = ingest_peak(tracetable, trace, out, threads, f"{BUDGET_MB}M")
            print(f"{FLOWS} distinct flow ids, --memory-budget {BUDGET_MB}M, {threads} thread(s): "
                  f"peak {peak:.0f} MiB (bound {bound} MiB)")
            failures += over_bound(peak, bound, SLACK_MB)
    return verdict(failures)


if __name__ == "__main__":
    sys.exit(main())
