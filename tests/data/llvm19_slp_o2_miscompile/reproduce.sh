#!/usr/bin/env bash
# LLVM 19.1's SLP vectorizer miscompiles this kernel at O2 (a layer norm whose
# intermediate was stored transposed by the schedule primitive
# transform_layout; storage_rewrite puts it in one stack slot with the row
# sums). O0, O1 and O3 compute it right, as does O2 with -vectorize-slp=false
# or without the noalias scopes the inliner adds. The kernel as Tessera emits
# it before LLVM's passes (layer_norm_o0.ll), the untransformed one as the
# reference. Prints the largest difference per pipeline; exits 1 if O2 is
# still wrong (run it when moving to a newer LLVM).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
llc-19 -O0 -filetype=obj "$here/layer_norm_reference_o0.ll" -o "$tmp/ref.o"
status=0
for level in O1 O2 O3; do
    opt-19 -passes="default<$level>" -mcpu=znver5 "$here/layer_norm_o0.ll" -o "$tmp/k.bc"
    llc-19 -O0 -mcpu=znver5 -filetype=obj "$tmp/k.bc" -o "$tmp/k.o"
    cc "$here/main.c" "$tmp/k.o" "$tmp/ref.o" -o "$tmp/run" -lm
    echo "$level: $("$tmp/run" || true)"
    [[ $level != O2 ]] || "$tmp/run" >/dev/null || status=1
done
exit $status
