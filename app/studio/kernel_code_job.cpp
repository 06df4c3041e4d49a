// kernelCodeOf: driver::build (jit = false) → the node's kernel → tir::print,
// emit_llvm_ir, emit_assembly (CPU) or emit_cuda_source and NVRTC's PTX
// (CUDA); cudaSourceOfNode: the same build for the CUDA target.
#include "app/studio/kernel_code_job.h"

#include "engine/codegen/cuda/cuda_codegen.h"
#include "engine/core/error.h"
#include "engine/tir/printer.h"

namespace tessera::studio {

namespace {

// The LLVM IR and assembly of one CPU kernel.
void fillCpuCode(KernelCode& code, const tir::PrimFunc& f, const codegen::LlvmOptions& llvm,
                 const JobContext& context) {
    const codegen::IrAndAssembly emitted = codegen::emit_llvm_ir_and_assembly({f}, llvm);
    code.llvmIr = QString::fromStdString(emitted.llvm_ir);
    code.assembly = QString::fromStdString(emitted.assembly);
    context.throwIfCancelled();
}

}  // namespace

KernelCode kernelCodeOf(const graph::Graph& graph, const BuildSettings& settings,
                        const KernelTraces& traces, const QString& node, const QString& op,
                        const QString& outputType, const QString& kernel,
                        std::shared_ptr<const driver::CompiledModel> cached,
                        const JobContext& context) {
    KernelCode code;
    code.node = node;
    driver::BuildOptions options = settings.buildOptions(traces);
    options.jit = false;
    options.report_failing_traces = true;  // the editor marks the failing step
    code.model = cached ? cached : driver::build(graph, options);
    context.throwIfCancelled();
    const driver::CompiledModel& model = *code.model;
    const std::string name = node.toStdString();
    // The kernel asked for by name, if this build has it (a graph edit
    // renames kernels: then the node's own).
    int k = kernel.isEmpty() ? -1 : model.kernel_of(kernel.toStdString());
    if (k >= 0 && model.kernels[size_t(k)]->name != kernel.toStdString()) k = -1;
    if (k < 0) {
        TS_USER_CHECK(model.graph.find_node(name) >= 0)
            << "node '" << name << "' does not run: the graph passes (" << options.passes.size()
            << ") removed or folded it";
        k = model.kernel_of(name, op.toStdString(), outputType.toStdString());
    }
    TS_USER_CHECK(k >= 0) << "node '" << name << "' runs in no kernel";
    const tir::PrimFunc& f = model.kernels[size_t(k)];
    code.kernel = QString::fromStdString(f->name);
    code.index = k;
    for (int n : model.kernel_nodes[size_t(k)]) {
        code.nodes << QString::fromStdString(model.graph.nodes[size_t(n)].name);
        code.flops += graph::node_flops(model.graph, model.graph.nodes[size_t(n)]);
    }
    code.loopIr = QString::fromStdString(tir::print(f));
    if (model.target == "cuda") {  // the kernel as the CUDA target builds and compiles it
        code.cudaC = QString::fromStdString(codegen::emit_cuda_source({f}));
        code.ptx = ptxOf(f);
        const QString none = "; the CUDA target builds no LLVM IR or host assembly: see the "
                             "CUDA C and PTX panes\n";
        code.llvmIr = none;
        code.assembly = none;
        try {  // a node without loop IR of its own leaves it undefined (the editor says so)
            if (const int alone = graph.find_node(name); alone >= 0)
                code.nodeAlone = driver::lower_op(graph, alone);
        } catch (const UserError&) {
        }
        return code;
    }
    fillCpuCode(code, f, model.llvm, context);
    code.cudaC = cudaSourceOfNode(graph, settings, node);
    code.ptx = "// PTX is compiled for the CUDA target: choose CUDA (NVRTC) in the toolbar\n";
    return code;
}

KernelCode editedKernelCode(const KernelCode& shown, const schedule::Trace& trace,
                            const JobContext& context) {
    KernelCode code = shown;
    const tir::PrimFunc f = driver::rebuild_kernel(*shown.model, size_t(shown.index), trace);
    code.loopIr = QString::fromStdString(tir::print(f));
    context.throwIfCancelled();
    fillCpuCode(code, f, shown.model->llvm, context);
    return code;
}

QString cudaSourceOfNode(const graph::Graph& graph, const BuildSettings& settings,
                         const QString& node) {
    try {
        BuildSettings gpu = settings;
        gpu.target = "cuda";
        driver::BuildOptions options = gpu.buildOptions();
        options.jit = false;
        options.records.clear();  // CPU records; the GPU's are chosen with the CUDA target
        const std::shared_ptr<driver::CompiledModel> model = driver::build(graph, options);
        const std::string name = node.toStdString();
        TS_USER_CHECK(model->graph.find_node(name) >= 0)
            << "node '" << name << "' does not run on the CUDA target: its graph passes removed it";
        const int k = model->kernel_of(name);
        if (k < 0) return "// node '" + node + "' runs in no CUDA kernel\n";
        return QString::fromStdString(codegen::emit_cuda_source({model->kernels[size_t(k)]}));
    } catch (const std::exception& e) {
        return "// no CUDA C for node '" + node + "': " + QString::fromStdString(e.what()) + "\n";
    }
}

QString ptxOf(const tir::PrimFunc& kernel) {
    try {
        return QString::fromStdString(codegen::compile_cuda({kernel}).ptx);
    } catch (const UserError& e) {  // NVRTC missing: say so, keep the other panes
        return "// no PTX: " + QString::fromStdString(e.what()) + "\n";
    }
}

}  // namespace tessera::studio
