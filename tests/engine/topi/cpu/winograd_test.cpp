// Winograd conv (nn.conv2d_winograd_NCHWc, the winograd pass): the op on
// random data against a naive double-precision conv (odd planes, channel
// counts that do not fill a block, bias; F(2,3) and F(4,3); the per-row and
// whole-plane GEMM schedules; 1 and 2 threads; LLVM JIT and the loop-IR
// interpreter), the pass only rewriting eligible convs and choosing by plane
// size, and fused relu + residual add through the driver.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <regex>

#include "engine/codegen/llvm/llvm_codegen.h"
#include "engine/core/error.h"
#include "engine/driver/driver.h"
#include "engine/graph/passes/convert_layout.h"
#include "engine/graph/passes/graph_rewrite.h"
#include "engine/graph/passes/winograd.h"
#include "engine/tir/printer.h"
#include "engine/topi/compute/winograd.h"
#include "tests/engine/graph/passes/passes_test_util.h"

namespace tessera {
namespace {

using passes::testing::count_op;
using passes::testing::input;
using passes::testing::node;
using runtime::NDArray;

std::vector<float> floats(const NDArray& a) {
    return std::vector<float>(a.data<float>(), a.data<float>() + a.num_elements());
}

int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

struct Case {
    int64_t C, H, W, K, pad;
    int64_t OH() const { return H + 2 * pad - 2; }
    int64_t OW() const { return W + 2 * pad - 2; }
};

// NCHW (C, H, W) -> blocked (C/b, H, W, b), zeros in the padded channels.
std::vector<float> pack(const std::vector<float>& x, int64_t C, int64_t H, int64_t W, int64_t b) {
    std::vector<float> p(size_t(cdiv(C, b) * H * W * b), 0.f);
    for (int64_t c = 0; c < C; ++c)
        for (int64_t i = 0; i < H * W; ++i) p[size_t(((c / b) * H * W + i) * b + c % b)] = x[size_t(c * H * W + i)];
    return p;
}

// Naive 3x3 conv in double precision, NCHW, batch 1.
std::vector<double> naive_conv(const Case& p, const std::vector<float>& x,
                               const std::vector<float>& w, const std::vector<float>& bias) {
    std::vector<double> y(size_t(p.K * p.OH() * p.OW()));
    for (int64_t k = 0; k < p.K; ++k)
        for (int64_t oh = 0; oh < p.OH(); ++oh)
            for (int64_t ow = 0; ow < p.OW(); ++ow) {
                double acc = bias.empty() ? 0.0 : bias[size_t(k)];
                for (int64_t c = 0; c < p.C; ++c)
                    for (int64_t r = 0; r < 3; ++r)
                        for (int64_t s = 0; s < 3; ++s) {
                            int64_t h = oh + r - p.pad, ww = ow + s - p.pad;
                            if (h < 0 || h >= p.H || ww < 0 || ww >= p.W) continue;
                            acc += double(x[size_t((c * p.H + h) * p.W + ww)]) *
                                   w[size_t(((k * p.C + c) * 3 + r) * 3 + s)];
                        }
                y[size_t((k * p.OH() + oh) * p.OW() + ow)] = acc;
            }
    return y;
}

double worst_error(const std::vector<float>& got, const std::vector<float>& want) {
    EXPECT_EQ(got.size(), want.size());
    double worst = 0;
    for (size_t i = 0; i < std::min(got.size(), want.size()); ++i)
        worst = std::max(worst, std::fabs(double(got[i]) - want[i]) / (1.0 + std::fabs(want[i])));
    return worst;
}

// One nn.conv2d_winograd_NCHWc node (weights transformed by the library
// function the pass uses) vs the naive conv, JIT-compiled and interpreted.
void check_op(const Case& p, int64_t tile, int64_t ib, int64_t ob, int threads, bool bias,
              bool interpret = true) {
    SCOPED_TRACE("C=" + std::to_string(p.C) + " H=" + std::to_string(p.H) + " W=" +
                 std::to_string(p.W) + " K=" + std::to_string(p.K) + " tile=" +
                 std::to_string(tile) + " threads=" + std::to_string(threads));
    NDArray x = runtime::random_ndarray(passes::testing::f32({p.C, p.H, p.W}), 31);
    NDArray w = runtime::random_ndarray(passes::testing::f32({p.K, p.C, 3, 3}), 32);
    NDArray b = runtime::random_ndarray(passes::testing::f32({p.K}), 33);
    std::vector<float> bv = bias ? floats(b) : std::vector<float>{};
    graph::Graph g;
    const int64_t ICo = cdiv(p.C, ib), OCo = cdiv(p.K, ob), a = tile + 2;
    int xi = input(g, "x", {1, ICo, p.H, p.W, ib});
    std::vector<float> packed = passes::pack_conv2d_weight(floats(w), p.K, p.C, 3, 3, ib, ob);
    int u = passes::add_float_constant(
        g, "u", {a, a, OCo, ICo, ib, ob},
        topi::winograd_transform_weight(packed, OCo, ICo, ib, ob, tile));
    std::vector<int> ins = {xi, u};
    if (bias) {
        std::vector<float> bp = bv;
        bp.resize(size_t(OCo * ob), 0.f);
        ins.push_back(passes::add_float_constant(g, "b", {OCo, ob}, bp));
    }
    int y = node(g, "nn.conv2d_winograd_NCHWc", "wino", ins,
                 {{"tile", tile}, {"padding", std::vector<int64_t>{p.pad, p.pad, p.pad, p.pad}}});
    g.outputs = {y};
    EXPECT_EQ(g.values[size_t(y)].type.shape,
              std::vector<int64_t>({1, OCo, p.OH(), p.OW(), ob}));
    std::vector<float> xp = pack(floats(x), p.C, p.H, p.W, ib);
    NDArray xb = NDArray::from_bytes(g.values[size_t(xi)].type, xp.data(), xp.size() * 4);
    std::vector<double> ref = naive_conv(p, floats(x), floats(w), bv);
    std::vector<float> want(ref.begin(), ref.end());
    want = pack(want, p.K, p.OH(), p.OW(), ob);
    // F(4,3)'s larger transform constants lose a few more bits.
    // Rounding grows with the reduction length (sqrt of 9 C terms).
    const double tol = (tile == 2 ? 2e-5 : 1e-4) * std::max(1.0, std::sqrt(double(p.C) / 16.0));
    driver::BuildOptions o;
    o.threads = threads;
    auto model = driver::build(g, o);
    EXPECT_LT(worst_error(floats(model->run({xb})[0]), want), tol) << "LLVM JIT";
    if (!interpret) return;
    EXPECT_LT(worst_error(floats(driver::interpret_graph(g, {xb})[0]), want), tol)
        << "interpreter";
}

TEST(WinogradOp, F2OddPlaneChannelsNotFillingABlockWithBias) {
    check_op({5, 9, 11, 7, 1}, 2, 4, 8, 1, true);
}

TEST(WinogradOp, F2TwoThreadsNoPaddingNoBias) {
    const int64_t b = codegen::host_vector_lanes();
    check_op({b + 3, 13, 10, 2 * b, 0}, 2, b, b, 0, false);
}

TEST(WinogradOp, F4OddPlaneTwoThreads) {
    const int64_t b = codegen::host_vector_lanes();
    check_op({b, 11, 9, 2 * b - 1, 1}, 4, b, b, 0, true);
}

// 256 -> 256 channels: the transformed weight (4 MiB) takes the schedule's
// whole-plane GEMM (as ResNet-18's 14x14 layers), at 1 and 2 threads.
TEST(WinogradOp, F2WholePlaneGemmOfLargeWeights) {
    const int64_t b = codegen::host_vector_lanes();
    check_op({256, 9, 7, 256, 1}, 2, b, b, 1, true, false);
    check_op({250, 8, 9, 256, 0}, 2, b, b, 0, false, false);
}

TEST(WinogradOp, RejectsAWeightOfTheWrongTile) {
    graph::Graph g;
    int x = input(g, "x", {1, 1, 8, 8, 4});
    int u = passes::testing::constant(g, "u", {4, 4, 1, 1, 4, 4}, 1);
    EXPECT_THROW(node(g, "nn.conv2d_winograd_NCHWc", "w", {x, u}, {{"tile", int64_t(4)}}),
                 UserError);
}

// The transform matrices compute a 1-D 3-tap correlation exactly (up to
// rounding): y = A^T [(G g) .* (B^T d)].
TEST(WinogradMatrices, ComputeOneDimensionalCorrelation) {
    for (int64_t m : {2, 4}) {
        const topi::WinogradMatrices& W = topi::winograd_matrices(m);
        const int a = W.alpha;
        std::vector<double> d(static_cast<size_t>(a)), g = {0.3, -1.2, 0.7};
        for (int i = 0; i < a; ++i) d[size_t(i)] = std::sin(1.0 + i);
        std::vector<double> prod(static_cast<size_t>(a));
        for (int e = 0; e < a; ++e) {
            double gd = 0, bd = 0;
            for (int r = 0; r < 3; ++r) gd += W.G[size_t(e * 3 + r)] * g[size_t(r)];
            for (int r = 0; r < a; ++r) bd += W.BT[size_t(e * a + r)] * d[size_t(r)];
            prod[size_t(e)] = gd * bd;
        }
        for (int i = 0; i < m; ++i) {
            double y = 0, want = 0;
            for (int e = 0; e < a; ++e) y += W.AT[size_t(i * a + e)] * prod[size_t(e)];
            for (int r = 0; r < 3; ++r) want += d[size_t(i + r)] * g[size_t(r)];
            EXPECT_NEAR(y, want, 1e-12) << "m=" << m << " i=" << i;
        }
    }
    EXPECT_THROW(topi::winograd_matrices(3), UserError);
}

// An NCHW conv with constant weights of `k` x `k`, stride `stride`.
int conv(graph::Graph& g, int x, const std::string& name, int64_t c, int64_t k, int64_t kernel,
         int64_t stride, uint64_t seed) {
    int w = passes::testing::constant(g, name + "_w", {k, c, kernel, kernel}, seed);
    int b = passes::testing::constant(g, name + "_b", {k}, seed + 1);
    const int64_t p = kernel / 2;
    return node(g, "nn.conv2d", name, {x, w, b},
                {{"strides", std::vector<int64_t>{stride, stride}},
                 {"padding", std::vector<int64_t>{p, p, p, p}}});
}

// The pass takes only 3x3 stride-1 convs with big enough output planes.
TEST(WinogradPass, RewritesOnlyEligibleConvs) {
    graph::Graph g;
    int x = input(g, "x", {1, 16, 30, 29});
    int a = conv(g, x, "c3", 16, 8, 3, 1, 10);    // 30x29, 16 input channels: rewritten
    int s2 = conv(g, a, "s2", 8, 8, 3, 2, 20);    // stride 2
    int one = conv(g, a, "k1", 8, 8, 1, 1, 30);   // 1x1
    int s4 = conv(g, s2, "s4", 8, 8, 3, 2, 25);   // stride 2: 8x8
    int small = conv(g, s4, "sm", 8, 8, 3, 1, 40);  // 8x8 < 14x14
    g.outputs = {one, small};
    driver::BuildOptions o;
    o.opt_level = 3;
    graph::Graph opt = driver::optimize(g, o);
    EXPECT_EQ(count_op(opt, "nn.conv2d_winograd_NCHWc"), 1);
    EXPECT_EQ(count_op(opt, "nn.conv2d_NCHWc"), 4);
    graph::Graph lowered = passes::winograd_rewrite(opt, 2, 1);  // every plane size
    EXPECT_EQ(count_op(lowered, "nn.conv2d_winograd_NCHWc"), 2);
    // Interpreted: errors within fp32 rounding of the outputs' scale (the
    // transforms reassociate sums, so near-zero outputs differ relatively more).
    std::vector<NDArray> in = driver::random_inputs(g, 3);
    std::vector<NDArray> want = driver::interpret_graph(g, in);
    std::vector<NDArray> got = driver::interpret_graph(lowered, in);
    ASSERT_EQ(got.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
        double scale = 0, err = 0;
        for (int64_t k = 0; k < want[i].num_elements(); ++k) {
            scale = std::max(scale, std::fabs(double(want[i].data<float>()[k])));
            err = std::max(err, std::fabs(double(got[i].data<float>()[k]) -
                                          want[i].data<float>()[k]));
        }
        EXPECT_GT(scale, 0.0);
        EXPECT_LT(err, 1e-5 * scale) << "output " << i << ": max abs err " << err;
    }
}

// One FLOP count per op, from its definition: the blocked layout's padded
// channels and Winograd's transforms are not work the model asks for, so the
// optimized graph counts what the unoptimized one counts; the work a Winograd
// kernel executes is counted apart (node_work_flops, for the roofline).
TEST(WinogradPass, FlopsCountTheOpsDefinitionAfterLayoutAndWinograd) {
    graph::Graph g;
    int x = input(g, "x", {1, 4, 20, 20});
    int a = conv(g, x, "c1", 4, 10, 3, 1, 90);  // 4 -> 10: channels pad to the block
    int r = node(g, "nn.relu", "r1", {a});
    int b = conv(g, r, "c2", 10, 12, 3, 1, 91);  // 10 -> 12 on 20x20: Winograd
    g.outputs = {node(g, "nn.max_pool2d", "p", {b},
                      {{"kernel", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}})};
    auto total = [](const graph::Graph& gr, bool work) {
        double sum = 0;
        for (const graph::Node& n : gr.nodes)
            sum += work ? graph::node_work_flops(gr, n) : graph::node_flops(gr, n);
        return sum;
    };
    const double defined = total(g, false);
    EXPECT_DOUBLE_EQ(defined,
                     2.0 * 10 * 400 * 36 + 4000 + 4000 + 2.0 * 12 * 400 * 90 + 4800 + 1200 * 4);
    driver::BuildOptions o;
    graph::Graph opt = driver::optimize(g, o);
    ASSERT_EQ(count_op(opt, "nn.conv2d_winograd_NCHWc"), 1) << graph::print(opt);
    EXPECT_EQ(count_op(opt, "nn.conv2d_NCHWc"), 1);
    EXPECT_DOUBLE_EQ(total(opt, false), defined) << graph::print(opt);
    EXPECT_NE(total(opt, true), defined);  // the Winograd kernel's own work
    EXPECT_GT(total(opt, true), 0.0);
    EXPECT_DOUBLE_EQ(driver::build(g, o)->total_flops, defined);
}

// The default rule by plane size, at ResNet-18's planes: 14x14 (and up) is
// rewritten with F(2,3), 7x7 stays a direct conv.
TEST(WinogradPass, ChoosesByPlaneSize) {
    EXPECT_EQ(passes::kWinogradTile, 2);
    for (int64_t side : {56, 28, 15, 14, 13, 7}) {
        SCOPED_TRACE("plane " + std::to_string(side));
        graph::Graph g;
        int x = input(g, "x", {1, 16, side, side});
        g.outputs = {conv(g, x, "c", 16, 4, 3, 1, 70)};
        driver::BuildOptions o;
        graph::Graph opt = driver::optimize(g, o);
        const int want = side * side >= 14 * 14 ? 1 : 0;
        EXPECT_EQ(count_op(opt, "nn.conv2d_winograd_NCHWc"), want);
        EXPECT_EQ(count_op(opt, "nn.conv2d_NCHWc"), 1 - want);
        for (const graph::Node& n : opt.nodes)
            if (n.op == "nn.conv2d_winograd_NCHWc") { EXPECT_EQ(n.attr_int("tile", 0), 2); }
    }
}

// The choice by cost: Winograd only where the transformed GEMM's reduction
// (the input channels) is long enough to pay for the transforms; the output
// channel count does not change it. The bundled example's convs (3->8, 8->16
// on 14x14+ planes) stay direct.
TEST(WinogradPass, ChoosesByCostModel) {
    struct Case { int64_t ic, oc; bool winograd; };
    for (Case c : {Case{3, 8, false}, Case{3, 64, false}, Case{8, 16, false}, Case{4, 256, false},
                   Case{10, 10, true}, Case{16, 16, true}, Case{64, 128, true}}) {
        SCOPED_TRACE(std::to_string(c.ic) + "->" + std::to_string(c.oc));
        EXPECT_EQ(passes::winograd_pays_off(c.ic, c.oc, 28 * 28, 2), c.winograd);
        EXPECT_FALSE(passes::winograd_pays_off(c.ic, c.oc, 7 * 7, 2));
        graph::Graph g;
        int x = input(g, "x", {1, c.ic, 28, 28});
        g.outputs = {conv(g, x, "c", c.ic, c.oc, 3, 1, 80)};
        graph::Graph opt = driver::optimize(g, driver::BuildOptions{});
        EXPECT_EQ(count_op(opt, "nn.conv2d_winograd_NCHWc"), c.winograd ? 1 : 0);
    }
}

// relu(conv(x) + bias + residual) through the driver at -O3: the relu and
// the residual add fuse into the Winograd kernel; outputs match the direct
// conv's build at 1 and 2 threads.
TEST(WinogradPass, FusedReluAndResidualAddMatchTheDirectConv) {
    graph::Graph g;
    int x = input(g, "x", {1, 12, 29, 30});
    int c1 = conv(g, x, "c1", 12, 10, 3, 1, 50);
    int r1 = node(g, "nn.relu", "r1", {c1});
    int c2 = conv(g, r1, "c2", 10, 10, 3, 1, 60);
    int sum = node(g, "add", "res", {c2, r1});
    int y = node(g, "nn.relu", "r2", {sum});
    g.outputs = {y};
    std::vector<NDArray> in = driver::random_inputs(g, 7);
    for (int threads : {1, 0}) {
        driver::BuildOptions direct;
        direct.threads = threads;
        direct.opt_level = 3;
        direct.passes = {"-winograd"};
        driver::BuildOptions wino = direct;
        wino.passes = {};
        auto a = driver::build(g, direct);
        auto b = driver::build(g, wino);
        EXPECT_EQ(count_op(b->graph, "nn.conv2d_winograd_NCHWc"), 2);
        std::vector<NDArray> want = a->run(in), got = b->run(in);
        runtime::Difference d = runtime::compare(got[0], want[0]);
        EXPECT_TRUE(runtime::allclose(got[0], want[0], 1e-4, 1e-5))
            << "threads=" << threads << " max abs " << d.max_abs << " max rel " << d.max_rel;
        // The epilogues fuse as into the direct conv: the same kernel count.
        EXPECT_EQ(a->kernels.size(), b->kernels.size());
    }
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

// The scheduled kernel of ResNet-18's 56x56 64-channel layer: its GEMM is
// broadcast FMAs into register accumulators (TESSERA_WINOGRAD_DUMP=path
// writes the loop IR and the assembly).
TEST(WinogradSchedule, GemmIsBroadcastFma) {
    const int lanes = codegen::host_vector_lanes();
    if (lanes < 8) GTEST_SKIP() << "no AVX on this host";
    graph::Graph g;
    int x = input(g, "x", {1, 64 / lanes, 56, 56, lanes});
    int u = passes::testing::constant(g, "u", {4, 4, 64 / lanes, 64 / lanes, lanes, lanes}, 5);
    int y = node(g, "nn.conv2d_winograd_NCHWc", "wino", {x, u},
                 {{"tile", int64_t(2)}, {"padding", std::vector<int64_t>{1, 1, 1, 1}}});
    int r = node(g, "nn.relu", "relu", {y});
    g.outputs = {r};
    driver::BuildOptions o;
    o.threads = 1;
    auto model = driver::build(g, o);
    ASSERT_EQ(model->kernels.size(), 1u);
    codegen::LlvmOptions lo;
    lo.threads = 1;
    std::string as = codegen::emit_assembly(model->kernels, lo);
    if (const char* dump = std::getenv("TESSERA_WINOGRAD_DUMP")) {
        std::ofstream(dump) << as;
        std::ofstream(std::string(dump) + ".tir") << tir::print(model->kernels[0]);
    }
    // Any FMA form: LLVM picks 231 or 213 by register allocation (213 on Zen).
    EXPECT_TRUE(std::regex_search(as, std::regex("vfmadd(132|213|231)ps")));
}

// One channel block in and out (C = K = the vector width): compute_at makes
// no loop for the channel-block dimensions of extent 1, and the rule found
// its loops by position, failed, and left the conv unscheduled (10-19x
// slower than the direct conv on a 16-lane machine, where every conv of up
// to 16 channels is like this).
TEST(WinogradSchedule, OneChannelBlockIsScheduledToo) {
    const int lanes = codegen::host_vector_lanes();
    if (lanes < 8) GTEST_SKIP() << "no AVX on this host";
    check_op({lanes, 14, 14, lanes, 1}, 2, lanes, lanes, 1, true, /*interpret=*/false);
    graph::Graph g;
    int x = input(g, "x", {1, 1, 14, 14, lanes});
    int u = passes::testing::constant(g, "u", {4, 4, 1, 1, lanes, lanes}, 5);
    int y = node(g, "nn.conv2d_winograd_NCHWc", "wino", {x, u},
                 {{"tile", int64_t(2)}, {"padding", std::vector<int64_t>{1, 1, 1, 1}}});
    g.outputs = {node(g, "nn.relu", "relu", {y})};
    driver::BuildOptions o;
    o.threads = 1;
    o.jit = false;
    auto model = driver::build(g, o);
    ASSERT_EQ(model->kernels.size(), 1u);
    const std::string ir = tir::print(model->kernels[0]);
    size_t vectorized = 0;
    for (size_t at = ir.find("T.vectorized"); at != std::string::npos; at = ir.find("T.vectorized", at + 1))
        ++vectorized;
    EXPECT_GE(vectorized, 3u) << ir;  // V's transform, M's GEMM, the output transform
}

}  // namespace
}  // namespace tessera
