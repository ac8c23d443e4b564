#!/usr/bin/env python3
"""CPU per event of one `tracetable ingest` run.

  bench/tools/cpu_per_event.py tracetable ingest INPUT... -o OUT --force --threads 2

Runs the command, takes its user + sys CPU and peak RSS from wait4 and the
event count from its last line ("N events in"), and prints CPU ns per event.
"""
import os, subprocess, sys, time, re
t0=time.time()
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
err = p.stderr.read().decode()
_, status, ru = os.wait4(p.pid, 0)
wall=time.time()-t0
ev = re.search(r"([0-9]+) events in", err)
n = int(ev.group(1)) if ev else 0
cpu = ru.ru_utime + ru.ru_stime
print(f"wall {wall:.2f} s cpu {cpu:.2f} s events {n} -> {cpu/max(n,1)*1e9:.0f} ns CPU/event, peak {ru.ru_maxrss//1024} MiB, exit {status}")
