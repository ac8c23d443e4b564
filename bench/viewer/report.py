#!/usr/bin/env python3
"""Markdown summary of a bench/viewer/run.sh .jsonl (medians per step)."""
import json
import sys


def fmt(v, unit=""):
    return "—" if v is None else f"{v}{unit}"


def main(path):
    lines = [json.loads(l) for l in open(path) if l.strip()]
    head, rows = lines[0], lines[1:]
    print(f"# Viewer benchmark ({head['date']}, {head['host']}, {head['nproc']} cores, load {head['load']})\n")
    print(f"`{head['invoked_as']}` ran `{head['command']}`.\n")
    print("Medians over fresh browser contexts (1600x900 headless chromium). Step times: key or wheel "
          "event to the view drawn from complete data (`viewState` `ready`; for the JSON viewer: its "
          "window answer installed and drawn). KB: tile answers as received (`tile`, uncompressed), "
          "on the wire (gzip) for the whole step including prefetch, and on the wire for the tiles "
          "the visible area needed.\n")
    print("| table | path | visible tracks | first ready ms | step | n | ms median | ms max | requests | tile KB | wire KB | visible wire KB | side / near prefetch KB | heap MB max |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        s = r["summary"]
        first = True
        for step, v in s["steps"].items():
            lead = (f"| {r['table']} | {r['path']} | {fmt(s.get('visible_tracks'))} | {s['first_ready_ms']} "
                    if first else "| | | | ")
            pre = (f"{v['side_wire_kb_median']} / {v['near_wire_kb_median']}"
                   if v.get('side_wire_kb_median') is not None else "—")
            first = False
            print(f"{lead}| {step} | {v['n']} | {v['ms_median']} | {v['ms_max']} | {v['requests_median']} | "
                  f"{fmt(v['tile_kb_median'])} | {v['wire_kb_median']} | {fmt(v.get('visible_wire_kb_median'))} | {pre} | {v['heap_mb_max']} |")


if __name__ == "__main__":
    main(sys.argv[1])
