#!/usr/bin/env bash
# Packs what scripts/bench-gpu.sh needs from a build into one archive, for a
# GPU machine that has no package registry and none of the build's libraries:
# the programs tessera, tessera-bench and tessera-gpu-worker, the `gpu` test
# programs with their CTest files and the ONNX node cases they read, and every
# shared library they load that is not the C runtime (LLVM, ONNX, protobuf,
# XGBoost, ...), from this machine.
#
#   scripts/gpu-bundle.sh [--build DIR] [--out FILE]     (default gpu-bundle.tar.xz)
#
# Without --build it configures and builds build-gpu: no studio and no CPU
# comparators in tessera-bench (TESSERA_BENCH_CPU_COMPARATORS=OFF), which keeps
# the bundle near 50 MB (the device tool carries 64 MiB), only the targets the
# bundle holds (a few minutes with the compiler cache).
#
# On the GPU machine, in a checkout of the same commit:
#   scripts/bench-gpu.sh --bundle gpu-bundle.tar.xz
# unpacks it into the build folder it came from (the tests have the source and
# build paths compiled in: where the checkout lives elsewhere, bench-gpu.sh
# links the recorded source path to it) and puts the bundled libraries that
# the machine lacks on LD_LIBRARY_PATH. The machine's own CUDA driver, NVRTC
# and cuBLAS are used (loaded at run time).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=""
OUT=gpu-bundle.tar.xz
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-bundle.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if [ -z "$BUILD" ]; then
  BUILD=build-gpu
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSERA_BUILD_STUDIO=OFF \
    -DTESSERA_BENCH_CPU_COMPARATORS=OFF > /dev/null
  targets=(tessera tessera-bench tessera-gpu-worker)
  for top in $(find tests/engine -type d -name gpu | cut -d/ -f3 | sort -u); do
    targets+=("tessera_${top}_gpu_tests")
  done
  cmake --build "$BUILD" --target "${targets[@]}"
fi
BUILD_ABS="$(cd "$BUILD" && pwd -P)"
SRC_ABS="$(pwd -P)"
programs=("$BUILD_ABS/bin/tessera" "$BUILD_ABS/bin/tessera-bench" "$BUILD_ABS/bin/tessera-gpu-worker")
gpu_tests=()
# tests/engine/<top>/**/gpu/ builds tessera_<top>_gpu_tests (tests/CMakeLists.txt).
for top in $(find tests/engine -type d -name gpu | cut -d/ -f3 | sort -u); do
  gpu_tests+=("$BUILD_ABS/tests/tessera_${top}_gpu_tests")
done
for t in "${gpu_tests[@]}"; do
  [ -x "$t" ] || { echo "gpu-bundle.sh: no $t: build it first" >&2; exit 2; }
done
for p in "${programs[@]}"; do
  [ -x "$p" ] || { echo "gpu-bundle.sh: no $p: build first (scripts/build.sh)" >&2; exit 2; }
done

STAGE="$(mktemp -d "${TMPDIR:-/tmp}/tessera-bundle-XXXXXX")"
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE/bin" "$STAGE/tests" "$STAGE/bundle-lib"
for p in "${programs[@]}"; do strip -o "$STAGE/bin/$(basename "$p")" "$p"; done
for t in "${gpu_tests[@]}"; do strip -o "$STAGE/tests/$(basename "$t")" "$t"; done
# CTest's files: every CTestTestfile.cmake and the generated test lists.
(cd "$BUILD_ABS" && find . -name CTestTestfile.cmake -not -path './_deps/*' -print0 |
  xargs -0 -I{} cp --parents {} "$STAGE/")
cp "$BUILD_ABS"/tests/*.cmake "$STAGE/tests/" 2> /dev/null || true
# The ONNX node cases the gpu tests read (Debian's libonnx-testdata, which a
# GPU machine lacks); bench-gpu.sh points TESSERA_ONNX_TESTDATA at them.
NODE_DATA=/usr/share/libonnx-testdata/data/node
for c in $(grep -rhoE '"test_[a-z0-9_]+"' $(find tests/engine -type d -name gpu) | sort -u | tr -d '"'); do
  [ -d "$NODE_DATA/$c" ] || { echo "gpu-bundle.sh: no $NODE_DATA/$c (libonnx-testdata)" >&2; exit 2; }
  mkdir -p "$STAGE/onnx-testdata/node"
  cp -r "$NODE_DATA/$c" "$STAGE/onnx-testdata/node/"
done
# The libraries, but not the C runtime the target has its own (newer) copy of.
libc_like='^(linux-vdso|ld-linux|libc\.|libm\.|libpthread\.|libdl\.|librt\.|libstdc\+\+\.|libgcc_s\.)'
ldd "${programs[@]}" "${gpu_tests[@]}" | awk '/=> \// {print $1, $3}' | sort -u |
  while read -r soname path; do
    [[ "$soname" =~ $libc_like ]] && continue
    cp -L "$path" "$STAGE/bundle-lib/$soname"
  done
{
  echo "source=$SRC_ABS"
  echo "build=$BUILD_ABS"
  echo "commit=$(git rev-parse HEAD 2> /dev/null || echo unknown)$(git diff --quiet 2> /dev/null || echo '+local-changes')"
  echo "made=$(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(. /etc/os-release && echo "$PRETTY_NAME")"
} > "$STAGE/bundle-manifest.txt"
tar -C "$STAGE" -cf - . | xz -T0 -9 > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "$OUT: $(du -h "$OUT" | cut -f1) ($(ls "$STAGE/bundle-lib" | wc -l) libraries, ${#gpu_tests[@]} gpu test programs)"
