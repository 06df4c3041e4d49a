// driver::build for target "cuda" (build_steps.h).
#include <memory>

#include "engine/autotune/database.h"
#include "engine/core/error.h"
#include "engine/driver/build_steps.h"
#include "engine/driver/tune_gpu.h"
#include "engine/topi/lower_group.h"

namespace tessera::driver {

tir::PrimFunc apply_kernel_trace(const schedule::Trace& trace, const tir::PrimFunc& kernel,
                                 const std::string& node, size_t fused_nodes) {
    try {
        return trace.apply(kernel).func();
    } catch (const UserError& e) {
        throw UserError("the schedule of node '" + node + "' does not apply to its kernel '" +
                        kernel->name + "' (" + std::to_string(fused_nodes) +
                        " fused nodes): " + e.what());
    }
}

std::string traced_key(const graph::Graph& g, const std::vector<int>& group,
                       const BuildOptions& options) {
    if (options.kernel_traces.empty()) return "";
    if (std::string kernel = topi::group_kernel_name(g, group); options.kernel_traces.count(kernel))
        return kernel;
    for (int nd : group) {
        const std::string& name = g.nodes[size_t(nd)].name;
        if (options.kernel_traces.count(name) && g.find_node(name) == nd) return name;
    }
    return "";
}

void build_cuda_kernels(CompiledModel& model, const BuildOptions& options) {
    std::unique_ptr<autotune::Database> db;
    GpuRecordsUse use;
    GpuScheduleFn from_records;
    if (!options.records.empty()) {
        db = std::make_unique<autotune::Database>(options.records, /*read_only=*/true);
        from_records = gpu_record_schedule(*db, autotune::gpu_fingerprint(), &use);
    }
    const graph::Graph& g = model.graph;
    auto schedule = [&](const tir::PrimFunc& f, const std::vector<int>& nodes) {
        if (const std::string key = traced_key(g, nodes, options); !key.empty())
            return apply_kernel_trace(options.kernel_traces.at(key), f, key, nodes.size());
        return from_records ? from_records(f, nodes) : tir::PrimFunc();
    };
    model.cuda = build_cuda(g, {}, schedule, options.jit);
    model.kernels = model.cuda->kernels;
    model.kernel_nodes = model.cuda->kernel_nodes;
    model.total_flops = model.cuda->total_flops;
    if (db) {
        model.records_note = gpu_records_note(*db, use);
        for (const std::string& k : use.tuned_kernels) model.record_uses.push_back({k, true, ""});
    }
}

}  // namespace tessera::driver
