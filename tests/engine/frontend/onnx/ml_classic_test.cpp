// The classic ai.onnx.ml ops skl2onnx and onnxmltools write (issue #15,
// session 27): TreeEnsembleRegressor and TreeEnsembleClassifier (ml opsets
// 1-3, also in opset-9 models), Scaler, the linear models, Normalizer,
// Binarizer and ArrayFeatureExtractor, each checked on random data
// (with missing values) against trees walked here one row at a time as
// ONNX's reference implementation reads them; and deep trees, whose walk
// must stay a bounded kernel.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>

#include "engine/driver/cuda_model.h"
#include "engine/driver/driver.h"
#include "engine/tir/printer.h"
#include "tests/engine/frontend/onnx/index_test_util.h"

namespace tessera::index_test {
namespace {

namespace fs = std::filesystem;

// One tree node in the classic form.
struct ClassicNode {
    int64_t tree, id;
    std::string mode;  // BRANCH_LEQ ... or LEAF
    int64_t feature = 0;
    double value = 0;
    int64_t on_true = 0, on_false = 0, tracks = 0;
};

struct Weight {
    int64_t tree, node, target;
    double w;
};

struct Classic {
    std::string op = "TreeEnsembleRegressor";
    int64_t opset = 17, features = 3;
    std::vector<ClassicNode> nodes;
    std::vector<Weight> weights;
    int64_t targets = 1;          // regressor: n_targets; classifier: the labels' count
    std::vector<int64_t> labels;  // classifier
    std::vector<double> base;
    std::string aggregate = "SUM";  // regressor
    std::string post = "NONE";
};

std::string write_model(const Classic& c, int64_t rows, const std::string& name) {
    onnx::ModelProto model;
    model.set_ir_version(c.opset < 11 ? 4 : 8);
    model.add_opset_import()->set_version(c.opset);
    auto* ml = model.add_opset_import();
    ml->set_domain("ai.onnx.ml");
    ml->set_version(1);
    onnx::GraphProto* g = model.mutable_graph();
    g->set_name("g");
    onnx::NodeProto* n = g->add_node();
    n->set_op_type(c.op);
    n->set_domain("ai.onnx.ml");
    n->set_name("trees");
    n->add_input("X");
    const bool classifier = c.op == "TreeEnsembleClassifier";
    if (classifier) n->add_output("label");
    n->add_output("scores");
    auto ints = [&](const char* attr, const std::vector<int64_t>& v) {
        auto* a = n->add_attribute();
        a->set_name(attr);
        a->set_type(onnx::AttributeProto::INTS);
        for (int64_t x : v) a->add_ints(x);
    };
    auto floats = [&](const char* attr, const std::vector<double>& v) {
        auto* a = n->add_attribute();
        a->set_name(attr);
        a->set_type(onnx::AttributeProto::FLOATS);
        for (double x : v) a->add_floats(float(x));
    };
    auto text = [&](const char* attr, const std::string& v) {
        auto* a = n->add_attribute();
        a->set_name(attr);
        a->set_type(onnx::AttributeProto::STRING);
        a->set_s(v);
    };
    std::vector<int64_t> trees, ids, feats, ts, fs_, tracks;
    std::vector<double> values;
    auto* modes = n->add_attribute();
    modes->set_name("nodes_modes");
    modes->set_type(onnx::AttributeProto::STRINGS);
    for (const ClassicNode& node : c.nodes) {
        trees.push_back(node.tree);
        ids.push_back(node.id);
        feats.push_back(node.feature);
        values.push_back(node.value);
        ts.push_back(node.on_true);
        fs_.push_back(node.on_false);
        tracks.push_back(node.tracks);
        modes->add_strings(node.mode);
    }
    ints("nodes_treeids", trees);
    ints("nodes_nodeids", ids);
    ints("nodes_featureids", feats);
    floats("nodes_values", values);
    ints("nodes_truenodeids", ts);
    ints("nodes_falsenodeids", fs_);
    ints("nodes_missing_value_tracks_true", tracks);
    const std::string prefix = classifier ? "class" : "target";
    std::vector<int64_t> wt, wn, wi;
    std::vector<double> ww;
    for (const Weight& w : c.weights) {
        wt.push_back(w.tree);
        wn.push_back(w.node);
        wi.push_back(w.target);
        ww.push_back(w.w);
    }
    ints((prefix + "_treeids").c_str(), wt);
    ints((prefix + "_nodeids").c_str(), wn);
    ints((prefix + "_ids").c_str(), wi);
    floats((prefix + "_weights").c_str(), ww);
    if (!c.base.empty()) floats("base_values", c.base);
    text("post_transform", c.post);
    if (classifier) {
        ints("classlabels_int64s", c.labels);
    } else {
        text("aggregate_function", c.aggregate);
        auto* a = n->add_attribute();
        a->set_name("n_targets");
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(c.targets);
    }
    auto value = [&](onnx::ValueInfoProto* vi, const char* nm, int type,
                     std::vector<int64_t> dims) {
        vi->set_name(nm);
        auto* tt = vi->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(type);
        for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
    };
    value(g->add_input(), "X", onnx::TensorProto_DataType_FLOAT, {rows, c.features});
    if (classifier) value(g->add_output(), "label", onnx::TensorProto_DataType_INT64, {rows});
    value(g->add_output(), "scores", onnx::TensorProto_DataType_FLOAT, {rows, c.targets});
    const fs::path path = fs::temp_directory_path() /
                          ("tessera_ml_" + name + "_" + std::to_string(::getpid()) + ".onnx");
    std::ofstream out(path, std::ios::binary);
    model.SerializeToOstream(&out);
    return path.string();
}

// Scores [rows, targets] walked one row at a time, before the labels.
std::vector<double> reference_scores(const Classic& c, const NDArray& x, int64_t rows) {
    std::map<std::pair<int64_t, int64_t>, const ClassicNode*> at;
    std::vector<int64_t> roots;
    std::set<int64_t> seen;
    for (const ClassicNode& n : c.nodes) {
        at[{n.tree, n.id}] = &n;
        if (seen.insert(n.tree).second) roots.push_back(n.tree);
    }
    const int64_t T = c.targets;
    std::vector<double> y(size_t(rows * T));
    for (int64_t r = 0; r < rows; ++r) {
        std::vector<double> s(size_t(T), c.aggregate == "MIN"   ? 1e300
                                         : c.aggregate == "MAX" ? -1e300
                                                                : 0.0);
        for (int64_t tree : roots) {
            int64_t id = -1;
            for (const ClassicNode& n : c.nodes)
                if (n.tree == tree) {
                    id = n.id;
                    break;
                }
            const ClassicNode* n = at.at({tree, id});
            while (n->mode != "LEAF") {
                const double v = x.data<float>()[r * c.features + n->feature];
                const double th = double(float(n->value));
                bool go = false;
                if (std::isnan(v))
                    go = n->tracks != 0;
                else if (n->mode == "BRANCH_LEQ")
                    go = v <= th;
                else if (n->mode == "BRANCH_LT")
                    go = v < th;
                else if (n->mode == "BRANCH_GTE")
                    go = v >= th;
                else if (n->mode == "BRANCH_GT")
                    go = v > th;
                else if (n->mode == "BRANCH_EQ")
                    go = v == th;
                else
                    go = v != th;
                n = at.at({tree, go ? n->on_true : n->on_false});
            }
            for (const Weight& w : c.weights)
                if (w.tree == tree && w.node == n->id) {
                    double& t = s[size_t(w.target)];
                    t = c.aggregate == "MIN"   ? std::min(t, double(float(w.w)))
                        : c.aggregate == "MAX" ? std::max(t, double(float(w.w)))
                                               : t + double(float(w.w));
                }
        }
        for (int64_t t = 0; t < T; ++t) {
            double v = s[size_t(t)];
            if (c.aggregate == "AVERAGE") v /= double(roots.size());
            if (!c.base.empty()) v += double(float(c.base[size_t(t)]));
            y[size_t(r * T + t)] = v;
        }
    }
    return y;
}

// Inputs [rows, features] in [-1, 1] with some missing values.
NDArray inputs_with_nans(const Classic& c, int64_t rows, uint32_t seed) {
    NDArray x = random_floats({rows, c.features}, seed);
    for (int64_t i = 0; i < x.num_elements(); i += 7) x.data<float>()[i] = std::nanf("");
    return x;
}

// Tree 7 (nodes listed out of order after its root), tree 3 (one leaf) and
// tree 5, with every comparison mode, a missing value that goes true, and
// leaves scoring one, two or no targets.
Classic three_trees() {
    Classic c;
    c.nodes = {
        {7, 0, "BRANCH_LEQ", 0, 0.5, 1, 2, 0},
        {7, 4, "LEAF"},
        {7, 2, "BRANCH_NEQ", 1, -0.25, 3, 4, 1},
        {7, 1, "LEAF"},
        {7, 3, "LEAF"},
        {3, 0, "LEAF"},
        {5, 0, "BRANCH_GT", 2, 0.1, 1, 2, 0},
        {5, 1, "BRANCH_EQ", 0, 0.0, 5, 6, 0},
        {5, 2, "BRANCH_LT", 0, -0.3, 3, 4, 1},
        {5, 3, "BRANCH_GTE", 1, 0.2, 7, 8, 0},
        {5, 4, "LEAF"},
        {5, 5, "LEAF"},
        {5, 6, "LEAF"},
        {5, 7, "LEAF"},
        {5, 8, "LEAF"},
    };
    c.weights = {{7, 1, 0, 1.5},  {7, 1, 1, -2.0}, {7, 3, 0, 0.25}, {7, 4, 1, 3.0},
                 {3, 0, 0, 0.75}, {5, 4, 0, -0.5}, {5, 5, 1, 2.5},  {5, 6, 0, 1.25},
                 {5, 7, 0, -1.0}, {5, 7, 0, 0.5},  {5, 8, 1, 4.0}};
    c.targets = 2;
    return c;
}

TEST(OnnxMlClassic, ARegressorWalksItsTreesAsTheReferenceReadsThem) {
    const int64_t rows = 23;
    for (int variant = 0; variant < 3; ++variant) {
        SCOPED_TRACE("variant " + std::to_string(variant));
        Classic c = three_trees();
        if (variant == 1) {
            // Opset 9, as skl2onnx wrote it: converted to 11 for the walk.
            c.opset = 9;
            c.aggregate = "AVERAGE";
            c.base = {0.5, -1.0};
        }
        if (variant == 2) {
            c.targets = 1;
            for (Weight& w : c.weights) w.target = 0;
            c.aggregate = "MAX";
        }
        graph::Graph g = driver::load_model(write_model(c, rows, "regressor"));
        const NDArray x = inputs_with_nans(c, rows, 11 + uint32_t(variant));
        NDArray y = run(g, {x}).at(0);
        ASSERT_EQ(y.shape(), (Ints{rows, c.targets}));
        const std::vector<double> want = reference_scores(c, x, rows);
        for (size_t i = 0; i < want.size(); ++i)
            EXPECT_NEAR(y.data<float>()[i], want[i], 1e-5) << i;
    }
}

TEST(OnnxMlClassic, AFeatureTheInputDoesNotHaveIsAnError) {
    Classic c = three_trees();
    c.nodes[2].feature = 9;  // the input has 3 features
    try {
        driver::load_model(write_model(c, 4, "bad_feature"));
        ADD_FAILURE() << "no error";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("index 9 is out of range for an axis of 3"),
                  std::string::npos)
            << e.what();
    }
}

TEST(OnnxMlClassic, AForestOfSingleLeavesGivesItsConstantScores) {
    // A constant model (every tree one leaf): no comparisons at all.
    Classic c;
    c.nodes = {{0, 0, "LEAF"}, {4, 0, "LEAF"}};
    c.weights = {{0, 0, 0, 1.5}, {4, 0, 0, -0.25}};
    c.base = {0.5};
    const int64_t rows = 5;
    graph::Graph g = driver::load_model(write_model(c, rows, "leaves"));
    NDArray y = run(g, {inputs_with_nans(c, rows, 3)}).at(0);
    for (int64_t r = 0; r < rows; ++r) EXPECT_FLOAT_EQ(y.data<float>()[r], 1.75f) << r;
}

TEST(OnnxMlClassic, AClassifierGivesItsScoresAndTheLabelOfTheBest) {
    const int64_t rows = 19;
    // Three classes under a softmax; two classes scored as one (binary),
    // with and without a logistic.
    for (int variant = 0; variant < 3; ++variant) {
        SCOPED_TRACE("variant " + std::to_string(variant));
        Classic c = three_trees();
        c.op = "TreeEnsembleClassifier";
        if (variant == 0) {
            c.targets = 3;
            c.labels = {10, 20, 30};
            c.weights.push_back({5, 8, 2, 0.75});
            c.post = "SOFTMAX";
            c.base = {0.1, 0.2, -0.3};
        } else {
            c.targets = 2;
            c.labels = {0, 1};
            for (Weight& w : c.weights) w.target = 0;
            c.post = variant == 1 ? "LOGISTIC" : "NONE";
            c.base = {0.25};
        }
        graph::Graph g = driver::load_model(write_model(c, rows, "classifier"));
        const NDArray x = inputs_with_nans(c, rows, 21 + uint32_t(variant));
        std::vector<NDArray> out = run(g, {x});
        ASSERT_EQ(out.size(), 2u);
        ASSERT_EQ(out[1].shape(), (Ints{rows, c.targets}));
        Classic sums = c;
        if (variant > 0) sums.base = {0.25, 0.25};
        const std::vector<double> raw = reference_scores(sums, x, rows);
        for (int64_t r = 0; r < rows; ++r) {
            std::vector<double> z(raw.begin() + r * c.targets, raw.begin() + (r + 1) * c.targets);
            if (variant > 0) z = {variant == 2 ? 1 - z[0] : -z[0], z[0]};
            if (c.post == "SOFTMAX") {
                double m = *std::max_element(z.begin(), z.end()), sum = 0;
                for (double& v : z) sum += (v = std::exp(v - m));
                for (double& v : z) v /= sum;
            }
            if (c.post == "LOGISTIC")
                for (double& v : z) v = 1 / (1 + std::exp(-v));
            const int64_t best = std::max_element(z.begin(), z.end()) - z.begin();
            for (int64_t t = 0; t < c.targets; ++t)
                EXPECT_NEAR(out[1].data<float>()[r * c.targets + t], z[size_t(t)], 1e-5)
                    << r << ", " << t;
            EXPECT_EQ(out[0].data<int64_t>()[r], c.labels[size_t(best)]) << r;
        }
    }
}

// A model of one ai.onnx.ml node `op` (attributes set by `attrs`) from
// x [rows, features] to the float outputs `outputs` ([rows, width] each,
// but a first int64 label [rows] when `label`).
std::string one_ml_node(const std::string& op, int64_t rows, int64_t features,
                        const std::vector<std::pair<std::string, int64_t>>& outputs, bool label,
                        const std::function<void(onnx::NodeProto&, onnx::GraphProto&)>& attrs,
                        bool import_default = true) {
    onnx::ModelProto model;
    model.set_ir_version(8);
    if (import_default) model.add_opset_import()->set_version(17);
    auto* ml = model.add_opset_import();
    ml->set_domain("ai.onnx.ml");
    ml->set_version(1);
    onnx::GraphProto* g = model.mutable_graph();
    g->set_name("g");
    onnx::NodeProto* n = g->add_node();
    n->set_op_type(op);
    n->set_domain("ai.onnx.ml");
    n->add_input("x");
    attrs(*n, *g);
    auto value = [&](onnx::ValueInfoProto* vi, const std::string& name, int type,
                     std::vector<int64_t> dims) {
        vi->set_name(name);
        auto* tt = vi->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(type);
        for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
    };
    value(g->add_input(), "x", onnx::TensorProto_DataType_FLOAT, {rows, features});
    for (size_t k = 0; k < outputs.size(); ++k) {
        n->add_output(outputs[k].first);
        const bool is_label = label && k == 0;
        value(
            g->add_output(), outputs[k].first,
            is_label ? onnx::TensorProto_DataType_INT64 : onnx::TensorProto_DataType_FLOAT,
            is_label ? std::vector<int64_t>{rows} : std::vector<int64_t>{rows, outputs[k].second});
    }
    const fs::path path = fs::temp_directory_path() /
                          ("tessera_ml_" + op + "_" + std::to_string(::getpid()) + ".onnx");
    std::ofstream out(path, std::ios::binary);
    model.SerializeToOstream(&out);
    return path.string();
}

void floats_attr(onnx::NodeProto& n, const std::string& name, const std::vector<float>& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOATS);
    for (float x : v) a->add_floats(x);
}

void text_attr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
}

void ints_attr(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
}

TEST(OnnxMlClassic, ALinearClassifierScoresAndLabelsItsRows) {
    const int64_t rows = 9, F = 3;
    const NDArray x = random_floats({rows, F}, 5);
    // Three classes under a softmax, then one row of coefficients for two
    // classes (scores [-s, s], as ONNX's reference reads it) with a logistic.
    for (int variant = 0; variant < 2; ++variant) {
        SCOPED_TRACE("variant " + std::to_string(variant));
        const std::vector<float> coef =
            variant == 0 ? std::vector<float>{0.5f, -1.f, 2.f, 1.5f, 0.25f, -0.5f, -2.f, 1.f, 0.75f}
                         : std::vector<float>{1.25f, -0.5f, 2.f};
        const std::vector<float> icpt =
            variant == 0 ? std::vector<float>{0.1f, -0.2f, 0.3f} : std::vector<float>{-0.4f};
        const std::vector<int64_t> labels =
            variant == 0 ? std::vector<int64_t>{7, 8, 9} : std::vector<int64_t>{0, 1};
        const int64_t classes = int64_t(labels.size());
        const std::string path =
            one_ml_node("LinearClassifier", rows, F, {{"label", 0}, {"scores", classes}}, true,
                        [&](onnx::NodeProto& n, onnx::GraphProto&) {
                            floats_attr(n, "coefficients", coef);
                            floats_attr(n, "intercepts", icpt);
                            ints_attr(n, "classlabels_ints", labels);
                            text_attr(n, "post_transform", variant == 0 ? "SOFTMAX" : "LOGISTIC");
                        });
        std::vector<NDArray> out = run(driver::load_model(path), {x});
        ASSERT_EQ(out.size(), 2u);
        for (int64_t r = 0; r < rows; ++r) {
            std::vector<double> z;
            for (size_t c = 0; c < icpt.size(); ++c) {
                double v = icpt[c];
                for (int64_t f = 0; f < F; ++f)
                    v += double(coef[c * size_t(F) + size_t(f)]) * x.data<float>()[r * F + f];
                z.push_back(v);
            }
            if (variant == 1) z = {-z[0], z[0]};
            if (variant == 0) {
                double m = *std::max_element(z.begin(), z.end()), sum = 0;
                for (double& v : z) sum += (v = std::exp(v - m));
                for (double& v : z) v /= sum;
            } else {
                for (double& v : z) v = 1 / (1 + std::exp(-v));
            }
            for (int64_t c = 0; c < classes; ++c)
                EXPECT_NEAR(out[1].data<float>()[r * classes + c], z[size_t(c)], 1e-5);
            EXPECT_EQ(out[0].data<int64_t>()[r],
                      labels[size_t(std::max_element(z.begin(), z.end()) - z.begin())]);
        }
    }
}

TEST(OnnxMlClassic, ALinearRegressorAndANormalizerComputeTheirRows) {
    const int64_t rows = 7, F = 4;
    const NDArray x = random_floats({rows, F}, 6);
    const std::vector<float> coef = {0.5f, -1.f, 2.f, 0.25f, 1.5f, 0.f, -0.75f, 1.f};
    NDArray y = run(driver::load_model(one_ml_node("LinearRegressor", rows, F, {{"y", 2}}, false,
                                                   [&](onnx::NodeProto& n, onnx::GraphProto&) {
                                                       floats_attr(n, "coefficients", coef);
                                                       floats_attr(n, "intercepts", {1.f, -2.f});
                                                       auto* a = n.add_attribute();
                                                       a->set_name("targets");
                                                       a->set_type(onnx::AttributeProto::INT);
                                                       a->set_i(2);
                                                   })),
                    {x})
                    .at(0);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t t = 0; t < 2; ++t) {
            double v = t == 0 ? 1.0 : -2.0;
            for (int64_t f = 0; f < F; ++f)
                v += double(coef[size_t(t * F + f)]) * x.data<float>()[r * F + f];
            EXPECT_NEAR(y.data<float>()[r * 2 + t], v, 1e-5) << r << ", " << t;
        }
    for (const std::string norm : {"MAX", "L1", "L2"}) {
        SCOPED_TRACE(norm);
        NDArray z = run(driver::load_model(one_ml_node("Normalizer", rows, F, {{"z", F}}, false,
                                                       [&](onnx::NodeProto& n, onnx::GraphProto&) {
                                                           text_attr(n, "norm", norm);
                                                       })),
                        {x})
                        .at(0);
        for (int64_t r = 0; r < rows; ++r) {
            double d = 0;
            for (int64_t f = 0; f < F; ++f) {
                const double v = x.data<float>()[r * F + f];
                d = norm == "MAX"  ? std::max(d, std::abs(v))
                    : norm == "L1" ? d + std::abs(v)
                                   : d + v * v;
            }
            if (norm == "L2") d = std::sqrt(d);
            for (int64_t f = 0; f < F; ++f)
                EXPECT_NEAR(z.data<float>()[r * F + f], x.data<float>()[r * F + f] / d, 1e-5);
        }
    }
}

TEST(OnnxMlClassic, AScalerShiftsAndScalesEachColumn) {
    const std::vector<float> offset = {0.5f, -1.f, 2.f}, scale = {2.f, 0.25f, -1.f};
    const std::string path =
        one_ml_node("Scaler", 5, 3, {{"y", 3}}, false, [&](onnx::NodeProto& n, onnx::GraphProto&) {
            floats_attr(n, "offset", offset);
            floats_attr(n, "scale", scale);
        });
    NDArray x = random_floats({5, 3}, 4);
    NDArray y = run(driver::load_model(path), {x}).at(0);
    for (int i = 0; i < 15; ++i)
        EXPECT_FLOAT_EQ(y.data<float>()[i],
                        (x.data<float>()[i] - offset[size_t(i % 3)]) * scale[size_t(i % 3)]);
}

TEST(OnnxMlClassic, ABinarizerAndAFeatureExtractorInAModelImportingOnlyAiOnnxMl) {
    // ONNX's own ai.onnx.ml tests import no default domain: the rewrite's
    // standard ops come in opset 17's forms.
    const int64_t rows = 4, F = 5;
    const NDArray x = random_floats({rows, F}, 12);
    NDArray y = run(driver::load_model(one_ml_node(
                        "Binarizer", rows, F, {{"y", F}}, false,
                        [](onnx::NodeProto& n, onnx::GraphProto&) {
                            auto* a = n.add_attribute();
                            a->set_name("threshold");
                            a->set_type(onnx::AttributeProto::FLOAT);
                            a->set_f(0.25f);
                        },
                        false)),
                    {x})
                    .at(0);
    for (int64_t i = 0; i < rows * F; ++i)
        EXPECT_EQ(y.data<float>()[i], x.data<float>()[i] > 0.25f ? 1.f : 0.f) << i;
    // ArrayFeatureExtractor: columns 3 and 0 of each row, as a second input.
    const std::string path = one_ml_node(
        "ArrayFeatureExtractor", rows, F, {{"z", 2}}, false,
        [](onnx::NodeProto& n, onnx::GraphProto& g) {
            n.add_input("idx");
            onnx::TensorProto* idx = g.add_initializer();
            idx->set_name("idx");
            idx->set_data_type(onnx::TensorProto_DataType_INT64);
            idx->add_dims(2);
            idx->add_int64_data(3);
            idx->add_int64_data(0);
        },
        false);
    NDArray z = run(driver::load_model(path), {x}).at(0);
    ASSERT_EQ(z.shape(), (Ints{rows, 2}));
    for (int64_t r = 0; r < rows; ++r) {
        EXPECT_EQ(z.data<float>()[r * 2], x.data<float>()[r * F + 3]);
        EXPECT_EQ(z.data<float>()[r * 2 + 1], x.data<float>()[r * F]);
    }
}

TEST(OnnxMlClassic, DeepTreesWalkInABoundedKernel) {
    // Six chains 40 levels deep (each node's false branch the next node):
    // the walk's gathers, each indexed by the one before, are computed in
    // steps, and the branch table once, not again for every level.
    Classic c;
    for (int64_t t = 0; t < 6; ++t) {
        for (int64_t d = 0; d < 40; ++d) {
            c.nodes.push_back({t, d, "BRANCH_GT", (t + d) % 3, 0.9 - 0.045 * double(d), 100 + d,
                               d + 1 < 40 ? d + 1 : 140, 0});
        }
        for (int64_t d = 0; d <= 40; ++d) {
            c.nodes.push_back({t, 100 + d, "LEAF"});
            c.weights.push_back({t, 100 + d, 0, double(d) * 0.1 + double(t)});
        }
    }
    const int64_t rows = 9;
    graph::Graph g = driver::load_model(write_model(c, rows, "deep"));
    const NDArray x = random_floats({rows, c.features}, 8);
    NDArray y = run(g, {x}).at(0);
    const std::vector<double> want = reference_scores(c, x, rows);
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(y.data<float>()[i], want[i], 1e-4) << i;
    size_t text = 0;
    for (const tir::PrimFunc& f : driver::lower_fused(driver::optimize(g)))
        text += tir::print(f).size();
    EXPECT_LT(text, 250000u) << "the walk's kernels print " << text << " characters";
    // The GPU schedule inlines spatial stages, but not back into the chain
    // (the studio's CUDA pane ran out of memory on the LightGBM decoder).
    driver::BuildOptions gpu;
    gpu.target = "cuda";
    std::shared_ptr<driver::CudaModel> cuda =
        driver::build_cuda(driver::optimize(g, gpu), {}, nullptr, false);
    size_t cuda_text = 0;
    for (const tir::PrimFunc& f : cuda->kernels) cuda_text += tir::print(f).size();
    EXPECT_LT(cuda_text, 400000u) << "the GPU kernels print " << cuda_text << " characters";
}

}  // namespace
}  // namespace tessera::index_test
