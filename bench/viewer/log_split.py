#!/usr/bin/env python3
"""Where a step's bytes went: reads viewer_bench.js --log files (one JSON
line per response) and prints, per step kind, over the steps that had any
response: wire KB per step (median, max, steps over 1,000 KB), and KB summed
by why the viewer asked (visible / side / near; other = not a tile), plus
bytes that arrived in a later step than the one that asked, and how many
URLs were asked more than once.

usage: bench/viewer/log_split.py LOG.jsonl...
"""
import collections
import json
import statistics
import sys

WHY = ['visible', 'side', 'near', 'other']


def split(path):
    per = collections.defaultdict(collections.Counter)
    label, twice = {}, set()
    for line in open(path):
        r = json.loads(line)
        k = (r['table'], r['rep'], r['during'])
        per[k][r['why']] += r['wire']
        per[k]['total'] += r['wire']
        label[k] = r['during_step']
        if r['asked'] is not None and r['asked'] != r['during']:
            per[k]['late'] += r['wire']
        if r['times_asked'] > 1:
            twice.add(r['url'])
    print(f'`{path}` ({len(twice)} URLs asked more than once)\n')
    print('| step | steps with a response | KB per step median | max | steps > 1,000 KB | '
          + ' | '.join(f'{w} KB (sum)' for w in WHY) + ' | late KB (sum) |')
    print('|---' * (6 + len(WHY)) + '|')
    for step in dict.fromkeys(label[k] for k in sorted(per, key=lambda k: k[2])):
        ks = [k for k in per if label[k] == step and k[2] >= 0]
        if not ks:
            continue
        tot = [per[k]['total'] / 1024 for k in ks]
        sums = ' | '.join(f"{sum(per[k][w] for k in ks) / 1024:.0f}" for w in WHY)
        print(f'| {step} | {len(ks)} | {statistics.median(tot):.0f} | {max(tot):.0f} | '
              f'{sum(t > 1000 for t in tot)} | {sums} | {sum(per[k]["late"] for k in ks) / 1024:.0f} |')
    print()


if __name__ == '__main__':
    for p in sys.argv[1:]:
        split(p)
