// ONNX conformance cases whose inputs or outputs are sequences, optionals or
// string tensors: those inputs are frozen into the model from the test data
// (SequenceProto / OptionalProto / string TensorProto), the compiled graph's
// tensor outputs are regrouped by the import's output layout and compared
// with the expected values (strings exactly). (Added by helper "seq".)
#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "engine/core/error.h"
#include "engine/driver/build_steps.h"
#include "engine/driver/driver.h"
#include "engine/frontend/onnx/onnx_importer.h"

namespace tessera::driver {

namespace fs = std::filesystem;
using frontend::ValueKind;
using runtime::NDArray;


namespace {

constexpr double kRtol = 1e-3;
constexpr double kAtol = 1e-5;

std::string fmt(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}

const char* kind_name(ValueKind k) {
    switch (k) {
        case ValueKind::Tensor: return "tensor";
        case ValueKind::Strings: return "string tensor";
        case ValueKind::Sequence: return "sequence";
        case ValueKind::Optional: return "optional";
    }
    return "?";
}

// "" when close, else why not; `worst` accumulates the largest absolute error.
std::string compare_tensor(const NDArray& actual, const NDArray& expected, const std::string& what,
                           double& worst) {
    if (actual.shape() != expected.shape())
        return what + " is " + actual.type().str() + ", expected " + expected.type().str();
    runtime::Difference d = runtime::compare(actual, expected);
    worst = std::max(worst, d.max_abs);
    if (!runtime::allclose(actual, expected, kRtol, kAtol))
        return what + " max abs err " + fmt(d.max_abs) + ", max rel err " + fmt(d.max_rel) +
               " (rtol 1e-3, atol 1e-5)";
    return "";
}

std::string compare_output(const frontend::OutputLayout& l, const std::vector<NDArray>& actual,
                           const frontend::OnnxValue& e, const std::string& what, double& worst) {
    ValueKind got = l.kind == ValueKind::Optional ? l.element : l.kind;
    ValueKind want = e.kind == ValueKind::Optional ? e.element : e.kind;
    if (l.kind == ValueKind::Optional || e.kind == ValueKind::Optional) {
        if (l.kind != e.kind) return what + " is a " + kind_name(l.kind) + ", expected a " + kind_name(e.kind);
        if (l.present != e.present)
            return what + (l.present ? " holds a value, expected none" : " is empty, expected a value");
        if (!l.present) return "";
    }
    if (got != want) return what + " is a " + kind_name(got) + ", expected a " + kind_name(want);
    if (got == ValueKind::Strings) {
        if (l.string_shape != e.string_shape || l.strings != e.strings)
            return what + ": the strings differ from the expected ones";
        return "";
    }
    if (l.outputs.size() != e.tensors.size())
        return what + " has " + std::to_string(l.outputs.size()) + " tensors, expected " +
               std::to_string(e.tensors.size());
    for (size_t k = 0; k < l.outputs.size(); ++k) {
        std::string el = got == ValueKind::Sequence ? what + " element " + std::to_string(k) : what;
        std::string f = compare_tensor(actual[size_t(l.outputs[k])], e.tensors[k], el, worst);
        if (!f.empty()) return f;
    }
    return "";
}

}  // namespace

// Runs every data set of a case whose model has non-tensor inputs/outputs.
// (Called by run_conformance_case in inputs_and_conformance.cpp.)
ConformanceResult run_value_case(const std::string& case_dir, ConformanceResult r) {
    const std::string model_path = (fs::path(case_dir) / "model.onnx").string();
    const frontend::IoKinds kinds = frontend::onnx_io_kinds(model_path);
    frontend::ImportOptions options;
    options.fold = import_options({}).fold;
    std::vector<fs::path> sets;
    for (const auto& e : fs::directory_iterator(case_dir))
        if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
            sets.push_back(e.path());
    std::sort(sets.begin(), sets.end());
    TS_USER_CHECK(!sets.empty()) << "'" << case_dir << "' has no test_data_set_* folder";
    double worst = 0;
    for (const fs::path& set : sets) {
        const std::string where = set.filename().string();
        std::vector<std::string> files = test_data_files(set.string(), "input");
        std::vector<bool> freeze(files.size(), false);
        for (size_t i = 0; i < files.size() && i < kinds.inputs.size(); ++i)
            freeze[i] = kinds.inputs[i] != ValueKind::Tensor;
        frontend::ImportedModel m;
        try {
            m = frontend::import_onnx_file_values(model_path, files, freeze, options);
        } catch (const UserError& e) {
            if (std::string(e.what()).find("unsupported op") != std::string::npos) throw;
            // Shape operands and scalars fed as inputs (a Loop's trip count, an
            // If's condition) become constants too, as in load_model_for_inputs;
            // failing that (string ops run at import, so a tensor cast to
            // strings must be constant), every input is frozen.
            std::vector<bool> small = freeze;
            for (size_t i = 0; i < files.size(); ++i) {
                if (freeze[i]) continue;
                NDArray a = frontend::read_tensor_pb(files[i]);
                small[i] = a.dtype() == graph::DType::Int64 || a.dtype() == graph::DType::Int32 ||
                           a.dtype() == graph::DType::Bool || a.num_elements() == 1 ||
                           a.shape().size() == 1;
            }
            const std::vector<bool> all(files.size(), true);
            if (freeze == all) throw;
            bool imported = false;
            if (small != freeze && small != all) {
                try {
                    m = frontend::import_onnx_file_values(model_path, files, small, options);
                    freeze = small;
                    imported = true;
                } catch (const UserError& e2) {
                    if (std::string(e2.what()).find("unsupported op") != std::string::npos) throw;
                }
            }
            if (!imported) {
                freeze = all;
                m = frontend::import_onnx_file_values(model_path, files, freeze, options);
            }
        }
        std::vector<NDArray> given;
        for (size_t i = 0; i < files.size(); ++i)
            if (!freeze[i]) given.push_back(frontend::read_tensor_pb(files[i]));
        std::vector<NDArray> actual;
        if (!m.graph.outputs.empty()) {
            std::shared_ptr<CompiledModel> model = build(m.graph);
            actual = model->run(match_test_inputs(model->graph, given));
        }
        std::vector<std::string> out_files = test_data_files(set.string(), "output");
        TS_USER_CHECK(out_files.size() == m.outputs.size())
            << where << ": model has " << m.outputs.size() << " outputs, test expects "
            << out_files.size();
        for (size_t k = 0; k < out_files.size(); ++k) {
            ValueKind kind = k < kinds.outputs.size() ? kinds.outputs[k] : ValueKind::Tensor;
            frontend::OnnxValue e = frontend::read_value_pb(out_files[k], kind);
            std::string f = compare_output(m.outputs[k], actual, e,
                                           where + ": output " + std::to_string(k), worst);
            if (!f.empty()) {
                r.status = ConformanceResult::Failed;
                r.message = f;
                return r;
            }
        }
    }
    r.status = ConformanceResult::Passed;
    r.message = "max abs err " + fmt(worst);
    return r;
}

}  // namespace tessera::driver
