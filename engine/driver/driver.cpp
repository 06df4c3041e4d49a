// The driver's compile path: load a model, lower every node, JIT-compile the
// kernels into a GraphExecutor, and the interpreter reference run.
#include "engine/driver/driver.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <tuple>

#include "engine/autotune/tuner.h"
#include "engine/codegen/llvm/llvm_codegen.h"
#include "engine/core/error.h"
#include "engine/core/thread_guard.h"
#include "engine/driver/build_steps.h"
#include "engine/frontend/onnx/onnx_importer.h"
#include "engine/graph/passes/fuse_ops.h"
#include "engine/schedule/schedule.h"
#include "engine/tir/interpreter.h"
#include "engine/topi/lower_group.h"
#include "engine/topi/cpu/pack_gemm.h"
#include "engine/topi/cpu/schedule_cpu.h"
#include "engine/topi/topi.h"

namespace tessera::driver {

using runtime::NDArray;

namespace {

// The data of a constant value as an NDArray (UserError if the sizes disagree).
NDArray constant_array(const graph::Value& v) {
    const auto& bytes = v.constant->bytes;
    TS_USER_CHECK(int64_t(bytes.size()) == v.type.num_bytes())
        << "constant '" << v.name << "' holds " << bytes.size() << " bytes but its type "
        << v.type.str() << " needs " << v.type.num_bytes();
    return NDArray::from_bytes(v.type, bytes.data(), bytes.size());
}

void check_inputs(const graph::Graph& g, const std::vector<NDArray>& inputs) {
    TS_USER_CHECK(inputs.size() == g.inputs.size())
        << "model '" << g.name << "' has " << g.inputs.size() << " inputs, got " << inputs.size();
    for (size_t i = 0; i < inputs.size(); ++i) {
        const graph::Value& v = g.values[size_t(g.inputs[i])];
        TS_USER_CHECK(inputs[i].defined() && inputs[i].type() == v.type)
            << "input " << i << " ('" << v.name << "') must be " << v.type.str() << ", got "
            << (inputs[i].defined() ? inputs[i].type().str() : std::string("nothing"));
    }
}

}  // namespace


tir::PrimFunc lower_op(const graph::Graph& g, int node) {
    assert_engine_work_allowed("driver::lower_op");
    TS_USER_CHECK(node >= 0 && node < int(g.nodes.size()))
        << "node index " << node << " out of range; the graph has " << g.nodes.size() << " nodes";
    return topi::lower_node(g, node);
}

graph::Graph optimize(const graph::Graph& g, const BuildOptions& options,
                      std::vector<passes::PassRecord>* records) {
    assert_engine_work_allowed("driver::optimize");
    TS_USER_CHECK(options.opt_level >= 0 && options.opt_level <= 3)
        << "opt level must be 0..3, got " << options.opt_level;
    passes::PassManager pm(options.opt_level);
    pm.set_pipeline(find_target(options.target).graph_passes(options.passes, options.opt_level));
    if (options.print_after) pm.set_print_after(options.print_after);
    // Large constant subgraphs (weight transforms) are JIT-compiled; small ones interpreted.
    pm.set_evaluator([](const graph::Graph& gr, int node, const std::vector<NDArray>& inputs) {
        const graph::Node& nd = gr.nodes[size_t(node)];
        std::vector<NDArray> outs;
        int64_t elements = 0;
        for (int v : nd.outputs) {
            outs.push_back(NDArray::empty(gr.values[size_t(v)].type));
            elements += outs.back().num_elements();
        }
        std::vector<void*> args;
        for (const NDArray& a : inputs) args.push_back(a.raw());
        for (const NDArray& a : outs) args.push_back(a.raw());
        tir::PrimFunc f = topi::lower_node(gr, node);
        if (elements < 4096) {
            tir::interpret(f, args);
        } else {
            std::shared_ptr<codegen::JitModule> jit = codegen::jit_compile({f}, {});
            jit->lookup(f->name)(args.data());
        }
        return outs;
    });
    graph::Graph out = pm.run(g);
    if (records) *records = pm.records();
    return out;
}

std::vector<tir::PrimFunc> lower_fused(const graph::Graph& g) {
    std::vector<tir::PrimFunc> funcs;
    for (const auto& group : passes::fused_groups(g))
        funcs.push_back(topi::lower_group(g, group).func);
    return funcs;
}

namespace {

// Sets the inputs, runs, copies the outputs: the same for both executors.
template <typename Executor>
std::vector<NDArray> run_executor(Executor& ex, const std::string& model,
                                  const std::vector<NDArray>& inputs) {
    TS_USER_CHECK(inputs.size() == ex.num_inputs())
        << "model '" << model << "' has " << ex.num_inputs() << " inputs, got " << inputs.size();
    for (size_t i = 0; i < inputs.size(); ++i) ex.set_input(i, inputs[i]);
    ex.run();
    std::vector<NDArray> outputs;
    for (size_t i = 0; i < ex.num_outputs(); ++i) outputs.push_back(ex.get_output(i));
    return outputs;
}

}  // namespace

std::vector<NDArray> CompiledModel::run(const std::vector<NDArray>& inputs) {
    if (cuda) return run_executor(*cuda->make_executor(), graph.name, inputs);  // UserError without a device
    TS_CHECK(executor != nullptr) << "CompiledModel without an executor";
    return run_executor(*executor, graph.name, inputs);
}

codegen::LlvmOptions llvm_options(const BuildOptions& options) {
    codegen::LlvmOptions llvm;
    llvm.opt_level = options.opt_level;
    llvm.threads = options.threads;
    return llvm;
}

int CompiledModel::kernel_of(const std::string& node, const std::string& op,
                             const std::string& output_type) const {
    for (size_t k = 0; k < kernels.size(); ++k)
        if (kernels[k]->name == node) return int(k);
    for (size_t k = 0; k < kernel_nodes.size() && !op.empty() && !output_type.empty(); ++k)
        for (int n : kernel_nodes[k]) {
            const graph::Node& gn = graph.nodes[size_t(n)];
            if (gn.name == node && gn.op == op && !gn.outputs.empty() &&
                graph.values[size_t(gn.outputs[0])].type.str() == output_type)
                return int(k);
        }
    for (size_t k = 0; k < kernel_nodes.size() && !op.empty(); ++k)
        for (int n : kernel_nodes[k])
            if (graph.nodes[size_t(n)].name == node && graph.nodes[size_t(n)].op == op)
                return int(k);
    const int n = graph.find_node(node);
    for (size_t k = 0; k < kernel_nodes.size() && n >= 0; ++k)
        if (std::find(kernel_nodes[k].begin(), kernel_nodes[k].end(), n) != kernel_nodes[k].end())
            return int(k);
    return -1;
}

std::vector<std::string> unmatched_traces(const CompiledModel& model,
                                          const std::map<std::string, schedule::Trace>& traces) {
    std::vector<std::string> out;
    if (model.target != "llvm") return out;
    std::set<std::string> used;
    for (const KernelSchedule& ks : model.schedules) used.insert(ks.traced_node);
    for (const auto& entry : traces)
        if (!used.count(entry.first)) out.push_back(entry.first);
    return out;
}

int CompiledModel::records_applied() const {
    int n = 0;
    for (const RecordUse& u : record_uses) n += u.applied ? 1 : 0;
    return n;
}

int CompiledModel::kernels_compiled() const {
    return int(std::count(kernel_compiled.begin(), kernel_compiled.end(), true));
}

std::string CompiledModel::records_summary(const std::string& records) const {
    if (records.empty()) return "";
    if (!records_note.empty()) return records_note;
    std::string text = "tuning records " + records + ": " + std::to_string(records_applied()) +
                       " of " + std::to_string(kernels.size()) + " kernels tuned";
    std::string skipped;
    int n = 0;
    for (const RecordUse& u : record_uses)
        if (!u.applied) {
            if (n++ < 4) skipped += (n > 1 ? "; " : "") + u.kernel + " (" + u.reason + ")";
        }
    if (n > 4) skipped += "; ...";
    if (n > 0) text += "; " + std::to_string(n) + " skipped: " + skipped;
    return text;
}

std::shared_ptr<CompiledModel> build(const graph::Graph& g, const BuildOptions& options,
                                     const std::function<void(int, int)>& progress) {
    assert_engine_work_allowed("driver::build");
    const Target& target = find_target(options.target);
    TS_USER_CHECK(options.opt_level >= 0 && options.opt_level <= 3)
        << "opt level must be 0..3, got " << options.opt_level;
    auto t0 = std::chrono::steady_clock::now();
    auto model = std::make_shared<CompiledModel>();
    model->target = target.name;
    model->graph = optimize(g, options, &model->pass_records);
    if (target.name == "cuda") {
        build_cuda_kernels(*model, options);
        model->compile_seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (progress) progress(1, 1);
        return model;
    }
    model->llvm = llvm_options(options);
    const graph::Graph& og = model->graph;
    const std::vector<std::vector<int>> groups = passes::fused_groups(og);
    // Reshapes whose input's kernel writes their output (no copy kernel).
    const std::map<int, int> views = passes::reshapes_as_views(og, groups);
    std::set<int> view_nodes;
    for (const auto& [v, node] : views) view_nodes.insert(node);
    const int n = int(groups.size());
    const int total = n + 1;  // lowering of every fused group, then one JIT compile

    std::unique_ptr<autotune::Database> records;
    if (!options.records.empty())
        records = std::make_unique<autotune::Database>(options.records, /*read_only=*/true);
    std::vector<runtime::KernelCall> calls;
    std::set<std::string> names;
    std::set<int> replaced;  // constants whose packed copy a kernel reads instead
    // One packed copy per constant and packing: the 24 steps of an unrolled
    // LSTM read the same recurrent weights, and a copy each made them stream
    // 24 x 4 MB from memory per direction instead of one 4 MB block from cache.
    std::map<std::tuple<int, std::vector<int64_t>, int, int64_t, std::vector<int64_t>>, int> packed;
    std::vector<bool> computed(og.values.size(), false);
    for (int v : og.inputs) computed[size_t(v)] = true;
    for (size_t v = 0; v < og.values.size(); ++v)
        if (og.values[v].is_constant()) computed[v] = true;
    for (int i = 0; i < n; ++i) {
        const std::vector<int>& group = groups[size_t(i)];
        if (group.size() == 1 && view_nodes.count(group[0])) {
            if (progress) progress(i + 1, total);
            continue;  // run by the kernel of its input (below)
        }
        topi::LoweredGroup lg = topi::lower_group(og, group);
        for (int v : lg.inputs)
            TS_USER_CHECK(computed[size_t(v)])
                << "fused group of node '" << og.nodes[size_t(group.back())].name << "' reads '"
                << og.values[size_t(v)].name << "' before it is computed (bad fuse_group attributes)";
        for (int v : lg.outputs) computed[size_t(v)] = true;
        ScheduledGroup sg = schedule_cpu_group(og, group, lg, options, records.get());
        // Constant matmul operands are packed into panels here, once, instead
        // of by a packing nest on every call.
        std::vector<int> args = lg.args;
        // An output only a view reshape reads: the kernel writes the
        // reshape's output (through a chain of them), which runs in it.
        std::vector<int> nodes = group;
        for (int& a : args)
            for (auto it = views.find(a); it != views.end(); it = views.find(a)) {
                nodes.push_back(it->second);
                a = og.nodes[size_t(it->second)].outputs[0];
                computed[size_t(a)] = true;
            }
        topi::PrepackResult pre = fold_constant_packing(og, sg.func, args);
        for (const topi::PrepackedOperand& op : pre.operands) {
            const graph::Value src = model->graph.values[size_t(args[op.param])];
            const tir::Buffer& xp = pre.func->params[op.param];
            const auto key = std::make_tuple(args[op.param], op.shape, op.tiled_dim, op.factor,
                                             xp.const_shape());
            if (auto it = packed.find(key); it != packed.end()) {
                args[op.param] = it->second;
                continue;
            }
            NDArray x = constant_array(src);
            graph::Value v;
            v.name = src.name + "_packed";
            v.type = {src.type.dtype, xp.const_shape()};
            auto data = std::make_shared<graph::ConstantData>();
            data->bytes = topi::pack_panels(x.raw(), op.shape,
                                            size_t(src.type.num_bytes() / src.type.num_elements()),
                                            op.tiled_dim, op.factor);
            v.constant = std::move(data);
            replaced.insert(args[op.param]);
            args[op.param] = model->graph.add_value(std::move(v));
            packed[key] = args[op.param];
        }
        tir::PrimFunc f = pre.func;
        // Kernel symbols must be unique within one JIT module.
        std::string name = f->name;
        for (int k = 1; names.count(name); ++k) name = f->name + "_" + std::to_string(k);
        if (name != f->name) f = tir::PrimFunc(name, f->params, f->body, f->attrs);
        names.insert(name);
        model->kernels.push_back(f);
        if (sg.schedule.source == "record" || !sg.skipped.empty())
            model->record_uses.push_back({name, sg.schedule.source == "record", sg.skipped});
        model->schedules.push_back(std::move(sg.schedule));

        runtime::KernelCall c;
        c.kernel = name;
        c.args = args;
        TS_CHECK(c.args.size() == f->params.size())
            << "kernel '" << name << "' has " << f->params.size() << " params but its group has "
            << c.args.size() << " inputs and outputs";
        c.nodes = nodes;
        model->kernel_nodes.push_back(nodes);
        for (int node : nodes) {
            c.flops += graph::node_flops(og, og.nodes[size_t(node)]);
            c.work_flops += graph::node_work_flops(og, og.nodes[size_t(node)]);
        }
        model->total_flops += c.flops;
        calls.push_back(std::move(c));
        if (progress) progress(i + 1, total);
    }

    if (!options.jit) {
        model->compile_seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return model;
    }
    std::shared_ptr<KernelCache> cache =
        options.kernel_cache ? options.kernel_cache : std::make_shared<KernelCache>();
    std::vector<KernelCache::Entry> compiled =
        cache->get_or_compile(model->kernels, model->llvm, &model->kernel_compiled);
    auto modules = std::make_shared<std::vector<std::shared_ptr<codegen::JitModule>>>();
    for (size_t i = 0; i < calls.size(); ++i) {
        calls[i].fn = compiled[i].fn;
        if (std::find(modules->begin(), modules->end(), compiled[i].module) == modules->end())
            modules->push_back(compiled[i].module);
    }

    std::vector<graph::TensorType> types;
    std::vector<NDArray> constants;
    types.reserve(og.values.size());
    constants.reserve(og.values.size());
    // A constant replaced by its packed copy everywhere is not kept.
    std::set<int> read(og.outputs.begin(), og.outputs.end());
    for (const runtime::KernelCall& c : calls) read.insert(c.args.begin(), c.args.end());
    for (size_t v = 0; v < og.values.size(); ++v) {
        const graph::Value& val = og.values[v];
        types.push_back(val.type);
        const bool dropped = replaced.count(int(v)) && !read.count(int(v));
        constants.push_back(val.is_constant() && !dropped ? constant_array(val) : NDArray());
    }
    model->executor = std::make_shared<runtime::GraphExecutor>(
        std::move(types), std::move(constants), og.inputs, og.outputs, std::move(calls), modules);
    model->compile_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (progress) progress(total, total);
    return model;
}

std::vector<NDArray> interpret_graph(const graph::Graph& g, const std::vector<NDArray>& inputs) {
    check_inputs(g, inputs);
    std::vector<NDArray> buffers(g.values.size());
    for (size_t v = 0; v < g.values.size(); ++v) {
        if (g.values[v].is_constant()) buffers[v] = constant_array(g.values[v]);
    }
    for (size_t i = 0; i < inputs.size(); ++i) buffers[size_t(g.inputs[i])] = inputs[i].copy();
    for (int i = 0; i < int(g.nodes.size()); ++i) {
        const graph::Node& node = g.nodes[size_t(i)];
        tir::PrimFunc f = topi::lower_node(g, i);
        std::vector<void*> args;
        for (int v : node.inputs) {
            TS_CHECK(buffers[size_t(v)].defined())
                << "value '" << g.values[size_t(v)].name << "' read by node '" << node.name
                << "' before it was computed";
            args.push_back(buffers[size_t(v)].raw());
        }
        for (int v : node.outputs) {
            buffers[size_t(v)] = NDArray::empty(g.values[size_t(v)].type);
            args.push_back(buffers[size_t(v)].raw());
        }
        tir::interpret(f, args);
    }
    std::vector<NDArray> outputs;
    for (int v : g.outputs) {
        TS_CHECK(buffers[size_t(v)].defined())
            << "graph output '" << g.values[size_t(v)].name << "' is never computed";
        outputs.push_back(buffers[size_t(v)].copy());
    }
    return outputs;
}

}  // namespace tessera::driver
