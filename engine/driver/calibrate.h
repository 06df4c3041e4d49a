// Calibration for post-training quantization: the ranges of chosen float
// tensors of a model over a set of representative inputs (what `tessera
// quantize` writes into a QDQ model, frontend/onnx/onnx_qdq.h).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "engine/frontend/onnx/onnx_qdq.h"

namespace tessera::driver {

struct CalibrationOptions {
    enum class Method { kMinMax, kPercentile };
    Method method = Method::kMinMax;
    /// kPercentile: the range is [the (100 - p)-th, the p-th] percentile of
    /// the values seen (outliers clipped), p in (50, 100].
    double percentile = 99.999;
    int threads = 0;  // as BuildOptions::threads
};

/// The calibration input sets in `dir`: its input_N.pb files as one set, or
/// each subfolder's (test_data_set_0, ...) as one set each, in name order.
/// Throws UserError when there is none.
std::vector<std::vector<std::string>> calibration_sets(const std::string& dir);

/// Runs the model at `model_path` (compiled at -O2) on every input set and
/// returns the range of each tensor in `tensors` (ONNX value names) over all
/// of them. Symbolic input dims take the shapes of the first set's files.
/// Throws UserError naming a tensor the imported graph does not have.
std::map<std::string, frontend::TensorRange> calibrate(
    const std::string& model_path, const std::vector<std::string>& tensors,
    const std::vector<std::vector<std::string>>& input_sets, const CalibrationOptions& options);

}  // namespace tessera::driver
