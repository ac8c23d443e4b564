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
