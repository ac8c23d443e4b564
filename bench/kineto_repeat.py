#!/usr/bin/env python3
"""Repeat a real trace's events until it has N events: a Kineto-shaped bench input.

Issue 14 asks for ingest speed on input shaped like PyTorch/Kineto traces (many
args per event, flows, instant events), e.g. ../shared/traces/kineto/
df_index_resolver.json.gz repeated to 10M events. Generated traces do not have
that shape, and the real file has 216k events, so this writes copies of its
events one after another in time: copy k has every `ts` shifted by k times the
file's span (plus a gap) and every flow `id` shifted by k times the largest id,
so flows stay pairs within one copy and never link across copies. Metadata
events (`ph` M) are written once. Output is plain JSON (no gzip: the bench
measures parsing, not inflating); it is streamed, so memory stays at one copy.

  bench/kineto_repeat.py --events 10000000 -o /work/bench-data/kineto-10m.json \
      ../shared/traces/kineto/df_index_resolver.json.gz
"""
import argparse
import gzip
import json
import sys

TS_MARK = "__tt_repeat_ts__"
ID_MARK = "__tt_repeat_id__"


def load_events(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    return [e for e in events if isinstance(e, dict)]


def template(event):
    """The event's JSON split around its ts and id values: [text, field, text, ...]."""
    e = dict(event)
    if isinstance(e.get("ts"), (int, float)):
        e["ts"] = TS_MARK
    if isinstance(e.get("id"), int):
        e["id"] = ID_MARK
    text = json.dumps(e, separators=(",", ":"), ensure_ascii=False)
    text = text.replace(f'"{TS_MARK}"', "\x01ts\x01").replace(f'"{ID_MARK}"', "\x01id\x01")
    # Alternating pieces: text, field name, text, ..., text.
    parts = text.split("\x01")
    return parts


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input", help="a JSON trace (.json or .json.gz)")
    ap.add_argument("--events", type=int, default=10_000_000, help="events to write (default 10M)")
    ap.add_argument("-o", "--output", required=True, help="output .json path")
    args = ap.parse_args()

    events = load_events(args.input)
    meta = [e for e in events if e.get("ph") == "M"]
    body = [e for e in events if e.get("ph") != "M"]
    if not body:
        sys.exit(f"{args.input}: no events to repeat")
    stamps = [e["ts"] for e in body if isinstance(e.get("ts"), (int, float))]
    ends = [e["ts"] + e.get("dur", 0) for e in body if isinstance(e.get("ts"), (int, float))
            and isinstance(e.get("dur", 0), (int, float))]
    first, span = min(stamps), max(ends) - min(stamps)
    period = int(span * 1.01) + 1000  # a visible gap between copies
    id_step = max([e["id"] for e in body if isinstance(e.get("id"), int)] + [0]) + 1
    templates = [template(e) for e in body]
    ts_of = [e.get("ts") for e in body]
    id_of = [e.get("id") for e in body]

    written = 0
    with open(args.output, "w", encoding="utf-8") as out:
        out.write('{"traceEvents":[\n')
        for e in meta:
            out.write(json.dumps(e, separators=(",", ":"), ensure_ascii=False))
            out.write(",\n")
            written += 1
        copy = 0
        while written < args.events:
            shift, id_shift = copy * period, copy * id_step
            chunk = []
            for parts, ts, fid in zip(templates, ts_of, id_of):
                if written >= args.events:
                    break
                pieces = []
                for i, piece in enumerate(parts):
                    if i % 2 == 0:
                        pieces.append(piece)
                    elif piece == "ts":
                        pieces.append(str(ts + shift))
                    else:
                        pieces.append(str(fid + id_shift))
                chunk.append("".join(pieces))
                written += 1
            out.write(",\n".join(chunk))
            copy += 1
            out.write(",\n" if written < args.events else "\n")
            print(f"\r{written:,} / {args.events:,} events", end="", file=sys.stderr, flush=True)
        out.write("]}\n")
    print(f"\n{args.output}: {written:,} events, {copy} copies of {len(body):,} "
          f"(+{len(meta)} metadata), span per copy {span} us", file=sys.stderr)


if __name__ == "__main__":
    main()
