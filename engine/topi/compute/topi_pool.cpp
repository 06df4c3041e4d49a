// Pooling: nn.max_pool2d (padding excluded from the max, dilation,
// ceil_mode) and nn.global_avg_pool2d (sum stage, then a divide stage).
#include "engine/topi/compute/topi_detail.h"

namespace tessera::topi::detail {

using tir::Expr;
using tir::Var;

namespace {
int64_t pooled_extent(int64_t in, int64_t pad, int64_t k, int64_t s, int64_t d, bool ceil_mode) {
    int64_t span = in + pad - d * (k - 1) - 1;
    return (ceil_mode ? (span + s - 1) / s : span / s) + 1;
}
}  // namespace

Tensors max_pool2d(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 1, 1);
    const te::Tensor& x = in[0];
    TS_USER_CHECK(x.ndim() == 4) << where(n) << ": only 2-D pooling in NCHW layout is supported "
                                 << "(input rank " << x.ndim() << ")";
    std::vector<int64_t> kernel = attr_ints_sized(n, "kernel", 2, {});
    std::vector<int64_t> strides = attr_ints_sized(n, "strides", 2, {1, 1});
    std::vector<int64_t> dil = attr_ints_sized(n, "dilation", 2, {1, 1});
    std::vector<int64_t> pad = attr_padding(n);
    bool ceil_mode = n.attr_int("ceil_mode", 0) != 0;
    for (int j = 0; j < 2; ++j)
        TS_USER_CHECK(kernel[j] >= 1 && strides[j] >= 1 && dil[j] >= 1)
            << where(n) << ": kernel, strides and dilation must be >= 1";

    const auto& xs = x.shape();
    int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3];
    const auto& os = out[0].shape;
    TS_USER_CHECK(os.size() == 4 && os[0] == N && os[1] == C)
        << where(n) << ": output type " << out[0].str() << " does not fit input "
        << graph::TensorType{{}, xs}.str();
    // ceil_mode may or may not drop a last window that starts in the padding
    // (PyTorch vs older ONNX); either extent is accepted, both are correct
    // because padded positions never win.
    int64_t OHf = pooled_extent(H, pad[0] + pad[2], kernel[0], strides[0], dil[0], false);
    int64_t OWf = pooled_extent(W, pad[1] + pad[3], kernel[1], strides[1], dil[1], false);
    int64_t OHc = pooled_extent(H, pad[0] + pad[2], kernel[0], strides[0], dil[0], ceil_mode);
    int64_t OWc = pooled_extent(W, pad[1] + pad[3], kernel[1], strides[1], dil[1], ceil_mode);
    TS_USER_CHECK(os[2] >= OHf && os[2] <= OHc && os[3] >= OWf && os[3] <= OWc && OHf >= 1 &&
                  OWf >= 1)
        << where(n) << ": output type " << out[0].str() << " does not match the pooling window";

    tir::DataType dt = x.dtype();
    const bool clamped_windows = os[2] == OHf && os[3] == OWf && dil[0] == 1 && dil[1] == 1 &&
                                 pad[0] < kernel[0] && pad[2] < kernel[0] &&
                                 pad[1] < kernel[1] && pad[3] < kernel[1];
    tir::IterVar ry = te::reduce_axis(kernel[0], "ry");
    tir::IterVar rx = te::reduce_axis(kernel[1], "rx");
    te::Tensor y = te::compute(
        os,
        [&](const std::vector<Var>& i) {
            Expr h = add_const(mul_const(i[2], strides[0]) + mul_const(ry.var, dil[0]), -pad[0]);
            Expr w = add_const(mul_const(i[3], strides[1]) + mul_const(rx.var, dil[1]), -pad[1]);
            Expr inside = h >= int64_t(0) && h < H && w >= int64_t(0) && w < W;
            Expr v = x(i[0], i[1], clamp_index(h, H), clamp_index(w, W));
            // With contiguous windows (dilation 1) that always hold a real
            // element (pads smaller than the kernel, no ceil_mode window in
            // the end padding), a padded position clamped to the nearest real
            // one reads an element of its own window: the max is the same,
            // and without the select the output row vectorizes.
            if (clamped_windows) return te::max(v, {ry, rx});
            return te::max(tir::if_then_else(inside, v, tir::min_value(dt)), {ry, rx});
        },
        "pool_max", "pool");
    return {y};
}

Tensors global_avg_pool2d(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 1, 1);
    const te::Tensor& x = in[0];
    const auto& xs = x.shape();
    TS_USER_CHECK(xs.size() >= 3) << where(n) << ": input must be (N, C, spatial...), got rank "
                                  << xs.size();
    TS_USER_CHECK(x.dtype().is_float()) << where(n) << ": average pooling needs a float input";
    std::vector<int64_t> os = out[0].shape;
    std::vector<int64_t> expect(xs.size(), 1);
    expect[0] = xs[0];
    expect[1] = xs[1];
    TS_USER_CHECK(os == expect) << where(n) << ": output type " << out[0].str()
                                << " is not (N, C, 1, ...)";

    std::vector<tir::IterVar> axes;
    int64_t count = 1;
    for (size_t d = 2; d < xs.size(); ++d) {
        axes.push_back(te::reduce_axis(xs[d], std::string("r").append(std::to_string(d - 2))));
        count *= xs[d];
    }
    te::Tensor s = te::compute(
        os,
        [&](const std::vector<Var>& i) {
            std::vector<Expr> idx = {i[0], i[1]};
            for (const auto& a : axes) idx.push_back(a.var);
            return te::sum(x(idx), axes);
        },
        "pool_sum", "pool");
    te::Tensor y = te::compute(
        os,
        [&](const std::vector<Var>& i) {
            return s(as_exprs(i)) / tir::make_const(x.dtype(), double(count));
        },
        "pool_avg", "elemwise");
    return {y};
}

}  // namespace tessera::topi::detail
