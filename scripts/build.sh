#!/usr/bin/env bash
# Installs the Debian packages, configures (ninja + ccache) and builds everything.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"
# Relative paths in the cache key: clones at other paths (CI) hit the same entries.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
[ -f build/CMakeCache.txt ] || cmake --preset default
cmake --build --preset default -- -j"$(nproc)"
