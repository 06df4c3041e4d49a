#!/usr/bin/env bash
# Installs every Debian package Tessera needs to build, test, package and run,
# the benchmarks' comparators included (libopenblas-dev; libdnnl-dev, whose
# CMake config needs ocl-icd-opencl-dev); `file` and dpkg-dev (from
# build-essential) make the .deb's Depends. Idempotent.
set -euo pipefail
PKGS=(
  build-essential cmake ninja-build ccache pkg-config git file
  qt6-base-dev qt6-svg-dev libqcustomplot-dev libqcustomplot2.1-qt6
  llvm-19-dev libprotobuf-dev protobuf-compiler libonnx-dev libonnx-testdata python3-onnx
  python3-numpy libgtest-dev libgmock-dev libgraphviz-dev nlohmann-json3-dev libcli11-dev
  libbenchmark-dev libopenblas-dev libdnnl-dev ocl-icd-opencl-dev libomp-dev libxgboost-dev xvfb xauth
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PKGS[@]} packages present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
