"""Peak resident memory of one `tracetable ingest`, for the memory-bound
tests: the process's ru_maxrss from wait4 (the kernel's high-water mark of
its resident set), so a resource bound, not a timing."""
import os
import subprocess
import sys


def ingest_peak(tracetable, trace, out, threads, budget):
    """Runs one ingest; returns (peak RSS in MiB, its stderr). Exits on failure."""
    proc = subprocess.Popen(
        [tracetable, "ingest", trace, "-o", out, "--force", "--threads", str(threads),
         "--memory-budget", budget],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = proc.stderr.read().decode()
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"FAIL: ingest --threads {threads} --memory-budget {budget} failed:\n{err}")
    return usage.ru_maxrss / 1024, err


def over_bound(peak, bound, slack_mb):
    """1 (a failure, printed) if `peak` MiB is above `bound`, else 0."""
    if peak <= bound:
        return 0
    print(f"FAIL: peak {peak:.0f} MiB above --memory-budget + {slack_mb} MB")
    return 1


def verdict(failures):
    """Prints the test's verdict; returns its exit code."""
    print("PASS" if failures == 0 else f"{failures} failure(s)")
    return 1 if failures else 0
