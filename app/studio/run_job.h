// The studio's Run job: build, time and profile a model (plain C++, runs on a
// worker thread through JobRunner).
#pragma once

#include <QString>
#include <QVector>
#include <map>
#include <string>

#include "app/studio/job_runner.h"
#include "engine/graph/graph.h"
#include "engine/schedule/trace.h"

namespace tessera::studio {

struct KernelTime {
    QString label;   // the node name it covers (or the kernel symbol)
    QString kernel;  // kernel symbol
    QVector<int> nodes;
    double ms = 0;  // median per run
    double flops = 0;
    double bytes = 0;  // bytes the kernel reads and writes (inputs from outside it, outputs)
    QString loopIr;    // the compiled (scheduled) kernel
};

struct RunResult {
    double medianMs = 0;
    double minMs = 0;
    double gflops = 0;  // total flops / median time
    double compileSeconds = 0;
    int repeat = 0;
    int graphNodes = 0;  // node count of the compiled graph (KernelTime::nodes index it)
    QVector<KernelTime> kernels;
};

/// Hand-written schedules by node name (driver::BuildOptions::kernel_traces).
using KernelTraces = std::map<std::string, schedule::Trace>;

/// Builds `graph` for the CPU (the node schedules in `traces` replace the
/// default ones; a non-empty `records` tuning database supplies tuned ones),
/// runs it on seeded random inputs, times whole runs and profiles each kernel.
/// Reports progress through `context` and returns early (throwing UserError
/// "cancelled") when cancelled.
RunResult runAndProfile(const graph::Graph& graph, const JobContext& context,
                        const KernelTraces& traces = {}, const std::string& records = {});

}  // namespace tessera::studio
