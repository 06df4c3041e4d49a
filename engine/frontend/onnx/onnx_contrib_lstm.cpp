// DynamicQuantizeLSTM as LSTM (see onnx_contrib_lstm.h).
#include "engine/frontend/onnx/onnx_contrib_lstm.h"

#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_compose.h"

namespace tessera::frontend::onnx_import {

namespace {

// The dims of initializer `name` in the enclosing graphs (innermost first).
bool initializer_dims(const Graphs& graphs, const std::string& name, std::vector<int64_t>& dims) {
    for (auto g = graphs.rbegin(); g != graphs.rend(); ++g)
        for (const onnx::TensorProto& t : (*g)->initializer())
            if (t.name() == name) {
                dims.assign(t.dims().begin(), t.dims().end());
                return true;
            }
    return false;
}

// A Constant node holding int64 `values` (1-D).
std::string int64_constant(NodeRewriter& r, const onnx::NodeProto& n,
                           const std::vector<int64_t>& values, std::vector<onnx::NodeProto>& out) {
    onnx::NodeProto& c = out.emplace_back();
    c.set_op_type("Constant");
    c.set_name(r.fresh(node_name(n) + "_shape"));
    c.add_output(r.fresh(node_name(n) + "_shape"));
    onnx::AttributeProto* a = c.add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    onnx::TensorProto* t = a->mutable_t();
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(int64_t(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
    return c.output(0);
}

// The float weights (D, 4H, K) of quantized ones q (D, K, 4H) with a scale
// and zero point per direction (D) or per direction and column (D, 4H).
std::string dequantized_weights(NodeRewriter& r, const Graphs& graphs, const onnx::NodeProto& n,
                                int q, int scale, int zero_point,
                                std::vector<onnx::NodeProto>& out) {
    std::vector<int64_t> qd, sd;
    TS_USER_CHECK(has_input(n, q) && has_input(n, scale))
        << r.where(n) << ": input " << q << " or its scale (input " << scale << ") is missing";
    TS_USER_CHECK(initializer_dims(graphs, n.input(q), qd) && qd.size() == 3)
        << r.where(n) << ": input " << q
        << " must be a constant of shape (directions, rows, 4 * hidden)";
    TS_USER_CHECK(initializer_dims(graphs, n.input(scale), sd) &&
                  (sd.size() == 1 || sd.size() == 2))
        << r.where(n) << ": input " << scale
        << " must be a constant scale per direction, or per direction and column";
    TS_USER_CHECK(sd[0] == qd[0] && (sd.size() == 1 || sd[1] == qd[2]))
        << r.where(n) << ": the scale of input " << q << " does not match its shape";
    // Scale and zero point as (D, 1, 1) or (D, 1, 4H), to broadcast over (D, K, 4H).
    const std::string shape = int64_constant(
        r, n,
        sd.size() == 1 ? std::vector<int64_t>{sd[0], 1, 1} : std::vector<int64_t>{sd[0], 1, sd[1]},
        out);
    const onnx::AttributeProto to_float = int_attr("to", onnx::TensorProto::FLOAT);
    std::string w = r.emit(n, "Cast", {n.input(q)}, out, "", {to_float});
    if (has_input(n, zero_point)) {
        const std::string zp = r.emit(
            n, "Cast", {r.emit(n, "Reshape", {n.input(zero_point), shape}, out)}, out, "", {to_float});
        w = r.emit(n, "Sub", {w, zp}, out);
    }
    w = r.emit(n, "Mul", {w, r.emit(n, "Reshape", {n.input(scale), shape}, out)}, out);
    return r.emit(n, "Transpose", {w}, out, "", {ints_attr("perm", {0, 2, 1})});
}

}  // namespace

void expand_dynamic_quantize_lstm(NodeRewriter& r, const Graphs& graphs, const onnx::NodeProto& n,
                                  std::vector<onnx::NodeProto>& out) {
    // X, W, R, B, sequence_lens, initial_h, initial_c, P, W_scale,
    // W_zero_point, R_scale, R_zero_point.
    TS_USER_CHECK(has_input(n, 0)) << r.where(n) << ": input X is missing";
    const std::string w = dequantized_weights(r, graphs, n, 1, 8, 9, out);
    const std::string rw = dequantized_weights(r, graphs, n, 2, 10, 11, out);
    onnx::NodeProto& lstm = out.emplace_back();
    lstm.set_op_type("LSTM");
    lstm.set_name(r.fresh(node_name(n) + "_LSTM"));
    std::vector<std::string> inputs = {n.input(0), w, rw};
    for (int i = 3; i <= 7; ++i) inputs.push_back(has_input(n, i) ? n.input(i) : "");
    while (inputs.back().empty()) inputs.pop_back();
    for (const std::string& i : inputs) lstm.add_input(i);
    for (const std::string& o : n.output()) lstm.add_output(o);
    for (const onnx::AttributeProto& a : n.attribute()) *lstm.add_attribute() = a;
}

}  // namespace tessera::frontend::onnx_import
