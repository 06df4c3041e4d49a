// Compile-time packing of constant GEMM weights (topi/pack_gemm.h
// prepack_constant_operands, pack_panels, and the driver's use of them):
// the packing nest is removed, the kernel reads panels packed once, and the
// result equals naive loops / the graph interpreter on random data with tails
// (N not a multiple of the panel width). Nothing is timed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "engine/codegen/llvm/llvm_codegen.h"
#include "engine/driver/driver.h"
#include "engine/runtime/ndarray.h"
#include "engine/tir/functor.h"
#include "engine/tir/printer.h"
#include "engine/topi/cpu/pack_gemm.h"
#include "engine/topi/cpu/schedule_cpu.h"
#include "engine/topi/topi.h"

namespace tessera::test {
namespace {

graph::Value make_value(const std::string& name, std::vector<int64_t> shape) {
    graph::Value v;
    v.name = name;
    v.type = {graph::DType::Float32, std::move(shape)};
    return v;
}

/// Appends a float32 constant of seeded random values; returns its index.
int add_random_constant(graph::Graph& g, const std::string& name, std::vector<int64_t> shape,
                        uint64_t seed) {
    graph::Value v = make_value(name, std::move(shape));
    runtime::NDArray r = runtime::random_ndarray(v.type, seed);
    auto data = std::make_shared<graph::ConstantData>();
    const auto* p = static_cast<const uint8_t*>(r.raw());
    data->bytes.assign(p, p + r.num_bytes());
    v.constant = std::move(data);
    return g.add_value(std::move(v));
}

/// Appends node `op` reading `ins` and writing value `out`.
void add_node(graph::Graph& g, const std::string& op, const std::string& name, std::vector<int> ins,
              int out) {
    graph::Node n;
    n.op = op;
    n.name = name;
    n.inputs = std::move(ins);
    n.outputs = {out};
    g.values[size_t(out)].producer = g.add_node(n);
}

int count_pack_blocks(const tir::PrimFunc& f) {
    int n = 0;
    tir::post_order_visit(f->body, [&](const tir::Object* o) {
        if (o->node_type != tir::NodeType::Block) return;
        const std::string& name = static_cast<const tir::Block*>(o)->name;
        if (name.size() >= 5 && name.compare(name.size() - 5, 5, "_pack") == 0) ++n;
    });
    return n;
}

/// C = A x B (B as K x N) or A x B^T (B as N x K), naive loops.
std::vector<float> naive_matmul(const float* a, const float* b, int64_t m, int64_t k, int64_t n,
                                bool trans_b) {
    std::vector<float> c(size_t(m * n), 0.f);
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
            double s = 0;
            for (int64_t p = 0; p < k; ++p)
                s += double(a[i * k + p]) * double(trans_b ? b[j * k + p] : b[p * n + j]);
            c[size_t(i * n + j)] = float(s);
        }
    return c;
}

void expect_close(const float* got, const std::vector<float>& want) {
    int bad = 0;
    for (size_t i = 0; i < want.size() && bad < 5; ++i)
        if (!(std::fabs(got[i] - want[i]) <= 1e-4 * (1 + std::fabs(want[i])))) {
            ADD_FAILURE() << "element " << i << ": got " << got[i] << ", want " << want[i];
            ++bad;
        }
}

TEST(GemmPrepack, PackPanelsMatchesTheLayoutWithZeroTail) {
    // X is 3 x 5, panels of 4 along dimension 1: Xp[2][3][4], column 5..7 zero.
    std::vector<float> x(15);
    for (size_t i = 0; i < x.size(); ++i) x[i] = float(i + 1);
    std::vector<uint8_t> p = topi::pack_panels(x.data(), {3, 5}, 4, 1, 4);
    ASSERT_EQ(p.size(), size_t(2 * 3 * 4 * 4));
    const auto* xp = reinterpret_cast<const float*>(p.data());
    for (int pn = 0; pn < 2; ++pn)
        for (int r = 0; r < 3; ++r)
            for (int i = 0; i < 4; ++i) {
                const int col = pn * 4 + i;
                const float want = col < 5 ? x[size_t(r * 5 + col)] : 0.f;
                EXPECT_EQ(xp[(pn * 3 + r) * 4 + i], want) << pn << " " << r << " " << i;
            }
    // Tiled along dimension 0 (B stored N x K): Xp[1][5][4], row 3 zero.
    std::vector<uint8_t> q = topi::pack_panels(x.data(), {3, 5}, 4, 0, 4);
    ASSERT_EQ(q.size(), size_t(1 * 5 * 4 * 4));
    const auto* xq = reinterpret_cast<const float*>(q.data());
    for (int c = 0; c < 5; ++c)
        for (int i = 0; i < 4; ++i)
            EXPECT_EQ(xq[c * 4 + i], i < 3 ? x[size_t(i * 5 + c)] : 0.f) << c << " " << i;
}

/// Schedules one matmul / gemm node, prepacks B (parameter 1) and runs the
/// kernel on panels from pack_panels; compares with naive loops.
void check_prepacked_kernel(int64_t m, int64_t k, int64_t n, bool trans_b, int threads) {
    graph::Graph g;
    graph::Node nd;
    nd.op = trans_b ? "nn.gemm" : "nn.matmul";
    nd.name = "k";
    if (trans_b) nd.attrs["transB"] = int64_t(1);
    int a = g.add_value(make_value("A", {m, k}));
    int b = g.add_value(make_value("B", trans_b ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n}));
    int c = g.add_value(make_value("C", {m, n}));
    g.inputs = {a, b};
    g.outputs = {c};
    nd.inputs = {a, b};
    nd.outputs = {c};
    g.add_node(nd);
    tir::PrimFunc f = topi::lower_node(g, 0);
    topi::CpuScheduleOptions o;
    o.threads = threads;
    o.vector_lanes = codegen::host_vector_lanes();
    tir::PrimFunc s = topi::schedule_cpu_default(f, g.nodes[0], o);
    ASSERT_EQ(count_pack_blocks(s), 1) << tir::print(s);
    // Only parameter 1 is constant: A is not prepacked even if it were packed.
    topi::PrepackResult pre =
        topi::prepack_constant_operands(s, [](size_t p) { return p == 1; });
    ASSERT_EQ(pre.operands.size(), 1u);
    EXPECT_EQ(pre.operands[0].param, 1u);
    EXPECT_EQ(count_pack_blocks(pre.func), 0) << tir::print(pre.func);
    // Nothing constant: unchanged.
    EXPECT_TRUE(topi::prepack_constant_operands(s, [](size_t) { return false; }).operands.empty());

    runtime::NDArray av = runtime::random_ndarray(g.values[size_t(a)].type, 11);
    runtime::NDArray bv = runtime::random_ndarray(g.values[size_t(b)].type, 12);
    const topi::PrepackedOperand& op = pre.operands[0];
    std::vector<uint8_t> panels = topi::pack_panels(bv.raw(), op.shape, 4, op.tiled_dim, op.factor);
    EXPECT_EQ(int64_t(panels.size()), pre.func->params[1].const_shape()[0] *
                                          pre.func->params[1].const_shape()[1] *
                                          pre.func->params[1].const_shape()[2] * 4);
    runtime::NDArray out = runtime::NDArray::empty(g.values[size_t(c)].type);
    std::vector<void*> args{av.raw(), panels.data(), out.raw()};
    codegen::LlvmOptions lo;
    lo.threads = threads;
    auto module = codegen::jit_compile({pre.func}, lo);
    module->lookup(pre.func->name)(args.data());
    expect_close(out.data<float>(),
                 naive_matmul(av.data<float>(), bv.data<float>(), m, k, n, trans_b));
}

TEST(GemmPrepack, KernelReadsPanelsPackedOnce) {
    for (int threads : {1, 0}) {
        check_prepacked_kernel(64, 200, 100, false, threads);  // N % 32 != 0
        check_prepacked_kernel(37, 523, 45, false, threads);   // tails in M, K, N
        check_prepacked_kernel(40, 150, 100, true, threads);   // B as N x K
    }
}

TEST(GemmPrepack, DriverPacksConstantWeightsAtCompileTime) {
    // x[64, 300] -> matmul W1[300, 200] + b1 -> relu -> matmul W2[200, 70] + b2.
    graph::Graph g;
    g.name = "mlp";
    auto constant = [&](const std::string& name, std::vector<int64_t> shape, uint64_t seed) {
        return add_random_constant(g, name, std::move(shape), seed);
    };
    int x = g.add_value(make_value("x", {64, 300}));
    int w1 = constant("W1", {300, 200}, 1), b1 = constant("b1", {200}, 2);
    int w2 = constant("W2", {200, 70}, 3), b2 = constant("b2", {70}, 4);
    int h = g.add_value(make_value("h", {64, 200})), hb = g.add_value(make_value("hb", {64, 200}));
    int hr = g.add_value(make_value("hr", {64, 200}));
    int y = g.add_value(make_value("y", {64, 70})), yb = g.add_value(make_value("yb", {64, 70}));
    g.inputs = {x};
    g.outputs = {yb};
    auto node = [&](const std::string& op, std::vector<int> ins, int out) {
        add_node(g, op, op + std::to_string(out), std::move(ins), out);
    };
    node("nn.matmul", {x, w1}, h);
    node("add", {h, b1}, hb);
    node("nn.relu", {hb}, hr);
    node("nn.matmul", {hr, w2}, y);
    node("add", {y, b2}, yb);

    runtime::NDArray in = runtime::random_ndarray(g.values[size_t(x)].type, 7);
    std::vector<runtime::NDArray> want = driver::interpret_graph(g, {in});
    for (int threads : {1, 0}) {
        driver::BuildOptions bo;
        bo.threads = threads;
        std::shared_ptr<driver::CompiledModel> model = driver::build(g, bo);
        int packed = 0;
        for (const graph::Value& v : model->graph.values)
            if (v.name.size() > 7 && v.name.compare(v.name.size() - 7, 7, "_packed") == 0 &&
                v.is_constant())
                ++packed;
        EXPECT_GE(packed, 1) << "no weight was packed at compile time";
        for (const tir::PrimFunc& k : model->kernels)
            EXPECT_EQ(count_pack_blocks(k), 0) << tir::print(k);
        std::vector<runtime::NDArray> got = model->run({in});
        ASSERT_EQ(got.size(), 1u);
        const float* r = want[0].data<float>();
        expect_close(got[0].data<float>(), std::vector<float>(r, r + want[0].num_elements()));
        // Run twice: the panels are bound once and not overwritten.
        got = model->run({in});
        expect_close(got[0].data<float>(), std::vector<float>(r, r + want[0].num_elements()));
    }
}

// Kernels that read one constant weight read one packed copy of it: an
// unrolled LSTM's steps (here three one-row products by the same W, relu
// between them) each packed their own copy, so a 4 MB recurrent weight
// streamed from memory once per step (a bidirectional LSTM of 24 steps,
// hidden 512: 19.7 -> 8.3 ms).
TEST(GemmPrepack, KernelsReadingOneWeightShareOnePackedCopy) {
    graph::Graph g;
    g.name = "steps";
    int w = add_random_constant(g, "W", {256, 256}, 9);
    int x = g.add_value(make_value("x", {1, 256}));
    g.inputs = {x};
    int h = x;
    for (int step = 0; step < 3; ++step) {
        int m = g.add_value(make_value("m" + std::to_string(step), {1, 256}));
        int r = g.add_value(make_value("r" + std::to_string(step), {1, 256}));
        add_node(g, "nn.matmul", "mm" + std::to_string(step), {h, w}, m);
        add_node(g, "nn.relu", "relu" + std::to_string(step), {m}, r);
        h = r;
    }
    g.outputs = {h};
    runtime::NDArray in = runtime::random_ndarray(g.values[size_t(x)].type, 10);
    std::vector<runtime::NDArray> want = driver::interpret_graph(g, {in});
    driver::BuildOptions bo;
    bo.threads = 1;
    std::shared_ptr<driver::CompiledModel> model = driver::build(g, bo);
    std::vector<int> packed;
    for (size_t v = 0; v < model->graph.values.size(); ++v)
        if (model->graph.values[v].name == "W_packed" && model->graph.values[v].is_constant())
            packed.push_back(int(v));
    ASSERT_EQ(packed.size(), 1u) << "one packed copy of W for its three readers";
    int readers = 0;
    ASSERT_NE(model->executor, nullptr);
    for (const runtime::KernelCall& c : model->executor->calls())
        readers += int(std::count(c.args.begin(), c.args.end(), packed[0]));
    EXPECT_EQ(readers, 3);
    std::vector<runtime::NDArray> got = model->run({in});
    ASSERT_EQ(got.size(), 1u);
    // Three chained 256-long sums in another order than the interpreter's.
    EXPECT_TRUE(runtime::allclose(got[0], want[0], 1e-3, 1e-4))
        << "max abs err " << runtime::compare(got[0], want[0]).max_abs;
}

TEST(GemmPrepack, BatchedActivationsShareOnePackedWeight) {
    // A dense layer on [batch, rows, K] activations (a transformer's linear
    // layers): y = gelu(x W + b) with W[K, N] constant, row tails (37 rows,
    // 6-row register tiles) and a batch of 1 and of 3. The product is blocked,
    // reads W packed once at compile time and hands its tiles to the epilogue
    // in a local buffer; the result equals the interpreter's.
    for (int64_t batch : {1, 3}) {
        graph::Graph g;
        g.name = "dense3d";
        auto constant = [&](const std::string& name, std::vector<int64_t> shape, uint64_t seed) {
            return add_random_constant(g, name, std::move(shape), seed);
        };
        int x = g.add_value(make_value("x", {batch, 37, 200}));
        int w = constant("W", {200, 100}, 5), b = constant("b", {100}, 6);
        int h = g.add_value(make_value("h", {batch, 37, 100}));
        int hb = g.add_value(make_value("hb", {batch, 37, 100}));
        int y = g.add_value(make_value("y", {batch, 37, 100}));
        g.inputs = {x};
        g.outputs = {y};
        auto node = [&](const std::string& op, std::vector<int> ins, int out) {
            add_node(g, op, "n" + std::to_string(out), std::move(ins), out);
        };
        node("nn.matmul", {x, w}, h);
        node("add", {h, b}, hb);
        node("nn.gelu", {hb}, y);
        runtime::NDArray in = runtime::random_ndarray(g.values[size_t(x)].type, 8);
        std::vector<runtime::NDArray> want = driver::interpret_graph(g, {in});
        for (int threads : {1, 0}) {
            driver::BuildOptions bo;
            bo.threads = threads;
            std::shared_ptr<driver::CompiledModel> model = driver::build(g, bo);
            int packed = 0;
            for (const graph::Value& v : model->graph.values)
                if (v.name == "W_packed" && v.is_constant()) ++packed;
            EXPECT_EQ(packed, 1) << "batch " << batch << ", threads " << threads;
            ASSERT_EQ(model->kernels.size(), 1u);
            EXPECT_EQ(count_pack_blocks(model->kernels[0]), 0) << tir::print(model->kernels[0]);
            // The product feeds the epilogue through a local (tile-sized) buffer.
            EXPECT_NE(tir::print(model->kernels[0]).find("T_matmul_local"), std::string::npos)
                << tir::print(model->kernels[0]);
            std::vector<runtime::NDArray> got = model->run({in});
            ASSERT_EQ(got.size(), 1u);
            const float* r = want[0].data<float>();
            expect_close(got[0].data<float>(), std::vector<float>(r, r + want[0].num_elements()));
        }
    }
}

}  // namespace
}  // namespace tessera::test
