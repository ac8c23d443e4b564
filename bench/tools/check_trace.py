#!/usr/bin/env python3
"""Checks a tt_gen_trace output (plain or .gz) for the properties the
generator promises: per-thread time order, proper nesting of X slices and
B/E pairs, matched flows, named processes/threads, and that the file is not
globally sorted. Loads the whole file: use on small traces (<= ~2M events).

  python3 bench/tools/check_trace.py trace.json[.gz]
"""
import collections
import decimal
import gzip
import json
import sys


def main(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        # Decimal: epoch-scale microseconds with ns digits do not fit a double.
        doc = json.load(f, parse_float=decimal.Decimal)
    evs = doc["traceEvents"]
    assert doc.get("displayTimeUnit") == "ns"
    ns = lambda us: int(us * 1000)
    last_ts = {}
    stacks = collections.defaultdict(list)  # X nesting per thread
    be = collections.defaultdict(list)
    flows_s, flows_f = {}, {}
    named_p, named_t = set(), set()
    used_p, used_t = set(), set()
    kinds = collections.Counter()
    depth_hist = collections.Counter()
    zero_dur = 0
    min_dur, max_dur = None, 0
    unsorted = 0
    prev_global = None
    problems = []
    for e in evs:
        ph = e["ph"]
        kinds[ph] += 1
        if ph == "M":
            if e["name"] == "process_name":
                named_p.add(e["pid"])
            if e["name"] == "thread_name":
                named_t.add((e["pid"], e["tid"]))
            continue
        ts = ns(e["ts"])
        if prev_global is not None and ts < prev_global:
            unsorted += 1
        prev_global = ts
        used_p.add(e["pid"])
        if ph == "C":
            continue
        key = (e["pid"], e["tid"])
        used_t.add(key)
        if key in last_ts and ts < last_ts[key]:
            problems.append(f"thread {key} goes back in time at {e}")
        if "." in str(e["ts"]) and len(str(e["ts"]).split(".")[1]) > 3:
            problems.append(f"more than 3 decimals: {e}")
        last_ts[key] = ts
        if ph == "X":
            d = ns(e["dur"])
            zero_dur += d == 0
            if d > 0:
                min_dur = d if min_dur is None else min(min_dur, d)
            max_dur = max(max_dur, d)
            if d < 0:
                problems.append(f"negative dur: {e}")
            st = stacks[key]
            while st and st[-1] <= ts and not (st[-1] == ts and d == 0 and False):
                st.pop()
            if st and ts + d > st[-1]:
                problems.append(f"X not nested on {key}: {e}")
            st.append(ts + d)
            if e["pid"] % 5 != 1 and e["tid"] == 3:
                depth_hist[len(st)] += 1
        elif ph == "B":
            be[key].append(ts)
        elif ph == "E":
            if not be[key]:
                problems.append(f"E without B on {key}")
            else:
                be[key].pop()
        elif ph == "s":
            flows_s[e["id"]] = e
        elif ph == "f":
            flows_f[e["id"]] = e
            assert e.get("bp") == "e"
    for k, v in be.items():
        if v:
            problems.append(f"unclosed B on {k}")
    if set(flows_s) != set(flows_f):
        problems.append(f"unmatched flows: {len(set(flows_s) ^ set(flows_f))}")
    for i, s in flows_s.items():
        f = flows_f.get(i)
        if f and s["ts"] > f["ts"]:
            problems.append(f"flow {i} ends before it starts")
    if used_p - named_p:
        problems.append(f"unnamed processes {used_p - named_p}")
    if used_t - named_t:
        problems.append(f"unnamed threads {used_t - named_t}")
    if unsorted == 0:
        problems.append("file is globally sorted (should be interleaved)")
    print(json.dumps(default=str, obj={
        "events": len(evs), "kinds": dict(kinds), "zero_dur_X": zero_dur,
        "min_nonzero_dur_ns": min_dur, "max_dur_ns": max_dur,
        "device_op_depths": dict(sorted(depth_hist.items())),
        "backwards_steps_in_file": unsorted, "problems": len(problems)}))
    for p in problems[:20]:
        print("PROBLEM:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
