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

# The lock, Node and the pinned packages, as every build under web/ takes them.
source ../npm-ci.sh dashboard

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
