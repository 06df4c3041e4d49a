#!/usr/bin/env bash
# Builds Tessera and runs the whole test suite (unit, conformance, CLI, GUI offscreen).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
export QT_QPA_PLATFORM=offscreen
ctest --preset default -j"$(nproc)"
