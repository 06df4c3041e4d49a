// Private to the ONNX frontend: Resize with antialias = 1 (opset 18+), linear
// or cubic. Downsampling widens the interpolation kernel by 1 / scale, so
// each output reads a scale-dependent run of inputs; since the filter is
// separable and its weights depend only on the shapes and attributes, each
// resized axis becomes a constant weight matrix applied with MatMul (ONNX's
// reference computes the same per-axis sums).
#pragma once

#include <string>
#include <vector>

#include "engine/frontend/onnx/onnx_context.h"

namespace tessera::frontend::onnx_import {

struct AntialiasResize {
    std::vector<int64_t> sizes;  // output extent per axis
    std::vector<double> scales;  // per axis (sizes / input extents where sizes were given)
    std::string mode;            // "linear" or "cubic"
    std::string coordinate_transformation_mode;
    double cubic_coeff_a = -0.75;
    bool exclude_outside = false;
};

/// The weights of one axis: w[o * in + i] for output o and input i.
std::vector<double> antialias_weights(const AntialiasResize& r, int64_t in, size_t axis);

/// Emits the resize of ctx's input 0 into its output 0.
void convert_resize_antialias(NodeCtx& ctx, const AntialiasResize& r);

}  // namespace tessera::frontend::onnx_import
