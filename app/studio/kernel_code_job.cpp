// kernelCodeOf: driver::build (jit = false) → the node's kernel → tir::print,
// emit_llvm_ir, emit_assembly; cudaSourceOfNode: the GPU pass list, the fused
// group, schedule_gpu_default, emit_cuda_source.
#include "app/studio/kernel_code_job.h"

#include <algorithm>

#include "engine/codegen/cuda/cuda_codegen.h"
#include "engine/codegen/cuda/cuda_model.h"
#include "engine/core/error.h"
#include "engine/passes/fuse_ops.h"
#include "engine/tir/printer.h"
#include "engine/topi/lower_group.h"
#include "engine/topi/schedule_gpu.h"

namespace tessera::studio {

KernelCode kernelCodeOf(const graph::Graph& graph, const BuildSettings& settings,
                        const KernelTraces& traces, const QString& node,
                        std::shared_ptr<const driver::CompiledModel> cached,
                        const JobContext& context) {
    KernelCode code;
    code.node = node;
    driver::BuildOptions options = settings.buildOptions(traces);
    options.jit = false;
    code.model = cached ? cached : driver::build(graph, options);
    if (context.isCancelled()) throw UserError("cancelled");
    const driver::CompiledModel& model = *code.model;
    const std::string name = node.toStdString();
    TS_USER_CHECK(model.graph.find_node(name) >= 0)
        << "node '" << name << "' does not run: the graph passes (" << options.passes.size()
        << ") removed or folded it";
    const int k = model.kernel_of(name);
    TS_USER_CHECK(k >= 0) << "node '" << name << "' runs in no kernel";
    const tir::PrimFunc& f = model.kernels[size_t(k)];
    code.kernel = QString::fromStdString(f->name);
    for (int n : model.kernel_nodes[size_t(k)])
        code.nodes << QString::fromStdString(model.graph.nodes[size_t(n)].name);
    code.loopIr = QString::fromStdString(tir::print(f));
    const codegen::LlvmOptions llvm = driver::llvm_options(options);
    code.llvmIr = QString::fromStdString(codegen::emit_llvm_ir({f}, llvm));
    if (context.isCancelled()) throw UserError("cancelled");
    code.assembly = QString::fromStdString(codegen::emit_assembly({f}, llvm));
    if (context.isCancelled()) throw UserError("cancelled");
    code.cudaC = cudaSourceOfNode(graph, settings, node);
    return code;
}

QString cudaSourceOfNode(const graph::Graph& graph, const BuildSettings& settings,
                         const QString& node) {
    try {
        driver::BuildOptions options;
        options.opt_level = settings.optLevel;
        std::vector<std::string> spec;
        for (const QString& p : settings.passes) spec.push_back(p.toStdString());
        if (spec.empty()) spec.push_back("none");
        options.passes = codegen::cuda_pass_pipeline(spec, settings.optLevel);
        if (options.passes.empty()) options.passes.push_back("none");
        const graph::Graph g = driver::optimize(graph, options);
        const int n = g.find_node(node.toStdString());
        TS_USER_CHECK(n >= 0) << "node '" << node.toStdString()
                              << "' does not run on the CUDA target: its graph passes removed it";
        for (const std::vector<int>& group : passes::fused_groups(g)) {
            if (std::find(group.begin(), group.end(), n) == group.end()) continue;
            const tir::PrimFunc f = topi::schedule_gpu_default(topi::lower_group(g, group).func);
            return QString::fromStdString(codegen::emit_cuda_source({f}));
        }
        return "// node '" + node + "' runs in no CUDA kernel\n";
    } catch (const std::exception& e) {
        return "// no CUDA C for node '" + node + "': " + QString::fromStdString(e.what()) + "\n";
    }
}

}  // namespace tessera::studio
