// Calibration ranges for post-training quantization (see calibrate.h).
#include "engine/driver/calibrate.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "engine/core/error.h"
#include "engine/driver/driver.h"
#include "engine/frontend/onnx/onnx_importer.h"

namespace tessera::driver {

namespace fs = std::filesystem;

namespace {

// Positions from here on name graph inputs (see calibrate).
constexpr size_t kInput = size_t(1) << 30;

// Percentile calibration keeps at most this many values per tensor and run.
constexpr int64_t kSamplesPerRun = int64_t(1) << 16;

struct Stats {
    float lo = INFINITY, hi = -INFINITY;
    std::vector<float> samples;
};

void observe(Stats& s, const runtime::NDArray& a, bool sample) {
    const float* p = a.data<float>();
    const int64_t n = a.num_elements();
    for (int64_t i = 0; i < n; ++i) {
        if (!std::isfinite(p[i])) continue;
        s.lo = std::min(s.lo, p[i]);
        s.hi = std::max(s.hi, p[i]);
    }
    if (!sample) return;
    const int64_t step = std::max<int64_t>(1, n / kSamplesPerRun);
    for (int64_t i = 0; i < n; i += step)
        if (std::isfinite(p[i])) s.samples.push_back(p[i]);
}

frontend::TensorRange range_of(Stats& s, const CalibrationOptions& o) {
    if (s.lo > s.hi) return {0.f, 0.f};  // nothing finite was seen
    if (o.method == CalibrationOptions::Method::kMinMax || s.samples.empty()) return {s.lo, s.hi};
    std::sort(s.samples.begin(), s.samples.end());
    const double q = o.percentile / 100.0;
    auto at = [&](double f) {
        const size_t i = size_t(std::llround(f * double(s.samples.size() - 1)));
        return s.samples[std::min(i, s.samples.size() - 1)];
    };
    return {at(1.0 - q), at(q)};
}

}  // namespace

std::vector<std::vector<std::string>> calibration_sets(const std::string& dir) {
    TS_USER_CHECK(fs::is_directory(dir)) << "calibration folder '" << dir << "' does not exist";
    std::vector<std::vector<std::string>> sets;
    std::vector<std::string> own = test_data_files(dir, "input");
    if (!own.empty()) sets.push_back(own);
    std::vector<fs::path> subs;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.is_directory()) subs.push_back(e.path());
    std::sort(subs.begin(), subs.end());
    for (const fs::path& p : subs) {
        std::vector<std::string> files = test_data_files(p.string(), "input");
        if (!files.empty()) sets.push_back(files);
    }
    TS_USER_CHECK(!sets.empty()) << "calibration folder '" << dir
                                 << "' holds no input_0.pb, in itself or in a subfolder";
    return sets;
}

std::map<std::string, frontend::TensorRange> calibrate(
    const std::string& model_path, const std::vector<std::string>& tensors,
    const std::vector<std::vector<std::string>>& input_sets, const CalibrationOptions& o) {
    TS_USER_CHECK(!input_sets.empty()) << "calibration needs at least one input set";
    TS_USER_CHECK(o.method == CalibrationOptions::Method::kMinMax ||
                  (o.percentile > 50 && o.percentile <= 100))
        << "percentile " << o.percentile << " is not in (50, 100]";
    graph::Graph g = load_model_for_inputs(model_path, input_sets[0], {});
    // Every tensor to observe becomes a graph output (after the model's own).
    std::vector<size_t> position;
    for (const std::string& name : tensors) {
        int v = -1;
        for (size_t i = 0; i < g.values.size() && v < 0; ++i)
            if (g.values[i].name == name) v = int(i);
        TS_USER_CHECK(v >= 0) << "model '" << model_path << "': tensor '" << name
                              << "' is not a value of the imported graph";
        TS_USER_CHECK(g.values[size_t(v)].type.dtype == graph::DType::Float32)
            << "model '" << model_path << "': tensor '" << name << "' is "
            << g.values[size_t(v)].type.str() << ", not float32";
        // A graph input is observed as given (position kInput + its index).
        auto in = std::find(g.inputs.begin(), g.inputs.end(), v);
        if (in != g.inputs.end()) {
            position.push_back(kInput + size_t(in - g.inputs.begin()));
            continue;
        }
        auto at = std::find(g.outputs.begin(), g.outputs.end(), v);
        position.push_back(size_t(at - g.outputs.begin()));
        if (at == g.outputs.end()) g.outputs.push_back(v);
    }
    BuildOptions bo;
    bo.threads = o.threads;
    std::shared_ptr<CompiledModel> model = build(g, bo);
    std::vector<Stats> stats(tensors.size());
    const bool sample = o.method == CalibrationOptions::Method::kPercentile;
    for (const auto& files : input_sets) {
        std::vector<runtime::NDArray> given;
        for (const std::string& f : files) given.push_back(frontend::read_tensor_pb(f));
        const std::vector<runtime::NDArray> inputs = match_test_inputs(g, given);
        const std::vector<runtime::NDArray> out = model->run(inputs);
        for (size_t t = 0; t < tensors.size(); ++t)
            observe(stats[t], position[t] >= kInput ? inputs.at(position[t] - kInput) : out.at(position[t]),
                    sample);
    }
    std::map<std::string, frontend::TensorRange> ranges;
    for (size_t t = 0; t < tensors.size(); ++t) ranges[tensors[t]] = range_of(stats[t], o);
    return ranges;
}

}  // namespace tessera::driver
