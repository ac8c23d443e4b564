# Shared by the CLI tests (sourced): a scratch folder $work removed at exit,
# pass/fail counting, expect_fail, background processes killed at exit and
# wait_for. Call finish last: it prints the counts and gives the test's exit
# status.
work=$(mktemp -d)
cleanups=()
trap 'for c in "${cleanups[@]}"; do eval "$c"; done; rm -rf "$work"' EXIT
fails=0 passes=0

ok() { passes=$((passes + 1)); }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# expect_fail NAME PATTERN CMD...: non-zero exit and PATTERN (a grep basic
# regular expression) on stderr.
expect_fail() {
  local name=$1 pattern=$2; shift 2
  local err
  if err=$("$@" 2>&1 >/dev/null); then
    fail "$name: exited 0"
  elif ! grep -q -- "$pattern" <<<"$err"; then
    fail "$name: message lacks '$pattern': $err"
  else
    ok
  fi
}

# Background processes a test starts (bg_pids+=($!)) are killed at exit.
bg_pids=()
cleanups+=('for p in "${bg_pids[@]}"; do kill -9 "$p" 2>/dev/null; done')

# wait_for PATH: until PATH exists (synchronisation with a background process).
wait_for() {
  for _ in $(seq 600); do [ -e "$1" ] && return 0; sleep 0.05; done
  fail "timed out waiting for $1"
  return 1
}

finish() {
  echo "$passes passed, $fails failed"
  [ "$fails" -eq 0 ]
}
