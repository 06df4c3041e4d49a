// Inputs and timing for the driver: random inputs, ONNX test-data folders,
// timed runs, and one ONNX conformance case.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "engine/core/error.h"
#include "engine/driver/driver.h"
#include "engine/frontend/onnx/onnx_importer.h"

namespace tessera::driver {

namespace fs = std::filesystem;
using runtime::NDArray;

std::vector<NDArray> random_inputs(const graph::Graph& g, uint64_t seed) {
    std::vector<NDArray> inputs;
    for (size_t i = 0; i < g.inputs.size(); ++i) {
        const graph::Value& v = g.values[size_t(g.inputs[i])];
        // Distinct, reproducible streams per input.
        inputs.push_back(runtime::random_ndarray(v.type, seed * 1000003 + i));
    }
    return inputs;
}

std::vector<NDArray> read_test_data(const std::string& dir, const std::string& prefix) {
    TS_USER_CHECK(fs::is_directory(dir)) << "test-data folder '" << dir << "' does not exist";
    std::vector<NDArray> arrays;
    for (int i = 0;; ++i) {
        fs::path p = fs::path(dir) / (prefix + "_" + std::to_string(i) + ".pb");
        if (!fs::exists(p)) break;
        arrays.push_back(frontend::read_tensor_pb(p.string()));
    }
    return arrays;
}

std::vector<NDArray> match_test_inputs(const graph::Graph& g, const std::vector<NDArray>& given) {
    std::vector<NDArray> inputs;
    size_t t = 0;
    for (int vi : g.inputs) {
        const graph::TensorType& type = g.values[size_t(vi)].type;
        while (t < given.size() && !(given[t].type() == type)) ++t;
        TS_USER_CHECK(t < given.size())
            << "no test input fits graph input '" << g.values[size_t(vi)].name << "' ("
            << type.str() << "); " << given.size() << " input arrays were given";
        inputs.push_back(given[t++]);
    }
    return inputs;
}

Timing time_runs(runtime::GraphExecutor& ex, int repeat) {
    TS_USER_CHECK(repeat >= 1) << "repeat must be at least 1, got " << repeat;
    using Clock = std::chrono::steady_clock;
    ex.run();  // warm-up: page in buffers and code
    std::vector<double> ms;
    ms.reserve(size_t(repeat));
    for (int r = 0; r < repeat; ++r) {
        auto t0 = Clock::now();
        ex.run();
        ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    Timing t;
    t.repeat = repeat;
    t.min_ms = ms.front();
    size_t n = ms.size();
    t.median_ms = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
    return t;
}

namespace {

constexpr double kRtol = 1e-3;
constexpr double kAtol = 1e-5;

std::string fmt_double(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}

// "unsupported op X" from an importer message, or "" when it is another error.
std::string unsupported_op_reason(const std::string& message) {
    const std::string key = "unsupported op";
    size_t pos = message.find(key);
    if (pos == std::string::npos) return "";
    size_t i = pos + key.size();
    auto skip = [&](auto pred) {
        while (i < message.size() && pred(message[i])) ++i;
    };
    skip([](char c) { return c == ' ' || c == '\'' || c == '"' || c == ':' || c == '`'; });
    size_t start = i;
    skip([](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; });
    std::string op = message.substr(start, i - start);
    return op.empty() ? key : key + " " + op;
}

// Runs every test_data_set_* of a case on an already compiled model.
ConformanceResult check_data_sets(const std::string& case_dir, CompiledModel& model,
                                  ConformanceResult r) {
    std::vector<fs::path> sets;
    for (const auto& e : fs::directory_iterator(case_dir)) {
        if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
            sets.push_back(e.path());
    }
    std::sort(sets.begin(), sets.end());
    TS_USER_CHECK(!sets.empty()) << "'" << case_dir << "' has no test_data_set_* folder";
    double worst = 0;
    for (const fs::path& set : sets) {
        std::vector<NDArray> inputs = match_test_inputs(model.graph, read_test_data(set.string(), "input"));
        std::vector<NDArray> expected = read_test_data(set.string(), "output");
        std::vector<NDArray> actual = model.run(inputs);
        TS_USER_CHECK(expected.size() == actual.size())
            << set.filename().string() << ": model has " << actual.size() << " outputs, test expects "
            << expected.size();
        for (size_t i = 0; i < actual.size(); ++i) {
            TS_USER_CHECK(actual[i].shape() == expected[i].shape())
                << set.filename().string() << ": output " << i << " is " << actual[i].type().str()
                << ", expected " << expected[i].type().str();
            runtime::Difference d = runtime::compare(actual[i], expected[i]);
            worst = std::max(worst, d.max_abs);
            if (!runtime::allclose(actual[i], expected[i], kRtol, kAtol)) {
                r.status = ConformanceResult::Failed;
                r.message = set.filename().string() + ": output " + std::to_string(i) +
                            " max abs err " + fmt_double(d.max_abs) + ", max rel err " +
                            fmt_double(d.max_rel) + " (rtol 1e-3, atol 1e-5)";
                return r;
            }
        }
    }
    r.status = ConformanceResult::Passed;
    r.message = "max abs err " + fmt_double(worst);
    return r;
}

}  // namespace

ConformanceResult run_conformance_case(const std::string& case_dir) {
    ConformanceResult r;
    r.name = fs::path(case_dir).lexically_normal().filename().string();
    if (r.name.empty()) r.name = fs::path(case_dir).lexically_normal().parent_path().filename().string();
    graph::Graph g;
    try {
        g = load_model((fs::path(case_dir) / "model.onnx").string());
    } catch (const UserError& e) {
        std::string reason = unsupported_op_reason(e.what());
        r.status = reason.empty() ? ConformanceResult::Failed : ConformanceResult::Skipped;
        r.message = reason.empty() ? std::string(e.what()) : reason;
        return r;
    } catch (const std::exception& e) {
        r.status = ConformanceResult::Failed;
        r.message = std::string("internal error: ") + e.what();
        return r;
    }
    try {
        std::shared_ptr<CompiledModel> model = build(g);
        return check_data_sets(case_dir, *model, r);
    } catch (const UserError& e) {
        r.status = ConformanceResult::Failed;
        r.message = e.what();
    } catch (const std::exception& e) {
        r.status = ConformanceResult::Failed;
        r.message = std::string("internal error: ") + e.what();
    }
    return r;
}

}  // namespace tessera::driver
