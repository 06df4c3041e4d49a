// Task extraction: fused groups lowered, keyed structurally, deduplicated.
#include "engine/autotune/task.h"

#include <cstdio>
#include <map>
#include <random>
#include <regex>
#include <set>

#include "engine/codegen/llvm/llvm_codegen.h"
#include "engine/core/error.h"
#include "engine/graph/passes/fuse_ops.h"
#include "engine/tir/printer.h"
#include "engine/topi/cpu/schedule_cpu.h"
#include "engine/topi/lower_group.h"

namespace tessera::autotune {

namespace {

// An integer conv's windows of at most this many words (K / 4) run as an
// unblocked product whatever the threads (default_rule_options).
constexpr int64_t kUnblockedWindowWords = 256;

uint64_t fnv1a(const std::string& s) {
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : s) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return h;
}

}  // namespace

const char* task_kind_name(TaskKind k) {
    switch (k) {
        case TaskKind::Matmul: return "matmul";
        case TaskKind::Conv2d: return "conv2d";
        case TaskKind::Injective: return "injective";
        case TaskKind::Reduction: return "reduction";
    }
    return "?";
}

std::string workload_key(const tir::PrimFunc& func, const std::string& target) {
    std::string text = tir::print(func);
    // The function's own name and its parameter names do not change what it computes.
    auto canon = [&](const std::string& name, const std::string& repl) {
        if (name.empty()) return;
        std::string pat;
        for (char c : name) {
            if (std::string("\\^$.|?*+()[]{}").find(c) != std::string::npos) pat += '\\';
            pat += c;
        }
        text = std::regex_replace(text, std::regex("\\b" + pat + "\\b"), repl);
    };
    canon(func->name, "__f");
    for (size_t i = 0; i < func->params.size(); ++i)
        canon(func->params[i]->name, "__p" + std::to_string(i));
    char buf[32];
    std::snprintf(buf, sizeof buf, "%016llx", (unsigned long long)fnv1a(text));
    return target + ":" + buf;
}

std::vector<TuneTask> extract_tasks(const graph::Graph& g, const std::string& target,
                                    int threads) {
    std::vector<TuneTask> tasks;
    std::map<std::string, size_t> index;
    const std::vector<std::vector<int>> groups = passes::fused_groups(g);
    // Reshapes the driver runs as views (no kernel): nothing to tune.
    std::set<int> views;
    for (const auto& [value, node] : passes::reshapes_as_views(g, groups)) views.insert(node);
    for (const std::vector<int>& group : groups) {
        if (group.size() == 1 && views.count(group[0])) continue;
        topi::LoweredGroup lg = topi::lower_group(g, group);
        std::string key = workload_key(lg.func, target);
        double flops = 0;
        TaskKind kind = TaskKind::Injective;
        for (int nd : group) {
            const graph::Node& n = g.nodes[size_t(nd)];
            flops += graph::node_flops(g, n);
            topi::CpuOpClass c = topi::cpu_op_class(n);
            if (c == topi::CpuOpClass::Matmul) kind = TaskKind::Matmul;
            const bool conv = c == topi::CpuOpClass::Conv2d || n.op == "nn.conv2d";  // grouped too
            if (conv && kind != TaskKind::Matmul) kind = TaskKind::Conv2d;
        }
        const int anchor = anchor_node(g, group);  // the node the driver's default rule uses
        auto it = index.find(key);
        if (it != index.end()) {
            tasks[it->second].weight++;
            continue;
        }
        TuneTask t;
        t.key = key;
        t.name = lg.func->name;
        t.func = lg.func;
        t.num_outputs = int(lg.outputs.size());
        for (int v : lg.args) t.constant_params.push_back(g.values[size_t(v)].is_constant());
        t.anchor = g.nodes[size_t(anchor)];
        t.cpu = default_rule_options(g, t.anchor, threads);
        t.knobs = topi::cpu_schedule_knobs(lg.func, t.anchor, t.cpu);
        schedule::Schedule s = topi::cpu_default_schedule(lg.func, t.anchor, t.cpu);
        t.default_func = s.func();
        t.default_trace = s.trace();
        t.default_trace.workload = key;
        t.kind = kind;
        t.flops = flops;
        index[key] = tasks.size();
        tasks.push_back(std::move(t));
    }
    return tasks;
}

TuneTask task_of_node(const graph::Graph& g, const std::string& node, const std::string& target,
                      int threads) {
    const int n = g.find_node(node);
    const std::vector<std::vector<int>> groups = passes::fused_groups(g);
    // A kernel's name (run --profile's) first: the kernels of one ONNX node
    // expanded into several (an int8 conv's im2col and GEMM) share its name.
    const auto named = std::find_if(groups.begin(), groups.end(), [&](const std::vector<int>& gr) {
        return topi::group_kernel_name(g, gr) == node;
    });
    TS_USER_CHECK(n >= 0 || named != groups.end())
        << "no node or kernel named '" << node << "' after the graph passes";
    for (const std::vector<int>& group : groups) {
        if (named != groups.end() ? &group != &*named
                                  : std::find(group.begin(), group.end(), n) == group.end())
            continue;
        const std::string key = workload_key(topi::lower_group(g, group).func, target);
        for (TuneTask& t : extract_tasks(g, target, threads))
            if (t.key == key) return t;
    }
    throw UserError("node '" + node + "' runs in no kernel");
}

topi::CpuScheduleOptions default_rule_options(const graph::Graph& g, const graph::Node& anchor,
                                              int threads) {
    topi::CpuScheduleOptions cpu;
    cpu.threads = threads;
    cpu.vector_lanes = codegen::host_vector_lanes();
    // A one-row product, or a few rows against a B that streams from memory,
    // whose B is computed at run time: packing B on every call would cost
    // more than the product reads (constant B is packed once, at compile
    // time; the rule packs these for that).
    if (topi::cpu_op_class(anchor) == topi::CpuOpClass::Matmul && anchor.inputs.size() >= 2 &&
        !anchor.outputs.empty() && !g.values[size_t(anchor.inputs[1])].is_constant()) {
        const graph::TensorType& y = g.values[size_t(anchor.outputs[0])].type;
        const int64_t b_bytes = g.values[size_t(anchor.inputs[1])].type.num_bytes();
        const int64_t rows = y.shape.empty() || y.shape.back() <= 0 ? 0 : y.num_elements() / y.shape.back();
        if (rows == 1 || (rows > 0 && rows < 32 && b_bytes >= topi::kStreamedBBytes))
            cpu.knobs.emplace("matmul.pack_b", 0);
        // An integer conv's windows (nn.im2col_int8x4, words laid out row by
        // row, just written by the kernel before): read in place. Copied
        // into panels first, every conv of ResNet-18's int8 model was slower
        // with its caches warm (the 56 x 56 layers 0.34 -> 0.24 ms, the model
        // 5.88 -> 5.14 ms at 1 thread); only from cold caches do the panels
        // pay (the stem's 0.44 vs 0.52 ms), and a model's runs are warm.
        // Unpacked, the product is not blocked either (its epilogue then runs
        // per register tile, the accumulators never stored) on one thread,
        // and on more for windows of at most kUnblockedWindowWords words:
        // ORT-quantized MobileNetV2 2.44 -> 2.27 ms at 1 thread, 1.51 ->
        // 1.32-1.41 at 2; ResNet-18 5.46-5.67 -> 5.21-5.46 at 1, its deeper
        // layers (up to 1,152 words) 3 % slower unblocked at 2 threads,
        // where the blocked rule splits the rows between the threads.
        const graph::Value& b = g.values[size_t(anchor.inputs[1])];
        if (b.producer >= 0 && g.nodes[size_t(b.producer)].op == "nn.im2col_int8x4") {
            cpu.knobs.emplace("matmul.pack_b", 0);
            const int64_t words =
                b.type.shape.size() >= 2 ? b.type.shape[b.type.shape.size() - 2] : 0;
            if (threads == 1 || words <= kUnblockedWindowWords)
                cpu.knobs.emplace("matmul.blocked", 0);
        }
    }
    return cpu;
}

int anchor_node(const graph::Graph& g, const std::vector<int>& group) {
    int anchor = group.back();
    for (int nd : group) {
        const graph::Node& n = g.nodes[size_t(nd)];
        topi::CpuOpClass c = topi::cpu_op_class(n);
        if (c == topi::CpuOpClass::Matmul || c == topi::CpuOpClass::Conv2d || n.op == "nn.conv2d" ||
            n.op == "nn.im2col_int8x4")
            anchor = nd;
    }
    return anchor;
}

graph::Graph gemm_graph(int64_t m, int64_t n, int64_t k) {
    graph::Graph g;
    g.name = "gemm";
    auto add = [&](const std::string& name, std::vector<int64_t> shape) {
        graph::Value v;
        v.name = name;
        v.type = {graph::DType::Float32, std::move(shape)};
        return g.add_value(v);
    };
    int a = add("A", {m, k}), b = add("B", {k, n}), c = add("C", {m, n});
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

graph::Graph conv2d_graph(int64_t c, int64_t h, int64_t w, int64_t k, int64_t r, int64_t s) {
    TS_USER_CHECK(c > 0 && h > 0 && w > 0 && k > 0 && r > 0 && s > 0 && r % 2 == 1 && s % 2 == 1)
        << "conv2d: sizes must be positive and the kernel odd, got c=" << c << " h=" << h
        << " w=" << w << " k=" << k << " r=" << r << " s=" << s;
    graph::Graph g;
    g.name = "conv2d";
    auto add = [&](const std::string& name, std::vector<int64_t> shape, bool constant) {
        graph::Value v;
        v.name = name;
        v.type = {graph::DType::Float32, std::move(shape)};
        if (constant) {
            auto data = std::make_shared<graph::ConstantData>();
            std::vector<float> x(size_t(v.type.num_elements()));
            std::mt19937_64 rng(3);
            std::uniform_real_distribution<float> u(-1.f, 1.f);
            for (float& e : x) e = u(rng);
            const auto* p = reinterpret_cast<const uint8_t*>(x.data());
            data->bytes.assign(p, p + x.size() * sizeof(float));
            v.constant = data;
        }
        return g.add_value(v);
    };
    int x = add("X", {1, c, h, w}, false), wt = add("W", {k, c, r, s}, true);
    int y = add("Y", {1, k, h, w}, false);
    g.inputs = {x};
    g.outputs = {y};
    graph::Node node;
    node.op = "nn.conv2d";
    node.name = "conv";
    node.attrs["strides"] = std::vector<int64_t>{1, 1};
    node.attrs["padding"] = std::vector<int64_t>{(r - 1) / 2, (s - 1) / 2, (r - 1) / 2, (s - 1) / 2};
    node.inputs = {x, wt};
    node.outputs = {y};
    g.add_node(node);
    return g;
}

}  // namespace tessera::autotune
