// The blocked-layout ops (layout_transform, nn.conv2d_NCHWc) compiled with
// the default CPU schedule, against naive C++ loops on random data with
// channel counts that do not fill a block.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <regex>

#include "engine/codegen/llvm/llvm_codegen.h"
#include "engine/core/error.h"
#include "engine/driver/driver.h"
#include "engine/graph/passes/graph_rewrite.h"
#include "engine/tir/printer.h"
#include "engine/topi/cpu/schedule_cpu.h"
#include "engine/topi/topi.h"
#include "tests/engine/graph/passes/passes_test_util.h"

namespace tessera {
namespace {

using passes::testing::constant;
using passes::testing::input;
using passes::testing::node;
using runtime::NDArray;

std::vector<float> floats(const NDArray& a) {
    return std::vector<float>(a.data<float>(), a.data<float>() + a.num_elements());
}

std::vector<float> constant_data(const graph::Graph& g, int v) {
    const auto& b = g.values[size_t(v)].constant->bytes;
    std::vector<float> f(b.size() / 4);
    std::memcpy(f.data(), b.data(), b.size());
    return f;
}

int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// NCHW (n, C, H, W) -> (n, ceil(C/b), H, W, b), zeros in the padded channels.
std::vector<float> pack(const std::vector<float>& x, int64_t N, int64_t C, int64_t H, int64_t W,
                        int64_t b) {
    std::vector<float> y(size_t(N * cdiv(C, b) * H * W * b), 0.f);
    for (int64_t n = 0; n < N; ++n)
        for (int64_t c = 0; c < C; ++c)
            for (int64_t h = 0; h < H; ++h)
                for (int64_t w = 0; w < W; ++w)
                    y[size_t((((n * cdiv(C, b) + c / b) * H + h) * W + w) * b + c % b)] =
                        x[size_t(((n * C + c) * H + h) * W + w)];
    return y;
}

struct ConvCase {
    int64_t N, C, H, W, K, R, S, stride, pad;
    int64_t OH() const { return (H + 2 * pad - R) / stride + 1; }
    int64_t OW() const { return (W + 2 * pad - S) / stride + 1; }
};

// Naive NCHW conv with bias, double accumulation.
std::vector<float> naive_conv(const ConvCase& p, const std::vector<float>& x,
                              const std::vector<float>& w, const std::vector<float>& bias) {
    std::vector<float> y(size_t(p.N * p.K * p.OH() * p.OW()));
    for (int64_t n = 0; n < p.N; ++n)
        for (int64_t k = 0; k < p.K; ++k)
            for (int64_t oh = 0; oh < p.OH(); ++oh)
                for (int64_t ow = 0; ow < p.OW(); ++ow) {
                    double acc = bias[size_t(k)];
                    for (int64_t c = 0; c < p.C; ++c)
                        for (int64_t r = 0; r < p.R; ++r)
                            for (int64_t s = 0; s < p.S; ++s) {
                                int64_t h = oh * p.stride + r - p.pad,
                                        ww = ow * p.stride + s - p.pad;
                                if (h < 0 || h >= p.H || ww < 0 || ww >= p.W) continue;
                                acc += double(x[size_t(((n * p.C + c) * p.H + h) * p.W + ww)]) *
                                       w[size_t(((k * p.C + c) * p.R + r) * p.S + s)];
                            }
                    y[size_t(((n * p.K + k) * p.OH() + oh) * p.OW() + ow)] = float(acc);
                }
    return y;
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want) {
    ASSERT_EQ(got.size(), want.size());
    double worst = 0;
    for (size_t i = 0; i < got.size(); ++i)
        worst = std::max(worst, std::fabs(double(got[i]) - want[i]) / (1.0 + std::fabs(want[i])));
    EXPECT_LT(worst, 1e-4);
}

TEST(LayoutTransform, PacksWithZeroPaddedChannelsAndUnpacks) {
    graph::Graph g;
    int x = input(g, "x", {2, 5, 3, 4});
    int p = node(g, "layout_transform", "p", {x},
                 {{"src_layout", std::string("NCHW")}, {"dst_layout", std::string("NCHW4c")}});
    int u = node(g, "layout_transform", "u", {p},
                 {{"src_layout", std::string("NCHW4c")},
                  {"dst_layout", std::string("NCHW")},
                  {"channels", int64_t(5)}});
    g.outputs = {p, u};
    EXPECT_EQ(g.values[size_t(p)].type.shape, (std::vector<int64_t>{2, 2, 3, 4, 4}));
    auto model = driver::build(g);
    std::vector<NDArray> in = driver::random_inputs(g, 7);
    std::vector<NDArray> out = model->run(in);
    EXPECT_EQ(floats(out[0]), pack(floats(in[0]), 2, 5, 3, 4, 4));
    EXPECT_EQ(floats(out[1]), floats(in[0]));
    std::vector<NDArray> ref = driver::interpret_graph(g, in);
    EXPECT_EQ(floats(ref[0]), floats(out[0]));
}

TEST(LayoutTransform, RejectsUnknownLayouts) {
    graph::Graph g;
    int x = input(g, "x", {1, 5, 3, 4});
    EXPECT_THROW(node(g, "layout_transform", "p", {x},
                      {{"src_layout", std::string("NCHW")}, {"dst_layout", std::string("NHWC")}}),
                 UserError);
}

// Packed weights (K, C, R, S) -> (K/ob, C/ib, R, S, ib, ob), independent of the pass's packer.
std::vector<float> pack_weight(const ConvCase& p, const std::vector<float>& w, int64_t ib,
                               int64_t ob) {
    std::vector<float> out(size_t(cdiv(p.K, ob) * cdiv(p.C, ib) * p.R * p.S * ib * ob), 0.f);
    for (int64_t ko = 0; ko < cdiv(p.K, ob); ++ko)
        for (int64_t co = 0; co < cdiv(p.C, ib); ++co)
            for (int64_t r = 0; r < p.R; ++r)
                for (int64_t s = 0; s < p.S; ++s)
                    for (int64_t ci = 0; ci < ib; ++ci)
                        for (int64_t ki = 0; ki < ob; ++ki) {
                            int64_t k = ko * ob + ki, c = co * ib + ci;
                            if (k >= p.K || c >= p.C) continue;
                            size_t dst = size_t(
                                (((((ko * cdiv(p.C, ib) + co) * p.R + r) * p.S + s) * ib + ci) *
                                 ob) +
                                ki);
                            out[dst] = w[size_t(((k * p.C + c) * p.R + r) * p.S + s)];
                        }
    return out;
}

// conv2d_NCHWc with bias built and run through the driver, vs naive loops.
void check_blocked_conv(const ConvCase& p, int64_t ib, int64_t ob, int threads) {
    graph::Graph g;
    int x = input(g, "x", {p.N, cdiv(p.C, ib), p.H, p.W, ib});
    NDArray w = runtime::random_ndarray(passes::testing::f32({p.K, p.C, p.R, p.S}), 11);
    NDArray b = runtime::random_ndarray(passes::testing::f32({p.K}), 12);
    std::vector<float> wv = floats(w), bv = floats(b);
    std::vector<float> wp = pack_weight(p, wv, ib, ob);
    std::vector<float> bp = bv;
    bp.resize(size_t(cdiv(p.K, ob) * ob), 0.f);
    int wc =
        passes::add_float_constant(g, "w", {cdiv(p.K, ob), cdiv(p.C, ib), p.R, p.S, ib, ob}, wp);
    int bc = passes::add_float_constant(g, "b", {cdiv(p.K, ob), ob}, bp);
    int y = node(g, "nn.conv2d_NCHWc", "conv", {x, wc, bc},
                 {{"strides", std::vector<int64_t>{p.stride, p.stride}},
                  {"padding", std::vector<int64_t>{p.pad, p.pad, p.pad, p.pad}}});
    g.outputs = {y};
    driver::BuildOptions o;
    o.threads = threads;
    auto model = driver::build(g, o);
    NDArray xin = runtime::random_ndarray(passes::testing::f32({p.N, p.C, p.H, p.W}), 13);
    std::vector<float> xp = pack(floats(xin), p.N, p.C, p.H, p.W, ib);
    NDArray xb = NDArray::from_bytes(g.values[size_t(x)].type, xp.data(), xp.size() * 4);
    std::vector<NDArray> out = model->run({xb});
    std::vector<float> want =
        pack(naive_conv(p, floats(xin), wv, bv), p.N, p.K, p.OH(), p.OW(), ob);
    expect_close(floats(out[0]), want);
}

TEST(Conv2dNCHWc, OddChannels3x3Pad1) { check_blocked_conv({1, 5, 9, 11, 7, 3, 3, 1, 1}, 4, 8, 1); }

TEST(Conv2dNCHWc, Stride2Kernel7OnThreeChannels) {
    check_blocked_conv({1, 3, 21, 19, 17, 7, 7, 2, 3}, 3, 16, 1);
}

TEST(Conv2dNCHWc, ParallelBatchOfTwoWithoutPadding) {
    check_blocked_conv({2, 16, 30, 30, 32, 3, 3, 1, 0}, 16, 16, 0);
}

// Output widths with no divisor of the register tile leave a tail tile.
TEST(Conv2dNCHWc, TailColumnsWithOneAndTwoChannelBlocksPerTile) {
    const int64_t b = codegen::host_vector_lanes();
    check_blocked_conv({1, 2 * b, 4, 31, 2 * b, 3, 3, 1, 1}, b, b, 1);
    check_blocked_conv({1, b, 4, 31, 3 * b, 3, 3, 1, 1}, b, b, 1);
}

// With AVX2's 16 registers the dense NCHW[8]c tile takes two channel-block
// vectors per column where the blocks pair up (one broadcast feeds two FMAs)
// and the column count in 4..6 whose tiles do the most FMAs per load, a
// tail tile counted whole: 6 for widths 508 and 56 (tails 4 and 2), 5 for 13,
// 4 for 7 (6 + 1 would waste most of a tile); an odd block count keeps one
// vector. The default is each knob's first choice, and the compiled conv
// still matches the naive one.
TEST(Conv2dNCHWc, Avx2TileTakesTwoChannelVectorsAndTheColumnsWithTheMostFmasPerLoad) {
    auto defaults = [](int64_t ow, int64_t blocks) {
        graph::Graph g;
        int x = input(g, "x", {1, 4, 1, ow + 4, 8});
        int w = constant(g, "w", {blocks, 4, 1, 5, 8, 8}, 5);
        int y = node(g, "nn.conv2d_NCHWc", "conv", {x, w}, {});
        g.outputs = {y};
        tir::PrimFunc f = topi::lower_node(g, 0);
        topi::CpuScheduleOptions o;
        o.threads = 1;
        o.vector_lanes = 8;
        std::map<std::string, int64_t> d;
        for (const topi::CpuKnob& k : topi::cpu_schedule_knobs(f, g.nodes[0], o))
            d[k.name] = k.choices.at(0);
        return std::make_pair(d.at("conv2d.oc_vectors"), d.at("conv2d.reg_cols"));
    };
    using P = std::pair<int64_t, int64_t>;
    EXPECT_EQ(defaults(508, 4), P(2, 6));
    EXPECT_EQ(defaults(56, 4), P(2, 6));
    EXPECT_EQ(defaults(13, 4), P(2, 5));
    EXPECT_EQ(defaults(7, 4), P(2, 4));
    EXPECT_EQ(defaults(5, 4), P(2, 5));
    EXPECT_EQ(defaults(56, 3), P(1, 8));
    if (codegen::host_vector_lanes() == 8) {
        check_blocked_conv({1, 16, 1, 56, 32, 1, 5, 1, 0}, 8, 8, 1);
        check_blocked_conv({1, 16, 15, 15, 32, 3, 3, 1, 0}, 8, 8, 1);
        check_blocked_conv({1, 16, 7, 7, 32, 3, 3, 1, 1}, 8, 8, 1);
        check_blocked_conv({1, 3, 30, 30, 32, 7, 7, 2, 3}, 3, 8, 1);  // a stem: 3 channels, stride 2
    }
}

// Assembly of a 3x3 conv2d_NCHWc kernel scheduled for `lanes`-wide vectors.
std::string conv_assembly(int lanes, const codegen::LlvmOptions& target) {
    graph::Graph g;
    int x = input(g, "x", {1, 4, 14, 14, lanes});
    int w = constant(g, "w", {4, 4, 3, 3, lanes, lanes}, 5);
    int y =
        node(g, "nn.conv2d_NCHWc", "conv", {x, w}, {{"padding", std::vector<int64_t>{1, 1, 1, 1}}});
    g.outputs = {y};
    tir::PrimFunc f = topi::lower_node(g, 0);
    topi::CpuScheduleOptions o;
    o.threads = 1;
    o.vector_lanes = lanes;
    f = topi::schedule_cpu_default(f, g.nodes[0], o);
    std::string as = codegen::emit_assembly({f}, target);
    if (const char* dump = std::getenv("TESSERA_CONV_DUMP")) {
        std::ofstream(dump) << as;
        std::ofstream(std::string(dump) + ".ll") << codegen::emit_llvm_ir({f}, target);
        std::ofstream(std::string(dump) + ".tir") << tir::print(f);
    }
    return as;
}

// The micro-kernel is FMAs of a broadcast input value and weight vectors.
TEST(Conv2dNCHWc, MicroKernelIsBroadcastFma) {
    const int lanes = codegen::host_vector_lanes();
    if (lanes < 8) GTEST_SKIP() << "no AVX on this host";
    std::string as = conv_assembly(lanes, {});
    // Any FMA form: LLVM picks 231 or 213 by register allocation (213 on Zen).
    EXPECT_TRUE(std::regex_search(as, std::regex("vfmadd(132|213|231)ps")));
    EXPECT_TRUE(as.find("vbroadcastss") != std::string::npos ||
                as.find(lanes == 16 ? "{1to16}" : "{1to8}") != std::string::npos);
    EXPECT_EQ(as.find("vmulps"), std::string::npos);  // no separate multiply and add
}

// The AVX2 schedule (8 lanes, 12-column tiles) on an AVX2 target: ymm FMAs.
TEST(Conv2dNCHWc, Avx2MicroKernelUsesYmmFma) {
    codegen::LlvmOptions avx2;
    avx2.cpu = "haswell";
    avx2.features = "+avx,+avx2,+fma";
    std::string as = conv_assembly(8, avx2);
    EXPECT_NE(as.find("vfmadd231ps"), std::string::npos);
    EXPECT_NE(as.find("vbroadcastss"), std::string::npos);
    EXPECT_EQ(as.find("zmm"), std::string::npos);
    EXPECT_EQ(as.find("vmulps"), std::string::npos);
}

}  // namespace
}  // namespace tessera
