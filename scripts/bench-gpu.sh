#!/usr/bin/env bash
# Produces every GPU figure of issue #8 in one run into one results file: the
# `ctest -L gpu` summary, fp32 GEMM 4096^3 against cublasSgemm with the default
# schedule and after a short tune, and ResNet-18 batch 1 and batch 16 against
# ONNX Runtime's CUDA execution provider (CUDA events, medians). Refuses
# without an NVIDIA GPU.
#
#   scripts/bench-gpu.sh [--build DIR] [--out FILE] [--models DIR] [--trials N]
#                        [--repeat N] [--skip-ctest|--skip-gemm|--skip-tune|--skip-models]
#
# Needs a build with the CUDA back end (scripts/build.sh) and the benchmark
# models (scripts/bench-setup.sh makes them; `--gpu` adds onnxruntime-gpu for
# the ORT comparison, without which our model times are still recorded).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
BUILD=build
OUT=""
MODELS=build/bench-models
TRIALS=256
REPEAT=50
CTEST=1
GEMM_STEPS=1
TUNE=1
MODEL_STEPS=1
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --models) MODELS="$2"; shift 2 ;;
    --trials) TRIALS="$2"; shift 2 ;;
    --repeat) REPEAT="$2"; shift 2 ;;
    --skip-ctest) CTEST=0; shift ;;
    --skip-gemm) GEMM_STEPS=0; shift ;;
    --skip-tune) TUNE=0; shift ;;
    --skip-models) MODEL_STEPS=0; shift ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-gpu.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
refuse() { echo "bench-gpu.sh: $*" >&2; exit 2; }

TESSERA="$BUILD/bin/tessera"
[ -x "$TESSERA" ] || refuse "no $TESSERA: build first (scripts/build.sh, or --build DIR)"
if ! command -v nvidia-smi > /dev/null 2>&1 || ! nvidia-smi -L > /dev/null 2>&1; then
  refuse "no NVIDIA GPU here (nvidia-smi -L fails): the figures of issue #8 need an H100/H200-class GPU"
fi
GPU_NAME="$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
[ -n "$OUT" ] || OUT="gpu-results-$(date +%Y%m%d-%H%M%S).txt"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/tessera-gpu-XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
# Real-time priority where allowed (root): timing is not preempted by other work.
RT=()
if chrt -f 50 true 2> /dev/null; then RT=(chrt -f 50); fi
FAILED=0
: > "$OUT"

log() { echo "$*" | tee -a "$OUT"; }
# step TITLE CMD...: runs CMD, its output into the results file; a failure is noted and counted.
step() {
  local title="$1"; shift
  log ""
  log "## $title"
  log "\$ $*"
  "$@" 2>&1 | tee -a "$OUT"
  local rc=${PIPESTATUS[0]}
  if [ "$rc" != 0 ]; then
    log "(exit $rc)"
    FAILED=$((FAILED + 1))
  fi
  return "$rc"
}

log "# Tessera GPU benchmark (issue #8)"
log "date:    $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
log "commit:  $(git rev-parse --short HEAD 2> /dev/null || echo unknown)$(git diff --quiet 2> /dev/null || echo ' (with local changes)')"
log "gpu:     $(nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader | head -1)"
log "cpu:     $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores"
log "timing:  CUDA events, medians; ${RT[*]:-no real-time priority}"

# 1. The GPU tests: conformance suites, benchmark models, property tests on the device.
if [ "$CTEST" = 1 ]; then
  log ""
  log "## ctest -L gpu"
  ctest --test-dir "$BUILD" -L gpu --output-on-failure -j "$(nproc)" > "$WORK/ctest.log" 2>&1
  rc=$?
  grep -E "tests passed|tests failed|Total Test time|\*\*\*Failed|Not Run|\(Failed\)|SKIPPED" \
    "$WORK/ctest.log" | tee -a "$OUT"
  cp "$WORK/ctest.log" "${OUT%.txt}.ctest.log"
  log "(full log: ${OUT%.txt}.ctest.log)"
  [ "$rc" = 0 ] || { log "(exit $rc)"; FAILED=$((FAILED + 1)); }
fi

# 2. fp32 GEMM 4096^3 (SIMT) against cublasSgemm: default schedule, then tuned.
GEMM=(bench gemm --target cuda --compare cublas --m 4096 --n 4096 --k 4096 --rounds 5)
RECORDS="${OUT%.txt}.gemm-records.jsonl"
if [ "$GEMM_STEPS" = 1 ]; then
  step "GEMM 4096^3 fp32, default GPU schedule vs cuBLAS (goal >= 0.7)" "${RT[@]}" "$TESSERA" "${GEMM[@]}"
  if [ "$TUNE" = 1 ]; then
    rm -f "$RECORDS"
    step "tune GEMM 4096^3, $TRIALS trials" "$TESSERA" tune --target cuda --gemm 4096x4096x4096 \
      --trials "$TRIALS" --records "$RECORDS" \
      && step "GEMM 4096^3 fp32, tuned ($TRIALS trials) vs cuBLAS (goal >= 0.9)" "${RT[@]}" \
           "$TESSERA" "${GEMM[@]}" --records "$RECORDS"
  fi
fi

# 3. ResNet-18 batch 1 and 16 against ONNX Runtime's CUDA execution provider.
if [ "$MODEL_STEPS" = 1 ]; then
  VENV_PY=.venv/bin/python
  if [ ! -f "$MODELS/resnet18/model.onnx" ] || [ ! -f "$MODELS/resnet18_b16/model.onnx" ]; then
    if [ -x "$VENV_PY" ] && "$VENV_PY" -c "import onnx, numpy" 2> /dev/null; then
      step "generate the ResNet-18 models" "$VENV_PY" bench/models/generate.py --out "$MODELS" \
        --only resnet18 resnet18_b16
    else
      log ""
      log "## ResNet-18: no models in $MODELS and no .venv to make them: run scripts/bench-setup.sh --gpu"
      FAILED=$((FAILED + 1))
    fi
  fi
  COMPARE=()
  HAS_EP="import sys, onnxruntime as o; getattr(o, 'preload_dlls', lambda: None)(); \
sys.exit(0 if 'CUDAExecutionProvider' in o.get_available_providers() else 1)"
  if [ -x "$VENV_PY" ] && "$VENV_PY" -c "$HAS_EP" 2> /dev/null; then
    COMPARE=(--compare ort --python "$VENV_PY")
  else
    log ""
    log "NOTE: no onnxruntime-gpu in .venv (scripts/bench-setup.sh --gpu installs it):"
    log "      the model rows below are ours only, without ONNX Runtime's CUDA EP"
  fi
  for m in resnet18 resnet18_b16; do
    [ -f "$MODELS/$m/model.onnx" ] || continue
    step "$m fp32 vs ONNX Runtime CUDA EP (goal >= 0.8)" "${RT[@]}" "$TESSERA" bench model \
      "$MODELS/$m" --target cuda --repeat "$REPEAT" "${COMPARE[@]}"
  done
fi

log ""
log "## summary ($GPU_NAME): ratio = their time / our time"
grep -E "^## (GEMM|resnet)|ratio \(their|tessera +:|cublas +:|onnxruntime :" "$OUT" > "$WORK/summary"
tee -a "$OUT" < "$WORK/summary"
log "$FAILED step(s) failed; results in $OUT"
[ "$FAILED" = 0 ]
