// Helpers for the loss/training-op tests: multi-node ONNX models built with
// ONNX's protobuf classes (any op domain), on top of the indexing tests' helpers.
#pragma once

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "tests/engine/frontend/onnx/index_test_util.h"

namespace tessera::loss_test {

using index_test::Ints;
using index_test::onnx_type;
using runtime::NDArray;

/// An ONNX model of several nodes with runtime inputs, initializers and outputs.
class GraphModel {
public:
    explicit GraphModel(int opset = 13) {
        m_model.set_ir_version(8);
        auto* os = m_model.add_opset_import();
        os->set_domain("");
        os->set_version(opset);
        m_graph = m_model.mutable_graph();
        m_graph->set_name("g");
    }
    /// Declares opset `version` of another domain.
    GraphModel& domain(const std::string& d, int version) {
        auto* os = m_model.add_opset_import();
        os->set_domain(d);
        os->set_version(version);
        return *this;
    }
    GraphModel& input(const std::string& name, graph::DType t, const Ints& shape) {
        auto* vi = m_graph->add_input();
        vi->set_name(name);
        auto* tt = vi->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(onnx_type(t));
        auto* sh = tt->mutable_shape();
        for (int64_t d : shape) sh->add_dim()->set_dim_value(d);
        return *this;
    }
    GraphModel& constant(const std::string& name, const NDArray& a) {
        auto* t = m_graph->add_initializer();
        t->set_name(name);
        for (int64_t d : a.shape()) t->add_dims(d);
        t->set_data_type(onnx_type(a.dtype()));
        t->set_raw_data(std::string(static_cast<const char*>(a.raw()), a.num_bytes()));
        return *this;
    }
    /// A graph output (the checker wants its shape; the importer re-infers it).
    GraphModel& output(const std::string& name, graph::DType t, const Ints& shape) {
        auto* vi = m_graph->add_output();
        vi->set_name(name);
        auto* tt = vi->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(onnx_type(t));
        auto* sh = tt->mutable_shape();
        for (int64_t d : shape) sh->add_dim()->set_dim_value(d);
        return *this;
    }
    /// Appends a node; attributes are added to the last node with attr().
    GraphModel& node(const std::string& op, const std::vector<std::string>& in,
                     const std::vector<std::string>& out, const std::string& dom = "") {
        m_node = m_graph->add_node();
        m_node->set_op_type(op);
        m_node->set_name("n" + std::to_string(m_graph->node_size() - 1));
        if (!dom.empty()) m_node->set_domain(dom);
        for (const auto& s : in) m_node->add_input(s);
        for (const auto& s : out) m_node->add_output(s);
        return *this;
    }
    GraphModel& attr(const std::string& key, int64_t v) {
        add_attr(key, onnx::AttributeProto::INT)->set_i(v);
        return *this;
    }
    GraphModel& attr(const std::string& key, double v) {
        add_attr(key, onnx::AttributeProto::FLOAT)->set_f(float(v));
        return *this;
    }
    GraphModel& attr(const std::string& key, const std::string& v) {
        add_attr(key, onnx::AttributeProto::STRING)->set_s(v);
        return *this;
    }
    GraphModel& attr(const std::string& key, const std::vector<std::string>& v) {
        auto* a = add_attr(key, onnx::AttributeProto::STRINGS);
        for (const auto& s : v) a->add_strings(s);
        return *this;
    }
    /// Writes the model under the temp folder and imports it through the driver.
    graph::Graph load(const std::string& tag) const {
        auto dir = std::filesystem::temp_directory_path() / "tessera_onnx_loss_tests";
        std::filesystem::create_directories(dir);
        std::string path = (dir / (tag + "_" + std::to_string(::getpid()) + ".onnx")).string();
        {
            std::ofstream out(path, std::ios::binary);
            m_model.SerializeToOstream(&out);
        }
        return driver::load_model(path);
    }

private:
    onnx::AttributeProto* add_attr(const std::string& key, onnx::AttributeProto::AttributeType t) {
        auto* a = m_node->add_attribute();
        a->set_name(key);
        a->set_type(t);
        return a;
    }
    onnx::ModelProto m_model;
    onnx::GraphProto* m_graph = nullptr;
    onnx::NodeProto* m_node = nullptr;
};

/// The float32 elements of `a` as doubles.
inline std::vector<double> values(const NDArray& a) {
    std::vector<double> v(size_t(a.num_elements()));
    for (size_t i = 0; i < v.size(); ++i) v[i] = a.data<float>()[i];
    return v;
}

}  // namespace tessera::loss_test
