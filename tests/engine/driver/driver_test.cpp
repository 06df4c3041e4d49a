// Driver build/run on hand-built graphs: the JIT result must match both the
// loop-IR interpreter and plain C++ loops on random, non-zero data.
#include "engine/driver/driver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "engine/core/error.h"
#include "engine/graph/op_registry.h"
#include "engine/tir/printer.h"

namespace tessera::driver {
namespace {

using graph::DType;
using graph::TensorType;
using runtime::NDArray;

TensorType f32(std::vector<int64_t> shape) { return TensorType{DType::Float32, std::move(shape)}; }

int add_input(graph::Graph& g, const std::string& name, TensorType t) {
    graph::Value v;
    v.name = name;
    v.type = std::move(t);
    int id = g.add_value(v);
    g.inputs.push_back(id);
    return id;
}

int add_constant(graph::Graph& g, const std::string& name, TensorType t, uint64_t seed) {
    NDArray a = runtime::random_ndarray(t, seed);
    auto data = std::make_shared<graph::ConstantData>();
    data->bytes.resize(a.num_bytes());
    std::memcpy(data->bytes.data(), a.raw(), a.num_bytes());
    graph::Value v;
    v.name = name;
    v.type = std::move(t);
    v.constant = data;
    return g.add_value(v);
}

// Adds a node whose single output type comes from the op's shape rule.
int add_node(graph::Graph& g, const std::string& op, const std::string& name,
             std::vector<int> inputs, std::map<std::string, graph::AttrValue> attrs = {}) {
    graph::Node n;
    n.op = op;
    n.name = name;
    n.inputs = std::move(inputs);
    n.attrs = std::move(attrs);
    std::vector<TensorType> types = graph::infer_types(g, n);
    graph::Value out;
    out.name = name + "_out";
    out.type = types.at(0);
    n.outputs = {g.add_value(out)};
    g.add_node(n);
    return n.outputs[0];
}

NDArray constant_of(const graph::Graph& g, int v) {
    const auto& val = g.values[size_t(v)];
    return NDArray::from_bytes(val.type, val.constant->bytes.data(), val.constant->bytes.size());
}

// conv2d (3x3, stride 2, pad 1, bias) -> relu.
graph::Graph conv_relu_graph() {
    graph::Graph g;
    g.name = "conv_relu";
    int x = add_input(g, "x", f32({1, 3, 9, 9}));
    int w = add_constant(g, "w", f32({4, 3, 3, 3}), 21);
    int b = add_constant(g, "b", f32({4}), 22);
    int c = add_node(g, "nn.conv2d", "conv", {x, w, b},
                     {{"strides", std::vector<int64_t>{2, 2}},
                      {"padding", std::vector<int64_t>{1, 1, 1, 1}},
                      {"dilation", std::vector<int64_t>{1, 1}},
                      {"groups", int64_t(1)}});
    int y = add_node(g, "nn.relu", "relu", {c});
    g.outputs = {y};
    graph::verify(g);
    return g;
}

// Plain loops for conv_relu_graph.
NDArray reference_conv_relu(const graph::Graph& g, const NDArray& x) {
    NDArray w = constant_of(g, 1), b = constant_of(g, 2);
    NDArray y = NDArray::empty(f32({1, 4, 5, 5}));
    const float* X = x.data<float>();
    const float* W = w.data<float>();
    for (int k = 0; k < 4; ++k)
        for (int oh = 0; oh < 5; ++oh)
            for (int ow = 0; ow < 5; ++ow) {
                double acc = b.data<float>()[k];
                for (int c = 0; c < 3; ++c)
                    for (int r = 0; r < 3; ++r)
                        for (int s = 0; s < 3; ++s) {
                            int ih = oh * 2 - 1 + r, iw = ow * 2 - 1 + s;
                            if (ih < 0 || ih >= 9 || iw < 0 || iw >= 9) continue;
                            acc +=
                                double(X[(c * 9 + ih) * 9 + iw]) * W[((k * 3 + c) * 3 + r) * 3 + s];
                        }
                y.data<float>()[(k * 5 + oh) * 5 + ow] = float(std::max(acc, 0.0));
            }
    return y;
}

// matmul (4x5 @ 5x3 constant) + broadcast bias input (3).
graph::Graph matmul_add_graph() {
    graph::Graph g;
    g.name = "matmul_add";
    int a = add_input(g, "a", f32({4, 5}));
    int bias = add_input(g, "bias", f32({3}));
    int b = add_constant(g, "b", f32({5, 3}), 31);
    int m = add_node(g, "nn.matmul", "matmul", {a, b});
    int y = add_node(g, "add", "add", {m, bias});
    g.outputs = {y};
    graph::verify(g);
    return g;
}

NDArray reference_matmul_add(const graph::Graph& g, const NDArray& a, const NDArray& bias) {
    NDArray b = constant_of(g, 2);
    NDArray y = NDArray::empty(f32({4, 3}));
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 3; ++j) {
            double acc = 0;
            for (int k = 0; k < 5; ++k)
                acc += double(a.data<float>()[i * 5 + k]) * b.data<float>()[k * 3 + j];
            y.data<float>()[i * 3 + j] = float(acc + bias.data<float>()[j]);
        }
    return y;
}

TEST(DriverBuild, ConvReluMatchesInterpreterAndLoops) {
    graph::Graph g = conv_relu_graph();
    std::vector<std::pair<int, int>> progress;
    BuildOptions unfused;  // -O0: one kernel per node (fusion is tested in tests/engine/passes)
    unfused.opt_level = 0;
    auto model = build(g, unfused, [&](int done, int total) { progress.emplace_back(done, total); });
    ASSERT_EQ(model->kernels.size(), 2u);
    ASSERT_EQ(model->executor->calls().size(), 2u);
    EXPECT_EQ(model->executor->calls()[0].nodes, std::vector<int>{0});
    EXPECT_GT(model->compile_seconds, 0.0);
    EXPECT_DOUBLE_EQ(model->total_flops,
                     graph::node_flops(g, g.nodes[0]) + graph::node_flops(g, g.nodes[1]));
    EXPECT_GT(model->total_flops, 2.0 * 4 * 25 * 27);
    ASSERT_FALSE(progress.empty());
    EXPECT_EQ(progress.back().first, progress.back().second);

    for (uint64_t seed : {1, 2}) {
        std::vector<NDArray> in = random_inputs(g, seed);
        std::vector<NDArray> out = model->run(in);
        std::vector<NDArray> ref = interpret_graph(g, in);
        ASSERT_EQ(out.size(), 1u);
        ASSERT_EQ(ref.size(), 1u);
        NDArray loops = reference_conv_relu(g, in[0]);
        EXPECT_TRUE(runtime::allclose(out[0], ref[0], 1e-4, 1e-5))
            << runtime::compare(out[0], ref[0]).max_abs;
        EXPECT_TRUE(runtime::allclose(out[0], loops, 1e-4, 1e-5))
            << runtime::compare(out[0], loops).max_abs;
        // relu must have cut something and let something through.
        int pos = 0;
        for (int64_t i = 0; i < loops.num_elements(); ++i) pos += loops.data<float>()[i] > 0;
        EXPECT_GT(pos, 0);
        EXPECT_LT(pos, loops.num_elements());
    }
}

TEST(DriverBuild, AReshapeAloneAfterAnIntegerConvIsWrittenByTheConvsKernel) {
    // A QDQ conv's integer GEMM writes (OC, OH * OW); the reshape to (N, OC,
    // OH, OW) that sink_reshapes moves past its epilogue runs in no kernel of
    // its own: the GEMM's kernel writes the reshaped value (the same bytes)
    // and counts the reshape node as its own; the outputs are the
    // interpreter's. Without fusion every node stays a kernel.
    const graph::Graph g =
        load_model(std::string(TESSERA_SOURCE_DIR) + "/tests/data/onnx_models/qdq_conv/model.onnx");
    for (int opt_level : {2, 0}) {
        BuildOptions o;
        o.opt_level = opt_level;
        auto model = build(g, o);
        const graph::Graph& og = model->graph;
        int alone = 0, with_gemm = 0;
        for (const std::vector<int>& nodes : model->kernel_nodes) {
            bool reshape = false, gemm = false;
            for (int n : nodes) {
                reshape |= og.nodes[size_t(n)].op == "reshape";
                gemm |= og.nodes[size_t(n)].op == "nn.matmul_i8u8";
            }
            alone += reshape && nodes.size() == 1;
            with_gemm += reshape && gemm;
        }
        if (opt_level == 2) {
            EXPECT_EQ(alone, 0);
            EXPECT_GE(with_gemm, 1);
        } else {
            EXPECT_EQ(with_gemm, 0);
        }
        EXPECT_EQ(model->kernels.size(), model->executor->calls().size());
        for (uint64_t seed : {3, 4}) {
            std::vector<NDArray> in = random_inputs(g, seed);
            std::vector<NDArray> out = model->run(in), ref = interpret_graph(g, in);
            ASSERT_EQ(out.size(), 1u);
            EXPECT_TRUE(runtime::allclose(out[0], ref[0], 1e-4, 1e-4))
                << runtime::compare(out[0], ref[0]).max_abs;
        }
    }
}

TEST(DriverBuild, MatmulAddMatchesInterpreterAndLoops) {
    graph::Graph g = matmul_add_graph();
    auto model = build(g);
    std::vector<NDArray> in = random_inputs(g, 5);
    ASSERT_EQ(in.size(), 2u);
    std::vector<NDArray> out = model->run(in);
    std::vector<NDArray> ref = interpret_graph(g, in);
    NDArray loops = reference_matmul_add(g, in[0], in[1]);
    EXPECT_TRUE(runtime::allclose(out[0], ref[0], 1e-4, 1e-5));
    EXPECT_TRUE(runtime::allclose(out[0], loops, 1e-4, 1e-5))
        << runtime::compare(out[0], loops).max_abs;
    EXPECT_TRUE(runtime::allclose(ref[0], loops, 1e-4, 1e-5));
}

// x (rows x K) times w (K x N), w a constant or a graph input: built for one
// thread, B is packed (the kernels hold "_packed") exactly when it is
// constant, and the product matches naive sums.
void expect_b_packed_only_when_constant(int64_t rows, int64_t K, int64_t N) {
    for (bool constant_b : {true, false}) {
        SCOPED_TRACE(constant_b ? "constant B" : "runtime B");
        graph::Graph g;
        int x = add_input(g, "x", f32({rows, K}));
        int w = constant_b ? add_constant(g, "w", f32({K, N}), 7) : add_input(g, "w", f32({K, N}));
        g.outputs = {add_node(g, "nn.matmul", "mm", {x, w})};
        driver::BuildOptions o;
        o.threads = 1;
        auto model = build(g, o);
        std::string text;
        for (const tir::PrimFunc& k : model->kernels) text += tir::print(k);
        EXPECT_EQ(text.find("_packed") != std::string::npos, constant_b);
        std::vector<NDArray> in = random_inputs(g, 9);
        const NDArray wv = constant_b ? runtime::random_ndarray(f32({K, N}), 7) : in[1];
        NDArray want = NDArray::empty(f32({rows, N}));
        for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < N; ++j) {
                double acc = 0;
                for (int64_t k = 0; k < K; ++k)
                    acc += double(in[0].data<float>()[i * K + k]) * wv.data<float>()[k * N + j];
                want.data<float>()[i * N + j] = float(acc);
            }
        EXPECT_TRUE(runtime::allclose(model->run(in)[0], want, 1e-4, 1e-4));
    }
}

// A one-row product reads a constant B packed at compile time, but a B
// computed at run time unpacked (a per-call copy would cost more than the
// product reads); both compute the product.
TEST(DriverBuild, GemvPacksConstantButNotRuntimeB) { expect_b_packed_only_when_constant(1, 300, 1000); }

// Few rows against a constant B far beyond L2 (a CTC classifier's 24 x 1024
// by 1024 x 8210): B is packed at compile time into NR-wide panels, so it
// streams sequentially (ddddocr's classifier 3.8 -> 2.1 ms); a runtime B is
// not copied per call.
TEST(DriverBuild, FewRowsAgainstAHugeConstantBPackIt) { expect_b_packed_only_when_constant(24, 1024, 2304); }

TEST(DriverBuild, RejectsBadTargetAndInputs) {
    graph::Graph g = matmul_add_graph();
    BuildOptions o;
    o.target = "tpu";
    EXPECT_THROW(build(g, o), UserError);
    auto model = build(g);
    EXPECT_THROW(model->run({}), UserError);
    std::vector<NDArray> in = random_inputs(g, 1);
    std::swap(in[0], in[1]);
    EXPECT_THROW(model->run(in), UserError);
    EXPECT_THROW(interpret_graph(g, in), UserError);
    EXPECT_THROW(lower_op(g, 7), UserError);
}

TEST(DriverBuild, LowerOpNamesKernelAndParams) {
    graph::Graph g = conv_relu_graph();
    tir::PrimFunc f = lower_op(g, 0);
    ASSERT_TRUE(f.defined());
    EXPECT_EQ(f->params.size(), 4u);  // x, w, b, out
}

TEST(DriverBuild, TimeRunsReportsOrderedStats) {
    graph::Graph g = matmul_add_graph();
    auto model = build(g);
    model->run(random_inputs(g, 3));
    Timing t = time_runs(*model->executor, 7);
    EXPECT_EQ(t.repeat, 7);
    EXPECT_LE(t.min_ms, t.median_ms);
    EXPECT_GE(t.min_ms, 0.0);
    EXPECT_THROW(time_runs(*model->executor, 0), UserError);
}

TEST(DriverInputs, RandomInputsAreSeededAndDistinct) {
    graph::Graph g = matmul_add_graph();
    auto a = random_inputs(g, 9), b = random_inputs(g, 9), c = random_inputs(g, 10);
    ASSERT_EQ(a.size(), 2u);
    EXPECT_EQ(a[0].type(), f32({4, 5}));
    EXPECT_EQ(a[1].type(), f32({3}));
    EXPECT_EQ(runtime::compare(a[0], b[0]).max_abs, 0.0);
    EXPECT_GT(runtime::compare(a[0], c[0]).max_abs, 0.0);
}

TEST(DriverInputs, MatchTestInputsSkipsArraysThatDoNotFit) {
    graph::Graph g = matmul_add_graph();
    NDArray a = runtime::random_ndarray(f32({4, 5}), 1);
    NDArray extra = runtime::random_ndarray(TensorType{DType::Int64, {2}}, 1);
    NDArray bias = runtime::random_ndarray(f32({3}), 2);
    auto m = match_test_inputs(g, {a, extra, bias});
    ASSERT_EQ(m.size(), 2u);
    EXPECT_EQ(m[1].type(), f32({3}));
    EXPECT_THROW(match_test_inputs(g, {a}), UserError);
}

}  // namespace
}  // namespace tessera::driver
