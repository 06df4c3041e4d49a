// Depthwise nn.conv2d_NCHWc (groups = channels) against naive loops, its
// conversion by convert_layout, blocked pools, a MobileNetV2-shaped model
// compiled at -O2 against the interpreter, and random conv2d knob
// combinations of the default schedule rule (single convs and conv + clip
// groups, with and without local accumulators) against the loop-IR interpreter.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "engine/codegen/llvm/llvm_codegen.h"
#include "engine/core/error.h"
#include "engine/driver/driver.h"
#include "engine/graph/passes/convert_layout.h"
#include "engine/graph/passes/graph_rewrite.h"
#include "engine/tir/functor.h"
#include "engine/tir/interpreter.h"
#include "engine/tir/passes/compact_local_buffers.h"
#include "engine/tir/passes/lower_blocks.h"
#include "engine/tir/printer.h"
#include "engine/topi/lower_group.h"
#include "engine/topi/cpu/schedule_cpu.h"
#include "engine/topi/topi.h"
#include "tests/engine/graph/passes/passes_test_util.h"

namespace tessera {
namespace {

using passes::testing::constant;
using passes::testing::count_op;
using passes::testing::input;
using passes::testing::node;
using runtime::NDArray;

std::vector<float> floats(const NDArray& a) {
    return std::vector<float>(a.data<float>(), a.data<float>() + a.num_elements());
}

int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

struct DwCase {
    int64_t C, H, W, K, stride, pad, b;
    int64_t OH() const { return (H + 2 * pad - K) / stride + 1; }
    int64_t OW() const { return (W + 2 * pad - K) / stride + 1; }
};

// Naive depthwise conv on blocked data: x (1, C/b, H, W, b), weights (C, K, K),
// bias (C); output blocked, zero in the padded channels.
std::vector<float> naive_depthwise(const DwCase& p, const std::vector<float>& x,
                                   const std::vector<float>& w, const std::vector<float>& bias) {
    const int64_t CB = cdiv(p.C, p.b);
    std::vector<float> y(size_t(CB * p.OH() * p.OW() * p.b), 0.f);
    for (int64_t c = 0; c < p.C; ++c)
        for (int64_t oh = 0; oh < p.OH(); ++oh)
            for (int64_t ow = 0; ow < p.OW(); ++ow) {
                double acc = bias[size_t(c)];
                for (int64_t r = 0; r < p.K; ++r)
                    for (int64_t s = 0; s < p.K; ++s) {
                        int64_t h = oh * p.stride + r - p.pad, ww = ow * p.stride + s - p.pad;
                        if (h < 0 || h >= p.H || ww < 0 || ww >= p.W) continue;
                        acc += double(x[size_t(((c / p.b * p.H + h) * p.W + ww) * p.b + c % p.b)]) *
                               w[size_t((c * p.K + r) * p.K + s)];
                    }
                y[size_t(((c / p.b * p.OH() + oh) * p.OW() + ow) * p.b + c % p.b)] = float(acc);
            }
    return y;
}

void check_depthwise(const DwCase& p, int threads) {
    SCOPED_TRACE("C=" + std::to_string(p.C) + " W=" + std::to_string(p.W) +
                 " stride=" + std::to_string(p.stride) + " threads=" + std::to_string(threads));
    const int64_t CB = cdiv(p.C, p.b);
    graph::Graph g;
    int x = input(g, "x", {1, CB, p.H, p.W, p.b});
    NDArray w = runtime::random_ndarray(passes::testing::f32({p.C, 1, p.K, p.K}), 21);
    NDArray bias = runtime::random_ndarray(passes::testing::f32({p.C}), 22);
    std::vector<float> wv = floats(w), bv = floats(bias);
    std::vector<float> bp = bv;
    bp.resize(size_t(CB * p.b), 0.f);
    int wc = passes::add_float_constant(g, "w", {CB, 1, p.K, p.K, 1, p.b},
                                        passes::pack_depthwise_weight(wv, p.C, p.K, p.K, p.b));
    int bc = passes::add_float_constant(g, "b", {CB, p.b}, bp);
    int y = node(g, "nn.conv2d_NCHWc", "dw", {x, wc, bc},
                 {{"strides", std::vector<int64_t>{p.stride, p.stride}},
                  {"padding", std::vector<int64_t>{p.pad, p.pad, p.pad, p.pad}},
                  {"groups", p.C}});
    g.outputs = {y};
    // Input with zeros in the padded channels, as layout_transform makes it.
    NDArray xin = runtime::random_ndarray(g.values[size_t(x)].type, 23);
    for (int64_t i = 0; i < xin.num_elements(); ++i)
        if (i % p.b + (i / (p.H * p.W * p.b)) * p.b >= p.C) xin.data<float>()[i] = 0.f;
    driver::BuildOptions o;
    o.threads = threads;
    auto model = driver::build(g, o);
    std::vector<NDArray> out = model->run({xin});
    std::vector<float> want = naive_depthwise(p, floats(xin), wv, bv);
    std::vector<float> got = floats(out[0]);
    ASSERT_EQ(got.size(), want.size());
    double worst = 0;
    for (size_t i = 0; i < got.size(); ++i)
        worst = std::max(worst, std::fabs(double(got[i]) - want[i]) / (1.0 + std::fabs(want[i])));
    EXPECT_LT(worst, 1e-5);
}

TEST(DepthwiseNCHWc, OddSizesStridesAndPaddedChannels) {
    const int64_t b = codegen::host_vector_lanes();
    check_depthwise({20, 13, 17, 3, 1, 1, 8}, 1);     // padded last block, tail columns
    check_depthwise({2 * b, 15, 15, 3, 2, 1, b}, 1);  // stride 2, odd width
    check_depthwise({b, 11, 23, 5, 1, 2, b}, 1);      // 5x5 window
    check_depthwise({3, 9, 10, 3, 2, 0, 3}, 1);       // block of 3, no padding
    // Parallel: few channel blocks (rows outermost) and many.
    check_depthwise({b, 30, 28, 3, 2, 1, b}, 0);
    check_depthwise({5 * b, 28, 28, 3, 1, 1, b}, 0);
}

TEST(DepthwiseNCHWc, RejectsGroupsThatAreNotTheChannels) {
    graph::Graph g;
    int x = input(g, "x", {1, 2, 5, 5, 8});
    int w = constant(g, "w", {2, 1, 3, 3, 1, 8}, 1);
    EXPECT_THROW(node(g, "nn.conv2d_NCHWc", "dw", {x, w}, {{"groups", int64_t(4)}}), UserError);
    int w2 = constant(g, "w2", {2, 2, 3, 3, 8, 8}, 2);
    EXPECT_THROW(node(g, "nn.conv2d_NCHWc", "dw2", {x, w2}, {{"groups", int64_t(16)}}), UserError);
    EXPECT_NO_THROW(node(g, "nn.conv2d_NCHWc", "ok", {x, w}, {{"groups", int64_t(13)}}));
}

/// A conv node with relu6 (clip 0..6) after it, optionally.
int conv(graph::Graph& g, int x, int64_t cin, int64_t cout, int64_t k, int64_t stride,
         bool depthwise, bool act, uint64_t seed) {
    const std::string name = "c" + std::to_string(seed);
    std::map<std::string, graph::AttrValue> attrs = {
        {"strides", std::vector<int64_t>{stride, stride}},
        {"padding", std::vector<int64_t>{k / 2, k / 2, k / 2, k / 2}}};
    if (depthwise) attrs["groups"] = cin;
    int y = node(g, "nn.conv2d", name,
                 {x, constant(g, name + "_w", {cout, depthwise ? 1 : cin, k, k}, seed),
                  constant(g, name + "_b", {cout}, seed + 100)},
                 attrs);
    if (!act) return y;
    return node(g, "clip", name + "_r6", {y}, {{"a_min", 0.0}, {"a_max", 6.0}});
}

// MobileNetV2 in miniature: stem, an inverted residual with a scaled residual
// add, one with stride 2 and channel counts that do not fill a block, the
// head conv, global average pool and the classifier.
graph::Graph mini_mobilenet() {
    graph::Graph g;
    int x = input(g, "x", {1, 3, 33, 31});
    int h = conv(g, x, 3, 16, 3, 2, false, true, 1);
    int y = conv(g, h, 16, 48, 1, 1, false, true, 2);
    y = conv(g, y, 48, 48, 3, 1, true, true, 3);
    y = conv(g, y, 48, 16, 1, 1, false, false, 4);
    y = node(g, "multiply", "m", {y, constant(g, "half", {}, 5, 0.5f)});
    h = node(g, "add", "res", {h, y});
    y = conv(g, h, 16, 40, 1, 1, false, true, 6);
    y = conv(g, y, 40, 40, 3, 2, true, true, 7);
    y = conv(g, y, 40, 24, 1, 1, false, false, 8);
    y = conv(g, y, 24, 64, 1, 1, false, true, 9);
    y = node(g, "nn.global_avg_pool2d", "gap", {y});
    y = node(g, "reshape", "flat", {y}, {{"newshape", std::vector<int64_t>{1, 64}}});
    y = node(g, "nn.gemm", "fc",
             {y, constant(g, "fc_w", {10, 64}, 10), constant(g, "fc_b", {10}, 11)},
             {{"transB", int64_t(1)}});
    g.outputs = {y};
    return g;
}

TEST(DepthwiseNCHWc, MobileNetShapedModelStaysBlocked) {
    graph::Graph g = mini_mobilenet();
    graph::Graph after = passes::convert_layout(g, {});
    graph::verify(after);
    // Every conv is blocked; the data is packed once at the input and
    // unpacked once before the pool: no round trips between blocked ops.
    EXPECT_EQ(count_op(after, "nn.conv2d"), 0) << graph::print(after);
    EXPECT_EQ(count_op(after, "nn.conv2d_NCHWc"), 8);
    EXPECT_EQ(count_op(after, "layout_transform"), 2) << graph::print(after);
    passes::testing::expect_same_outputs(g, after);
    std::vector<NDArray> in = driver::random_inputs(g, 31);
    std::vector<NDArray> want = driver::interpret_graph(g, in);
    for (int threads : {1, 2}) {
        driver::BuildOptions o;
        o.threads = threads;
        std::vector<NDArray> got = driver::build(g, o)->run(in);
        ASSERT_EQ(got.size(), 1u);
        EXPECT_TRUE(runtime::allclose(got[0], want[0], 1e-4, 1e-4))
            << "threads " << threads << ": max abs err "
            << runtime::compare(got[0], want[0]).max_abs;
    }
}

// ResNet's stem: conv -> relu -> max pool (3x3/2, padded) -> conv, with an
// odd plane and 20 channels (a padded last block), then the global average
// pool: both pools run blocked, so the only transforms are the input's pack
// and the pooled vector's unpack.
TEST(DepthwiseNCHWc, PoolsStayBlockedBetweenConvs) {
    graph::Graph g;
    int x = input(g, "x", {1, 3, 31, 29});
    int h = conv(g, x, 3, 20, 3, 2, false, true, 1);
    h = node(g, "nn.max_pool2d", "mp", {h},
             {{"kernel", std::vector<int64_t>{3, 3}},
              {"strides", std::vector<int64_t>{2, 2}},
              {"padding", std::vector<int64_t>{1, 1, 1, 1}}});
    h = conv(g, h, 20, 20, 3, 1, false, true, 2);
    g.outputs = {node(g, "nn.global_avg_pool2d", "gap", {h})};
    graph::Graph after = passes::convert_layout(g, {});
    graph::verify(after);
    EXPECT_EQ(count_op(after, "nn.max_pool2d_NCHWc"), 1) << graph::print(after);
    EXPECT_EQ(count_op(after, "nn.global_avg_pool2d_NCHWc"), 1);
    EXPECT_EQ(count_op(after, "layout_transform"), 2) << graph::print(after);
    passes::testing::expect_same_outputs(g, after);
    std::vector<NDArray> in = driver::random_inputs(g, 41);
    std::vector<NDArray> want = driver::interpret_graph(g, in);
    for (int threads : {1, 2}) {
        driver::BuildOptions o;
        o.threads = threads;
        std::vector<NDArray> got = driver::build(g, o)->run(in);
        EXPECT_TRUE(runtime::allclose(got[0], want[0], 1e-4, 1e-4))
            << "threads " << threads << ": max abs err "
            << runtime::compare(got[0], want[0]).max_abs;
    }
}

// ---- knobs -----------------------------------------------------------------

/// `samples` random knob combinations of `knobs` (threads alternating 0 and
/// 1; `adjust` may override a sampled value) scheduling `f` by its anchor
/// `n`, JIT-compiled and run on `ptrs`: the last argument must equal `want`.
void expect_sampled_knobs_match(const tir::PrimFunc& f, const graph::Node& n,
                                const topi::CpuScheduleOptions& o,
                                const std::vector<topi::CpuKnob>& knobs, std::vector<NDArray>& args,
                                std::vector<void*>& ptrs, const std::vector<float>& want,
                                int samples, uint64_t seed,
                                const std::function<void(int, topi::CpuScheduleOptions&)>& adjust) {
    std::mt19937_64 rng(seed);
    for (int t = 0; t < samples; ++t) {
        topi::CpuScheduleOptions k = o;
        k.threads = t % 2 ? 1 : 0;
        for (const topi::CpuKnob& kn : knobs) k.knobs[kn.name] = kn.choices[rng() % kn.choices.size()];
        if (adjust) adjust(t, k);
        std::string desc;
        for (const auto& [name, v] : k.knobs) desc += name + "=" + std::to_string(v) + " ";
        SCOPED_TRACE(n.op + " " + desc);
        tir::PrimFunc s = topi::schedule_cpu_default(f, n, k);
        codegen::LlvmOptions lo;
        lo.threads = k.threads;
        auto module = codegen::jit_compile({s}, lo);
        std::fill(args.back().data<float>(), args.back().data<float>() + args.back().num_elements(),
                  std::nanf(""));
        module->lookup(s->name)(ptrs.data());
        const std::vector<float> got = floats(args.back());
        double worst = 0;
        for (size_t i = 0; i < got.size(); ++i) {
            const double e = std::fabs(double(got[i]) - want[i]) / (1.0 + std::fabs(want[i]));
            worst = std::isnan(e) ? 1e30 : std::max(worst, e);
        }
        EXPECT_LT(worst, 1e-5);
    }
}

/// One conv node (with bias) of graph `g`, lowered; every sampled knob
/// combination of its default rule compiles and matches the interpreter.
void check_knobs(const graph::Graph& g, int samples, uint64_t seed) {
    tir::PrimFunc f = topi::lower_node(g, 0);
    const graph::Node& n = g.nodes[0];
    topi::CpuScheduleOptions o;
    o.threads = 1;
    o.vector_lanes = codegen::host_vector_lanes();
    std::vector<topi::CpuKnob> knobs = topi::cpu_schedule_knobs(f, n, o);
    ASSERT_GE(knobs.size(), 2u) << n.op;
    for (const topi::CpuKnob& k : knobs) {
        ASSERT_FALSE(k.choices.empty()) << k.name;
        EXPECT_EQ(k.name.rfind("conv2d.", 0), 0u) << k.name;
    }
    // The first choices are the default schedule.
    topi::CpuScheduleOptions first = o;
    for (const topi::CpuKnob& k : knobs) first.knobs[k.name] = k.choices[0];
    EXPECT_EQ(tir::print(topi::schedule_cpu_default(f, n, first)),
              tir::print(topi::schedule_cpu_default(f, n, o)));

    std::vector<NDArray> args;
    std::vector<void*> ptrs;
    for (size_t i = 0; i + 1 < f->params.size(); ++i) {
        const int v = i < n.inputs.size() ? n.inputs[i] : -1;
        ASSERT_GE(v, 0);
        args.push_back(runtime::random_ndarray(g.values[size_t(v)].type, seed + i));
    }
    args.push_back(NDArray::empty(g.values[size_t(n.outputs[0])].type));
    for (NDArray& a : args) ptrs.push_back(a.raw());
    tir::interpret(f, ptrs);
    const std::vector<float> want = floats(args.back());

    expect_sampled_knobs_match(f, n, o, knobs, args, ptrs, want, samples, seed, nullptr);
}

std::map<std::string, graph::AttrValue> conv_attrs(int64_t stride, int64_t pad) {
    return {{"strides", std::vector<int64_t>{stride, stride}},
            {"padding", std::vector<int64_t>{pad, pad, pad, pad}}};
}

TEST(Conv2dKnobs, RandomCombinationsMatchTheInterpreter) {
    const int64_t b = codegen::host_vector_lanes();
    {  // dense blocked: 3 output blocks (odd), stride 2, padding, odd width
        graph::Graph g;
        int x = input(g, "x", {1, 2, 13, 19, b});
        int w = constant(g, "w", {3, 2, 3, 3, b, b}, 1);
        node(g, "nn.conv2d_NCHWc", "c", {x, w, constant(g, "bias", {3, b}, 2)}, conv_attrs(2, 1));
        g.outputs = {g.nodes[0].outputs[0]};
        check_knobs(g, 5, 100);
    }
    {  // dense blocked 1x1 over 7 input channels in one block of 7, 4 output blocks
        graph::Graph g;
        int x = input(g, "x", {1, 1, 9, 11, 7});
        int w = constant(g, "w", {4, 1, 1, 1, 7, b}, 3);
        node(g, "nn.conv2d_NCHWc", "c", {x, w, constant(g, "bias", {4, b}, 4)}, conv_attrs(1, 0));
        g.outputs = {g.nodes[0].outputs[0]};
        check_knobs(g, 4, 200);
    }
    {  // depthwise blocked: 3 blocks, stride 2, padding, odd width
        graph::Graph g;
        int x = input(g, "x", {1, 3, 17, 21, b});
        int w = constant(g, "w", {3, 1, 3, 3, 1, b}, 5);
        auto attrs = conv_attrs(2, 1);
        attrs["groups"] = 3 * b - 1;
        node(g, "nn.conv2d_NCHWc", "dw", {x, w, constant(g, "bias", {3, b}, 6)}, attrs);
        g.outputs = {g.nodes[0].outputs[0]};
        check_knobs(g, 6, 300);
    }
    {  // depthwise stride 1
        graph::Graph g;
        int x = input(g, "x", {1, 1, 12, 29, b});
        int w = constant(g, "w", {1, 1, 3, 3, 1, b}, 7);
        auto attrs = conv_attrs(1, 1);
        attrs["groups"] = b;
        node(g, "nn.conv2d_NCHWc", "dw", {x, w}, attrs);
        g.outputs = {g.nodes[0].outputs[0]};
        check_knobs(g, 4, 400);
    }
    {  // NCHW conv (the -O0/-O1 path): odd channels, stride 2, padding
        graph::Graph g;
        int x = input(g, "x", {1, 5, 15, 17});
        int w = constant(g, "w", {11, 5, 3, 3}, 8);
        node(g, "nn.conv2d", "c", {x, w, constant(g, "bias", {11}, 9)}, conv_attrs(2, 1));
        g.outputs = {g.nodes[0].outputs[0]};
        check_knobs(g, 4, 500);
    }
}

/// The largest allocation (in elements) left in `f` after lower_blocks and
/// compact_local_buffers.
int64_t largest_allocation(const tir::PrimFunc& f) {
    tir::PrimFunc low = tir::compact_local_buffers(tir::lower_blocks(f));
    int64_t most = 0;
    tir::post_order_visit(low->body, [&](const tir::Object* o) {
        if (o->node_type != tir::NodeType::Allocate) return;
        const tir::Buffer& b = static_cast<const tir::Allocate*>(o)->buffer;
        int64_t n = 1;
        for (const tir::Expr& d : b->shape) {
            const int64_t* c = tir::as_const_int(d);
            n *= c ? *c : int64_t(1) << 40;
        }
        most = std::max(most, n);
    });
    return most;
}

/// A blocked conv (node 0) with bias and clip(0, 6) (node 1), lowered as one
/// fused group: every sampled knob combination, local accumulators on and
/// off, matches the interpreter; with `compact`, the default schedule's
/// largest buffer is smaller than without local buffers (accumulators per
/// register tile, padded rows per channel block instead of output-size and
/// input-size buffers).
void check_group_knobs(const graph::Graph& g, int samples, uint64_t seed, bool compact) {
    topi::LoweredGroup lg = topi::lower_group(g, {0, 1});
    const tir::PrimFunc& f = lg.func;
    const graph::Node& n = g.nodes[0];
    topi::CpuScheduleOptions o;
    o.threads = 1;
    o.vector_lanes = codegen::host_vector_lanes();
    std::vector<topi::CpuKnob> knobs = topi::cpu_schedule_knobs(f, n, o);
    ASSERT_TRUE(std::any_of(knobs.begin(), knobs.end(), [](const topi::CpuKnob& k) {
        return k.name == "conv2d.local_buffers";
    }));
    std::vector<NDArray> args;
    for (size_t i = 0; i < lg.args.size(); ++i) {
        const runtime::TensorType& ty = g.values[size_t(lg.args[i])].type;
        args.push_back(i < lg.inputs.size() ? runtime::random_ndarray(ty, seed + i)
                                            : NDArray::empty(ty));
    }
    std::vector<void*> ptrs;
    for (NDArray& a : args) ptrs.push_back(a.raw());
    tir::interpret(f, ptrs);
    const std::vector<float> want = floats(args.back());
    if (compact) {
        topi::CpuScheduleOptions off = o;
        off.knobs["conv2d.local_buffers"] = 0;
        const int64_t full = largest_allocation(topi::schedule_cpu_default(f, n, off));
        EXPECT_GE(full, args.back().num_elements());
        EXPECT_LT(largest_allocation(topi::schedule_cpu_default(f, n, o)), full);
    }
    expect_sampled_knobs_match(f, n, o, knobs, args, ptrs, want, samples, seed,
                               [](int t, topi::CpuScheduleOptions& k) {
                                   if (k.knobs.count("conv2d.local_buffers"))
                                       k.knobs["conv2d.local_buffers"] = t % 3 != 0;
                               });
}

/// conv_NCHWc (bias) -> clip(0, 6), both blocked.
graph::Graph conv_clip(std::vector<int64_t> x_shape, std::vector<int64_t> w_shape,
                       int64_t oc_blocks, std::map<std::string, graph::AttrValue> attrs) {
    const int64_t b = w_shape.back();
    graph::Graph g;
    int x = input(g, "x", x_shape);
    int w = constant(g, "w", w_shape, 11);
    int y = node(g, "nn.conv2d_NCHWc", "c", {x, w, constant(g, "bias", {oc_blocks, b}, 12)}, attrs);
    g.outputs = {node(g, "clip", "r6", {y}, {{"a_min", 0.0}, {"a_max", 6.0}})};
    return g;
}

TEST(Conv2dKnobs, FusedClipWithLocalBuffersMatchesTheInterpreter) {
    const int64_t b = codegen::host_vector_lanes();
    // dense 1x1 on a large plane (rows outermost): accumulators per tile
    check_group_knobs(conv_clip({1, 2, 23, 21, b}, {3, 2, 1, 1, b, b}, 3, conv_attrs(1, 0)), 5, 600,
                      true);
    // dense 3x3 on a small plane (input-channel blocks outermost by default)
    check_group_knobs(conv_clip({1, 2, 7, 9, b}, {2, 2, 3, 3, b, b}, 2, conv_attrs(1, 1)), 5, 700,
                      false);
    // depthwise stride 2, padding, odd width: padded rows and accumulators
    auto dw = conv_attrs(2, 1);
    dw["groups"] = 2 * b;
    check_group_knobs(conv_clip({1, 2, 25, 23, b}, {2, 1, 3, 3, 1, b}, 2, dw), 6, 800, true);
}

}  // namespace
}  // namespace tessera
