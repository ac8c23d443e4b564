#!/usr/bin/env bash
# Browser test of the built-in viewer (see viewer_test.js).
#   tests/viewer/run.sh [BUILD_DIR] [TEST.js]   install what is missing, then run
#                                      the test (viewer_test.js by default)
#   tests/viewer/run.sh --setup        only install (Debian chromium, npm ci)
# Screenshots: tests/viewer/artifacts/.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

setup() {
  if ! command -v node >/dev/null || ! command -v npm >/dev/null || [ ! -x /usr/bin/chromium ]; then
    pkgs=()
    command -v node >/dev/null || pkgs+=(nodejs)
    command -v npm >/dev/null || pkgs+=(npm)
    [ -x /usr/bin/chromium ] || pkgs+=(chromium)
    "$repo/scripts/apt-install" "${pkgs[@]}"
  fi
  # playwright-core only drives the system chromium: never download browsers.
  if [ ! -f "$here/node_modules/playwright-core/package.json" ] ||
     ! grep -q "\"version\": \"$(node -p "require('$here/package.json').dependencies['playwright-core']")\"" \
        "$here/node_modules/playwright-core/package.json"; then
    (cd "$here" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
  fi
}

if [ "${1:-}" = "--setup" ]; then
  setup
  exit 0
fi
setup
build="${1:-$repo/build}"
exec node "$here/${2:-viewer_test.js}" "$build"
