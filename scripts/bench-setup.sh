#!/usr/bin/env bash
# Creates .venv with the benchmark's Python packages (onnx, numpy, onnxruntime
# from PyPI) and generates the benchmark models into build/bench-models.
# Idempotent; nothing here is needed to build or test Tessera.
#
#   scripts/bench-setup.sh [--gpu] [OUT_DIR]
#
# --gpu: replaces onnxruntime by onnxruntime-gpu with the CUDA 12 / cuDNN 9
# wheels (nvidia-*, several GB), for `tessera bench model --target cuda
# --compare ort` (ONNX Runtime's CUDAExecutionProvider); needs an NVIDIA driver
# to be of use, but installs without one.
set -euo pipefail
cd "$(dirname "$0")/.."
GPU=0
OUT=build/bench-models
for arg in "$@"; do
  case "$arg" in
    --gpu) GPU=1 ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "bench-setup.sh: unknown option $arg (use --gpu)" >&2; exit 2 ;;
    *) OUT="$arg" ;;
  esac
done
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
has_cuda_ep() {
  .venv/bin/python -c "import sys, onnxruntime as o
sys.exit(0 if 'CUDAExecutionProvider' in o.get_available_providers() else 1)" 2>/dev/null
}
if [ "$GPU" = 1 ]; then
  if ! has_cuda_ep; then
    .venv/bin/pip install --quiet --upgrade pip
    # onnxruntime and onnxruntime-gpu install the same module: only one may stay.
    .venv/bin/pip uninstall --yes --quiet onnxruntime 2>/dev/null || true
    .venv/bin/pip install --quiet onnx numpy "onnxruntime-gpu[cuda,cudnn]"
  fi
  has_cuda_ep || { echo "bench-setup.sh --gpu: onnxruntime-gpu installed but lists no CUDAExecutionProvider" >&2; exit 1; }
  .venv/bin/python -c "import onnxruntime as o; print('onnxruntime', o.__version__, o.get_available_providers())"
elif ! .venv/bin/python -c "import onnx, numpy, onnxruntime" 2>/dev/null; then
  .venv/bin/pip install --quiet --upgrade pip
  .venv/bin/pip install --quiet onnx numpy onnxruntime
fi
.venv/bin/python bench/models/generate.py --out "$OUT"
