// The studio's code views: the code of the kernel that runs a node, as the
// build with the studio's settings makes it. Loop IR, LLVM IR and assembly
// are what `tessera inspect MODEL --opt-level N --threads T --op NODE --print
// loop|llvm|asm` prints; the CUDA C is the node's fused group as the CUDA
// target builds it (`inspect --target cuda --op NODE --print cuda`); with the
// CUDA target selected, loop IR, CUDA C and PTX are `inspect --target cuda
// --op NODE --print loop|cuda|ptx`. Plain
// C++, runs on a worker thread through JobRunner.
#pragma once

#include <QString>
#include <QStringList>
#include <memory>

#include "app/studio/build_settings.h"
#include "app/studio/job_runner.h"
#include "engine/driver/driver.h"

namespace tessera::studio {

struct KernelCode {
    QString node;
    QString kernel;      // the kernel's symbol
    QStringList nodes;   // the nodes it runs (their names)
    QString loopIr, llvmIr, assembly, cudaC;
    QString ptx;         // NVRTC's PTX of the kernel (CUDA target), else a note
    QString error;       // why there is no kernel to show (the other fields empty)
    int index = -1;      // in model->kernels
    double flops = 0;    // per run of the kernel (its nodes' flops)
    /// CUDA target: the node alone with its default loops (the GPU rules are
    /// not traces yet, so the schedule editor starts from it), lowered here,
    /// off the UI thread.
    tir::PrimFunc nodeAlone;
    /// The scheduled build (no JIT) the texts come from: reused for the next
    /// node while the graph, settings and schedules stay the same.
    std::shared_ptr<const driver::CompiledModel> model;
};

/// The code of the kernel that runs `node` when `graph` is built with
/// `settings` and `traces`; `cached`, when not null, is that build already.
/// Nodes can share a name (an int8 conv's im2col and GEMM nodes keep the
/// ONNX node's): `op`, when given, picks the kernel of the node of that
/// name with that op, and `outputType` (TensorType::str of its first output)
/// among several of that op. With `kernel` (a name as the kernel table and `run
/// --profile` print it), that kernel of the build instead, when it has one
/// of that name. UserError when the node runs in no kernel (a graph pass
/// removed it) or a hand schedule does not apply to its kernel.
KernelCode kernelCodeOf(const graph::Graph& graph, const BuildSettings& settings,
                        const KernelTraces& traces, const QString& node, const QString& op,
                        const QString& outputType, const QString& kernel,
                        std::shared_ptr<const driver::CompiledModel> cached,
                        const JobContext& context);

/// `shown` (a CPU kernel's code) with its kernel rebuilt from `trace`
/// (driver::rebuild_kernel on shown.model): the loop IR, LLVM IR and
/// assembly of that one kernel, without building the model again (a
/// schedule edit). The CUDA C and PTX stay. ScheduleError when a step fails.
KernelCode editedKernelCode(const KernelCode& shown, const schedule::Trace& trace,
                            const JobContext& context);

/// The CUDA C of the fused group that runs `node` when the CUDA target builds
/// `graph` with the passes of `settings` (without its CPU-only layout pass).
QString cudaSourceOfNode(const graph::Graph& graph, const BuildSettings& settings,
                         const QString& node);

/// NVRTC's PTX of one GPU-scheduled kernel (as in the module `tessera compile
/// --target cuda` builds); a comment saying why when NVRTC is missing.
QString ptxOf(const tir::PrimFunc& kernel);

}  // namespace tessera::studio
