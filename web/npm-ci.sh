# Sourced by the build scripts under web/ from their own directory, with
# the name of the build as $1: takes that build's lock (two `make generate`
# at once share one node_modules), makes sure Node is there, and installs
# the pinned packages of package-lock.json (npm ci, into node_modules, which
# git ignores) unless the lock and package.json are older than the last
# install.
exec 9>"${TMPDIR:-/tmp}/merchantpay-$1-build.lock"
flock 9

# A fresh machine may lack Node: Debian's, installed as root (the output
# does not depend on Node's version, only on the pinned packages).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    echo "web/$1/build.sh: node and npm are needed (apt-get install nodejs npm)" >&2
    exit 1
  fi
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm; } >&2
fi

stamp=node_modules/.installed
if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ] || [ package.json -nt "$stamp" ]; then
  npm ci --no-audit --no-fund --loglevel=error >&2
  touch "$stamp"
fi
