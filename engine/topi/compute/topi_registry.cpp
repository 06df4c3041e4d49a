// The op -> compute dispatch table, and lowering of one graph node to a
// PrimFunc (placeholders for its inputs, compute, create_prim_func).
#include <cctype>
#include <map>

#include "engine/topi/compute/topi_detail.h"

namespace tessera::topi {

namespace {

using detail::ComputeFn;

const detail::ComputeTable& table() {
    static const detail::ComputeTable t = [] {
        detail::ComputeTable t = {
        {"nn.conv2d", detail::conv2d},
        {"nn.matmul", detail::matmul},
        {"nn.gemm", detail::gemm},
        {"pack_int8x4", detail::pack_int8x4},
        {"nn.matmul_u8i8", detail::matmul_u8i8},
        {"nn.matmul_i8u8", detail::matmul_i8u8},
        {"nn.im2col_int8x4", detail::im2col_int8x4},
        {"add", detail::binary},
        {"subtract", detail::binary},
        {"multiply", detail::binary},
        {"divide", detail::binary},
        {"nn.relu", detail::relu},
        {"nn.max_pool2d", detail::max_pool2d},
        {"nn.global_avg_pool2d", detail::global_avg_pool2d},
        {"reshape", detail::reshape},
        {"nn.softmax", detail::softmax},
        {"nn.attention", detail::attention},
        {"where", detail::where_op},
        {"argmax", detail::arg_reduce},
        {"argmin", detail::arg_reduce},
        {"cumsum", detail::cumsum},
        {"cumprod", detail::cumsum},
        {"topk", detail::topk},
        {"nn.log_softmax", detail::log_softmax},
        {"nn.batch_norm", detail::batch_norm},
        {"nn.instance_norm", detail::instance_norm},
        {"nn.layer_norm", detail::layer_norm},
        {"transpose", detail::transpose},
        {"concatenate", detail::concatenate},
        {"strided_slice", detail::strided_slice},
        {"take", detail::take},
        {"gather_elements", detail::gather_elements},
        {"broadcast_to", detail::broadcast_to},
        {"tile", detail::tile},
        {"nn.pad", detail::pad},
        {"nn.avg_pool2d", detail::avg_pool2d},
        {"nn.global_max_pool2d", detail::global_max_pool2d},
        {"nn.conv2d_transpose", detail::conv2d_transpose},
        {"image.resize", detail::resize},
        {"nn.conv2d_NCHWc", detail::conv2d_nchwc},
        {"layout_transform", detail::layout_transform},
        {"nn.conv3d", detail::conv3d},
        {"nn.max_pool3d", detail::max_pool3d},
        {"nn.avg_pool3d", detail::avg_pool3d},
        {"nn.conv3d_transpose", detail::conv3d_transpose},
        {"nn.max_pool2d_indices", detail::max_pool2d_indices},
        {"einsum", detail::einsum},
        };
        detail::add_math_signal_computes(t);
        detail::add_index_computes(t);
        detail::add_dtype_computes(t);
        detail::add_layout_computes(t);
        detail::add_winograd_computes(t);
        return t;
    }();
    return t;
}

/// Non-identifier characters become '_'; a leading digit gets "k_".
std::string sanitize(const std::string& s) {
    std::string r = !s.empty() && std::isdigit(static_cast<unsigned char>(s[0])) ? "k_" : "";
    for (char c : s) r += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
    if (r.empty()) r.push_back('_');
    return r;
}

std::string base_name(const graph::Node& n) { return sanitize(n.name.empty() ? n.op : n.name); }

// Families whose ops share one compute function.
ComputeFn family(const std::string& op) {
    if (detail::is_unary_op(op)) return detail::unary;
    if (detail::is_binary_op(op)) return detail::binary;
    if (op.rfind("reduce_", 0) == 0) return detail::reduce;
    return nullptr;
}

ComputeFn find_compute(const std::string& op) {
    auto it = table().find(op);
    return it != table().end() ? it->second : family(op);
}

}  // namespace

bool has_compute(const std::string& op) { return find_compute(op) != nullptr; }

std::vector<te::Tensor> compute_node(const graph::Node& n, const std::vector<te::Tensor>& inputs,
                                     const std::vector<graph::TensorType>& output_types) {
    ComputeFn fn = find_compute(n.op);
    TS_USER_CHECK(fn != nullptr)
        << detail::where(n) << ": op '" << n.op << "' has no compute definition";
    for (const te::Tensor& t : inputs)
        TS_USER_CHECK(t.defined()) << detail::where(n) << ": an input tensor is undefined";
    std::vector<te::Tensor> outs = fn(n, inputs, output_types);
    TS_CHECK(outs.size() == output_types.size()) << detail::where(n) << ": output count";
    for (size_t i = 0; i < outs.size(); ++i) {
        TS_CHECK(outs[i]->shape == output_types[i].shape)
            << detail::where(n) << ": compute shape differs from output type "
            << output_types[i].str();
    }
    return outs;
}

std::string kernel_name(const graph::Graph& g, int node) {
    TS_CHECK(node >= 0 && node < int(g.nodes.size())) << "node index " << node;
    std::string name = base_name(g.nodes[node]);
    for (int j = 0; j < int(g.nodes.size()); ++j) {
        if (j != node && base_name(g.nodes[j]) == name)
            return name.append("_").append(std::to_string(node));
    }
    return name;
}

tir::DataType to_tir(graph::DType t) {
    switch (t) {
        case graph::DType::Float32:
            return tir::DataType::float32();
        case graph::DType::Float64:
            return tir::DataType::float64();
        case graph::DType::Int64:
            return tir::DataType::int64();
        case graph::DType::Int32:
            return tir::DataType::int32();
        case graph::DType::Int8:
            return tir::DataType::int8();
        case graph::DType::UInt8:
            return tir::DataType::uint8();
        case graph::DType::Bool:
            return tir::DataType::boolean();
    }
    TS_FAIL() << "unknown graph dtype " << int(t);
}

graph::TensorType tensor_type_of(const tir::Buffer& b) {
    for (graph::DType t : {graph::DType::Float32, graph::DType::Float64, graph::DType::Int64,
                           graph::DType::Int32, graph::DType::Int8, graph::DType::UInt8,
                           graph::DType::Bool})
        if (to_tir(t) == b->dtype) return {t, b.const_shape()};
    TS_FAIL() << "buffer '" << b->name << "' has no graph element type";
}

tir::PrimFunc lower_node(const graph::Graph& g, int node) {
    TS_CHECK(node >= 0 && node < int(g.nodes.size())) << "node index " << node;
    const graph::Node& n = g.nodes[node];
    TS_USER_CHECK(has_compute(n.op))
        << detail::where(n) << ": op '" << n.op << "' has no compute definition";
    std::vector<te::Tensor> inputs;
    std::map<std::string, int> used;
    for (int v : n.inputs) {
        TS_CHECK(v >= 0 && v < int(g.values.size())) << detail::where(n) << ": input value " << v;
        const graph::Value& val = g.values[v];
        std::string name = sanitize(val.name);
        if (int k = used[name]++; k > 0) name.append("_").append(std::to_string(k));
        inputs.push_back(te::placeholder(val.type.shape, to_tir(val.type.dtype), name));
    }
    std::vector<graph::TensorType> out_types;
    for (int v : n.outputs) {
        TS_CHECK(v >= 0 && v < int(g.values.size())) << detail::where(n) << ": output value " << v;
        out_types.push_back(g.values[v].type);
    }
    std::vector<te::Tensor> outs = compute_node(n, inputs, out_types);
    std::vector<te::Tensor> args = inputs;
    args.insert(args.end(), outs.begin(), outs.end());
    return te::create_prim_func(args, kernel_name(g, node));
}

}  // namespace tessera::topi
