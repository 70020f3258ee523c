#!/usr/bin/env bash
# Installs what the browser tests need, once per machine:
#  - Debian's Chromium at /usr/bin/chromium, with apt-get when it is missing
#    (as root);
#  - the pinned playwright-core of package-lock.json, with npm ci into this
#    folder's node_modules (gitignored). It never downloads a browser.
# Exit status 3 means the browser cannot be installed on this machine (not
# root, no apt-get, or apt-get failed): the tests then skip. Anything else
# non-zero is a failure. Safe to run from parallel test processes.
set -euo pipefail
cd "$(dirname "$0")"

exec 9>"${TMPDIR:-/tmp}/merchantpay-browser-setup.lock"
flock 9

cannot() {
  echo "browser test setup: $*" >&2
  exit 3
}

apt_install() {
  [ "$(id -u)" = 0 ] || cannot "$* missing and installing it needs root"
  command -v apt-get >/dev/null || cannot "$* missing and there is no apt-get"
  export DEBIAN_FRONTEND=noninteractive
  # The package lists may be missing or stale on a fresh machine.
  if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends "$@"; } >&2; then
    cannot "apt-get could not install $*"
  fi
}

if [ ! -x /usr/bin/chromium ]; then
  apt_install chromium fonts-liberation
fi
[ -x /usr/bin/chromium ] || cannot "/usr/bin/chromium is still missing after installing chromium"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  apt_install nodejs npm
fi

stamp=node_modules/.installed
if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ] || [ package.json -nt "$stamp" ]; then
  npm ci --no-audit --no-fund --loglevel=error >&2
  touch "$stamp"
fi
