// Reshapes that split the last axis moved below the elementwise ops that read
// them, so those ops fuse with the op before the reshape: an integer
// convolution's GEMM writes (N, OC, OH*OW) and its requantizing epilogue
// (cast, scale, bias, relu, quantize) reads (N, OC, OH, OW).
#pragma once

#include "engine/graph/passes/pass.h"

namespace tessera::passes {

/// reshape(x: [.., P] -> [.., A, B]) read only by an elementwise or broadcast
/// op whose other operands broadcast over A and B (scalars, per-channel
/// constants) becomes that op on x followed by the reshape, repeatedly.
graph::Graph sink_reshapes(const graph::Graph& g, const PassContext& ctx);

}  // namespace tessera::passes
