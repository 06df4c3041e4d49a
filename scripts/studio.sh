#!/usr/bin/env bash
# Builds Tessera and opens the studio on the bundled example model (or MODEL).
# Without a display it renders the window offscreen to build/studio.png instead.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
model="${1:-resources/models/small_cnn/model.onnx}"
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  exec build/bin/tessera-studio "$model"
fi
echo "no display: compiling and running the model, then rendering the studio to build/studio.png"
build/bin/tessera run "$model" --check
QT_QPA_PLATFORM=offscreen build/bin/tessera-studio "$model" --screenshot build/studio.png
echo "screenshot: build/studio.png"
