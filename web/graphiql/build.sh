#!/usr/bin/env bash
# Builds GraphiQL as the service serves it: installs the pinned packages of
# package-lock.json (npm ci, into node_modules, which git ignores) and
# bundles src/ with esbuild into dist/, which is committed and embedded by
# the Go package here. The output depends only on the lock file and src/:
# no timestamps, no absolute paths, no source maps, so running it again
# gives the same bytes (`make generate` runs it, and CI checks for a diff).
set -euo pipefail
cd "$(dirname "$0")"

# The lock, Node and the pinned packages, as every build under web/ takes them.
source ../npm-ci.sh graphiql

rm -rf dist.tmp
mkdir dist.tmp
# One bundle per entry: the page's script (with its stylesheet, index.css)
# and each web worker of the editor. Classic scripts (iife), so that the
# workers start with new Worker(url) and the page needs no module loader.
node_modules/.bin/esbuild \
  src/index.jsx src/editor.worker.js src/json.worker.js src/graphql.worker.js \
  --bundle --minify --format=iife --target=es2020 --platform=browser \
  --jsx=automatic --define:process.env.NODE_ENV='"production"' \
  --loader:.ttf=dataurl --loader:.woff=dataurl --loader:.woff2=dataurl \
  --legal-comments=none --charset=utf8 --log-level=warning \
  --entry-names='[name]' --outdir=dist.tmp
cp src/index.html dist.tmp/index.html
rm -rf dist
mv dist.tmp dist
