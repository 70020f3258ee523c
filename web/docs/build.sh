#!/usr/bin/env bash
# Copies Redoc's standalone bundle, pinned in package-lock.json, into dist/,
# which is committed and embedded in the binary (package apidocs serves it
# at /docs). The same lock gives the same bytes: `make generate` runs this
# and CI fails when it leaves a diff.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund --loglevel=error --ignore-scripts >&2
mkdir -p dist
# The bundle's side menu shows Redocly's logo from Redocly's CDN, which
# the page may not load (it loads nothing from another origin): the logo
# becomes an empty inline image. The build fails when the bundle no longer
# holds that address, so an upgrade is looked at again.
logo='https://cdn.redoc.ly/redoc/logo-mini.svg'
blank='data:image/svg+xml,%3Csvg xmlns=%27http://www.w3.org/2000/svg%27 width=%271%27 height=%271%27/%3E'
grep -qF "$logo" node_modules/redoc/bundles/redoc.standalone.js || { echo "build.sh: the bundle no longer loads $logo; check what it loads now" >&2; exit 1; }
sed "s|$logo|$blank|g" node_modules/redoc/bundles/redoc.standalone.js >dist/redoc.standalone.js
cp node_modules/redoc/bundles/redoc.standalone.js.LICENSE.txt dist/redoc.standalone.js.LICENSE.txt
cp node_modules/redoc/LICENSE dist/LICENSE
