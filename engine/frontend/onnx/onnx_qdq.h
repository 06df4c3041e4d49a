// Post-training static quantization of an ONNX model into the standard QDQ
// form: QuantizeLinear / DequantizeLinear pairs on the inputs of Conv,
// MatMul and Gemm, as ONNX Runtime's quantize_static writes it (activations
// uint8 asymmetric, weights int8 symmetric, biases float). The ranges come
// from calibration runs (driver/calibrate.h).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace tessera::frontend {

/// A calibrated range of a float tensor.
struct TensorRange {
    float lo = 0.f;
    float hi = 0.f;
};

/// The op types whose float inputs a QDQ rewrite can quantize: Conv, MatMul
/// and Gemm (their constant weights int8), Add and Mul (their operands that
/// are not constants), MaxPool, AveragePool and GlobalAveragePool (the
/// input).
const std::vector<std::string>& qdq_op_types();
/// UserError naming the op types that can be quantized when `ops` is empty
/// or holds another.
void check_qdq_ops(const std::vector<std::string>& ops);

/// By default the inputs of Conv, MatMul and Gemm. With Add, Mul and the
/// pools too, every conv's output is quantized where it meets a residual
/// Add, a scaling Mul or a pool, as quantize_static writes it: ONNX Runtime then runs the convs as
/// its integer QLinearConv (it fuses DQ -> Conv -> Q only), where with the
/// default it runs a conv before a residual Add in float.
inline std::vector<std::string> default_qdq_ops() { return {"Conv", "MatMul", "Gemm"}; }

/// The float activations a QDQ rewrite quantizes: the inputs of the model's
/// nodes of the op types `ops` that are not initializers (Conv's data,
/// MatMul's two operands, Gemm's A and B, Add's and Mul's operands, a
/// pool's input; write_qdq_model leaves an Add's, Mul's or pool's operand
/// without a range as it is: one of integers),
/// each once, in node order.
std::vector<std::string> qdq_activations(const std::string& model_path,
                                         const std::vector<std::string>& ops = default_qdq_ops());

struct QdqOptions {
    bool per_channel = true;  // weights per output channel (needs opset >= 13)
    std::vector<std::string> ops = default_qdq_ops();  // op types whose inputs are quantized
    /// Static shapes of the model's float32 tensors by name (the graph the
    /// calibration inputs ran): ONNX's version converter needs shapes (a
    /// Softmax's rank) to bring an older model to opset 13, and its shape
    /// inference does not always find them. The written model keeps its own
    /// (symbolic) input types.
    std::map<std::string, std::vector<int64_t>> float_shapes;
};

struct QdqSummary {
    int nodes = 0;        // Conv / MatMul / Gemm nodes whose inputs were quantized
    int activations = 0;  // activation tensors given a QuantizeLinear / DequantizeLinear pair
    int weights = 0;      // constant weights stored as int8
    bool per_channel = false;
    int opset = 0;  // the written model's default-domain opset
    /// The model's own opset when it was converted to 13 for per-channel
    /// weights (0: not converted).
    int upgraded_from = 0;
    /// Relu / Clip(0, c) nodes folded into the quantization of their
    /// producer's output (the QuantizeLinear saturates as they clip).
    int folded_activations = 0;
    /// Conv / Gemm biases stored as int32 (scale x_scale * w_scale).
    int biases = 0;
};

/// Writes `in_path` as a QDQ model to `out_path` (a temporary name, then
/// renamed; the original is never changed): every activation of
/// qdq_activations(options.ops) goes through QuantizeLinear (uint8, zero
/// point from the range widened to include 0; a MaxPool's output with its
/// input's scale and zero point) and DequantizeLinear before those nodes
/// read it, and the constant float weights of Conv, MatMul and Gemm (Conv's W, MatMul's and Gemm's
/// B) become int8 initializers with scale max|w| / 127 (per output channel when options.per_channel
/// and the opset is at least 13, or the model converts to opset 13 with ONNX's version converter)
/// and a DequantizeLinear. A Relu or Clip(0, c) between a node of those op types and the quantized
/// operands that alone read it is folded into the quantization (the
/// producer's output quantized with the activation's range, zero point 0:
/// the saturation clips exactly), as ONNX Runtime's quantize_static does, so
/// runtimes see DQ -> Conv -> Q. A Conv's or Gemm's constant bias becomes
/// int32 with the scale x_scale * w_scale and a DequantizeLinear.
/// Throws UserError naming the file for an output that is the input, an
/// unreadable model, an opset below 10, weights stored outside the file, or
/// an activation without a range.
QdqSummary write_qdq_model(const std::string& in_path, const std::string& out_path,
                           const std::map<std::string, TensorRange>& ranges,
                           const QdqOptions& options);

}  // namespace tessera::frontend
