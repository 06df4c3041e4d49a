// The benchmark harness: timing, our kernels built through driver::build,
// and the side-by-side comparisons with OpenBLAS and oneDNN.
#include "bench/lib/bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "bench/lib/vendor.h"
#include "engine/core/error.h"
#include "engine/driver/driver.h"
#include "engine/codegen/llvm/llvm_codegen.h"
#include "engine/runtime/ndarray.h"
#include "engine/tir/passes/pass_manager.h"
#include "engine/tir/printer.h"

namespace tessera::bench {

using runtime::NDArray;

Measurement measure(const std::function<void()>& fn, double min_seconds, int min_repeat) {
    using clock = std::chrono::steady_clock;
    fn();
    fn();
    std::vector<double> ms;
    auto start = clock::now();
    while (int(ms.size()) < 1000) {
        auto t0 = clock::now();
        fn();
        auto t1 = clock::now();
        ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        double total = std::chrono::duration<double>(t1 - start).count();
        if (int(ms.size()) >= min_repeat && total >= min_seconds) break;
    }
    Measurement m;
    m.repeat = int(ms.size());
    m.min_ms = *std::min_element(ms.begin(), ms.end());
    std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
    m.median_ms = ms[ms.size() / 2];
    return m;
}

Measurement median_of(std::vector<Measurement> ms) {
    TS_CHECK(!ms.empty()) << "median_of: no measurements";
    Measurement out;
    out.min_ms = ms[0].min_ms;
    for (const Measurement& m : ms) {
        out.repeat += m.repeat;
        out.min_ms = std::min(out.min_ms, m.min_ms);
    }
    std::sort(ms.begin(), ms.end(),
              [](const Measurement& a, const Measurement& b) { return a.median_ms < b.median_ms; });
    out.median_ms = ms[ms.size() / 2].median_ms;
    return out;
}

double gflops(double flops, double ms) { return ms > 0 ? flops / (ms * 1e-3) / 1e9 : 0; }

bool have_openblas() {
#ifdef TESSERA_WITH_OPENBLAS
    return true;
#else
    return false;
#endif
}

bool have_onednn() {
#ifdef TESSERA_WITH_DNNL
    return true;
#else
    return false;
#endif
}

namespace {

int add_value(graph::Graph& g, const std::string& name, std::vector<int64_t> shape,
              const NDArray* constant = nullptr) {
    graph::Value v;
    v.name = name;
    v.type = {graph::DType::Float32, std::move(shape)};
    if (constant) {
        auto data = std::make_shared<graph::ConstantData>();
        const auto* p = static_cast<const uint8_t*>(constant->raw());
        data->bytes.assign(p, p + constant->num_bytes());
        v.constant = data;
    }
    return g.add_value(v);
}

std::shared_ptr<driver::CompiledModel> compile(const graph::Graph& g, int threads,
                                               const std::string& records = "") {
    driver::BuildOptions options;
    options.threads = threads;
    options.records = records;
    auto model = driver::build(g, options);
    model->executor->set_num_threads(threads);
    return model;
}

/// The blocked conv node of an optimized graph alone (its data a graph input,
/// its packed weights constants), or the graph itself when it has none.
graph::Graph conv_kernel_graph(const graph::Graph& opt) {
    int conv = -1;
    for (size_t i = 0; i < opt.nodes.size(); ++i)
        if (opt.nodes[i].op == "nn.conv2d_NCHWc" || opt.nodes[i].op == "nn.conv2d_winograd_NCHWc")
            conv = int(i);
    if (conv < 0) return opt;
    graph::Node node = opt.nodes[size_t(conv)];
    node.attrs.erase("fuse_group");
    graph::Graph k;
    k.name = "conv2d_kernel";
    std::vector<int> ins;
    for (int v : node.inputs) {
        graph::Value val = opt.values[size_t(v)];
        val.producer = -1;
        ins.push_back(k.add_value(val));
        if (!val.is_constant()) k.inputs.push_back(ins.back());
    }
    graph::Value out = opt.values[size_t(node.outputs[0])];
    out.producer = -1;
    node.inputs = ins;
    node.outputs = {k.add_value(out)};
    k.outputs = node.outputs;
    k.add_node(node);
    return k;
}

void compare_outputs(const float* ours, const float* ref, int64_t n, Comparison* c) {
    for (int64_t i = 0; i < n; ++i) {
        double e = std::fabs(double(ours[i]) - double(ref[i]));
        c->max_abs_err = std::max(c->max_abs_err, e);
        c->max_rel_err = std::max(c->max_rel_err, e / (std::fabs(double(ref[i])) + 1e-3));
    }
}

graph::Graph gemm_graph(const GemmShape& s) {
    TS_USER_CHECK(s.m > 0 && s.n > 0 && s.k > 0) << "bench gemm: sizes must be positive";
    graph::Graph g;
    g.name = "gemm";
    int a = add_value(g, "A", {s.m, s.k});
    int b = add_value(g, "B", {s.k, s.n});
    int c = add_value(g, "C", {s.m, s.n});
    g.inputs = {a, b};
    g.outputs = {c};
    graph::Node node;
    node.op = "nn.matmul";
    node.name = "gemm";
    node.inputs = {a, b};
    node.outputs = {c};
    g.add_node(node);
    return g;
}

}  // namespace

std::string gemm_kernel_text(const GemmShape& s, int threads, const std::string& what) {
    auto model = compile(gemm_graph(s), threads, s.records);
    codegen::LlvmOptions lo;
    lo.threads = threads;
    if (what == "tir" || what == "lowered") {
        std::string out;
        for (const tir::PrimFunc& f : model->kernels)
            out += tir::print(what == "tir" ? f : tir::lower_for_codegen(f)) + "\n";
        return out;
    }
    if (what == "llvm") return codegen::emit_llvm_ir(model->kernels, lo);
    TS_USER_CHECK(what == "asm") << "bench gemm: --print must be tir, lowered, llvm or asm";
    return codegen::emit_assembly(model->kernels, lo);
}

Comparison bench_gemm(const GemmShape& s, int threads, const std::string& compare, int rounds) {
    TS_USER_CHECK(compare.empty() || compare == "openblas")
        << "bench gemm: --compare must be 'openblas', got '" << compare << "'";
    graph::Graph g = gemm_graph(s);
    const int a = g.inputs[0], b = g.inputs[1];
    auto model = compile(g, threads, s.records);
    NDArray A = runtime::random_ndarray(g.values[size_t(a)].type, 1);
    NDArray B = runtime::random_ndarray(g.values[size_t(b)].type, 2);
    auto& ex = *model->executor;
    ex.set_input(0, A);
    ex.set_input(1, B);

    Comparison r;
    r.flops = 2.0 * double(s.m) * double(s.n) * double(s.k);
    const bool theirs = compare == "openblas";
    TS_USER_CHECK(!theirs || have_openblas()) << "bench gemm: this build has no OpenBLAS";
    std::vector<float> ref(size_t(s.m * s.n));
    auto run_theirs = [&] {
        openblas_sgemm(s.m, s.n, s.k, A.data<float>(), B.data<float>(), ref.data(), threads);
    };
    // Rounds alternate ours and theirs so that a burst of load on a shared
    // machine hits both; the result is the median of the rounds' medians.
    std::vector<Measurement> ours, their;
    for (int round = 0; round < std::max(rounds, 1); ++round) {
        ours.push_back(measure([&] { ex.run(); }));
        if (theirs) their.push_back(measure(run_theirs));
    }
    r.ours = median_of(ours);
    NDArray C = ex.get_output(0);
    if (theirs) {
        r.theirs_name = "openblas, core " + openblas_core();
        r.theirs = median_of(their);
        r.have_theirs = true;
        compare_outputs(C.data<float>(), ref.data(), s.m * s.n, &r);
    }
    return r;
}

Comparison bench_conv2d(const ConvShape& s, int threads, const std::string& compare) {
    TS_USER_CHECK(s.n > 0 && s.c > 0 && s.h > 0 && s.w > 0 && s.k > 0 && s.r > 0 && s.s > 0 &&
                  s.stride > 0 && s.pad >= 0)
        << "bench conv2d: sizes and stride must be positive, pad non-negative";
    TS_USER_CHECK(compare.empty() || compare == "onednn")
        << "bench conv2d: --compare must be 'onednn', got '" << compare << "'";
    const int64_t oh = (s.h + 2 * s.pad - s.r) / s.stride + 1;
    const int64_t ow = (s.w + 2 * s.pad - s.s) / s.stride + 1;
    TS_USER_CHECK(oh > 0 && ow > 0) << "bench conv2d: the kernel is larger than the padded input";
    graph::Graph g;
    g.name = "conv2d";
    graph::TensorType wt{graph::DType::Float32, {s.k, s.c, s.r, s.s}};
    NDArray W = runtime::random_ndarray(wt, 3);
    int x = add_value(g, "X", {s.n, s.c, s.h, s.w});
    int w = add_value(g, "W", wt.shape, &W);
    int y = add_value(g, "Y", {s.n, s.k, oh, ow});
    g.inputs = {x};
    g.outputs = {y};
    graph::Node node;
    node.op = "nn.conv2d";
    node.name = "conv";
    node.attrs["strides"] = std::vector<int64_t>{s.stride, s.stride};
    node.attrs["padding"] = std::vector<int64_t>{s.pad, s.pad, s.pad, s.pad};
    node.inputs = {x, w};
    node.outputs = {y};
    g.add_node(node);
    // The default path at opt level 3: convert_layout gives the blocked
    // conv2d_NCHWc (TVM's x86 conv) between two layout transforms.
    driver::BuildOptions options;
    options.threads = threads;
    options.opt_level = 3;
    auto model = driver::build(g, options);
    model->executor->set_num_threads(threads);
    NDArray X = runtime::random_ndarray(g.values[size_t(x)].type, 4);
    auto& ex = *model->executor;
    ex.set_input(0, X);
    ex.run();
    NDArray Y = ex.get_output(0);

    // Timed: the conv kernel alone, as oneDNN's is timed without its reorders.
    graph::Graph kg = conv_kernel_graph(model->graph);
    auto kernel = compile(kg, threads, s.records);
    for (size_t i = 0; i < kg.inputs.size(); ++i)
        kernel->executor->set_input(
            i, runtime::random_ndarray(kg.values[size_t(kg.inputs[i])].type, 5 + i));
    Comparison r;
    r.flops = 2.0 * double(s.n * s.k * oh * ow) * double(s.c * s.r * s.s);
    r.ours = measure([&] { kernel->executor->run(); });
    if (compare == "onednn") {
        TS_USER_CHECK(have_onednn()) << "bench conv2d: this build has no oneDNN";
        OneDnnConv conv(s.n, s.c, s.h, s.w, s.k, s.r, s.s, s.stride, s.pad, X.data<float>(),
                        W.data<float>(), threads);
        r.theirs_name = std::string("onednn ") + conv.impl() + ", isa " + onednn_isa();
        r.theirs = measure([&] { conv.run(); });
        r.have_theirs = true;
        std::vector<float> ref(size_t(s.n * s.k * oh * ow));
        conv.output(ref.data());
        compare_outputs(Y.data<float>(), ref.data(), int64_t(ref.size()), &r);
    }
    return r;
}

}  // namespace tessera::bench
