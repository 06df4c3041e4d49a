// The studio's Run job: build, time and profile a model (plain C++, runs on a
// worker thread through JobRunner).
#pragma once

#include <QString>
#include <QVector>
#include <map>
#include <memory>
#include <string>

#include "app/studio/build_settings.h"
#include "app/studio/job_runner.h"
#include "engine/graph/graph.h"

namespace tessera::studio {

struct KernelTime {
    QString label;          // the node name it covers (or the kernel symbol)
    QString kernel;         // kernel symbol
    QVector<int> nodes;     // indices into the compiled graph
    QStringList nodeNames;  // their names (the model's node names where kept)
    double ms = 0;          // median per run
    double flops = 0;       // the ops' definitions (graph::node_flops)
    double workFlops = 0;   // what the kernel executes (differs for Winograd)
    double bytes = 0;       // bytes the kernel reads and writes (inputs from outside it, outputs)
    QString loopIr;         // the compiled (scheduled) kernel
    bool tuned = false;     // scheduled by a tuning record
    bool integer = false;   // an integer GEMM (nn.matmul_u8i8): its roof is the int8 peak
};

/// One layer's fp32-vs-int8 error (driver::LayerError) for the studio.
struct LayerErrorRow {
    QString tensor, node, op;
    double maxAbs = 0, relRms = 0;
};

struct RunResult {
    double medianMs = 0;
    double minMs = 0;
    double gflops = 0;  // total flops / median time
    double compileSeconds = 0;
    int kernelsCompiled = 0;  // by this build; the others came from the kernel cache
    int kernelCount = 0;
    int repeat = 0;
    int graphNodes = 0;  // node count of the compiled graph (KernelTime::nodes index it)
    QVector<KernelTime> kernels;
    BuildSettings settings;  // what was built and run
    int recordsApplied = 0;  // kernels scheduled by tuning records
    /// "kernel: reason" for each kernel whose records were not applied.
    QStringList recordsSkipped;
    /// Hand schedules (the editor's) that scheduled no kernel of this build:
    /// their node or kernel is not in it (driver::unmatched_traces).
    QStringList tracesUnmatched;
    /// Why each hand schedule that matched a kernel but did not apply failed
    /// (the kernel ran the build's own schedule instead).
    QStringList tracesFailed;
    /// A quantized model's per-layer error against its float reading, on the
    /// Run's inputs (empty for a float model); why there is none otherwise.
    QVector<LayerErrorRow> layerErrors;
    QString layerErrorNote;
};

/// Builds `graph` with `settings` (the node schedules in `traces` replace the
/// default or tuned ones), runs it on seeded random inputs on settings.threads
/// threads, times whole runs and profiles each kernel. Reports progress
/// through `context` and returns early (throwing Cancelled) when
/// cancelled. `kernels` (may be null): compiled kernels to reuse and add to,
/// so a Run after an edit compiles only the kernels the edit changed.
/// `quantizedModel` (a QDQ model's file, unedited): its per-layer fp32-vs-int8
/// error is measured on the same inputs (driver::layer_errors).
/// `inputDir` (a test-data folder the model was loaded for): its input_N.pb
/// files are the inputs instead of random ones.
RunResult runAndProfile(const graph::Graph& graph, const BuildSettings& settings,
                        const JobContext& context, const KernelTraces& traces = {},
                        std::shared_ptr<driver::KernelCache> kernels = nullptr,
                        const QString& quantizedModel = {}, const QString& inputDir = {});

}  // namespace tessera::studio
