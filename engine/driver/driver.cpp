// The driver's compile path: load a model, lower every node, JIT-compile the
// kernels into a GraphExecutor, and the interpreter reference run.
#include "engine/driver/driver.h"

#include <chrono>
#include <set>

#include "engine/codegen/llvm/llvm_codegen.h"
#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_importer.h"
#include "engine/tir/interpreter.h"
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

graph::Graph load_model(const std::string& path) { return frontend::import_onnx_file(path); }

tir::PrimFunc lower_op(const graph::Graph& g, int node) {
    TS_USER_CHECK(node >= 0 && node < int(g.nodes.size()))
        << "node index " << node << " out of range; the graph has " << g.nodes.size() << " nodes";
    return topi::lower_node(g, node);
}

std::vector<NDArray> CompiledModel::run(const std::vector<NDArray>& inputs) {
    TS_CHECK(executor != nullptr) << "CompiledModel without an executor";
    TS_USER_CHECK(inputs.size() == executor->num_inputs())
        << "model '" << graph.name << "' has " << executor->num_inputs() << " inputs, got "
        << inputs.size();
    for (size_t i = 0; i < inputs.size(); ++i) executor->set_input(i, inputs[i]);
    executor->run();
    std::vector<NDArray> outputs;
    for (size_t i = 0; i < executor->num_outputs(); ++i) outputs.push_back(executor->get_output(i));
    return outputs;
}

std::shared_ptr<CompiledModel> build(const graph::Graph& g, const BuildOptions& options,
                                     const std::function<void(int, int)>& progress) {
    TS_USER_CHECK(options.target == "llvm")
        << "unsupported target '" << options.target << "'; this build supports: llvm";
    TS_USER_CHECK(options.opt_level >= 0 && options.opt_level <= 3)
        << "opt level must be 0..3, got " << options.opt_level;
    auto t0 = std::chrono::steady_clock::now();
    auto model = std::make_shared<CompiledModel>();
    model->graph = g;
    const int n = int(g.nodes.size());
    const int total = n + 1;  // lowering of every node, then one JIT compile

    std::vector<runtime::KernelCall> calls;
    std::set<std::string> names;
    for (int i = 0; i < n; ++i) {
        const graph::Node& node = g.nodes[size_t(i)];
        tir::PrimFunc f = topi::lower_node(g, i);
        // Kernel symbols must be unique within one JIT module.
        std::string name = f->name;
        for (int k = 1; names.count(name); ++k) name = f->name + "_" + std::to_string(k);
        if (name != f->name) f = tir::PrimFunc(name, f->params, f->body, f->attrs);
        names.insert(name);
        model->kernels.push_back(f);

        runtime::KernelCall c;
        c.kernel = name;
        c.args = node.inputs;
        c.args.insert(c.args.end(), node.outputs.begin(), node.outputs.end());
        TS_CHECK(c.args.size() == f->params.size())
            << "kernel '" << name << "' has " << f->params.size() << " params but node '"
            << node.name << "' has " << c.args.size() << " inputs and outputs";
        c.nodes = {i};
        c.flops = graph::node_flops(g, node);
        model->total_flops += c.flops;
        calls.push_back(std::move(c));
        if (progress) progress(i + 1, total);
    }

    codegen::LlvmOptions llvm_options;
    llvm_options.opt_level = options.opt_level;
    std::shared_ptr<codegen::JitModule> jit = codegen::jit_compile(model->kernels, llvm_options);
    for (auto& c : calls) c.fn = jit->lookup(c.kernel);

    std::vector<graph::TensorType> types;
    std::vector<NDArray> constants;
    types.reserve(g.values.size());
    constants.reserve(g.values.size());
    for (const graph::Value& v : g.values) {
        types.push_back(v.type);
        constants.push_back(v.is_constant() ? constant_array(v) : NDArray());
    }
    model->executor = std::make_shared<runtime::GraphExecutor>(
        std::move(types), std::move(constants), g.inputs, g.outputs, std::move(calls), jit);
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
