// `tessera quantize`: post-training static quantization of an ONNX model to
// a standard QDQ model, calibrated on the user's inputs, then checked by
// running both models on them.
#include <algorithm>
#include <cmath>
#include <iostream>

#include "app/cli/cli_common.h"
#include "engine/core/error.h"
#include "engine/driver/quantization_error.h"
#include "engine/driver/calibrate.h"
#include "engine/driver/driver.h"
#include "engine/frontend/onnx/onnx_importer.h"
#include "engine/frontend/onnx/onnx_qdq.h"

namespace tessera::cli {

namespace {

struct QuantizeOptions {
    std::string model;
    std::string output;
    std::string calib;
    std::string eval;  // inputs the two models are compared on (default: calib)
    std::string method = "minmax";
    double percentile = 99.999;
    bool per_tensor = false;
    int threads = 0;
    bool json = false;
    int layers = 0;  // --layers N: the N layers with the largest int8 error
    std::vector<std::string> ops = frontend::default_qdq_ops();
};

CLI::App* add_quantize_command(CLI::App& app, QuantizeOptions& o) {
    CLI::App* cmd = app.add_subcommand(
        "quantize", "Post-training static quantization to a QDQ model (int8 weights, uint8 activations)");
    cmd->add_option("MODEL", o.model, "an .onnx file or an ONNX test-case folder")->required();
    cmd->add_option("-o,--output", o.output, "the quantized .onnx file to write")->required();
    cmd->add_option("--calib", o.calib,
                    "folder of calibration inputs: input_N.pb files, or subfolders of them "
                    "(test_data_set_0, ...)")
        ->required();
    cmd->add_option("--eval", o.eval,
                    "folder of inputs (as --calib) to compare the int8 and float models on "
                    "(default: the calibration inputs)");
    cmd->add_option("--method", o.method, "range of each activation over the calibration runs")
        ->check(CLI::IsMember({"minmax", "percentile"}));
    cmd->add_option("--percentile", o.percentile,
                    "with --method percentile: keep [100 - P, P] percent of the values")
        ->check(CLI::Range(50.0, 100.0));
    cmd->add_flag("--per-tensor", o.per_tensor, "one scale per weight instead of one per output channel");
    cmd->add_option(
           "--ops", o.ops,
           "op types whose float inputs are quantized, comma-separated: Conv, MatMul, "
           "Gemm (default), Add, Mul, MaxPool, AveragePool, GlobalAveragePool (with Add, Mul "
           "and the pools every conv output is quantized, as quantize_static writes it, and ONNX "
           "Runtime runs the convs in int8 too)")
        ->delimiter(',');
    cmd->add_option("--threads", o.threads, "threads of the calibration runs (0: all)");
    cmd->add_flag("--json", o.json, "print one JSON object as the last line");
    cmd->add_option("--layers", o.layers,
                    "print the N layers whose int8 output is farthest from the quantized model's "
                    "float reading (activation Q/DQ pairs as the identity), on the first "
                    "evaluation input set")
        ->check(CLI::NonNegativeNumber);
    return cmd;
}

/// Largest |a - b| over all elements, and the largest |b| (the scale of the outputs).
std::pair<double, double> error_and_scale(const runtime::NDArray& a, const runtime::NDArray& b) {
    double err = 0, scale = 0;
    const float* pa = a.data<float>();
    const float* pb = b.data<float>();
    for (int64_t i = 0; i < a.num_elements(); ++i) {
        err = std::max(err, double(std::fabs(pa[i] - pb[i])));
        scale = std::max(scale, double(std::fabs(pb[i])));
    }
    return {err, scale};
}

/// Index of the largest element of row `r` of a [rows, n] array.
int64_t argmax_row(const runtime::NDArray& a, int64_t r) {
    const int64_t n = a.shape().back();
    const float* p = a.data<float>() + r * n;
    return int64_t(std::max_element(p, p + n) - p);
}

int run_quantize(const QuantizeOptions& o) {
    const ModelPath mp = resolve_model_path(o.model);
    const std::vector<std::vector<std::string>> sets = driver::calibration_sets(o.calib);
    driver::CalibrationOptions co;
    co.method = o.method == "percentile" ? driver::CalibrationOptions::Method::kPercentile
                                         : driver::CalibrationOptions::Method::kMinMax;
    co.percentile = o.percentile;
    co.threads = o.threads;
    frontend::QdqOptions qo;
    qo.per_channel = !o.per_tensor;
    qo.ops = o.ops;
    graph::Graph gf = driver::load_model_for_inputs(mp.file, sets[0], {});
    for (const graph::Value& v : gf.values)
        if (!v.is_constant() && v.type.dtype == graph::DType::Float32) qo.float_shapes[v.name] = v.type.shape;
    // Float activations only: an Add or Mul of integers (a shape computed at
    // run time) is left as it is.
    std::vector<std::string> acts;
    for (const std::string& a : frontend::qdq_activations(mp.file, o.ops)) {
        bool known = false, is_float = false;
        for (const graph::Value& v : gf.values)
            if (v.name == a) {
                known = true;
                is_float = v.type.dtype == graph::DType::Float32;
            }
        if (is_float || !known) acts.push_back(a);  // an unknown one: calibrate() says so
    }
    TS_USER_CHECK(!acts.empty()) << "model '" << mp.file
                                 << "' has no node of the op types to quantize";
    const auto ranges = driver::calibrate(mp.file, acts, sets, co);
    const frontend::QdqSummary s = frontend::write_qdq_model(mp.file, o.output, ranges, qo);
    std::cerr << "quantized " << s.nodes << " nodes (" << s.activations << " activations uint8, "
              << s.weights << " weights int8 " << (s.per_channel ? "per channel" : "per tensor")
              << ", " << s.biases << " biases int32, " << s.folded_activations
              << " Relu/Clip folded into the quantization, opset " << s.opset
              << (s.upgraded_from ? " converted from " + std::to_string(s.upgraded_from) : "")
              << ") with " << o.method << " ranges from " << sets.size()
              << " calibration input set(s) -> " << o.output << "\n";

    // Both models on the evaluation inputs: how far the int8 model is from fp32.
    const std::vector<std::vector<std::string>> eval =
        o.eval.empty() ? sets : driver::calibration_sets(o.eval);
    driver::BuildOptions bo;
    bo.threads = o.threads;
    graph::Graph gq = driver::load_model_for_inputs(o.output, sets[0], {});
    auto fp32 = driver::build(gf, bo);
    auto int8 = driver::build(gq, bo);
    double worst = 0, scale = 0;
    int64_t rows = 0, agree = 0;
    for (const auto& files : eval) {
        std::vector<runtime::NDArray> given;
        for (const std::string& f : files) given.push_back(frontend::read_tensor_pb(f));
        std::vector<runtime::NDArray> a = fp32->run(driver::match_test_inputs(gf, given));
        std::vector<runtime::NDArray> b = int8->run(driver::match_test_inputs(gq, given));
        for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
            if (a[i].dtype() != graph::DType::Float32 || !(a[i].type() == b[i].type())) continue;
            auto [e, sc] = error_and_scale(b[i], a[i]);
            worst = std::max(worst, e);
            scale = std::max(scale, sc);
            if (i == 0 && a[i].shape().size() == 2 && a[i].shape()[1] > 1)
                for (int64_t r = 0; r < a[i].shape()[0]; ++r, ++rows)
                    agree += argmax_row(a[i], r) == argmax_row(b[i], r);
        }
    }
    std::cerr << "int8 vs fp32 on " << eval.size()
              << (o.eval.empty() ? " calibration input set(s)" : " evaluation input set(s)")
              << ": max abs error " << sci(worst)
              << " (outputs up to " << sci(scale) << ")";
    if (rows > 0) std::cerr << ", top-1 agrees on " << agree << " of " << rows << " rows";
    std::cerr << "\n";
    nlohmann::json layers = nlohmann::json::array();
    if (o.layers > 0) {
        std::vector<runtime::NDArray> given;
        for (const std::string& f : eval[0]) given.push_back(frontend::read_tensor_pb(f));
        std::vector<driver::LayerError> errors = driver::layer_errors(
            o.output, driver::input_shapes_from_files(o.output, eval[0], {}),
            driver::match_test_inputs(gq, given), bo);
        std::stable_sort(errors.begin(), errors.end(),
                         [](const auto& a, const auto& b) { return a.rel_rms > b.rel_rms; });
        if (errors.size() > size_t(o.layers)) errors.resize(size_t(o.layers));
        std::cerr << "layers farthest from the float reading (relative RMS error, max abs error):\n";
        for (const driver::LayerError& e : errors) {
            std::cerr << "  " << e.tensor << " (" << e.node << ", " << e.op << "): "
                      << fixed(100 * e.rel_rms, 3) << " %, " << sci(e.max_abs) << "\n";
            layers.push_back({{"tensor", e.tensor}, {"node", e.node}, {"op", e.op},
                              {"rel_rms", e.rel_rms}, {"max_abs", e.max_abs}});
        }
    }
    if (o.json)
        print_json_line({{"output", o.output},
                         {"layers", layers},
                         {"nodes", s.nodes},
                         {"activations", s.activations},
                         {"weights", s.weights},
                         {"per_channel", s.per_channel},
                         {"opset", s.opset},
                         {"opset_converted_from", s.upgraded_from},
                         {"calibration_sets", sets.size()},
                         {"evaluation_sets", eval.size()},
                         {"max_abs_error", worst},
                         {"output_scale", scale},
                         {"top1_rows", rows},
                         {"top1_agree", agree}});
    return kOk;
}

const CommandRegistrar kRegistered{
    make_command<QuantizeOptions>("quantize", add_quantize_command, run_quantize)};

}  // namespace

}  // namespace tessera::cli
