#!/usr/bin/env bash
# Creates .venv with the benchmark's Python packages (onnx, numpy, onnxruntime
# from PyPI) and generates the benchmark models into build/bench-models.
# Idempotent; nothing here is needed to build or test Tessera.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
if ! .venv/bin/python -c "import onnx, numpy, onnxruntime" 2>/dev/null; then
  .venv/bin/pip install --quiet --upgrade pip
  .venv/bin/pip install --quiet onnx numpy onnxruntime
fi
.venv/bin/python bench/models/generate.py --out "${1:-build/bench-models}"
