// What trained models found on PyPI needed (issue #15, session 26): Pad with
// negative pads in edge / reflect mode (onnx-asr's pre-emphasis), STFT of a
// [batch, length] signal and STFT as a product with a constant DFT matrix
// (onnx-asr's NeMo, Whisper and GigaAM preprocessors), and tensors whose
// data sits in a file beside the model (malvizv1's ResNet-18). Each checked
// on random data against a reference computed here.
#include <algorithm>
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

// One ai.onnx.ml TreeEnsemble node (opset 5) over X [rows, 3] in float64.
struct Trees {
    std::vector<double> splits;
    std::vector<int64_t> modes, features, true_ids, false_ids, true_leafs, false_leafs, missing;
    std::vector<int64_t> leaf_targets;
    std::vector<double> leaf_weights;
    std::vector<int64_t> roots;
    int64_t targets = 1, aggregate = 1, post = 0;
    std::vector<std::vector<double>> sets;  // per BRANCH_MEMBER node (mode 6), in node order
};

std::string tree_model(const Trees& t, int64_t rows) {
    onnx::ModelProto model;
    model.set_ir_version(10);
    model.add_opset_import()->set_version(21);
    auto* ml = model.add_opset_import();
    ml->set_domain("ai.onnx.ml");
    ml->set_version(5);
    onnx::GraphProto* g = model.mutable_graph();
    g->set_name("g");
    onnx::NodeProto* n = g->add_node();
    n->set_op_type("TreeEnsemble");
    n->set_domain("ai.onnx.ml");
    n->add_input("X");
    n->add_output("Y");
    auto ints = [&](const char* name, const std::vector<int64_t>& v) {
        auto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::INTS);
        for (int64_t x : v) a->add_ints(x);
    };
    auto one = [&](const char* name, int64_t v) {
        auto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(v);
    };
    auto tensor = [&](const char* name, int type, const std::vector<double>& v) {
        auto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::TENSOR);
        onnx::TensorProto* tp = a->mutable_t();
        tp->set_data_type(type);
        tp->add_dims(int64_t(v.size()));
        for (double x : v) {
            if (type == onnx::TensorProto_DataType_DOUBLE)
                tp->add_double_data(x);
            else
                tp->add_int32_data(int32_t(x));
        }
    };
    tensor("nodes_splits", onnx::TensorProto_DataType_DOUBLE, t.splits);
    tensor("nodes_modes", onnx::TensorProto_DataType_UINT8,
           std::vector<double>(t.modes.begin(), t.modes.end()));
    ints("nodes_featureids", t.features);
    ints("nodes_truenodeids", t.true_ids);
    ints("nodes_falsenodeids", t.false_ids);
    ints("nodes_trueleafs", t.true_leafs);
    ints("nodes_falseleafs", t.false_leafs);
    ints("nodes_missing_value_tracks_true", t.missing);
    ints("leaf_targetids", t.leaf_targets);
    tensor("leaf_weights", onnx::TensorProto_DataType_DOUBLE, t.leaf_weights);
    ints("tree_roots", t.roots);
    if (!t.sets.empty()) {
        std::vector<double> members;
        for (const std::vector<double>& set : t.sets) {
            members.insert(members.end(), set.begin(), set.end());
            members.push_back(std::nan(""));
        }
        tensor("membership_values", onnx::TensorProto_DataType_DOUBLE, members);
    }
    one("n_targets", t.targets);
    one("aggregate_function", t.aggregate);
    one("post_transform", t.post);
    for (const char* name : {"X", "Y"}) {
        onnx::ValueInfoProto* vi = name[0] == 'X' ? g->add_input() : g->add_output();
        vi->set_name(name);
        auto* tt = vi->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(onnx::TensorProto_DataType_DOUBLE);
        tt->mutable_shape()->add_dim()->set_dim_value(rows);
        tt->mutable_shape()->add_dim()->set_dim_value(name[0] == 'X' ? 3 : t.targets);
    }
    const fs::path path =
        fs::temp_directory_path() / ("tessera_trees_" + std::to_string(::getpid()) + ".onnx");
    std::ofstream out(path, std::ios::binary);
    model.SerializeToOstream(&out);
    return path.string();
}

// The trees walked one row at a time (ONNX's reference semantics).
std::vector<double> walk(const Trees& t, const std::vector<double>& x, int64_t rows) {
    std::vector<double> y(size_t(rows * t.targets), 0.0);
    for (int64_t r = 0; r < rows; ++r) {
        std::vector<double> acc(size_t(t.targets), t.aggregate == 2   ? 1e300
                                                   : t.aggregate == 3 ? -1e300
                                                                      : 0.0);
        for (int64_t root : t.roots) {
            int64_t i = root;
            int64_t leaf = -1;
            while (leaf < 0) {
                const double v = x[size_t(r * 3 + t.features[size_t(i)])], s = t.splits[size_t(i)];
                bool c = false;
                size_t set = 0;  // which of the sets node i's is
                for (int64_t j = 0; j < i; ++j) set += t.modes[size_t(j)] == 6 ? 1 : 0;
                switch (t.modes[size_t(i)]) {
                    case 6:
                        c = std::find(t.sets[set].begin(), t.sets[set].end(), v) !=
                            t.sets[set].end();
                        break;
                    case 0:
                        c = v <= s;
                        break;
                    case 1:
                        c = v < s;
                        break;
                    case 2:
                        c = v >= s;
                        break;
                    case 3:
                        c = v > s;
                        break;
                    case 4:
                        c = v == s;
                        break;
                    default:
                        c = v != s;
                }
                c = c || (std::isnan(v) && t.missing[size_t(i)]);
                const int64_t next = c ? t.true_ids[size_t(i)] : t.false_ids[size_t(i)];
                if (c ? t.true_leafs[size_t(i)] : t.false_leafs[size_t(i)])
                    leaf = next;
                else
                    i = next;
            }
            double& a = acc[size_t(t.leaf_targets[size_t(leaf)])];
            const double w = t.leaf_weights[size_t(leaf)];
            a = t.aggregate == 2 ? std::min(a, w) : t.aggregate == 3 ? std::max(a, w) : a + w;
        }
        for (int64_t k = 0; k < t.targets; ++k) {
            double v = acc[size_t(k)];
            if (t.aggregate == 0) v /= double(t.roots.size());
            if (t.post == 2) v = 1.0 / (1.0 + std::exp(-v));
            y[size_t(r * t.targets + k)] = v;
        }
    }
    return y;
}

TEST(OnnxMlTrees, ATreeEnsembleWalksItsTreesInStandardOps) {
    // Two trees of depths 3 and 1 (nodes 0-2 and 3), every comparison mode
    // but set membership, a missing value that goes left, two targets; then
    // the same tables with one target under MIN and under a logistic; then
    // with set membership.
    Trees t;
    t.splits = {0.5, -0.25, 0.1, 0.0};
    t.modes = {0, 3, 5, 1};
    t.features = {0, 1, 2, 2};
    t.true_ids = {1, 0, 2, 4};
    t.false_ids = {2, 1, 3, 5};
    t.true_leafs = {0, 1, 1, 1};
    t.false_leafs = {0, 1, 1, 1};
    t.missing = {1, 0, 0, 0};
    t.leaf_targets = {0, 1, 0, 1, 0, 1};
    t.leaf_weights = {1.5, -2.0, 0.25, 3.0, -0.5, 0.75};
    t.roots = {0, 3};
    t.targets = 2;
    const int64_t rows = 6;
    std::vector<double> x = {0.2,          -0.5, 0.1,  0.9, 0.0,  0.1, 0.4,  -0.1, 2.0,
                             std::nan(""), 1.0,  -1.0, 0.7, -0.3, 0.1, -2.0, -0.2, 0.05};
    for (int variant = 0; variant < 3; ++variant) {
        SCOPED_TRACE("variant " + std::to_string(variant));
        if (variant > 0) {
            t.targets = 1;
            t.leaf_targets.assign(t.leaf_targets.size(), 0);
            t.aggregate = variant == 1 ? 2 : 0;
            t.post = variant == 2 ? 2 : 0;
        }
        graph::Graph g = driver::load_model(tree_model(t, rows));
        NDArray in = NDArray::empty({DType::Float64, {rows, 3}});
        std::copy(x.begin(), x.end(), in.data<double>());
        NDArray y = run(g, {in}).at(0);
        ASSERT_EQ(y.shape(), (Ints{rows, t.targets}));
        const std::vector<double> want = walk(t, x, rows);
        for (size_t i = 0; i < want.size(); ++i)
            EXPECT_NEAR(y.data<double>()[i], want[i], 1e-12) << i;
    }
    // Set membership (BRANCH_MEMBER) at nodes 1 and 3, one set empty; then
    // sets that do not match the member nodes are refused naming the node.
    t.modes[1] = 6;
    t.modes[3] = 6;
    t.sets = {{-0.5, 1.0, 7.0}, {}};
    {
        graph::Graph g = driver::load_model(tree_model(t, rows));
        NDArray in = NDArray::empty({DType::Float64, {rows, 3}});
        std::copy(x.begin(), x.end(), in.data<double>());
        NDArray y = run(g, {in}).at(0);
        const std::vector<double> want = walk(t, x, rows);
        for (size_t i = 0; i < want.size(); ++i)
            EXPECT_NEAR(y.data<double>()[i], want[i], 1e-12) << i;
    }
    t.sets = {{-0.5, 1.0}};
    try {
        driver::load_model(tree_model(t, rows));
        ADD_FAILURE() << "no error";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("membership_values must hold 2 sets"),
                  std::string::npos)
            << e.what();
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

// skl2onnx's tutorial model lists its Normalizer before the LinearClassifier
// it reads and declares its output without a type (ONNX Runtime sorts such a
// graph and infers the type): the nodes are sorted again, each as early as
// its inputs allow, and the output typed by ONNX's inference; a cycle is
// still refused (tests/data/bad_inputs/graph_cycle.onnx).
TEST(OnnxImport, NodesListedBeforeTheirInputsAreSorted) {
    onnx::ModelProto model;
    model.set_ir_version(8);
    model.add_opset_import()->set_version(17);
    onnx::GraphProto* g = model.mutable_graph();
    g->set_name("g");
    auto add_node = [&](const char* op, std::vector<std::string> in, const char* out) {
        onnx::NodeProto* n = g->add_node();
        n->set_op_type(op);
        n->set_name(std::string(op) + "_" + out);
        for (const std::string& i : in) n->add_input(i);
        n->add_output(out);
    };
    add_node("Mul", {"t", "u"}, "y");  // reads both nodes below
    add_node("Relu", {"t"}, "u");
    add_node("Add", {"x", "x"}, "t");
    onnx::ValueInfoProto* vi = g->add_input();
    vi->set_name("x");
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto_DataType_FLOAT);
    tt->mutable_shape()->add_dim()->set_dim_value(2);
    tt->mutable_shape()->add_dim()->set_dim_value(5);
    g->add_output()->set_name("y");  // no type, as that model declares it
    const fs::path path =
        fs::temp_directory_path() / ("tessera_unsorted_" + std::to_string(::getpid()) + ".onnx");
    {
        std::ofstream out(path, std::ios::binary);
        model.SerializeToOstream(&out);
    }
    NDArray x = random_floats({2, 5}, 9);
    NDArray y = run(driver::load_model(path.string()), {x}).at(0);
    for (int i = 0; i < 10; ++i) {
        const float t = x.data<float>()[i] * 2;
        EXPECT_FLOAT_EQ(y.data<float>()[i], t * std::max(t, 0.f)) << i;
    }
    fs::remove(path);
}

}  // namespace
}  // namespace tessera::index_test
