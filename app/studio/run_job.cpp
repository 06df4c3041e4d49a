// Run job: driver::build + random_inputs + time_runs + executor profile.
#include "app/studio/run_job.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "engine/core/error.h"
#include "engine/driver/driver.h"
#include "engine/driver/quantization_error.h"
#include "engine/tir/printer.h"

namespace tessera::studio {

namespace {

// The Int8 error tab when there is nothing to compare layer by layer.
const QString kNoQdqPairNote =
    "No activation here has a QuantizeLinear -> DequantizeLinear pair: the per-layer int8 error "
    "compares a QDQ model (tessera quantize writes them) with its float reading. A float "
    "model, or one whose activations are quantized dynamically (DynamicQuantizeLinear, "
    "DynamicQuantizeMatMul), has no such reading.";

void checkCancelled(const JobContext& context) { context.throwIfCancelled(); }

// Enough repetitions for about `budgetMs` of measurement, within [lo, hi].
int repeatFor(double oneRunMs, double budgetMs, int lo, int hi) {
    if (!(oneRunMs > 0)) return hi;
    return std::clamp(int(std::lround(budgetMs / oneRunMs)), lo, hi);
}

// Bytes a fused kernel moves: its inputs produced outside it, and its outputs
// that something outside it (or the graph output) reads.
double kernelBytes(const graph::Graph& g, const std::vector<int>& nodes) {
    std::set<int> inside(nodes.begin(), nodes.end()), counted;
    double bytes = 0;
    auto count = [&](int v) {
        if (v >= 0 && size_t(v) < g.values.size() && counted.insert(v).second)
            bytes += double(g.values[size_t(v)].type.num_bytes());
    };
    for (int n : nodes) {
        if (n < 0 || size_t(n) >= g.nodes.size()) continue;
        for (int v : g.nodes[size_t(n)].inputs)
            if (!inside.count(g.values[size_t(v)].producer)) count(v);
    }
    for (int n : nodes) {
        if (n < 0 || size_t(n) >= g.nodes.size()) continue;
        for (int v : g.nodes[size_t(n)].outputs) {
            bool usedOutside = std::find(g.outputs.begin(), g.outputs.end(), v) != g.outputs.end();
            for (size_t m = 0; m < g.nodes.size() && !usedOutside; ++m)
                if (!inside.count(int(m)))
                    for (int in : g.nodes[m].inputs) usedOutside |= in == v;
            if (usedOutside) count(v);
        }
    }
    return bytes;
}

driver::Timing timingOf(std::vector<double> ms) {
    driver::Timing t;
    if (ms.empty()) return t;
    std::sort(ms.begin(), ms.end());
    t.median_ms = ms[ms.size() / 2];
    t.min_ms = ms.front();
    t.repeat = int(ms.size());
    return t;
}

// The CUDA executor of a model built for "cuda"; without a GPU a UserError
// that says what was compiled and why it cannot run.
std::shared_ptr<runtime::CudaGraphExecutor> gpuExecutor(const driver::CompiledModel& compiled) {
    const driver::CudaModel& m = *compiled.cuda;
    try {
        return m.make_executor();
    } catch (const UserError& e) {
        throw UserError("compiled " + std::to_string(m.kernels.size()) + " kernels for CUDA (" +
                        m.compiled.arch + ", PTX " + std::to_string(m.compiled.ptx.size() / 1024) +
                        " KiB) but cannot run them: " + e.what() +
                        "; the code panes and Export work without a GPU");
    }
}

}  // namespace

RunResult runAndProfile(const graph::Graph& graph, const BuildSettings& settings,
                        const JobContext& context, const KernelTraces& traces,
                        std::shared_ptr<driver::KernelCache> kernels, const QString& quantizedModel,
                        const QString& inputDir) {
    context.reportProgress(0.0);
    driver::BuildOptions options = settings.buildOptions(traces);
    options.kernel_cache = std::move(kernels);
    // A hand schedule that no longer applies (a pass unchecked since, a
    // session from another build) runs the build's own schedule, as the
    // editor says; Run warns with the failing step (Export refuses).
    options.report_failing_traces = true;
    auto compiled = driver::build(graph, options, [&](int done, int total) {
        if (total > 0) context.reportProgress(0.7 * done / total);
    });
    checkCancelled(context);
    const std::vector<runtime::NDArray> inputs =
        inputDir.isEmpty()
            ? driver::random_inputs(compiled->graph)
            : driver::match_test_inputs(compiled->graph,
                                        driver::read_test_data(inputDir.toStdString(), "input"));
    driver::Timing timing;
    std::vector<runtime::KernelProfile> profile;
    if (compiled->cuda) {  // on the GPU: CUDA events around the launches
        std::shared_ptr<runtime::CudaGraphExecutor> gpu = gpuExecutor(*compiled);
        for (size_t i = 0; i < inputs.size(); ++i) gpu->set_input(i, inputs[i]);
        gpu->run();
        context.reportProgress(0.72);
        const driver::Timing probe = timingOf(gpu->time_runs(1));
        checkCancelled(context);
        timing = timingOf(gpu->time_runs(repeatFor(probe.median_ms, 1000, 3, 100)));
        context.reportProgress(0.88);
        checkCancelled(context);
        profile = gpu->profile(repeatFor(probe.median_ms, 500, 3, 50));
    } else {
        runtime::GraphExecutor& executor = *compiled->executor;
        executor.set_num_threads(settings.threads);
        for (size_t i = 0; i < inputs.size(); ++i) executor.set_input(i, inputs[i]);
        context.reportProgress(0.72);
        const driver::Timing probe = driver::time_runs(executor, 1);
        checkCancelled(context);
        timing = driver::time_runs(executor, repeatFor(probe.median_ms, 1000, 3, 100));
        context.reportProgress(0.88);
        checkCancelled(context);
        profile = executor.profile(repeatFor(probe.median_ms, 500, 3, 50));
    }
    context.reportProgress(1.0);

    RunResult result;
    result.settings = settings;
    std::set<std::string> tuned;
    for (const driver::RecordUse& u : compiled->record_uses) {
        if (u.applied)
            tuned.insert(u.kernel);
        else
            result.recordsSkipped << QString::fromStdString(u.kernel + ": " + u.reason);
    }
    result.recordsApplied = int(tuned.size());
    for (const std::string& key : driver::unmatched_traces(*compiled, options.kernel_traces))
        result.tracesUnmatched << QString::fromStdString(key);
    for (const driver::KernelSchedule& ks : compiled->schedules)
        if (!ks.hand_error.empty()) result.tracesFailed << QString::fromStdString(ks.hand_error);
    result.medianMs = timing.median_ms;
    result.minMs = timing.min_ms;
    result.repeat = timing.repeat;
    result.compileSeconds = compiled->compile_seconds;
    result.kernelsCompiled = compiled->kernels_compiled();
    if (quantizedModel.isEmpty()) result.layerErrorNote = kNoQdqPairNote;
    if (!quantizedModel.isEmpty() && !compiled->cuda) {
        std::map<std::string, std::vector<int64_t>> shapes;
        for (int v : graph.inputs)
            shapes[graph.values[size_t(v)].name] = graph.values[size_t(v)].type.shape;
        try {
            for (const driver::LayerError& e :
                 driver::layer_errors(quantizedModel.toStdString(), shapes,
                                      driver::random_inputs(graph), settings.buildOptions(traces)))
                result.layerErrors.push_back({QString::fromStdString(e.tensor),
                                              QString::fromStdString(e.node),
                                              QString::fromStdString(e.op), e.max_abs, e.rel_rms});
            if (result.layerErrors.isEmpty()) result.layerErrorNote = kNoQdqPairNote;
        } catch (const UserError& e) {
            result.layerErrorNote = QString::fromStdString(e.what());
        }
    }
    result.kernelCount = compiled->cuda ? 0 : int(compiled->kernels.size());  // CPU kernels
    result.graphNodes = int(compiled->graph.nodes.size());
    result.gflops =
        timing.median_ms > 0 ? compiled->total_flops / (timing.median_ms * 1e-3) / 1e9 : 0;
    for (const runtime::KernelProfile& k : profile) {
        KernelTime t;
        t.kernel = QString::fromStdString(k.kernel);
        t.label = t.kernel;
        if (k.nodes.size() == 1 && k.nodes[0] >= 0 &&
            size_t(k.nodes[0]) < compiled->graph.nodes.size()) {
            const std::string& name = compiled->graph.nodes[k.nodes[0]].name;
            if (!name.empty()) t.label = QString::fromStdString(name);
        }
        for (int n : k.nodes) {
            t.nodes.append(n);
            if (n >= 0 && size_t(n) < compiled->graph.nodes.size()) {
                const graph::Node& node = compiled->graph.nodes[size_t(n)];
                t.nodeNames << QString::fromStdString(node.name);
            }
        }
        t.integer = graph::any_integer_gemm(compiled->graph, k.nodes);
        t.bytes = kernelBytes(compiled->graph, k.nodes);
        t.ms = k.seconds * 1e3;
        t.flops = k.flops;
        t.workFlops = k.work_flops;
        t.tuned = tuned.count(k.kernel) > 0;
        for (const tir::PrimFunc& f : compiled->kernels)
            if (f->name == k.kernel) t.loopIr = QString::fromStdString(tir::print(f));
        result.kernels.append(t);
    }
    return result;
}

}  // namespace tessera::studio
