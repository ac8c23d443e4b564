#!/usr/bin/env python3
"""Mutation test of `tracetable ingest` on the shared real traces.

Every trace in the shared folder is damaged in seeded random ways (byte
flips, truncations, deletions and duplications of spans; for gzip input the
JSON inside is damaged and re-compressed, or the compressed bytes are cut or
flipped) and ingested as a user would. Each mutant must give, within a time
limit, either a table that `tracetable verify` passes or a clean error (exit
1, a message naming the file, no table); never a crash, a hang or leftover
temporary folders. Three answers are checked for lying: a mutant that only
cuts the input never yields more events than the whole trace, a mutant that
--strict accepts is read to the same event count without it, and damage at
one place of a JSON trace loses at most a few events (max(64, 1%)).

usage: mutate_ingest.py TRACETABLE SHARED_TRACES [--scale N] [--seed S]
Prints the figures (inputs tried, crashes, hangs, leftovers, wrong answers)
and exits non-zero if any is not zero.
"""
import argparse
import gzip
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

TIMEOUT_S = 60  # a hang, not a slow run: the largest trace ingests in ~2 s


def mutate(data: bytes, rng: random.Random):
    """Returns (mutant, kind); kind 'cut' only removes a suffix."""
    kind = rng.choice(["flip", "cut", "delete", "duplicate", "mixed"])
    b = bytearray(data)
    if kind == "cut":
        return bytes(b[: rng.randrange(len(b))]), kind
    edits = 1 if kind != "mixed" else rng.randint(2, 6)
    for _ in range(edits):
        if not b:
            break
        op = kind if kind != "mixed" else rng.choice(["flip", "delete", "duplicate"])
        at = rng.randrange(len(b))
        if op == "flip":
            for i in range(at, min(len(b), at + rng.randint(1, 4))):
                b[i] ^= 1 << rng.randrange(8) if rng.random() < 0.5 else rng.randrange(1, 256)
        elif op == "delete":
            del b[at : at + rng.randint(1, 64)]
        else:
            span = bytes(b[at : at + rng.randint(1, 256)])
            dest = rng.randrange(len(b) + 1)
            b[dest:dest] = span
    return bytes(b), kind


def run(cmd):
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=TIMEOUT_S)
        return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired:
        return None, "", ""


def events_of(tt, table):
    rc, out, _ = run([tt, "info", table, "--json"])
    return json.loads(out)["events"] if rc == 0 else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tracetable")
    ap.add_argument("shared")
    ap.add_argument("--scale", type=float, default=1.0, help="mutants per trace multiplier")
    ap.add_argument("--seed", type=int, default=20261125)
    args = ap.parse_args()
    tt = args.tracetable
    traces = sorted(
        os.path.join(d, f)
        for d, _, fs in os.walk(args.shared)
        for f in fs
        if f.endswith((".json", ".json.gz", ".xplane.pb"))
    )
    if not traces:
        print(f"no traces under {args.shared}")
        return 1
    figures = dict(inputs=0, tables=0, errors=0, crashes=0, hangs=0, leftovers=0, wrong=0)
    problems = []
    work = tempfile.mkdtemp(prefix="tt_mutate_")
    try:
        for trace in traces:
            raw = open(trace, "rb").read()
            is_gz = raw[:2] == b"\x1f\x8b"
            plain = gzip.decompress(raw) if is_gz else raw
            n = 12 if len(plain) < 100_000 else 6 if len(plain) < 2_000_000 else 1
            n = max(1, int(n * args.scale))
            whole_dir = os.path.join(work, "whole")
            os.makedirs(whole_dir)
            run([tt, "ingest", trace, "-o", os.path.join(whole_dir, "t"), "-q"])
            whole_events = events_of(tt, os.path.join(whole_dir, "t"))
            shutil.rmtree(whole_dir)
            rng = random.Random(f"{args.seed}:{os.path.basename(trace)}")
            for i in range(n):
                local = False  # damage at one place of the JSON text
                if is_gz and rng.random() < 0.3:
                    mutant, kind = mutate(raw, rng)  # the compressed bytes
                else:
                    mutant, kind = mutate(plain, rng)
                    local = kind in ("flip", "delete") and not trace.endswith(".xplane.pb")
                    if is_gz:
                        mutant = gzip.compress(mutant, mtime=0)
                name = f"m{i}_" + os.path.basename(trace)
                case = os.path.join(work, "case")
                os.makedirs(case)
                path = os.path.join(case, name)
                open(path, "wb").write(mutant)
                out = os.path.join(case, "out.tracetable")
                what = f"{trace} mutant {i} ({kind})"
                figures["inputs"] += 1
                modes = [[]] + ([["--strict"]] if i % 3 == 0 else [])
                counts = {}
                for extra in modes:
                    rc, _, err = run([tt, "ingest", path, "-o", out, "-q"] + extra)
                    tag = f"{what} {' '.join(extra)}"
                    if rc is None:
                        figures["hangs"] += 1
                        problems.append(f"HANG: {tag}")
                    elif rc not in (0, 1):
                        figures["crashes"] += 1
                        problems.append(f"CRASH rc={rc}: {tag}: {err[-500:]}")
                    elif rc == 0:
                        vrc, vout, verr = run([tt, "verify", out])
                        if vrc != 0 or not vout.startswith("OK"):
                            figures["wrong"] += 1
                            problems.append(f"VERIFY FAILED: {tag}: {vout[:300]} {verr[:300]}")
                        counts[tuple(extra)] = events_of(tt, out)
                        if not extra:
                            figures["tables"] += 1
                    else:
                        if not extra:
                            figures["errors"] += 1
                        if name not in err or os.path.exists(out):
                            figures["wrong"] += 1
                            problems.append(f"UNCLEAN ERROR: {tag}: {err[-300:]}")
                    left = sorted(set(os.listdir(case)) - {name, "out.tracetable"})
                    if left:
                        figures["leftovers"] += 1
                        problems.append(f"LEFTOVER {left}: {tag}")
                    shutil.rmtree(out, ignore_errors=True)
                lenient, strict = counts.get(()), counts.get(("--strict",))
                if strict is not None and lenient != strict:
                    figures["wrong"] += 1
                    problems.append(f"WRONG: {what}: --strict read {strict} events, default {lenient}")
                if kind == "cut" and lenient is not None and whole_events is not None \
                        and lenient > whole_events:
                    figures["wrong"] += 1
                    problems.append(f"WRONG: {what}: {lenient} events from a cut of {whole_events}")
                # Damage at one place loses a few events, not a run of them
                # (a resync that swallows good events lies by omission).
                if local and lenient is not None and whole_events is not None \
                        and lenient < whole_events - max(64, whole_events // 100):
                    figures["wrong"] += 1
                    problems.append(f"WRONG: {what}: {lenient} of {whole_events} events kept")
                shutil.rmtree(case)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for p in problems[:30]:
        print(p)
    print("mutation test: " + ", ".join(f"{k} {v}" for k, v in figures.items()))
    bad = figures["crashes"] + figures["hangs"] + figures["leftovers"] + figures["wrong"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
