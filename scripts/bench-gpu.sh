#!/usr/bin/env bash
# Produces every GPU figure in one run into one results file: the
# `ctest -L gpu` summary, fp32 GEMM 4096^3 against cublasSgemm with the default
# schedule and after a short tune, and the ResNet-18-shaped model at batch 1
# and 16, each output checked against ONNX Runtime's (CPU) expected outputs and
# timed against the best reference the machine has: ONNX Runtime's CUDA
# execution provider, else PyTorch (cuDNN, CUDA graph), else ours only (CUDA
# events, medians). Refuses without an NVIDIA GPU.
#
#   scripts/bench-gpu.sh [--build DIR | --bundle FILE] [--out FILE] [--models DIR]
#                        [--python PY] [--trials N] [--repeat N] [--step-timeout S]
#                        [--skip-ctest|--skip-gemm|--skip-tune|--skip-models]
#
# Needs a build with the CUDA back end (scripts/build.sh), or a bundle made by
# scripts/gpu-bundle.sh for a machine without the build's libraries or a
# package registry. The models are made with --python (default .venv/bin/python,
# else python3; needs onnx, numpy and onnxruntime) when missing.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
BUILD=build
OUT=""
BUNDLE=""
PY=""
STEP_TIMEOUT=600
MODELS=""
TRIALS=256
REPEAT=50
CTEST=1
GEMM_STEPS=1
TUNE=1
MODEL_STEPS=1
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD="$2"; shift 2 ;;
    --bundle) BUNDLE="$2"; shift 2 ;;
    --python) PY="$2"; shift 2 ;;
    --step-timeout) STEP_TIMEOUT="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --models) MODELS="$2"; shift 2 ;;
    --trials) TRIALS="$2"; shift 2 ;;
    --repeat) REPEAT="$2"; shift 2 ;;
    --skip-ctest) CTEST=0; shift ;;
    --skip-gemm) GEMM_STEPS=0; shift ;;
    --skip-tune) TUNE=0; shift ;;
    --skip-models) MODEL_STEPS=0; shift ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-gpu.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
refuse() { echo "bench-gpu.sh: $*" >&2; exit 2; }

# A bundle unpacks into the build folder it was made from; its tests have the
# source and build paths compiled in, so the recorded source path must lead here.
if [ -n "$BUNDLE" ]; then
  [ -f "$BUNDLE" ] || refuse "no bundle $BUNDLE (scripts/gpu-bundle.sh makes one)"
  manifest="$(tar -xJOf "$BUNDLE" ./bundle-manifest.txt)" || refuse "$BUNDLE has no bundle-manifest.txt"
  src_rec="$(sed -n 's/^source=//p' <<< "$manifest")"
  BUILD="$(sed -n 's/^build=//p' <<< "$manifest")"
  here="$(pwd -P)"
  if [ "$src_rec" != "$here" ]; then
    if [ -e "$src_rec" ]; then
      [ "$(cd "$src_rec" && pwd -P)" = "$here" ] ||
        refuse "the bundle's tests expect the source tree at $src_rec, which here is another folder"
    else
      mkdir -p "$(dirname "$src_rec")" && ln -s "$here" "$src_rec" ||
        refuse "cannot link $src_rec to this checkout (the bundle's tests have that path compiled in)"
    fi
  fi
  mkdir -p "$BUILD" && tar -xJf "$BUNDLE" -C "$BUILD" || refuse "cannot unpack $BUNDLE into $BUILD"
  # Only the libraries this machine lacks go on the path (its own C runtime,
  # zlib, ... stay in use, also for the Python programs started from ours).
  mkdir -p "$BUILD/bundle-lib-unused"
  for lib in "$BUILD"/bundle-lib/*; do
    if ldconfig -p | grep -q "^[[:space:]]*$(basename "$lib") "; then mv "$lib" "$BUILD/bundle-lib-unused/"; fi
  done
  export LD_LIBRARY_PATH="$BUILD/bundle-lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  if [ ! -d /usr/share/libonnx-testdata/data/node ] && [ -d "$BUILD/onnx-testdata" ]; then
    export TESSERA_ONNX_TESTDATA="$BUILD/onnx-testdata"
  fi
  missing="$(ldd "$BUILD/bin/tessera" "$BUILD/bin/tessera-bench" | grep 'not found' | sort -u)"
  [ -z "$missing" ] || refuse "libraries missing for the bundle's programs: $missing"
fi
[ -n "$MODELS" ] || MODELS="$BUILD/bench-models"
if [ -z "$PY" ]; then
  if [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=python3; fi
fi

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
  timeout -k 10 "$STEP_TIMEOUT" "$@" 2>&1 | tee -a "$OUT"
  local rc=${PIPESTATUS[0]}
  if [ "$rc" != 0 ]; then
    [ "$rc" = 124 ] && log "(stopped after $STEP_TIMEOUT s)"
    log "(exit $rc)"
    FAILED=$((FAILED + 1))
  fi
  return "$rc"
}

log "# Tessera GPU benchmark"
log "date:    $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
if [ -n "$BUNDLE" ]; then
  log "build:   bundle $BUNDLE: $(tr '\n' ' ' <<< "$manifest")"
else
  log "commit:  $(git rev-parse --short HEAD 2> /dev/null || echo unknown)$(git diff --quiet 2> /dev/null || echo ' (with local changes)')"
fi
log "gpu:     $(nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader | head -1)"
log "cpu:     $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores"
log "timing:  CUDA events, medians; ${RT[*]:-no real-time priority}"

# 1. The GPU tests: conformance suites, benchmark models, property tests on the device.
if [ "$CTEST" = 1 ]; then
  log ""
  log "## ctest -L gpu"
  timeout -k 10 "$STEP_TIMEOUT" ctest --test-dir "$BUILD" -L gpu --output-on-failure \
    -j "$(nproc)" --timeout 300 > "$WORK/ctest.log" 2>&1
  rc=$?
  grep -E "tests passed|tests failed|Total Test time|\*\*\*Failed|Not Run|\(Failed\)|\(Timeout\)|SKIPPED" \
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

# 3. ResNet-18 batch 1 and 16: outputs checked, then timed against the best reference here.
if [ "$MODEL_STEPS" = 1 ]; then
  if [ ! -f "$MODELS/resnet18/model.onnx" ] || [ ! -f "$MODELS/resnet18_b16/model.onnx" ]; then
    if "$PY" -c "import onnx, numpy, onnxruntime" 2> /dev/null; then
      step "generate the ResNet-18 models" "$PY" bench/models/generate.py --out "$MODELS" \
        --only resnet18 resnet18_b16
    else
      log ""
      log "## ResNet-18: no models in $MODELS and $PY cannot make them (needs onnx, numpy,"
      log "   onnxruntime): run scripts/bench-setup.sh --gpu, or pass --python"
      FAILED=$((FAILED + 1))
    fi
  fi
  COMPARE=()
  HAS_EP="import sys, onnxruntime as o; getattr(o, 'preload_dlls', lambda: None)(); \
sys.exit(0 if 'CUDAExecutionProvider' in o.get_available_providers() else 1)"
  HAS_TORCH="import sys, torch, onnx; sys.exit(0 if torch.cuda.is_available() else 1)"
  if "$PY" -c "$HAS_EP" 2> /dev/null; then
    COMPARE=(--compare ort --python "$PY")
    REF="ONNX Runtime's CUDA EP"
  elif "$PY" -c "$HAS_TORCH" 2> /dev/null; then
    COMPARE=(--compare torch --python "$PY")
    REF="PyTorch (cuDNN, CUDA graph; no onnxruntime-gpu here)"
  else
    REF="nothing (neither onnxruntime-gpu nor PyTorch with CUDA here): ours only"
  fi
  log ""
  log "NOTE: models compared with $REF"
  for m in resnet18 resnet18_b16; do
    [ -f "$MODELS/$m/model.onnx" ] || continue
    step "$m on the GPU: outputs against ONNX Runtime's expected outputs" "$TESSERA" run \
      "$MODELS/$m/model.onnx" --target cuda --input-dir "$MODELS/$m/test_data_set_0" \
      --compare-dir "$MODELS/$m/test_data_set_0"
    step "$m fp32 vs $REF (goal >= 0.8)" "${RT[@]}" "$TESSERA" bench model \
      "$MODELS/$m" --target cuda --repeat "$REPEAT" "${COMPARE[@]}"
  done
fi

log ""
log "## summary ($GPU_NAME): ratio = their time / our time"
grep -E "^## (GEMM|resnet)|ratio \(their|tessera +:|cublas +:|onnxruntime :|pytorch +:" "$OUT" > "$WORK/summary"
tee -a "$OUT" < "$WORK/summary"
log "$FAILED step(s) failed; results in $OUT"
[ "$FAILED" = 0 ]
