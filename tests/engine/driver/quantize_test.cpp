// Post-training quantization (driver/calibrate.h, frontend/onnx/onnx_qdq.h)
// on the bundled example: calibration ranges from runs on random inputs, a
// QDQ model with the expected nodes and int8 weights that Tessera runs close
// to the float model, and clear errors for what it cannot do.
#define ONNX_ML 1
#define ONNX_NAMESPACE onnx
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "engine/core/error.h"
#include "engine/driver/calibrate.h"
#include "engine/driver/driver.h"
#include "engine/driver/quantization_error.h"
#include "engine/frontend/onnx/onnx_importer.h"
#include "engine/frontend/onnx/onnx_qdq.h"
#include "onnx/onnx_pb.h"

namespace tessera::test {
namespace {

namespace fs = std::filesystem;

const std::string kModel = std::string(TESSERA_SOURCE_DIR) + "/resources/models/small_cnn/model.onnx";

/// A fresh folder with `sets` calibration sets of random inputs of `model`
/// (set_K/input_0.pb).
fs::path calibration_folder(const std::string& name, int sets, const std::string& model = kModel) {
    fs::path dir = fs::temp_directory_path() / ("tessera_quantize_" + name);
    fs::remove_all(dir);
    graph::Graph g = driver::load_model(model);
    for (int k = 0; k < sets; ++k) {
        fs::create_directories(dir / ("set_" + std::to_string(k)));
        runtime::NDArray x = driver::random_inputs(g, uint64_t(100 + k)).at(0);
        frontend::write_tensor_pb(x, g.values[size_t(g.inputs[0])].name,
                                  (dir / ("set_" + std::to_string(k)) / "input_0.pb").string());
    }
    return dir;
}

onnx::ModelProto read_model(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    onnx::ModelProto m;
    EXPECT_TRUE(m.ParseFromString(ss.str())) << path;
    return m;
}

int count_ops(const onnx::ModelProto& m, const std::string& op) {
    int n = 0;
    for (const auto& node : m.graph().node()) n += node.op_type() == op;
    return n;
}

/// Tessera runs the QDQ model `qdq` of `model` on 4 random inputs: its
/// output differs from the float one, by less than 5 % of its largest value.
void expect_close_to_float(const std::string& model, const std::string& qdq) {
    graph::Graph gf = driver::load_model(model), gq = driver::load_model(qdq);
    auto f = driver::build(gf), q = driver::build(gq);
    for (int k = 0; k < 4; ++k) {
        const auto in = driver::random_inputs(gf, uint64_t(100 + k));
        const runtime::NDArray a = f->run(in).at(0), b = q->run(in).at(0);
        double err = 0, scale = 0;
        for (int64_t i = 0; i < a.num_elements(); ++i) {
            err = std::max(err, double(std::fabs(a.data<float>()[i] - b.data<float>()[i])));
            scale = std::max(scale, double(std::fabs(a.data<float>()[i])));
        }
        EXPECT_GT(err, 0.0) << "the int8 model computes exactly the float result";
        EXPECT_LT(err, 0.05 * scale) << "input " << k;
    }
}

TEST(Quantize, QdqModelOfTheExampleRunsCloseToFloat) {
    const fs::path calib = calibration_folder("example", 4);
    const auto sets = driver::calibration_sets(calib.string());
    ASSERT_EQ(sets.size(), 4u);
    const std::vector<std::string> acts = frontend::qdq_activations(kModel);
    ASSERT_EQ(acts.size(), 3u);  // the two convs' inputs and the gemm's
    for (auto method : {driver::CalibrationOptions::Method::kMinMax,
                        driver::CalibrationOptions::Method::kPercentile}) {
        driver::CalibrationOptions co;
        co.method = method;
        co.percentile = 99.9;
        const auto ranges = driver::calibrate(kModel, acts, sets, co);
        ASSERT_EQ(ranges.size(), 3u);
        for (const auto& [name, r] : ranges) EXPECT_LT(r.lo, r.hi) << name;
        // The network input is uniform in [-1, 1] (random_inputs): min/max
        // nearly reach it; a percentile range lies inside the min/max one.
        EXPECT_LT(ranges.at(acts[0]).lo, -0.9f);
        EXPECT_GT(ranges.at(acts[0]).hi, 0.9f);

        for (bool per_channel : {true, false}) {
            const std::string out = (calib / "model_int8.onnx").string();
            frontend::QdqOptions qo;
            qo.per_channel = per_channel;
            const frontend::QdqSummary s = frontend::write_qdq_model(kModel, out, ranges, qo);
            EXPECT_EQ(s.nodes, 3);
            EXPECT_EQ(s.activations, 3);
            EXPECT_EQ(s.weights, 3);
            EXPECT_EQ(s.per_channel, per_channel);
            const onnx::ModelProto m = read_model(out);
            EXPECT_EQ(s.biases, 3);  // int32, as quantize_static writes them
            EXPECT_EQ(count_ops(m, "QuantizeLinear"), 3);
            EXPECT_EQ(count_ops(m, "DequantizeLinear"), 9);
            int int8_weights = 0, float_weights = 0;
            for (const auto& t : m.graph().initializer()) {
                if (t.data_type() == onnx::TensorProto::INT8 && t.dims_size() >= 2) ++int8_weights;
                if (t.data_type() == onnx::TensorProto::FLOAT && t.dims_size() >= 2) ++float_weights;
                if (t.name().find("_scale") != std::string::npos && t.name().find("conv") != std::string::npos)
                    EXPECT_EQ(t.dims_size(), per_channel ? 1 : 0) << t.name();
            }
            EXPECT_EQ(int8_weights, 3);
            EXPECT_EQ(float_weights, 0) << "the float weights stay in the file";

            // Tessera runs the QDQ model; it stays close to the float one.
            expect_close_to_float(kModel, out);
        }
    }
    fs::remove_all(calib);
}

TEST(Quantize, WeightsFromConstantNodesBecomeInt8Too) {
    // The example with every initializer written as a Constant node instead
    // (as some exporters do): the same three weights are quantized, the float
    // Constant nodes they came from are gone.
    const fs::path calib = calibration_folder("constants", 1);
    onnx::ModelProto m = read_model(kModel);
    onnx::GraphProto* g = m.mutable_graph();
    std::vector<onnx::NodeProto> nodes;
    for (const auto& t : g->initializer()) {
        onnx::NodeProto c;
        c.set_op_type("Constant");
        c.set_name(t.name() + "_constant");
        c.add_output(t.name());
        onnx::AttributeProto* a = c.add_attribute();
        a->set_name("value");
        a->set_type(onnx::AttributeProto::TENSOR);
        *a->mutable_t() = t;
        nodes.push_back(c);
    }
    std::set<std::string> init;
    for (const auto& t : g->initializer()) init.insert(t.name());
    std::vector<onnx::ValueInfoProto> inputs;
    for (const auto& v : g->input())
        if (!init.count(v.name())) inputs.push_back(v);
    g->clear_input();
    for (auto& v : inputs) *g->add_input() = v;
    g->clear_initializer();
    for (const auto& n : g->node()) nodes.push_back(n);
    g->clear_node();
    for (auto& n : nodes) *g->add_node() = n;
    const std::string in = (calib / "constants.onnx").string(), out = (calib / "int8.onnx").string();
    {
        std::string bytes;
        ASSERT_TRUE(m.SerializeToString(&bytes));
        std::ofstream(in, std::ios::binary) << bytes;
    }
    const auto acts = frontend::qdq_activations(in);
    EXPECT_EQ(acts.size(), 3u);
    const auto ranges = driver::calibrate(in, acts, driver::calibration_sets(calib.string()), {});
    const frontend::QdqSummary s = frontend::write_qdq_model(in, out, ranges, {});
    EXPECT_EQ(s.weights, 3);
    EXPECT_EQ(s.activations, 3);
    const onnx::ModelProto q = read_model(out);
    int float_constants = 0;
    for (const auto& n : q.graph().node())
        if (n.op_type() == "Constant" &&
            n.attribute(0).t().data_type() == onnx::TensorProto::FLOAT &&
            n.attribute(0).t().dims_size() >= 1)
            ++float_constants;
    EXPECT_EQ(float_constants, 0) << "float weights and biases (now int32) stay in the file";
    EXPECT_NO_THROW(driver::build(driver::load_model(out))->run(
        driver::random_inputs(driver::load_model(in), 5)));
    fs::remove_all(calib);
}

// A Relu or Clip(0, 6) between a conv and the conv that alone reads it is
// folded into the quantization of the first conv's output (zero point 0,
// the range's top inside the clip: the saturation clips exactly), as
// ONNX Runtime's quantize_static writes it, and the biases become int32:
// DQ -> Conv -> Q, which ONNX Runtime fuses into its integer QLinearConv.
// The model still runs close to the float one, and its float reading (the
// pairs read as a clip to their range) equals the float model's layers.
TEST(Quantize, AnActivationBetweenConvsFoldsIntoTheQuantization) {
    const std::string model =
        std::string(TESSERA_SOURCE_DIR) + "/tests/data/onnx_models/conv_clip_chain/model.onnx";
    const fs::path calib = calibration_folder("clip_chain", 4, model);
    const auto acts = frontend::qdq_activations(model);
    ASSERT_EQ(acts.size(), 3u);  // x, the Clip's output, the Relu's
    const auto ranges =
        driver::calibrate(model, acts, driver::calibration_sets(calib.string()), {});
    const std::string out = (calib / "int8.onnx").string();
    const frontend::QdqSummary s = frontend::write_qdq_model(model, out, ranges, {});
    EXPECT_EQ(s.folded_activations, 2);
    EXPECT_EQ(s.biases, 3);
    const onnx::ModelProto m = read_model(out);
    EXPECT_EQ(count_ops(m, "Clip") + count_ops(m, "Relu"), 0);
    for (const auto& n : m.graph().node())
        if (n.op_type() == "QuantizeLinear" && n.input(0) != "x")
            EXPECT_TRUE(n.input(0) == "c1" || n.input(0) == "c2")
                << n.input(0);  // the conv outputs
    expect_close_to_float(model, out);
    graph::Graph gq = driver::load_model(out);
    // The float reading keeps the folded Relu: a layer's error stays small.
    const auto errors = driver::layer_errors(out, {}, driver::random_inputs(gq, 7), {});
    ASSERT_FALSE(errors.empty());
    for (const auto& e : errors) EXPECT_LT(e.rel_rms, 0.1) << e.node;
    fs::remove_all(calib);
}

TEST(Quantize, AModelBelowOpset13IsConvertedForPerChannelWeights) {
    // The example declared at opset 11 (its ops mean the same there; its
    // Softmax is over the last axis, so the 13 adapter keeps it one op).
    const fs::path calib = calibration_folder("opset11", 2);
    onnx::ModelProto m = read_model(kModel);
    for (auto& o : *m.mutable_opset_import())
        if (o.domain().empty() || o.domain() == "ai.onnx") o.set_version(11);
    const std::string in = (calib / "opset11.onnx").string();
    {
        std::string bytes;
        ASSERT_TRUE(m.SerializeToString(&bytes));
        std::ofstream(in, std::ios::binary) << bytes;
    }
    const auto ranges = driver::calibrate(in, frontend::qdq_activations(in),
                                          driver::calibration_sets(calib.string()), {});
    frontend::QdqOptions qo;  // the float shapes as `tessera quantize` passes them
    const graph::Graph g = driver::load_model(in);
    for (const graph::Value& v : g.values)
        if (!v.is_constant() && v.type.dtype == graph::DType::Float32) qo.float_shapes[v.name] = v.type.shape;
    for (bool per_channel : {true, false}) {
        qo.per_channel = per_channel;
        const std::string out = (calib / "int8.onnx").string();
        const frontend::QdqSummary s = frontend::write_qdq_model(in, out, ranges, qo);
        EXPECT_EQ(s.per_channel, per_channel);
        EXPECT_EQ(s.opset, per_channel ? 13 : 11);
        EXPECT_EQ(s.upgraded_from, per_channel ? 11 : 0);
        const onnx::ModelProto q = read_model(out);
        EXPECT_EQ(q.opset_import(0).version(), per_channel ? 13 : 11);
        EXPECT_EQ(count_ops(q, "Softmax"), 1);
        for (const auto& t : q.graph().initializer())
            if (t.name().find("_scale") != std::string::npos && t.name().find("conv") != std::string::npos)
                EXPECT_EQ(t.dims_size(), per_channel ? 1 : 0) << t.name();
        // It runs, close to the float model.
        auto f = driver::build(g), qm = driver::build(driver::load_model(out));
        const auto x = driver::random_inputs(g, 100);
        const runtime::NDArray a = f->run(x).at(0), b = qm->run(x).at(0);
        for (int64_t i = 0; i < a.num_elements(); ++i)
            EXPECT_NEAR(a.data<float>()[i], b.data<float>()[i], 0.05) << i;
    }
    fs::remove_all(calib);
}

/// A residual block as ResNet's bench model writes it: conv -> relu -> conv,
/// + the block's input, * 0.5, relu, a 2x2 max pool, a last conv (its output
/// the graph's). Weights from a fixed seed.
std::string residual_block_model(const fs::path& dir) {
    onnx::ModelProto m;
    m.set_ir_version(8);
    auto* opset = m.add_opset_import();
    opset->set_domain("");
    opset->set_version(17);
    onnx::GraphProto* g = m.mutable_graph();
    g->set_name("residual_block");
    auto value = [](onnx::ValueInfoProto* v, const std::string& name, std::vector<int64_t> dims) {
        v->set_name(name);
        auto* t = v->mutable_type()->mutable_tensor_type();
        t->set_elem_type(onnx::TensorProto::FLOAT);
        for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
    };
    value(g->add_input(), "x", {1, 4, 8, 8});
    value(g->add_output(), "out", {1, 4, 4, 4});
    uint32_t seed = 7;
    auto weight = [&](const std::string& name, std::vector<int64_t> dims) {
        onnx::TensorProto* t = g->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::FLOAT);
        int64_t n = 1;
        for (int64_t d : dims) {
            t->add_dims(d);
            n *= d;
        }
        for (int64_t i = 0; i < n; ++i) {
            seed = seed * 1664525u + 1013904223u;
            t->add_float_data(float(int(seed >> 9) % 2001 - 1000) / 4000.f);
        }
    };
    auto node = [&](const std::string& op, std::vector<std::string> in, const std::string& out) {
        onnx::NodeProto* n = g->add_node();
        n->set_op_type(op);
        n->set_name(out + "_node");
        for (const auto& i : in) n->add_input(i);
        n->add_output(out);
        return n;
    };
    auto ints = [](onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
        onnx::AttributeProto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::INTS);
        for (int64_t x : v) a->add_ints(x);
    };
    for (const std::string w : {"wa", "wb", "wc"}) weight(w, {4, 4, 3, 3});
    for (const std::string b : {"ba", "bb", "bc"}) weight(b, {4});
    weight("half", {});
    g->mutable_initializer(g->initializer_size() - 1)->set_float_data(0, 0.5f);
    ints(node("Conv", {"x", "wa", "ba"}, "a"), "pads", {1, 1, 1, 1});
    node("Relu", {"a"}, "ra");
    ints(node("Conv", {"ra", "wb", "bb"}, "b"), "pads", {1, 1, 1, 1});
    node("Add", {"b", "x"}, "s");
    node("Mul", {"s", "half"}, "h");
    node("Relu", {"h"}, "y");
    onnx::NodeProto* pool = node("MaxPool", {"y"}, "p");
    ints(pool, "kernel_shape", {2, 2});
    ints(pool, "strides", {2, 2});
    ints(node("Conv", {"p", "wc", "bc"}, "out"), "pads", {1, 1, 1, 1});
    fs::create_directories(dir);
    const std::string path = (dir / "model.onnx").string();
    std::ofstream(path, std::ios::binary) << m.SerializeAsString();
    return path;
}

/// With Add, Mul and MaxPool among the quantized op types (--ops), every
/// conv's output but the graph's is read by a QuantizeLinear alone (DQ ->
/// Conv -> Q: ONNX Runtime's QLinearConv), a MaxPool's output is quantized
/// with its input's scale and zero point; with the default (Conv, MatMul,
/// Gemm) the conv before the residual Add stays float. Both run close to
/// float; an op type that cannot be quantized is a UserError naming those
/// that can.
TEST(Quantize, WithTheResidualAddAndPoolsEveryConvOutputIsQuantized) {
    const fs::path dir = fs::temp_directory_path() / "tessera_quantize_residual";
    fs::remove_all(dir);
    const std::string model = residual_block_model(dir);
    const fs::path calib = calibration_folder("residual_calib", 4, model);
    const auto sets = driver::calibration_sets(calib.string());
    const std::vector<std::string> all = {"Conv", "MatMul", "Gemm", "Add", "Mul", "MaxPool"};
    for (const bool everything : {false, true}) {
        frontend::QdqOptions o;
        if (everything) o.ops = all;
        const auto acts = frontend::qdq_activations(model, o.ops);
        const auto ranges = driver::calibrate(model, acts, sets, {});
        const std::string out = (dir / (everything ? "all.onnx" : "default.onnx")).string();
        const frontend::QdqSummary s = frontend::write_qdq_model(model, out, ranges, o);
        EXPECT_EQ(s.nodes, everything ? 6 : 3);
        const onnx::ModelProto m = read_model(out);
        std::map<std::string, std::vector<const onnx::NodeProto*>> readers;
        std::map<std::string, const onnx::NodeProto*> producer;
        for (const auto& n : m.graph().node()) {
            for (const auto& i : n.input()) readers[i].push_back(&n);
            for (const auto& o2 : n.output()) producer[o2] = &n;
        }
        int float_conv_outputs = 0;
        for (const auto& n : m.graph().node()) {
            if (n.op_type() != "Conv" || n.output(0) == "out") continue;
            for (const onnx::NodeProto* r : readers[n.output(0)])
                float_conv_outputs += r->op_type() != "QuantizeLinear";
        }
        EXPECT_EQ(float_conv_outputs, everything ? 0 : 1)
            << (everything ? "all ops" : "default ops");
        if (everything) {
            // The pool reads DQ(Q(relu(h))) and its output's Q has the same
            // scale and zero point.
            const onnx::NodeProto* pool = nullptr;
            for (const auto& n : m.graph().node())
                if (n.op_type() == "MaxPool") pool = &n;
            ASSERT_NE(pool, nullptr);
            const onnx::NodeProto* dq = producer.at(pool->input(0));
            ASSERT_EQ(dq->op_type(), "DequantizeLinear");
            ASSERT_EQ(readers[pool->output(0)].size(), 1u);
            const onnx::NodeProto* q = readers[pool->output(0)][0];
            ASSERT_EQ(q->op_type(), "QuantizeLinear");
            EXPECT_EQ(q->input(1), dq->input(1));
            EXPECT_EQ(q->input(2), dq->input(2));
        }
        expect_close_to_float(model, out);
    }
    // An Add's or Mul's operand without a range (one of integers, which the
    // command leaves out of the calibration) stays as it is; a Conv's is an
    // error naming it.
    {
        frontend::QdqOptions o;
        o.ops = all;
        auto ranges = driver::calibrate(model, frontend::qdq_activations(model, o.ops), sets, {});
        ranges.erase("s");  // the Mul's operand
        const std::string out = (dir / "no_s.onnx").string();
        EXPECT_NO_THROW(frontend::write_qdq_model(model, out, ranges, o));
        const onnx::ModelProto written = read_model(out);
        for (const auto& n : written.graph().node())
            if (n.op_type() == "Mul") EXPECT_EQ(n.input(0), "s");
        ranges.erase("ra");  // conv_b's data
        EXPECT_THROW(frontend::write_qdq_model(model, out, ranges, o), UserError);
    }
    // A model of a newer IR version than the checker knows (exporters write
    // 9 and 10) is written, keeping its version (it was an internal error).
    {
        onnx::ModelProto m = read_model(model);
        m.set_ir_version(10);
        const std::string newer = (dir / "ir10.onnx").string();
        std::ofstream(newer, std::ios::binary) << m.SerializeAsString();
        const auto ranges = driver::calibrate(newer, frontend::qdq_activations(newer), sets, {});
        const std::string out = (dir / "ir10_int8.onnx").string();
        EXPECT_NO_THROW(frontend::write_qdq_model(newer, out, ranges, {}));
        EXPECT_EQ(read_model(out).ir_version(), 10);
    }
    // An opset-9 model (as tf2onnx and PyTorch 1.x wrote them) is converted
    // to opset 13 for QuantizeLinear / DequantizeLinear (it was refused).
    {
        onnx::ModelProto m = read_model(model);
        m.mutable_opset_import(0)->set_version(9);
        const std::string old = (dir / "opset9.onnx").string();
        std::ofstream(old, std::ios::binary) << m.SerializeAsString();
        const auto ranges = driver::calibrate(old, frontend::qdq_activations(old), sets, {});
        const std::string out = (dir / "opset9_int8.onnx").string();
        const frontend::QdqSummary s9 = frontend::write_qdq_model(old, out, ranges, {});
        EXPECT_EQ(s9.upgraded_from, 9);
        EXPECT_EQ(s9.opset, 13);
        expect_close_to_float(old, out);
    }
    try {
        frontend::qdq_activations(model, {"Conv", "Softmax"});
        FAIL() << "no error for Softmax";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("'Softmax'"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("GlobalAveragePool"), std::string::npos) << e.what();
    }
    fs::remove_all(dir);
    fs::remove_all(calib);
}

TEST(Quantize, WhatItCannotDoIsAUserErrorAndWritesNothing) {
    const fs::path calib = calibration_folder("errors", 1);
    const std::string out = (calib / "never.onnx").string();
    // A folder without inputs.
    fs::create_directories(calib / "empty");
    EXPECT_THROW(driver::calibration_sets((calib / "empty").string()), UserError);
    // An activation without a range: named, and no file is written.
    try {
        frontend::write_qdq_model(kModel, out, {}, {});
        FAIL() << "no error without ranges";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("has no calibrated range"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(out));
    // The output would replace the model.
    const std::string copy = (calib / "model.onnx").string();
    fs::copy_file(kModel, copy);
    try {
        frontend::write_qdq_model(copy, copy, {}, {});
        FAIL() << "no error when the output is the input";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("would replace"), std::string::npos) << e.what();
    }
    EXPECT_EQ(fs::file_size(copy), fs::file_size(kModel));
    // A tensor the model does not have.
    try {
        driver::calibrate(kModel, {"no_such_tensor"}, driver::calibration_sets(calib.string()), {});
        FAIL() << "no error for an unknown tensor";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("'no_such_tensor'"), std::string::npos) << e.what();
    }
    fs::remove_all(calib);
}

}  // namespace
}  // namespace tessera::test
