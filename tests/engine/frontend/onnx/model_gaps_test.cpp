// What trained models found on PyPI needed (issue #15, session 26): Pad with
// negative pads in edge / reflect mode (onnx-asr's pre-emphasis), STFT of a
// [batch, length] signal and STFT as a product with a constant DFT matrix
// (onnx-asr's NeMo, Whisper and GigaAM preprocessors), and tensors whose
// data sits in a file beside the model (malvizv1's ResNet-18). Each checked
// on random data against a reference computed here.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>

#include "engine/frontend/onnx/onnx_importer.h"
#include "tests/engine/frontend/onnx/index_test_util.h"

namespace tessera::index_test {
namespace {

using graph::DType;
namespace fs = std::filesystem;

int count_op(const graph::Graph& g, const std::string& op) {
    int n = 0;
    for (const graph::Node& node : g.nodes) n += node.op == op;
    return n;
}

TEST(OnnxPad, NegativePadsCutTheAxisBeforeEdgeOrReflectPadding) {
    // Edge pads [0, 1, 0, -1] on [2, 6]: each row shifted right by one, its
    // first value repeated (x[t - 1] for t >= 1, x[0] at 0).
    NDArray x = random_floats({2, 6}, 3);
    {
        OneNodeModel m("Pad", 18);
        m.input("x", DType::Float32, {2, 6}).constant("pads", ints({4}, {0, 1, 0, -1}));
        m.output("y", DType::Float32, {2, 6}).attr("mode", std::string("edge"));
        NDArray y = run(m.load("pad_edge_negative"), {x}).at(0);
        ASSERT_EQ(y.shape(), (Ints{2, 6}));
        for (int r = 0; r < 2; ++r)
            for (int t = 0; t < 6; ++t)
                EXPECT_EQ(y.data<float>()[r * 6 + t], x.data<float>()[r * 6 + std::max(t - 1, 0)])
                    << r << ", " << t;
    }
    {
        // Reflect: cut 2 from the end of axis 1 ([2, 4] left), then 2 reflected in front.
        OneNodeModel m("Pad", 18);
        m.input("x", DType::Float32, {2, 6}).constant("pads", ints({4}, {0, 2, 0, -2}));
        m.output("y", DType::Float32, {2, 6}).attr("mode", std::string("reflect"));
        NDArray y = run(m.load("pad_reflect_negative"), {x}).at(0);
        const int src[6] = {2, 1, 0, 1, 2, 3};
        for (int r = 0; r < 2; ++r)
            for (int t = 0; t < 6; ++t)
                EXPECT_EQ(y.data<float>()[r * 6 + t], x.data<float>()[r * 6 + src[t]])
                    << r << ", " << t;
    }
    // Cutting all of an axis leaves nothing to repeat: a clear error.
    OneNodeModel m("Pad", 18);
    m.input("x", DType::Float32, {2, 6}).constant("pads", ints({4}, {0, 1, 0, -6}));
    m.output("y", DType::Float32, {2, 1}).attr("mode", std::string("edge"));
    try {
        m.load("pad_edge_all_cut");
        ADD_FAILURE() << "no error";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("pads remove all of axis 1"), std::string::npos)
            << e.what();
    }
}

// The one-sided STFT of real frames, in double: [B, F, K, 2].
std::vector<double> stft_reference(const NDArray& x, int64_t step, const std::vector<double>& w,
                                   int64_t& frames, int64_t& bins) {
    const int64_t B = x.shape()[0], L = x.shape()[1], N = int64_t(w.size());
    frames = (L - N) / step + 1;
    bins = N / 2 + 1;
    std::vector<double> out(size_t(B * frames * bins * 2));
    for (int64_t b = 0; b < B; ++b)
        for (int64_t f = 0; f < frames; ++f)
            for (int64_t k = 0; k < bins; ++k) {
                double re = 0, im = 0;
                for (int64_t n = 0; n < N; ++n) {
                    const double v = x.data<float>()[b * L + f * step + n] * w[size_t(n)];
                    const double th = 2 * M_PI * double(k * n % N) / double(N);
                    re += v * std::cos(th);
                    im -= v * std::sin(th);
                }
                const size_t o = size_t(((b * frames + f) * bins + k) * 2);
                out[o] = re;
                out[o + 1] = im;
            }
    return out;
}

TEST(OnnxStft, ARealSignalIsAProductWithAConstantDftMatrix) {
    // 400-point frames (no power of two) every 160 samples of a [2, 2000]
    // signal given as [batch, length] (as onnx-asr's preprocessors are
    // exported), with a constant Hann window folded into the matrix, and the
    // same with the window a runtime input.
    const int64_t N = 400, step = 160;
    NDArray x = random_floats({2, 2000}, 7);
    std::vector<double> hann(N);
    NDArray wa = NDArray::empty({DType::Float32, {N}});
    for (int64_t n = 0; n < N; ++n) {
        wa.data<float>()[n] = float(0.5 - 0.5 * std::cos(2 * M_PI * double(n) / double(N)));
        hann[size_t(n)] = wa.data<float>()[n];
    }
    int64_t F = 0, K = 0;
    const std::vector<double> want = stft_reference(x, step, hann, F, K);
    for (bool window_input : {false, true}) {
        SCOPED_TRACE(window_input ? "runtime window" : "constant window");
        OneNodeModel m("STFT", 17);
        m.input("x", DType::Float32, {2, 2000}).constant("step", ints({}, {step}));
        if (window_input)
            m.input("w", DType::Float32, {N});
        else
            m.constant("w", wa);
        m.output("y", DType::Float32, {2, F, K, 2});
        graph::Graph g = m.load(window_input ? "stft_runtime_window" : "stft_constant_window");
        EXPECT_EQ(count_op(g, "stft"), 0);
        EXPECT_EQ(count_op(g, "nn.matmul"), 1);
        std::vector<NDArray> in = {x};
        if (window_input) in.push_back(wa);
        NDArray y = run(g, in).at(0);
        ASSERT_EQ(y.shape(), (Ints{2, F, K, 2}));
        double worst = 0;
        for (size_t i = 0; i < want.size(); ++i)
            worst = std::max(worst, std::fabs(double(y.data<float>()[i]) - want[i]) /
                                        std::max(1.0, std::fabs(want[i])));
        EXPECT_LT(worst, 1e-5);
    }
}

TEST(OnnxEinsum, TwoOperandContractionsAreMatrixProducts) {
    // The attention products of diffusers' blocks (adaptive-terrain-
    // diffusion's UNet) and a general one with two batch labels, reduced
    // labels in another order and the output transposed; a diagonal stays
    // the generic einsum. Against a direct sum over the labels.
    struct Case {
        std::string eq;
        Ints a, b, y;
        bool product;
    };
    const Case cases[] = {
        {"bct,bcs->bts", {2, 5, 7}, {2, 5, 6}, {2, 7, 6}, true},
        {"bts,bcs->bct", {2, 7, 6}, {2, 5, 6}, {2, 5, 7}, true},
        {"pkqj,qpik->qjpi", {2, 3, 4, 5}, {4, 2, 6, 3}, {4, 5, 2, 6}, true},
        {"ii,i->i", {4, 4}, {4}, {4}, false},
    };
    uint32_t seed = 20;
    for (const Case& c : cases) {
        SCOPED_TRACE(c.eq);
        NDArray a = random_floats(c.a, seed++), b = random_floats(c.b, seed++);
        OneNodeModel m("Einsum", 12);
        m.input("a", DType::Float32, c.a).input("b", DType::Float32, c.b);
        m.output("y", DType::Float32, c.y).attr("equation", c.eq);
        graph::Graph g = m.load("einsum");
        EXPECT_EQ(count_op(g, "einsum"), c.product ? 0 : 1);
        EXPECT_EQ(count_op(g, "nn.matmul"), c.product ? 1 : 0);
        NDArray y = run(g, {a, b}).at(0);
        ASSERT_EQ(y.shape(), c.y);
        // Reference: every assignment of the labels.
        const std::string lhs = c.eq.substr(0, c.eq.find("->")),
                          out = c.eq.substr(c.eq.find("->") + 2);
        const std::string ta = lhs.substr(0, lhs.find(',')), tb = lhs.substr(lhs.find(',') + 1);
        std::map<char, int64_t> size;
        for (size_t d = 0; d < ta.size(); ++d) size[ta[d]] = c.a[d];
        for (size_t d = 0; d < tb.size(); ++d) size[tb[d]] = c.b[d];
        std::string labels;
        for (const auto& [l, n] : size) labels.push_back(l);
        std::vector<double> want(size_t(y.num_elements()), 0.0);
        std::map<char, int64_t> at;
        auto flat = [&](const std::string& t, const Ints& shape) {
            int64_t i = 0;
            for (size_t d = 0; d < t.size(); ++d) i = i * shape[d] + at[t[d]];
            return i;
        };
        std::function<void(size_t)> visit = [&](size_t k) {
            if (k == labels.size()) {
                want[size_t(flat(out, c.y))] +=
                    double(a.data<float>()[flat(ta, c.a)]) * b.data<float>()[flat(tb, c.b)];
                return;
            }
            for (at[labels[k]] = 0; at[labels[k]] < size[labels[k]]; ++at[labels[k]]) visit(k + 1);
        };
        visit(0);
        for (int64_t i = 0; i < y.num_elements(); ++i)
            EXPECT_NEAR(y.data<float>()[i], want[size_t(i)], 1e-5) << i;
    }
}

// A model y = x + W whose W [4, 8] lies in `location` (written by the test
// at `offset` of `data_file`, unless empty) beside model.onnx in `dir`.
std::string external_model(const fs::path& dir, const std::string& location, const NDArray& w,
                           int64_t offset, const fs::path& data_file) {
    fs::create_directories(dir);
    onnx::ModelProto model;
    model.set_ir_version(8);
    model.add_opset_import()->set_version(17);
    onnx::GraphProto* g = model.mutable_graph();
    g->set_name("g");
    onnx::NodeProto* n = g->add_node();
    n->set_op_type("Add");
    n->add_input("x");
    n->add_input("W");
    n->add_output("y");
    for (const char* name : {"x", "y"}) {
        onnx::ValueInfoProto* vi = name[0] == 'x' ? g->add_input() : g->add_output();
        vi->set_name(name);
        auto* tt = vi->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(onnx::TensorProto_DataType_FLOAT);
        for (int64_t d : {4, 8}) tt->mutable_shape()->add_dim()->set_dim_value(d);
    }
    onnx::TensorProto* t = g->add_initializer();
    t->set_name("W");
    t->set_data_type(onnx::TensorProto_DataType_FLOAT);
    t->add_dims(4);
    t->add_dims(8);
    t->set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
    auto entry = [&](const std::string& k, const std::string& v) {
        auto* e = t->add_external_data();
        e->set_key(k);
        e->set_value(v);
    };
    entry("location", location);
    entry("offset", std::to_string(offset));
    entry("length", std::to_string(w.num_bytes()));
    if (!data_file.empty()) {
        std::ofstream out(data_file, std::ios::binary);
        out << std::string(size_t(offset), 'z');
        out.write(static_cast<const char*>(w.raw()), std::streamsize(w.num_bytes()));
    }
    const fs::path path = dir / "model.onnx";
    std::ofstream out(path, std::ios::binary);
    model.SerializeToOstream(&out);
    return path.string();
}

std::string import_error(const std::string& path) {
    try {
        driver::load_model(path);
    } catch (const UserError& e) {
        return e.what();
    }
    return "(no error)";
}

TEST(OnnxExternalData, TensorsBesideTheModelAreReadFromItsFolderOnly) {
    const fs::path root =
        fs::temp_directory_path() / ("tessera_external_data_" + std::to_string(::getpid()));
    fs::remove_all(root);
    NDArray w = random_floats({4, 8}, 11), x = random_floats({4, 8}, 12);
    // At an offset in a file of a subfolder, as exporters write several tensors to one file.
    fs::create_directories(root / "ok" / "weights");
    const std::string path = external_model(root / "ok", "weights/model.onnx.data", w, 100,
                                            root / "ok" / "weights" / "model.onnx.data");
    NDArray y = run(driver::load_model(path), {x}).at(0);
    for (int64_t i = 0; i < 32; ++i)
        EXPECT_EQ(y.data<float>()[i], x.data<float>()[i] + w.data<float>()[i]) << i;

    // Missing, outside the folder, absolute, short: errors naming tensor and file.
    EXPECT_NE(import_error(external_model(root / "missing", "gone.bin", w, 0, {}))
                  .find("tensor 'W': its data file 'gone.bin' is missing beside the model"),
              std::string::npos);
    EXPECT_NE(import_error(external_model(root / "up", "../ok/weights/model.onnx.data", w, 100, {}))
                  .find("leaves the model's folder"),
              std::string::npos);
    const std::string abs = (root / "ok" / "weights" / "model.onnx.data").string();
    EXPECT_NE(import_error(external_model(root / "abs", abs, w, 100, {}))
                  .find("must be given relative to the model's folder"),
              std::string::npos);
    fs::create_directories(root / "short");
    EXPECT_NE(import_error(external_model(root / "short", "w.bin", w, 100, root / "short" / "x"))
                  .find("is missing"),
              std::string::npos);
    {
        std::ofstream(root / "short" / "w.bin", std::ios::binary) << "tiny";
        EXPECT_NE(import_error((root / "short" / "model.onnx").string()).find("is past the end"),
                  std::string::npos);
    }
    // A link leading out of the folder is refused too.
    fs::create_directories(root / "link");
    fs::create_symlink(root / "ok" / "weights" / "model.onnx.data", root / "link" / "w.bin");
    EXPECT_NE(import_error(external_model(root / "link", "w.bin", w, 100, {}))
                  .find("leads out of the model's folder"),
              std::string::npos);
    // Bytes without a file: nothing to resolve against.
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    try {
        frontend::import_onnx_bytes(ss.str(), "memory");
        ADD_FAILURE() << "no error";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("open the .onnx file itself"), std::string::npos)
            << e.what();
    }
    fs::remove_all(root);
}

}  // namespace
}  // namespace tessera::index_test
