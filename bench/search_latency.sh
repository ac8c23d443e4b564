#!/usr/bin/env bash
# Search latency, in process, median of 7 runs: a rare and a common name of
# the tt_gen_trace 1M/10M traces, first page and a page from mid-trace, with
# the index and with --scan (the scan older tables get).
# usage: bench/search_latency.sh TABLE [tracetable binary]
set -euo pipefail
TAB=$1
T=${2:-build/cli/tracetable}
mid=$("$T" info --json "$TAB" | python3 -c "import json,sys; d=json.load(sys.stdin); print('%.3f' % ((float(d['start_us']) + float(d['end_us'])) / 2))")
echo "mid=$mid"
for q in "all-reduce.0" "Iterator::Batch"; do
  for mode in "" "--scan"; do
    echo "== q=$q ${mode:-index}"
    echo -n "first page:        "; "$T" search "$TAB" "$q" --limit 100 --repeat 7 $mode 2>&1 >/dev/null
    cur=$("$T" search "$TAB" "$q" --limit 100 --start-us "$mid" 2>&1 >/dev/null | sed -n 's/.*next cursor: //p')
    if [ -n "$cur" ]; then
      echo -n "deep cursor page:  "; "$T" search "$TAB" "$q" --limit 100 --start-us "$mid" --cursor "$cur" --repeat 7 $mode 2>&1 >/dev/null
    else
      echo -n "deep span page:    "; "$T" search "$TAB" "$q" --limit 100 --start-us "$mid" --repeat 7 $mode 2>&1 >/dev/null
    fi
  done
done
