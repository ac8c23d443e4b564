#!/usr/bin/env python3
"""Shares of a `perf record` profile by thread and by function.

  perf record -F 2000 -o ingest.data tracetable ingest TRACE -o T --threads 2
  bench/tools/perf_shares.py ingest.data [...]

For each file: samples, the kernel's page zeroing (clear_page_erms, which
moves by several percent from run to run of the same binary on the VM, so
it is shown apart), each thread's share with its top five functions, and
the top functions of the whole process.
"""
import collections
import subprocess
import sys


def main():
    for path in sys.argv[1:]:
        lines = subprocess.run(["perf", "script", "-i", path, "-F", "tid,ip,sym"],
                               capture_output=True, text=True, check=True).stdout.splitlines()
        by_thread = collections.Counter()
        by_function = collections.Counter()
        thread_functions = collections.defaultdict(collections.Counter)
        for line in lines:
            parts = line.split(None, 2)  # tid, ip, symbol
            if len(parts) < 2:
                continue
            tid, function = parts[0], parts[2].strip() if len(parts) == 3 else "?"
            by_thread[tid] += 1
            by_function[function] += 1
            thread_functions[tid][function] += 1
        n = sum(by_thread.values())
        zeroing = by_function["clear_page_erms"]
        print(f"== {path}: {n} samples; clear_page_erms {100 * zeroing / n:.1f}%")
        for tid, count in by_thread.most_common(8):
            top = ", ".join(f"{f[:48]} {100 * k / n:.1f}" for f, k in thread_functions[tid].most_common(5))
            print(f"  thread {tid}: {100 * count / n:.1f}%  [{top}]")
        print("  top: " + "; ".join(f"{f[:60]} {100 * k / n:.1f}%" for f, k in by_function.most_common(12)))


if __name__ == "__main__":
    main()
