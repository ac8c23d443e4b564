#!/usr/bin/env python3
"""Baseline: the plain-viewer model. Loads the whole Chrome trace JSON with
json.load (as a viewer that keeps every event in memory does), then filters
one window [start_us, end_us]. Prints {"items", "load_s", "filter_s"}.

  python3 bench/tools/plain_viewer.py TRACE.json START_US END_US
"""
import json
import sys
import time

t0 = time.perf_counter()
path, s, e = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
with open(path, "rb") as f:
    doc = json.load(f)
t1 = time.perf_counter()
win = [x for x in doc["traceEvents"]
       if x.get("ph") != "M" and x["ts"] <= e and x["ts"] + x.get("dur", 0) >= s]
t2 = time.perf_counter()
print(json.dumps({"items": len(win), "load_s": t1 - t0, "filter_s": t2 - t1}))
