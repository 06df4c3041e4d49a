// com.microsoft Attention, MultiHeadAttention and EmbedLayerNormalization as
// standard ops (see the header).
#include "engine/frontend/onnx/onnx_contrib_attention.h"

#include <cmath>
#include <limits>

#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_compose.h"

namespace tessera::frontend::onnx_import {

namespace {

using Nodes = std::vector<onnx::NodeProto>;

int64_t attr_int(const onnx::NodeProto& n, const std::string& name, int64_t fallback) {
    const onnx::AttributeProto* a = find_attr(n, name);
    return a ? a->i() : fallback;
}

float attr_float(const onnx::NodeProto& n, const std::string& name, float fallback) {
    const onnx::AttributeProto* a = find_attr(n, name);
    return a ? a->f() : fallback;
}

/// The declared shape of value `name` (an initializer, or a graph input,
/// output or value_info with a shape; unknown dims -1), or false.
bool declared_shape(const Graphs& graphs, const std::string& name, std::vector<int64_t>& dims) {
    for (auto g = graphs.rbegin(); g != graphs.rend(); ++g) {
        for (const auto& init : (*g)->initializer())
            if (init.name() == name) {
                dims.assign(init.dims().begin(), init.dims().end());
                return true;
            }
        for (const auto* values : {&(*g)->input(), &(*g)->value_info(), &(*g)->output()})
            for (const auto& v : *values) {
                if (v.name() != name || !v.type().has_tensor_type() ||
                    !v.type().tensor_type().has_shape())
                    continue;
                dims.clear();
                for (const auto& d : v.type().tensor_type().shape().dim())
                    dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
                return true;
            }
    }
    return false;
}

/// The rank of value `name`: declared, or 1 for EmbedLayerNormalization's
/// mask_index; -1 when unknown.
int64_t known_rank(const Graphs& graphs, const std::string& name) {
    std::vector<int64_t> dims;
    if (declared_shape(graphs, name, dims)) return int64_t(dims.size());
    for (const onnx::GraphProto* g : graphs)
        for (const auto& node : g->node())
            if (node.op_type() == "EmbedLayerNormalization" && node.output_size() > 1 &&
                node.output(1) == name)
                return 1;
    return -1;
}

/// Builds the standard ops of one node.
struct Builder {
    NodeRewriter& r;
    const onnx::NodeProto& n;
    Nodes& out;

    std::string op(const std::string& type, const std::vector<std::string>& in,
                   const std::vector<onnx::AttributeProto>& attrs = {},
                   const std::string& result = "") {
        return r.emit(n, type, in, out, result, attrs);
    }
    std::string ints(const std::vector<int64_t>& v) { return r.ints(n, v, out); }
    std::string scalar(int64_t v) { return r.ints(n, {v}, out, true); }
    std::string like(const std::string& x, float v) { return r.scalar_like(n, x, v, out); }
    std::string reshape(const std::string& x, const std::vector<int64_t>& shape) {
        return op("Reshape", {x, ints(shape)});
    }
    std::string transpose(const std::string& x, const std::vector<int64_t>& perm) {
        return op("Transpose", {x}, {ints_attr("perm", perm)});
    }
    std::string slice(const std::string& x, const std::string& begin, const std::string& end,
                      int64_t axis) {
        return op("Slice", {x, begin, end, ints({axis})});
    }
    std::string slice(const std::string& x, int64_t begin, int64_t end, int64_t axis) {
        return slice(x, ints({begin}), ints({end}), axis);
    }
    std::string unsqueeze(const std::string& x, const std::vector<int64_t>& axes) {
        if (r.opset >= 13) return op("Unsqueeze", {x, ints(axes)});
        return op("Unsqueeze", {x}, {ints_attr("axes", axes)});
    }
    /// Dims [a, b) of x's shape, a 1-D int64 tensor.
    std::string dims(const std::string& x, int64_t a, int64_t b) {
        return slice(op("Shape", {x}), a, b, 0);
    }
    /// Dim `axis` of x, an int64 scalar.
    std::string dim(const std::string& x, int64_t axis) {
        return op("Gather", {op("Shape", {x}), scalar(axis)}, {int_attr("axis", 0)});
    }
    /// 0, 1, ..., length - 1 (length an int64 scalar).
    std::string positions(const std::string& length) {
        return op("Range", {scalar(0), length, scalar(1)});
    }
    std::string cast(const std::string& x, int64_t to) {
        return op("Cast", {x}, {int_attr("to", to)});
    }
};

void refuse_input(NodeRewriter& r, const onnx::NodeProto& n, int i, const char* what) {
    TS_USER_CHECK(!has_input(n, i))
        << r.where(n) << ": input " << i << " (" << what << ") is not supported";
}

/// What keys each query may see: a bool broadcastable to [B, N, S, T], or
/// empty when all. `mask` is ORT's mask_index / key_padding_mask (may be
/// empty); `length` the keys' count T and `queries` the queries' S (int64
/// scalars).
std::string visible(Builder& b, const Graphs& graphs, const std::string& mask, bool causal,
                    const std::string& queries, const std::string& length,
                    const std::string& batch_like) {
    std::string keep;
    if (!mask.empty()) {
        const int64_t rank = known_rank(graphs, mask);
        TS_USER_CHECK(rank >= 1 && rank <= 3)
            << b.r.where(b.n) << ": mask '" << mask << "' has "
            << (rank < 0 ? std::string("no declared rank") : "rank " + std::to_string(rank))
            << " (1-D end positions, 2-D [batch, keys] or 3-D [batch, queries, keys] are "
               "supported)";
        if (rank == 1) {
            // End positions (keys at or past them masked), or with 2 x batch
            // entries the ends and then the starts.
            const std::string j = b.positions(length);
            std::vector<int64_t> mdims, bdims;
            const bool ends_and_starts = declared_shape(graphs, mask, mdims) &&
                                         declared_shape(graphs, batch_like, bdims) &&
                                         !bdims.empty() && bdims[0] > 0 && mdims[0] == 2 * bdims[0];
            const std::string m = b.cast(mask, onnx::TensorProto::INT64);
            if (ends_and_starts) {
                const std::string both = b.reshape(m, {2, -1, 1});
                const std::string ends = b.op("Gather", {both, b.scalar(0)}, {int_attr("axis", 0)});
                const std::string starts =
                    b.op("Gather", {both, b.scalar(1)}, {int_attr("axis", 0)});
                keep = b.op("And",
                            {b.op("Less", {j, ends}), b.op("Not", {b.op("Less", {j, starts})})});
            } else {
                keep = b.op("Less", {j, b.reshape(m, {-1, 1})});
            }
            keep = b.reshape(keep, {0, 1, 1, -1});
        } else {
            // A raw mask: keys where it is 0 masked.
            const std::string mf = b.cast(mask, onnx::TensorProto::FLOAT);
            keep = b.op("Greater", {mf, b.like(mf, 0.0f)});
            keep = rank == 2 ? b.reshape(keep, {0, 1, 1, -1}) : b.unsqueeze(keep, {1});
        }
    }
    if (causal) {
        // Query i sees keys 0..i (the keys as many as the queries).
        const std::string i = b.unsqueeze(b.positions(queries), {1});
        const std::string later = b.op("Greater", {b.positions(length), i});
        const std::string seen = b.op("Not", {later});
        keep = keep.empty() ? seen : b.op("And", {keep, seen});
    }
    return keep;
}

/// softmax(q k^T * scale + mask + bias) v per head, heads merged:
/// qh [B, N, S, H], kt [B, N, H, T], vh [B, N, T, Hv] -> [B, S, N Hv] into `y`.
void attend(Builder& b, const std::string& qh, const std::string& kt, const std::string& vh,
            const std::string& scale, const std::string& keep, const std::string& bias,
            float filter, const std::string& y) {
    std::string scores = b.op("Mul", {b.op("MatMul", {qh, kt}), scale});
    if (!keep.empty())
        scores = b.op("Add", {scores, b.op("Where", {keep, b.like(qh, 0.0f), b.like(qh, filter)})});
    if (!bias.empty()) scores = b.op("Add", {scores, bias});
    const std::string probs = b.op("Softmax", {scores}, {int_attr("axis", -1)});
    const std::string ctx = b.transpose(b.op("MatMul", {probs, vh}), {0, 2, 1, 3});
    b.op("Reshape", {ctx, b.ints({0, 0, -1})}, {}, y);
}

/// 1 / sqrt(head size) of a [B, S, N * H] tensor x, as a float scalar of x's type.
std::string default_scale(Builder& b, const std::string& x, int64_t heads) {
    const std::string h = b.op("Div", {b.dim(x, 2), b.scalar(heads)});
    const std::string hf =
        b.r.cast_like ? b.op("CastLike", {h, x}) : b.cast(h, onnx::TensorProto::FLOAT);
    return b.op("Div", {b.like(x, 1.0f), b.op("Sqrt", {hf})});
}

int64_t heads_of(NodeRewriter& r, const onnx::NodeProto& n) {
    const int64_t heads = attr_int(n, "num_heads", 0);
    TS_USER_CHECK(heads > 0) << r.where(n) << ": attribute 'num_heads' must be positive";
    return heads;
}

void attention(NodeRewriter& r, const Graphs& graphs, const onnx::NodeProto& n, Nodes& out) {
    TS_USER_CHECK(has_input(n, 0) && has_input(n, 1)) << r.where(n) << ": needs input and weights";
    refuse_input(r, n, 4, "past");
    refuse_input(r, n, 6, "past_sequence_length");
    refuse_output(r, n, 1, "present");
    TS_USER_CHECK(attr_int(n, "do_rotary", 0) == 0)
        << r.where(n) << ": do_rotary = 1 is not supported";
    const int64_t heads = heads_of(r, n);
    std::vector<int64_t> sizes;
    if (const onnx::AttributeProto* a = find_attr(n, "qkv_hidden_sizes")) {
        sizes.assign(a->ints().begin(), a->ints().end());
    } else {
        std::vector<int64_t> w;
        TS_USER_CHECK(declared_shape(graphs, n.input(1), w) && w.size() == 2 && w[1] > 0 &&
                      w[1] % 3 == 0)
            << r.where(n) << ": the weights' shape is not declared (or not [hidden, 3 x hidden])"
            << " and there is no qkv_hidden_sizes";
        sizes.assign(3, w[1] / 3);
    }
    TS_USER_CHECK(sizes.size() == 3 && sizes[0] == sizes[1] && sizes[0] > 0 && sizes[2] > 0 &&
                  sizes[0] % heads == 0 && sizes[2] % heads == 0)
        << r.where(n) << ": qkv_hidden_sizes must be 3 sizes, Q's and K's equal, each a "
        << "multiple of num_heads " << heads;
    const int64_t head = sizes[0] / heads, vhead = sizes[2] / heads;
    Builder b{r, n, out};
    const std::string& x = n.input(0);
    const int64_t ends[3] = {sizes[0], sizes[0] + sizes[1], sizes[0] + sizes[1] + sizes[2]};
    std::string proj[3];
    for (int i = 0; i < 3; ++i) {
        const int64_t begin = i == 0 ? 0 : ends[i - 1];
        proj[i] = b.op("MatMul", {x, b.slice(n.input(1), begin, ends[i], 1)});
        if (has_input(n, 2))
            proj[i] = b.op("Add", {proj[i], b.slice(n.input(2), begin, ends[i], 0)});
    }
    const std::string qh = b.transpose(b.reshape(proj[0], {0, 0, heads, head}), {0, 2, 1, 3});
    const std::string kt = b.transpose(b.reshape(proj[1], {0, 0, heads, head}), {0, 2, 3, 1});
    const std::string vh = b.transpose(b.reshape(proj[2], {0, 0, heads, vhead}), {0, 2, 1, 3});
    float scale = attr_float(n, "scale", 0.0f);
    if (scale == 0.0f) scale = 1.0f / std::sqrt(float(head));
    const std::string length = b.dim(x, 1);
    const std::string keep = visible(b, graphs, has_input(n, 3) ? n.input(3) : "",
                                     attr_int(n, "unidirectional", 0) != 0, length, length, x);
    attend(b, qh, kt, vh, b.like(x, scale), keep, has_input(n, 5) ? n.input(5) : "",
           attr_float(n, "mask_filter_value", -10000.0f), n.output(0));
}

void multi_head_attention(NodeRewriter& r, const Graphs& graphs, const onnx::NodeProto& n,
                          Nodes& out) {
    TS_USER_CHECK(has_input(n, 0) && has_input(n, 1) && has_input(n, 2))
        << r.where(n) << ": needs query, key and value (packed QKV or KV is not supported)";
    refuse_input(r, n, 6, "past_key");
    refuse_input(r, n, 7, "past_value");
    refuse_input(r, n, 8, "past_sequence_length");
    refuse_input(r, n, 9, "cache_indirection");
    refuse_output(r, n, 1, "present_key");
    refuse_output(r, n, 2, "present_value");
    refuse_output(r, n, 3, "qk");
    const int64_t heads = heads_of(r, n);
    Builder b{r, n, out};
    std::string q = n.input(0), k = n.input(1), v = n.input(2);
    const int64_t key_rank = known_rank(graphs, k);
    TS_USER_CHECK(known_rank(graphs, q) != 5 && key_rank != 5)
        << r.where(n) << ": packed query / key / value inputs are not supported";
    const bool key_in_heads = key_rank == 4;  // [B, N, T, H]: already split, no bias
    if (has_input(n, 3)) {
        // bias = [Q's, K's, V's]: sliced at Q's hidden size D (K's the same).
        TS_USER_CHECK(!key_in_heads)
            << r.where(n)
            << ": a bias with key and value in [batch, heads, length, size] is not supported";
        const std::string d = b.dims(q, 2, 3);
        const std::string d2 = b.op("Add", {d, d});
        q = b.op("Add", {q, b.slice(n.input(3), b.ints({0}), d, 0)});
        k = b.op("Add", {k, b.slice(n.input(3), d, d2, 0)});
        v = b.op("Add",
                 {v, b.slice(n.input(3), d2, b.ints({std::numeric_limits<int64_t>::max()}), 0)});
    }
    const std::string qh = b.transpose(b.reshape(q, {0, 0, heads, -1}), {0, 2, 1, 3});
    const std::string kt = key_in_heads
                               ? b.transpose(k, {0, 1, 3, 2})
                               : b.transpose(b.reshape(k, {0, 0, heads, -1}), {0, 2, 3, 1});
    const std::string vh =
        key_in_heads ? v : b.transpose(b.reshape(v, {0, 0, heads, -1}), {0, 2, 1, 3});
    const float given = attr_float(n, "scale", 0.0f);
    const std::string scale =
        given != 0.0f ? b.like(q, given) : default_scale(b, n.input(0), heads);
    const std::string length = b.dim(k, key_in_heads ? 2 : 1);
    const std::string keep =
        visible(b, graphs, has_input(n, 4) ? n.input(4) : "", attr_int(n, "unidirectional", 0) != 0,
                b.dim(q, 1), length, n.input(0));
    attend(b, qh, kt, vh, scale, keep, has_input(n, 5) ? n.input(5) : "",
           attr_float(n, "mask_filter_value", -10000.0f), n.output(0));
}

void embed_layer_norm(NodeRewriter& r, const onnx::NodeProto& n, Nodes& out) {
    for (int i : {0, 2, 3, 5})
        TS_USER_CHECK(has_input(n, i))
            << r.where(n) << ": needs input_ids, word_embedding, position_embedding and gamma"
            << " (input " << i << " is missing)";
    TS_USER_CHECK(has_input(n, 1) == has_input(n, 4))
        << r.where(n) << ": segment_ids and segment_embedding go together";
    Builder b{r, n, out};
    const std::string& ids = n.input(0);
    const std::string word = b.op("Gather", {n.input(2), ids}, {int_attr("axis", 0)});
    const std::string pos = has_input(n, 8)
                                ? b.op("Gather", {n.input(3), n.input(8)}, {int_attr("axis", 0)})
                                : b.slice(n.input(3), b.ints({0}), b.dims(ids, 1, 2), 0);
    std::string sum = b.op("Add", {word, pos});
    if (has_input(n, 1))
        sum = b.op("Add", {sum, b.op("Gather", {n.input(4), n.input(1)}, {int_attr("axis", 0)})});
    if (n.output_size() > 2 && !n.output(2).empty()) b.op("Identity", {sum}, {}, n.output(2));
    r.layer_norm(n, sum, n.input(5), has_input(n, 6) ? n.input(6) : "",
                 attr_float(n, "epsilon", 1e-12f), n.output(0), out);
    if (n.output_size() > 1 && !n.output(1).empty()) {
        // mask_index: the mask's row sums (int32), zeros without a mask.
        if (has_input(n, 7)) {
            const std::string sums = r.reduce(
                n, "ReduceSum", b.cast(n.input(7), onnx::TensorProto::INT32), {1}, false, out);
            b.op("Identity", {sums}, {}, n.output(1));
        } else {
            onnx::AttributeProto zero;
            zero.set_name("value");
            zero.set_type(onnx::AttributeProto::TENSOR);
            zero.mutable_t()->set_data_type(onnx::TensorProto::INT32);
            zero.mutable_t()->add_dims(1);
            zero.mutable_t()->add_int32_data(0);
            b.op("ConstantOfShape", {b.dims(ids, 0, 1)}, {zero}, n.output(1));
        }
    }
}

}  // namespace

bool expand_contrib_attention(NodeRewriter& r, const Graphs& graphs, const onnx::NodeProto& n,
                              std::vector<onnx::NodeProto>& out) {
    const std::string& op = n.op_type();
    if (op != "Attention" && op != "MultiHeadAttention" && op != "EmbedLayerNormalization")
        return false;
    TS_USER_CHECK(r.opset >= 11) << r.where(n) << ": needs opset 11 or newer (the model has "
                                 << r.opset << ")";
    if (op == "Attention") {
        attention(r, graphs, n, out);
    } else if (op == "MultiHeadAttention") {
        multi_head_attention(r, graphs, n, out);
    } else {
        embed_layer_norm(r, n, out);
    }
    return true;
}

}  // namespace tessera::frontend::onnx_import
