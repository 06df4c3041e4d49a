// Per-layer quantization error (see quantization_error.h).
#include "engine/driver/quantization_error.h"

#include <cmath>
#include <set>

#include "engine/core/error.h"
#include "engine/core/thread_guard.h"
#include "engine/driver/build_steps.h"
#include "engine/frontend/onnx/onnx_importer.h"

namespace tessera::driver {

namespace {

// Node outputs by name: float32 values a node computes.
std::map<std::string, int> computed_floats(const graph::Graph& g) {
    std::map<std::string, int> out;
    for (const graph::Node& n : g.nodes)
        for (int v : n.outputs)
            if (g.values[size_t(v)].type.dtype == graph::DType::Float32)
                out.emplace(g.values[size_t(v)].name, v);
    return out;
}

// `g` with `values` appended to its outputs; their positions in the outputs.
std::vector<size_t> observe(graph::Graph& g, const std::vector<int>& values) {
    std::vector<size_t> at;
    for (int v : values) {
        auto it = std::find(g.outputs.begin(), g.outputs.end(), v);
        at.push_back(size_t(it - g.outputs.begin()));
        if (it == g.outputs.end()) g.outputs.push_back(v);
    }
    return at;
}

}  // namespace

bool has_quantized_tensors(const graph::Graph& g) {
    for (const graph::Value& v : g.values)
        if (!v.quantization.empty()) return true;
    return false;
}

std::vector<LayerError> layer_errors(
    const std::string& path, const std::map<std::string, std::vector<int64_t>>& input_shapes,
    const std::vector<runtime::NDArray>& inputs, const BuildOptions& options) {
    assert_engine_work_allowed("driver::layer_errors");
    frontend::ImportOptions io = import_options(input_shapes);
    graph::Graph quantized = frontend::import_onnx_file(path, io);
    io.activations_in_float = true;
    graph::Graph reference = frontend::import_onnx_file(path, io);
    TS_USER_CHECK(quantized.inputs.size() == reference.inputs.size())
        << path << ": its float reading has other inputs than the model";

    const std::map<std::string, int> ref = computed_floats(reference);
    std::vector<int> qv, rv;
    std::vector<LayerError> rows;
    std::set<std::string> seen;
    for (const graph::Node& n : quantized.nodes)
        for (int v : n.outputs) {
            const graph::Value& val = quantized.values[size_t(v)];
            auto r = ref.find(val.name);
            if (val.type.dtype != graph::DType::Float32 || r == ref.end() ||
                !(reference.values[size_t(r->second)].type == val.type) ||
                !seen.insert(val.name).second)
                continue;
            qv.push_back(v);
            rv.push_back(r->second);
            rows.push_back({val.name, n.name, n.op, 0, 0, val.type.num_elements()});
        }
    if (rows.empty() || graph::print(quantized) == graph::print(reference)) return {};
    const std::vector<size_t> qat = observe(quantized, qv), rat = observe(reference, rv);
    BuildOptions bo = options;
    bo.kernel_cache = nullptr;
    bo.kernel_traces.clear();  // hand schedules name the shown graph's nodes
    const std::vector<runtime::NDArray> qout = build(quantized, bo)->run(inputs);
    const std::vector<runtime::NDArray> rout = build(reference, bo)->run(inputs);
    for (size_t i = 0; i < rows.size(); ++i) {
        const float* a = qout.at(qat[i]).data<float>();
        const float* b = rout.at(rat[i]).data<float>();
        double diff2 = 0, ref2 = 0, worst = 0;
        for (int64_t k = 0; k < rows[i].elements; ++k) {
            const double d = double(a[k]) - double(b[k]);
            diff2 += d * d;
            ref2 += double(b[k]) * double(b[k]);
            worst = std::max(worst, std::fabs(d));
        }
        rows[i].max_abs = worst;
        rows[i].rel_rms = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
    }
    return rows;
}

}  // namespace tessera::driver
