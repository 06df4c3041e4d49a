// build_cuda: graph -> scheduled functions -> one NVRTC module -> launches.
#include "engine/driver/cuda_model.h"

#include <chrono>
#include <set>

#include "engine/core/error.h"
#include "engine/graph/passes/fuse_ops.h"
#include "engine/topi/lower_group.h"
#include "engine/topi/gpu/schedule_gpu.h"
#include "engine/topi/topi.h"

namespace tessera::driver {

namespace {

struct GroupFunc {
    tir::PrimFunc func;
    std::vector<int> args;  // graph values bound to the params
    std::vector<int> nodes;
};

// One scheduled function per group (passes::fused_groups order), unique names.
std::vector<GroupFunc> lower_groups(const graph::Graph& g,
                                    const std::vector<std::vector<int>>& groups,
                                    const GpuScheduleFn& schedule) {
    std::vector<GroupFunc> out;
    std::set<std::string> names;
    for (const std::vector<int>& group : groups) {
        topi::LoweredGroup lg = topi::lower_group(g, group);
        tir::PrimFunc f = schedule ? schedule(lg.func, group) : tir::PrimFunc();
        f = topi::schedule_gpu_default(f.defined() ? f : lg.func);  // keeps what is bound
        std::string name = f->name;
        for (int k = 1; names.count(name); ++k) name = f->name + "_" + std::to_string(k);
        if (name != f->name) f = tir::PrimFunc(name, f->params, f->body, f->attrs);
        names.insert(name);
        out.push_back({f, lg.args, group});
    }
    return out;
}

}  // namespace

std::shared_ptr<CudaModel> build_cuda(const graph::Graph& g, const codegen::CudaOptions& options,
                                      const GpuScheduleFn& schedule, bool compile) {
    auto t0 = std::chrono::steady_clock::now();
    auto model = std::make_shared<CudaModel>();
    model->graph = g;
    std::vector<GroupFunc> groups = lower_groups(g, passes::fused_groups(g), schedule);
    for (const GroupFunc& gf : groups) {
        model->kernels.push_back(gf.func);
        model->kernel_nodes.push_back(gf.nodes);
        for (int nd : gf.nodes) model->total_flops += graph::node_flops(g, g.nodes[size_t(nd)]);
    }
    if (compile) {
        model->compiled = codegen::compile_cuda(model->kernels, options);
        for (size_t i = 0; i < groups.size(); ++i) {
            const GroupFunc& gf = groups[i];
            const codegen::CudaFunction& f = model->compiled.funcs[i];
            runtime::CudaCall c;
            c.name = f.name;
            c.values = gf.args;
            TS_CHECK(c.values.size() == f.params.size())
                << "function '" << f.name << "' has " << f.params.size() << " params but its "
                << gf.nodes.size() << " nodes bind " << c.values.size() << " values";
            for (const tir::Buffer& w : f.workspaces)
                c.workspace_bytes.push_back(w.num_elements() * w->dtype.bytes());
            for (const codegen::CudaKernel& k : f.kernels)
                c.launches.push_back({k.name, k.grid, k.block, k.shared_bytes, k.args});
            c.nodes = gf.nodes;
            for (int nd : gf.nodes) c.flops += graph::node_flops(g, g.nodes[size_t(nd)]);
            model->calls.push_back(std::move(c));
        }
    }
    model->compile_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return model;
}

std::shared_ptr<runtime::CudaGraphExecutor> CudaModel::make_executor() const {
    runtime::cuda::require_available("cannot run model '" + graph.name + "' on the GPU");
    TS_USER_CHECK(!compiled.ptx.empty())
        << "model '" << graph.name << "' was scheduled for the GPU but not compiled";
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

}  // namespace tessera::driver
