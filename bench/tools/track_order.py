#!/usr/bin/env python3
"""How nearly a Chrome JSON trace is in time order per track (issue 14).

  bench/tools/track_order.py TRACE.json [MAX_EVENTS]

Reads one event object per line (as tt_gen_trace and Kineto write them) and,
per (pid, tid) track (counters per name), compares each X/i/I/C/s/f event
with the last one of its track in (ts, -dur) order, the main sort's order
(store/sort_record.h). Prints the events read, the blocks of consecutive
events of one track, the events out of order and the first of them, and the
tracks. The main sorter's partition by track (store/external_sorter.h)
pays off when there are few out of order.
"""
import json
import sys


def main():
    path = sys.argv[1]
    limit = int(sys.argv[2]) if len(sys.argv) > 2 else 10**12
    last, n, bad, blocks, first_bad, prev = {}, 0, 0, 0, None, None
    with open(path) as f:
        for line in f:
            line = line.strip().rstrip(",")
            if not line.startswith("{") or '"ph"' not in line:
                continue
            try:
                e = json.loads(line)
            except ValueError:
                continue
            ph = e.get("ph")
            if ph not in ("X", "i", "I", "C", "s", "f"):
                continue
            n += 1
            k = (e.get("pid"), e.get("tid"), ph == "C", e.get("name") if ph == "C" else None)
            key = (float(e.get("ts", 0)), -float(e.get("dur", 0)))
            if k != prev:
                blocks += 1
            prev = k
            if k in last and key < last[k]:
                bad += 1
                if first_bad is None:
                    first_bad = n
            last[k] = key
            if n >= limit:
                break
    print(f"{path}: {n} events, {blocks} blocks of one track, {bad} out of order "
          f"(first: event {first_bad}), {len(last)} tracks")


if __name__ == "__main__":
    main()
