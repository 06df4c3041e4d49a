#!/usr/bin/env bash
# Installs the Debian packages, configures (ninja + ccache) and builds everything.
# Configures again when the last configure did not finish (no build/build.ninja,
# e.g. a missing package or an interrupted run) or when CMakePresets.json changed
# since; a failed configure's cache is dropped so that nothing it did not find
# stays cached as missing.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"
# Relative paths in the cache key: clones at other paths (CI) hit the same entries.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
stamp=build/.configured-presets
want=$(sha256sum CMakePresets.json | cut -d' ' -f1)
if [ ! -f build/build.ninja ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  rm -f build/CMakeCache.txt "$stamp"
  cmake --preset default
  echo "$want" > "$stamp"
fi
cmake --build --preset default -- -j"$(nproc)"
