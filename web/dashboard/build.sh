#!/usr/bin/env bash
# Builds the merchant dashboard as the service serves it: installs the
# pinned packages of package-lock.json (npm ci, into node_modules, which git
# ignores) and bundles src/ with esbuild (the same pinned version as
# GraphiQL's) into dist/, which is committed and embedded by the Go package
# here. The output depends only on the lock file and src/: no timestamps,
# no absolute paths, no source maps, so running it again gives the same
# bytes (`make generate` runs it, and CI checks for a diff).
set -euo pipefail
cd "$(dirname "$0")"

# Runs at once (two `make generate`) share one node_modules.
exec 9>"${TMPDIR:-/tmp}/merchantpay-dashboard-build.lock"
flock 9

# A fresh machine may lack Node: Debian's, installed as root (the output
# does not depend on Node's version, only on the pinned packages).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    echo "web/dashboard/build.sh: node and npm are needed (apt-get install nodejs npm)" >&2
    exit 1
  fi
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm; } >&2
fi

stamp=node_modules/.installed
if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ] || [ package.json -nt "$stamp" ]; then
  npm ci --no-audit --no-fund --loglevel=error >&2
  touch "$stamp"
fi

rm -rf dist.tmp
mkdir dist.tmp
# One classic script (iife) and its stylesheet (index.css, from the CSS
# the script imports): nothing inline, so the policy needs no
# 'unsafe-inline'.
node_modules/.bin/esbuild src/main.jsx \
  --bundle --minify --format=iife --target=es2020 --platform=browser \
  --jsx=automatic --jsx-import-source=preact \
  --legal-comments=none --charset=utf8 --log-level=warning \
  --entry-names=index --outdir=dist.tmp
cp src/index.html dist.tmp/index.html
rm -rf dist
mv dist.tmp dist
