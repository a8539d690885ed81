#!/usr/bin/env bash
# The system packages the test suite drives: Debian's redis-server (stream store tests) and chromium (the
# page in a headless browser). Installs what is missing with apt-get when run as root; otherwise stops with
# the exact command to run. Called by `make test` (and so by CI).
set -euo pipefail

packages=(redis-server chromium)
need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
[ -x "${STREAMKIT_CHROMIUM:-/usr/bin/chromium}" ] || need+=(chromium)  # where the browser tests look
[ "${#need[@]}" -eq 0 ] && exit 0

command="apt-get install -y --no-install-recommends ${need[*]}"
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing ${need[*]} (Debian packages the tests use): apt-get update && $command"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  exit 0
fi
{
  echo "make test needs ${need[*]} (of: ${packages[*]}), which it installs itself only as root. Run:"
  echo
  echo "    sudo $command"
  echo
  echo "then make test again (on a system without apt-get, install the same packages with its own tools)."
} >&2
exit 1
