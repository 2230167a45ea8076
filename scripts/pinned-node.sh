#!/usr/bin/env bash
# Installs the official Node.js binary of one exact version, npm's package node-linux-<arch>, into DIR (outside
# the project's dependencies: nothing in package.json or the lockfile changes) and prints its bin/ directory, to
# put first on PATH. The version defaults to .node-version, the one place naming the Node.js that ships: CI's
# second Node (.ci/run) and the container check's base image (scripts/container-check.sh) both take it from here.
#
#   bash scripts/pinned-node.sh DIR [VERSION]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=${1:?usage: bash scripts/pinned-node.sh DIR [VERSION]}
version=${2:-$(tr -d '[:space:]' <"$root/.node-version")}
case $(uname -m) in
  x86_64) arch=x64 ;;
  aarch64) arch=arm64 ;;
  *) echo "pinned-node: npm has no node-linux package for $(uname -m)" >&2; exit 1 ;;
esac
# npm's cache keeps the tarball (about 30 MB) between runs; its messages go to stderr, the bin/ path alone to stdout.
timeout 300 npm install --prefix "$dir" --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
  "node-linux-$arch@$version" >&2
bin=$dir/node_modules/node-linux-$arch/bin
actual=$("$bin/node" -p process.versions.node)
if [[ $actual != "$version" ]]; then
  echo "pinned-node: asked for Node.js $version, node-linux-$arch gave $actual" >&2
  exit 1
fi
echo "$bin"
