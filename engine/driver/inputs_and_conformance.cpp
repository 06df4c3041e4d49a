// Inputs and timing for the driver: random inputs, ONNX test-data folders,
// timed runs, and one ONNX conformance case.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "engine/core/error.h"
#include "engine/driver/build_steps.h"
#include "engine/driver/boundary_types.h"
#include "engine/driver/driver.h"
#include "engine/frontend/onnx/onnx_importer.h"

namespace tessera::driver {

namespace fs = std::filesystem;
using runtime::NDArray;

// conformance_sequences.cpp: a conformance case with sequence, optional or string inputs/outputs.
ConformanceResult run_value_case(const std::string& case_dir, ConformanceResult r);

std::vector<NDArray> random_inputs(const graph::Graph& g, uint64_t seed) {
    std::vector<NDArray> inputs;
    for (size_t i = 0; i < g.inputs.size(); ++i) {
        const graph::Value& v = g.values[size_t(g.inputs[i])];
        // Distinct, reproducible streams per input.
        inputs.push_back(runtime::random_ndarray(v.type, seed * 1000003 + i));
    }
    return inputs;
}

std::vector<std::string> test_data_files(const std::string& dir, const std::string& prefix) {
    TS_USER_CHECK(fs::is_directory(dir)) << "test-data folder '" << dir << "' does not exist";
    std::vector<std::string> files;
    for (int i = 0;; ++i) {
        fs::path p = fs::path(dir) / (prefix + "_" + std::to_string(i) + ".pb");
        if (!fs::exists(p)) break;
        files.push_back(p.string());
    }
    return files;
}

std::vector<NDArray> read_test_data(const std::string& dir, const std::string& prefix) {
    std::vector<NDArray> arrays;
    for (const std::string& f : test_data_files(dir, prefix))
        arrays.push_back(frontend::read_tensor_pb(f));
    return arrays;
}

std::map<std::string, std::vector<int64_t>> input_shapes_from_files(
    const std::string& path, const std::vector<std::string>& input_files,
    const std::map<std::string, std::vector<int64_t>>& input_shapes) {
    // Symbolic dims are fixed by what the user gave: --input-shape first,
    // then the shapes the input files carry.
    std::map<std::string, std::vector<int64_t>> shapes = input_shapes;
    const frontend::IoKinds io = frontend::onnx_io_kinds(path);
    for (size_t i = 0; i < io.input_names.size() && i < input_files.size(); ++i) {
        if (io.input_fixed[i] || shapes.count(io.input_names[i]) ||
            io.inputs[i] != frontend::ValueKind::Tensor)
            continue;
        shapes[io.input_names[i]] = frontend::read_tensor_pb(input_files[i]).shape();
    }
    return shapes;
}

graph::Graph load_model_for_inputs(const std::string& path,
                                   const std::vector<std::string>& input_files,
                                   const std::map<std::string, std::vector<int64_t>>& input_shapes) {
    std::map<std::string, std::vector<int64_t>> shapes =
        input_shapes_from_files(path, input_files, input_shapes);
    try {
        return load_model(path, shapes);
    } catch (const UserError& e) {
        const std::string msg = e.what();
        if (msg.find("unsupported op") != std::string::npos ||
            msg.find("is not a tensor") != std::string::npos ||
            msg.find("is not supported (float32") != std::string::npos)
            throw;
        std::vector<std::string> files;
        std::vector<int> positions;
        // An op whose output shape depends on input values (NonZero, Unique,
        // NonMaxSuppression, Compress) is evaluated at import: freeze every input.
        const bool value_dependent = msg.find("depends on input values") != std::string::npos;
        for (size_t i = 0; i < input_files.size(); ++i) {
            runtime::NDArray a = frontend::read_tensor_pb(input_files[i]);
            graph::DType t = a.dtype();
            if (value_dependent) {
                files.push_back(input_files[i]);
                positions.push_back(int(i));
                continue;
            }
            // Shape operands (ints) and scalar attributes fed as inputs (Clip's
            // bounds, Pad's value, Range's limits) become constants.
            // (and Resize's roi/scales: 1-D float operands).
            if (t == graph::DType::Int64 || t == graph::DType::Int32 || a.num_elements() == 1 ||
                a.shape().size() == 1) {
                files.push_back(input_files[i]);
                positions.push_back(int(i));
            }
        }
        if (files.empty()) throw;
        return frontend::import_onnx_file_frozen(path, files, positions, import_options(shapes));
    }
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
    skip(
        [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; });
    std::string op = message.substr(start, i - start);
    return op.empty() ? key : key + " " + op;
}

// "unsupported dtype X" for an element type or value kind Tessera does not
// handle (float16 inputs, strings, sequences), or "".
std::string unsupported_type_reason(const std::string& message) {
    const std::string key = "element type ";
    size_t pos = message.find(key);
    if (pos != std::string::npos && message.find("is not supported", pos) != std::string::npos) {
        size_t start = pos + key.size();
        size_t end = message.find(' ', start);
        return "unsupported dtype " + message.substr(start, end - start);
    }
    if (message.find("is not a tensor") != std::string::npos) return "unsupported type (not a tensor)";
    return "";
}

std::vector<fs::path> data_sets(const std::string& case_dir) {
    std::vector<fs::path> sets;
    for (const auto& e : fs::directory_iterator(case_dir)) {
        if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
            sets.push_back(e.path());
    }
    std::sort(sets.begin(), sets.end());
    TS_USER_CHECK(!sets.empty()) << "'" << case_dir << "' has no test_data_set_* folder";
    return sets;
}

// Runs one data set on a compiled model; "" when every output is close, else
// the failure message. `worst` accumulates the largest absolute error.
std::string check_data_set(const fs::path& set, CompiledModel& model, double& worst) {
    // Declared float16/bfloat16/uint32... inputs and outputs (boundary_types.h):
    // outputs are compared in their declared types.
    const frontend::BoundaryTypes types =
        frontend::read_boundary_types((set.parent_path() / "model.onnx").string());
    std::vector<NDArray> inputs = match_test_inputs(
        model.graph, bfloat16_bits_as_values(read_test_data(set.string(), "input"),
                                             types.input_types));
    std::vector<NDArray> expected =
        bfloat16_bits_as_values(read_test_data(set.string(), "output"), types.output_types);
    std::vector<NDArray> actual = to_declared_outputs(model.run(inputs), types.output_types);
    const std::string where = set.filename().string();
    TS_USER_CHECK(expected.size() == actual.size())
        << where << ": model has " << actual.size() << " outputs, test expects " << expected.size();
    for (size_t i = 0; i < actual.size(); ++i) {
        TS_USER_CHECK(actual[i].shape() == expected[i].shape())
            << where << ": output " << i << " is " << actual[i].type().str() << ", expected "
            << expected[i].type().str();
        runtime::Difference d = runtime::compare(actual[i], expected[i]);
        worst = std::max(worst, d.max_abs);
        if (!runtime::allclose(actual[i], expected[i], kRtol, kAtol)) {
            return where + ": output " + std::to_string(i) + " max abs err " +
                   fmt_double(d.max_abs) + ", max rel err " + fmt_double(d.max_rel) +
                   " (rtol 1e-3, atol 1e-5)";
        }
    }
    return "";
}

ConformanceResult finish(ConformanceResult r, const std::string& failure, double worst) {
    r.status = failure.empty() ? ConformanceResult::Passed : ConformanceResult::Failed;
    r.message = failure.empty() ? "max abs err " + fmt_double(worst) : failure;
    return r;
}

// The case body; UserError / other exceptions are turned into results by the caller.
// The graph saved as ONNX and read back (the studio's Save as ONNX, reopened).
graph::Graph saved_and_reloaded(const graph::Graph& g, const std::string& model_path) {
    return frontend::import_onnx_bytes(frontend::export_onnx_bytes(g), model_path + " (saved)");
}

ConformanceResult run_case(const std::string& case_dir, ConformanceResult r, bool round_trip) {
    TS_USER_CHECK(fs::is_directory(case_dir))
        << "test case folder '" << case_dir << "' does not exist";
    const std::string model_path = (fs::path(case_dir) / "model.onnx").string();
    if (fs::exists(model_path) && frontend::onnx_io_kinds(model_path).any_values()) {
        if (round_trip) {  // sequence and optional values live outside the graph IR
            r.status = ConformanceResult::Skipped;
            r.message = "sequence or optional values: not saved as ONNX";
            return r;
        }
        return run_value_case(case_dir, r);
    }
    graph::Graph g;
    try {
        g = load_model(model_path);
    } catch (const UserError& e) {
        std::string reason = unsupported_op_reason(e.what());
        if (reason.empty()) reason = unsupported_type_reason(e.what());
        if (!reason.empty()) {
            r.status = ConformanceResult::Skipped;
            r.message = reason;
            return r;
        }
        // Maybe a shape operand fed through a graph input (Reshape's `shape`
        // in ONNX's tests): freeze it from each data set, building once per
        // set since each set may hold other shapes.
        double worst = 0;
        for (const fs::path& set : data_sets(case_dir)) {
            graph::Graph frozen =
                load_model_for_inputs(model_path, test_data_files(set.string(), "input"));
            if (round_trip) frozen = saved_and_reloaded(frozen, model_path);
            std::shared_ptr<CompiledModel> model = build(frozen);
            std::string failure = check_data_set(set, *model, worst);
            if (!failure.empty()) return finish(r, failure, worst);
        }
        return finish(r, "", worst);
    }
    std::vector<fs::path> sets = data_sets(case_dir);
    if (round_trip) g = saved_and_reloaded(g, model_path);
    std::shared_ptr<CompiledModel> model = build(g);
    double worst = 0;
    for (const fs::path& set : sets) {
        std::string failure = check_data_set(set, *model, worst);
        if (!failure.empty()) return finish(r, failure, worst);
    }
    return finish(r, "", worst);
}

}  // namespace

ConformanceResult run_conformance_case(const std::string& case_dir, bool round_trip) {
    ConformanceResult r;
    r.name = fs::path(case_dir).lexically_normal().filename().string();
    if (r.name.empty())
        r.name = fs::path(case_dir).lexically_normal().parent_path().filename().string();
    try {
        return run_case(case_dir, r, round_trip);
    } catch (const UserError& e) {
        std::string reason = unsupported_type_reason(e.what());
        if (reason.empty()) reason = unsupported_op_reason(e.what());
        r.status = reason.empty() ? ConformanceResult::Failed : ConformanceResult::Skipped;
        r.message = reason.empty() ? std::string(e.what()) : reason;
    } catch (const std::exception& e) {
        r.status = ConformanceResult::Failed;
        std::string msg = e.what();
        r.message = msg.rfind("internal error", 0) == 0 ? msg : "internal error: " + msg;
    }
    return r;
}

}  // namespace tessera::driver
