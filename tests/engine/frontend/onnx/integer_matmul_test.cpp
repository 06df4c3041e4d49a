// MatMulInteger as an integer product of packed bytes (nn.matmul_u8i8):
// every combination of int8/uint8 operands and zero points (none, scalar,
// per row of A / per column of B), constant and runtime B, batches, K not a
// multiple of 4 and GEMMs large enough for the packed, cache-blocked rule,
// checked exactly against an int64 reference on random full-range bytes.
#include <algorithm>

#include "engine/codegen/llvm/llvm_codegen.h"
#include "engine/tir/functor.h"
#include "engine/tir/printer.h"
#include "engine/tir/passes/pass_manager.h"
#include "tests/engine/frontend/onnx/index_test_util.h"

namespace tessera::index_test {
namespace {

using graph::DType;

template <typename T>
NDArray random_bytes(DType t, const Ints& shape, uint32_t seed) {
    NDArray a = NDArray::empty({t, shape});
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> d(t == DType::UInt8 ? 0 : -128,
                                         t == DType::UInt8 ? 255 : 127);
    for (int64_t i = 0; i < a.num_elements(); ++i) a.data<T>()[i] = T(d(rng));
    return a;
}

NDArray bytes(DType t, const Ints& shape, uint32_t seed) {
    return t == DType::UInt8 ? random_bytes<uint8_t>(t, shape, seed)
                             : random_bytes<int8_t>(t, shape, seed);
}

int64_t byte_at(const NDArray& a, int64_t i) {
    return a.dtype() == DType::UInt8 ? int64_t(a.data<uint8_t>()[i]) : int64_t(a.data<int8_t>()[i]);
}

struct Case {
    DType at, bt;
    Ints a_shape, b_shape;  // A (.., M, K), B (.., K, N)
    int zero_points;        // 0 none, 1 scalar, 2 per row of A and per column of B
    bool b_constant;
};

std::string describe(const Case& c) {
    auto name = [](DType t) { return t == DType::UInt8 ? "uint8" : "int8"; };
    std::string s = std::string("A ") + name(c.at) + " B " + name(c.bt) + " K " +
                    std::to_string(c.a_shape.back()) + " zero points " +
                    std::to_string(c.zero_points) + (c.b_constant ? " constant B" : " runtime B");
    return s;
}

void check(const Case& c, uint32_t seed) {
    SCOPED_TRACE(describe(c));
    const int64_t M = c.a_shape[c.a_shape.size() - 2], K = c.a_shape.back();
    const int64_t N = c.b_shape.back();
    const int64_t batch = c.a_shape.size() == 3 ? c.a_shape[0] : 1;
    const bool b_batched = c.b_shape.size() == 3;
    NDArray a = bytes(c.at, c.a_shape, seed), b = bytes(c.bt, c.b_shape, seed + 1);
    NDArray za = bytes(c.at, c.zero_points == 2 ? Ints{M} : Ints{}, seed + 2);
    NDArray zb = bytes(c.bt, c.zero_points == 2 ? Ints{N} : Ints{}, seed + 3);
    Ints out_shape = c.a_shape;
    out_shape.back() = N;
    OneNodeModel m("MatMulInteger", 10);
    m.input("A", c.at, c.a_shape);
    if (c.b_constant)
        m.constant("B", b);
    else
        m.input("B", c.bt, c.b_shape);
    if (c.zero_points) m.constant("za", za).constant("zb", zb);
    m.output("Y", DType::Int32, out_shape);
    graph::Graph g = m.load("matmulinteger");
    EXPECT_EQ(std::count_if(g.nodes.begin(), g.nodes.end(),
                            [](const graph::Node& n) { return n.op == "nn.matmul_u8i8"; }),
              1);
    std::vector<NDArray> in = {a};
    if (!c.b_constant) in.push_back(b);
    NDArray y = run(g, in).at(0);
    ASSERT_EQ(y.dtype(), DType::Int32);
    int64_t wrong = 0;
    for (int64_t p = 0; p < batch; ++p)
        for (int64_t i = 0; i < M; ++i)
            for (int64_t j = 0; j < N; ++j) {
                int64_t acc = 0;
                for (int64_t k = 0; k < K; ++k) {
                    const int64_t av =
                        byte_at(a, (p * M + i) * K + k) -
                        (c.zero_points ? byte_at(za, c.zero_points == 2 ? i : 0) : 0);
                    const int64_t bv =
                        byte_at(b, ((b_batched ? p : 0) * K + k) * N + j) -
                        (c.zero_points ? byte_at(zb, c.zero_points == 2 ? j : 0) : 0);
                    acc += av * bv;
                }
                const int32_t got = y.data<int32_t>()[(p * M + i) * N + j];
                if (got != acc && wrong++ < 5)
                    ADD_FAILURE() << "Y[" << p << ", " << i << ", " << j << "] = " << got
                                  << ", expected " << acc;
            }
    EXPECT_EQ(wrong, 0);
}

TEST(IntegerMatMul, EveryOperandTypeAndZeroPointIsExact) {
    uint32_t seed = 100;
    for (DType at : {DType::UInt8, DType::Int8})
        for (DType bt : {DType::UInt8, DType::Int8})
            for (int zp : {0, 1, 2})
                for (bool constant : {true, false})
                    check({at, bt, {13, 37}, {37, 45}, zp, constant}, seed += 4);
}

TEST(IntegerMatMul, BatchesAndLargePackedGemmsAreExact) {
    // B one matrix for every batch (a transformer's weights) and per batch.
    check({DType::UInt8, DType::Int8, {2, 9, 70}, {70, 33}, 1, true}, 7);
    check({DType::Int8, DType::UInt8, {3, 9, 70}, {3, 70, 33}, 2, false}, 8);
    // Large enough for cache blocking and B packed in panels (at compile time
    // when constant), K 515 words of which the last is padded.
    check({DType::UInt8, DType::Int8, {96, 2059}, {2059, 160}, 1, true}, 9);
    check({DType::Int8, DType::UInt8, {2, 64, 1030}, {1030, 96}, 2, true}, 10);
    check({DType::UInt8, DType::UInt8, {64, 512}, {512, 128}, 1, false}, 11);
}

struct ConvCase {
    DType xt, wt;
    Ints x_shape, w_shape;  // (N, C, H, W), (OC, C, KH, KW)
    int64_t stride, pad, dilation;
    int64_t zx, zw;  // constant zero points (zw: 0 for int8, 128 for uint8 weights)
};

void check_conv(const ConvCase& c, uint32_t seed) {
    SCOPED_TRACE("conv x " + std::string(c.xt == DType::UInt8 ? "uint8" : "int8") + " w " +
                 (c.wt == DType::UInt8 ? "uint8" : "int8") + " stride " + std::to_string(c.stride) +
                 " pad " + std::to_string(c.pad) + " dilation " + std::to_string(c.dilation));
    const int64_t N = c.x_shape[0], C = c.x_shape[1], H = c.x_shape[2], W = c.x_shape[3];
    const int64_t OC = c.w_shape[0], KH = c.w_shape[2], KW = c.w_shape[3];
    const int64_t OH = (H + 2 * c.pad - c.dilation * (KH - 1) - 1) / c.stride + 1;
    const int64_t OW = (W + 2 * c.pad - c.dilation * (KW - 1) - 1) / c.stride + 1;
    NDArray x = bytes(c.xt, c.x_shape, seed), w = bytes(c.wt, c.w_shape, seed + 1);
    auto scalar = [](DType t, int64_t v) {
        NDArray a = NDArray::empty({t, {}});
        if (t == DType::UInt8)
            a.data<uint8_t>()[0] = uint8_t(v);
        else
            a.data<int8_t>()[0] = int8_t(v);
        return a;
    };
    OneNodeModel m("ConvInteger", 10);
    m.input("x", c.xt, c.x_shape).constant("w", w);
    m.constant("zx", scalar(c.xt, c.zx)).constant("zw", scalar(c.wt, c.zw));
    m.output("y", DType::Int32, {N, OC, OH, OW});
    m.attr("strides", Ints{c.stride, c.stride})
        .attr("pads", Ints{c.pad, c.pad, c.pad, c.pad})
        .attr("dilations", Ints{c.dilation, c.dilation});
    graph::Graph g = m.load("convinteger");
    EXPECT_EQ(std::count_if(g.nodes.begin(), g.nodes.end(),
                            [](const graph::Node& n) { return n.op == "nn.im2col_int8x4"; }),
              1);
    NDArray y = run(g, {x}).at(0);
    ASSERT_EQ(y.dtype(), DType::Int32);
    int64_t wrong = 0;
    for (int64_t n = 0; n < N; ++n)
        for (int64_t o = 0; o < OC; ++o)
            for (int64_t i = 0; i < OH; ++i)
                for (int64_t j = 0; j < OW; ++j) {
                    int64_t acc = 0;
                    for (int64_t ch = 0; ch < C; ++ch)
                        for (int64_t r = 0; r < KH; ++r)
                            for (int64_t q = 0; q < KW; ++q) {
                                const int64_t h = i * c.stride - c.pad + r * c.dilation;
                                const int64_t v = j * c.stride - c.pad + q * c.dilation;
                                if (h < 0 || h >= H || v < 0 || v >= W) continue;  // centered 0
                                acc += (byte_at(x, ((n * C + ch) * H + h) * W + v) - c.zx) *
                                       (byte_at(w, ((o * C + ch) * KH + r) * KW + q) - c.zw);
                            }
                    const int32_t got = y.data<int32_t>()[((n * OC + o) * OH + i) * OW + j];
                    if (got != acc && wrong++ < 5)
                        ADD_FAILURE() << "y[" << n << ", " << o << ", " << i << ", " << j
                                      << "] = " << got << ", expected " << acc;
                }
    EXPECT_EQ(wrong, 0);
}

TEST(IntegerConv, WindowsTimesWeightsAsAnIntegerGemmAreExact) {
    // K = 5 * 3 * 3 = 45 (the last word padded), padding filled with the zero point.
    check_conv({DType::UInt8, DType::Int8, {1, 5, 9, 11}, {7, 5, 3, 3}, 1, 1, 1, 37, 0}, 1);
    check_conv({DType::Int8, DType::Int8, {2, 5, 9, 11}, {7, 5, 3, 3}, 2, 1, 1, -20, 0}, 2);
    check_conv({DType::UInt8, DType::UInt8, {1, 6, 12, 10}, {9, 6, 3, 3}, 1, 2, 2, 0, 128}, 3);
    check_conv({DType::Int8, DType::UInt8, {2, 16, 8, 8}, {32, 16, 1, 1}, 1, 0, 1, 5, 128}, 4);
    // A ResNet-sized layer: 64 channels 3x3 on 28x28 (packed, blocked GEMM).
    check_conv({DType::UInt8, DType::Int8, {1, 64, 28, 28}, {64, 64, 3, 3}, 1, 1, 1, 128, 0}, 5);
}

TEST(IntegerConv, ALongProductOnASmallPlaneRunsInVectorsOfOutputChannels) {
    // 256 channels 3 x 3 on a 7 x 7 plane (K 2304 bytes, 49 columns: three
    // vectors and a lane): with AVX-512 the GEMM's vectors run along the
    // output channels, 4 (64 channels) or 3 (48) at a time, the weights in
    // panels and the accumulator transposed (transform_layout). Exact.
    check_conv({DType::UInt8, DType::Int8, {1, 256, 7, 7}, {64, 256, 3, 3}, 1, 1, 1, 128, 0}, 6);
    check_conv({DType::UInt8, DType::UInt8, {1, 256, 7, 7}, {48, 256, 3, 3}, 1, 1, 1, 3, 128}, 7);
    if (codegen::host_vector_lanes() < 16) GTEST_SKIP() << "the rule is for AVX-512 hosts";
    for (int threads : {1, 2}) {
        OneNodeModel m("ConvInteger", 10);
        m.input("x", DType::UInt8, {1, 256, 7, 7})
            .constant("w", bytes(DType::Int8, {64, 256, 3, 3}, 9));
        NDArray zx = NDArray::empty({DType::UInt8, {}});
        zx.data<uint8_t>()[0] = 128;
        m.constant("zx", zx).output("y", DType::Int32, {1, 64, 7, 7});
        m.attr("pads", Ints{1, 1, 1, 1});
        driver::BuildOptions o;
        o.threads = threads;
        auto model = driver::build(m.load("convinteger_7x7"), o);
        int transposed = 0;
        for (const driver::KernelSchedule& k : model->schedules)
            for (const schedule::Step& st : k.trace.steps)
                transposed += st.op == "transform_layout" && st.ints == std::vector<int64_t>{1, 0};
        EXPECT_EQ(transposed, 1) << threads << " threads";
    }
}

// The windows of a padded stride-1 integer conv are stored as vectors: the
// padding is a stage of its own, so a row of windows reads contiguous bytes
// of it (the clamped, guarded per-byte reads of the unpadded data stayed
// serial: ResNet-18's 64 x 56 x 56 windows took 2 ms, now 0.5).
// A 3 x 3 ConvInteger of `c` channels on an hw x hw plane, padding 1.
OneNodeModel padded_conv_integer(int64_t c, int64_t hw) {
    OneNodeModel m("ConvInteger", 10);
    m.input("x", DType::UInt8, {1, c, hw, hw}).constant("w", bytes(DType::Int8, {c, c, 3, 3}, 9));
    m.output("y", DType::Int32, {1, c, hw, hw});
    m.attr("pads", Ints{1, 1, 1, 1});
    return m;
}

// The vector stores into the buffer named `buffer` in `f` as compiled.
int vector_stores(const tir::PrimFunc& f, const std::string& buffer) {
    int n = 0;
    tir::post_order_visit(tir::lower_for_codegen(f)->body, [&](const tir::Object* o) {
        if (o->node_type != tir::NodeType::BufferStore) return;
        const auto* st = static_cast<const tir::BufferStore*>(o);
        n += st->buffer->name == buffer && st->value.dtype().is_vector();
    });
    return n;
}

TEST(IntegerConv, PaddedWindowsAreStoredAsVectors) {
    OneNodeModel m("ConvInteger", 10);
    m.input("x", DType::UInt8, {1, 16, 14, 14}).constant("w", bytes(DType::Int8, {16, 16, 3, 3}, 9));
    NDArray zx = NDArray::empty({DType::UInt8, {}});
    zx.data<uint8_t>()[0] = 128;
    m.constant("zx", zx).output("y", DType::Int32, {1, 16, 14, 14});
    m.attr("pads", Ints{1, 1, 1, 1});
    auto model = driver::build(m.load("convinteger_windows"));
    int kernels = 0;
    for (const tir::PrimFunc& f : model->kernels) {
        const tir::Buffer& out = f->params.back();
        if (out->name != "T_im2col_int8x4") continue;
        ++kernels;
        EXPECT_GT(vector_stores(f, out->name), 0) << tir::print(f);
    }
    EXPECT_EQ(kernels, 1);
}

TEST(IntegerConv, ThePaddedCopyOfASmallPlaneIsStoredInVectorRows) {
    // A 7 x 7 plane padded to 9 x 9 (ResNet-18's last stage): the padded
    // copy is stored a row at a time in vectors, its edges split off, not one
    // byte at a time through a div/mod of one fused loop (0.085 -> 0.02 ms
    // per im2col kernel of 512 channels). Exact results: the tests above.
    for (int threads : {1, 2}) {
        OneNodeModel m = padded_conv_integer(32, 7);
        driver::BuildOptions o;
        o.threads = threads;
        auto model = driver::build(m.load("convinteger_small_plane"), o);
        int pads = 0;
        for (const tir::PrimFunc& f : model->kernels) {
            if (f->params.back()->name != "T_im2col_int8x4") continue;
            const int padded = vector_stores(f, "T_im2col_pad");
            pads += padded > 0;
            EXPECT_GT(padded, 0) << tir::print(f);
        }
        EXPECT_EQ(pads, 1) << threads << " threads";
        std::vector<NDArray> in = driver::random_inputs(model->graph, 3);
        std::vector<NDArray> got = model->run(in), want = driver::interpret_graph(model->graph, in);
        ASSERT_EQ(got.size(), 1u);
        EXPECT_TRUE(runtime::allclose(got[0], want[0], 0, 0)) << threads << " threads";
    }
}

// Each word of the windows (four bytes b0 | b1 << 8 | b2 << 16 | b3 << 24)
// is written as an interleaving shuffle of the four byte vectors
// (codegen_llvm_bytes.cpp), not as zero-extensions, shifts and ors (per 8
// words on AVX2: 4 vpmovzxbd, 3 vpslld, 3 vpor; now unpack instructions,
// the loop's vector instructions 70 -> 30 per 56 words). The exact results
// are checked by WindowsTimesWeightsAsAnIntegerGemmAreExact.
TEST(IntegerConv, WindowBytesArePackedIntoWordsByShuffles) {
    OneNodeModel m = padded_conv_integer(16, 14);
    driver::BuildOptions o;
    o.jit = false;
    auto model = driver::build(m.load("convinteger_words"), o);
    int kernels = 0;
    for (const tir::PrimFunc& f : model->kernels) {
        if (f->params.back()->name != "T_im2col_int8x4") continue;
        ++kernels;
        const std::string ir = codegen::emit_llvm_ir({f});
        EXPECT_NE(ir.find("shufflevector"), std::string::npos) << ir;
        EXPECT_EQ(ir.find("shl <"), std::string::npos) << ir;
    }
    EXPECT_EQ(kernels, 1);
}

}  // namespace
}  // namespace tessera::index_test
