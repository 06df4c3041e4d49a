// build_cuda: graph -> scheduled functions -> one NVRTC module -> launches.
#include "engine/codegen/cuda/cuda_model.h"

#include <chrono>
#include <set>

#include "engine/core/error.h"
#include "engine/passes/fuse_ops.h"
#include "engine/passes/pass_manager.h"
#include "engine/topi/lower_group.h"
#include "engine/topi/schedule_gpu.h"
#include "engine/topi/topi.h"

namespace tessera::codegen {

namespace {

struct GroupFunc {
    tir::PrimFunc func;
    std::vector<int> args;  // graph values bound to the params
    std::vector<int> nodes;
};

// One scheduled function per group (passes::fused_groups order), unique names.
std::vector<GroupFunc> lower_groups(const graph::Graph& g,
                                    const std::vector<std::vector<int>>& groups,
                                    const GpuScheduleFn& schedule = nullptr) {
    std::vector<GroupFunc> out;
    std::set<std::string> names;
    for (const std::vector<int>& group : groups) {
        topi::LoweredGroup lg = topi::lower_group(g, group);
        tir::PrimFunc f = schedule ? schedule(lg.func) : tir::PrimFunc();
        if (!f.defined()) f = topi::schedule_gpu_default(lg.func);
        std::string name = f->name;
        for (int k = 1; names.count(name); ++k) name = f->name + "_" + std::to_string(k);
        if (name != f->name) f = tir::PrimFunc(name, f->params, f->body, f->attrs);
        names.insert(name);
        out.push_back({f, lg.args, group});
    }
    return out;
}

}  // namespace

std::vector<std::string> cuda_pass_pipeline(const std::vector<std::string>& spec, int opt_level) {
    std::vector<std::string> out;
    for (const std::string& p : passes::resolve_pipeline(spec, opt_level))
        if (p != "convert_layout") out.push_back(p);  // NCHWc blocking is for CPU vectors
    return out;
}

std::shared_ptr<CudaModel> build_cuda(const graph::Graph& g, const CudaOptions& options,
                                      const GpuScheduleFn& schedule) {
    auto t0 = std::chrono::steady_clock::now();
    auto model = std::make_shared<CudaModel>();
    model->graph = g;
    std::vector<GroupFunc> groups = lower_groups(g, passes::fused_groups(g), schedule);
    for (const GroupFunc& gf : groups) model->kernels.push_back(gf.func);
    model->compiled = compile_cuda(model->kernels, options);
    for (size_t i = 0; i < groups.size(); ++i) {
        const GroupFunc& gf = groups[i];
        const CudaFunction& f = model->compiled.funcs[i];
        runtime::CudaCall c;
        c.name = f.name;
        c.values = gf.args;
        TS_CHECK(c.values.size() == f.params.size())
            << "function '" << f.name << "' has " << f.params.size() << " params but its "
            << gf.nodes.size() << " nodes bind " << c.values.size() << " values";
        for (const tir::Buffer& w : f.workspaces)
            c.workspace_bytes.push_back(w.num_elements() * w->dtype.bytes());
        for (const CudaKernel& k : f.kernels)
            c.launches.push_back({k.name, k.grid, k.block, k.shared_bytes, k.args});
        c.nodes = gf.nodes;
        for (int nd : gf.nodes) c.flops += graph::node_flops(g, g.nodes[size_t(nd)]);
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

}  // namespace tessera::codegen
