// build_cuda: graph -> scheduled functions -> one NVRTC module -> launches.
#include "engine/codegen/cuda/cuda_model.h"

#include <chrono>
#include <set>

#include "engine/core/error.h"
#include "engine/topi/schedule_gpu.h"
#include "engine/topi/topi.h"

namespace tessera::codegen {

namespace {

std::vector<tir::PrimFunc> lower_nodes(const graph::Graph& g, const std::vector<int>& nodes) {
    std::vector<tir::PrimFunc> funcs;
    std::set<std::string> names;
    for (int i : nodes) {
        tir::PrimFunc f = topi::lower_node_gpu(g, i);
        std::string name = f->name;
        for (int k = 1; names.count(name); ++k) name = f->name + "_" + std::to_string(k);
        if (name != f->name) f = tir::PrimFunc(name, f->params, f->body, f->attrs);
        names.insert(name);
        funcs.push_back(f);
    }
    return funcs;
}

}  // namespace

std::shared_ptr<CudaModel> build_cuda(const graph::Graph& g, const CudaOptions& options) {
    auto t0 = std::chrono::steady_clock::now();
    auto model = std::make_shared<CudaModel>();
    model->graph = g;
    std::vector<int> all;
    for (int i = 0; i < int(g.nodes.size()); ++i) all.push_back(i);
    model->kernels = lower_nodes(g, all);
    model->compiled = compile_cuda(model->kernels, options);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        const graph::Node& node = g.nodes[i];
        const CudaFunction& f = model->compiled.funcs[i];
        runtime::CudaCall c;
        c.name = f.name;
        c.values = node.inputs;
        c.values.insert(c.values.end(), node.outputs.begin(), node.outputs.end());
        TS_CHECK(c.values.size() == f.params.size())
            << "function '" << f.name << "' has " << f.params.size() << " params but node '"
            << node.name << "' has " << c.values.size() << " inputs and outputs";
        for (const tir::Buffer& w : f.workspaces)
            c.workspace_bytes.push_back(w.num_elements() * w->dtype.bytes());
        for (const CudaKernel& k : f.kernels)
            c.launches.push_back({k.name, k.grid, k.block, k.shared_bytes, k.args});
        c.nodes = {int(i)};
        c.flops = graph::node_flops(g, node);
        model->total_flops += c.flops;
        model->calls.push_back(std::move(c));
    }
    model->compile_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return model;
}

std::shared_ptr<runtime::CudaGraphExecutor> CudaModel::make_executor() const {
    runtime::cuda::require_available("cannot run model '" + graph.name + "' on the GPU");
    std::vector<graph::TensorType> types;
    std::vector<runtime::NDArray> constants;
    for (const graph::Value& v : graph.values) {
        types.push_back(v.type);
        if (v.is_constant()) {
            const auto& bytes = v.constant->bytes;
            TS_USER_CHECK(int64_t(bytes.size()) == v.type.num_bytes())
                << "constant '" << v.name << "' holds " << bytes.size() << " bytes but its type "
                << v.type.str() << " needs " << v.type.num_bytes();
            constants.push_back(runtime::NDArray::from_bytes(v.type, bytes.data(), bytes.size()));
        } else {
            constants.emplace_back();
        }
    }
    return std::make_shared<runtime::CudaGraphExecutor>(types, constants, graph.inputs,
                                                        graph.outputs, calls, compiled.ptx);
}

std::string cuda_source_of_nodes(const graph::Graph& g, const std::vector<int>& nodes,
                                 const CudaOptions& options) {
    return emit_cuda_source(lower_nodes(g, nodes), options);
}

}  // namespace tessera::codegen
