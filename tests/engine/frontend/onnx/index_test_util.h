// Helpers for the indexing-op tests: one-node ONNX models built with ONNX's
// protobuf classes, seeded random data and running through the driver.
#pragma once

#ifndef ONNX_ML
#define ONNX_ML 1
#endif
#ifndef ONNX_NAMESPACE
#define ONNX_NAMESPACE onnx
#endif

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/driver/driver.h"
#include "engine/frontend/onnx/onnx_importer.h"
#include "onnx/onnx_pb.h"

namespace tessera::index_test {

using runtime::NDArray;
using Ints = std::vector<int64_t>;

inline int onnx_type(graph::DType t) {
    switch (t) {
        case graph::DType::Float32: return onnx::TensorProto::FLOAT;
        case graph::DType::Float64: return onnx::TensorProto::DOUBLE;
        case graph::DType::Int64: return onnx::TensorProto::INT64;
        case graph::DType::Int32: return onnx::TensorProto::INT32;
        case graph::DType::Int8: return onnx::TensorProto::INT8;
        case graph::DType::UInt8: return onnx::TensorProto::UINT8;
        case graph::DType::Bool: return onnx::TensorProto::BOOL;
    }
    return 0;
}

/// A one-node ONNX model: runtime inputs, initializers (constants) and outputs.
class OneNodeModel {
public:
    OneNodeModel(const std::string& op, int opset = 16) {
        m_model.set_ir_version(8);
        auto* os = m_model.add_opset_import();
        os->set_domain("");
        os->set_version(opset);
        m_graph = m_model.mutable_graph();
        m_graph->set_name("g");
        m_node = m_graph->add_node();
        m_node->set_op_type(op);
        m_node->set_name("n0");
    }
    /// A runtime graph input.
    OneNodeModel& input(const std::string& name, graph::DType t, const Ints& shape) {
        m_node->add_input(name);
        value_info(m_graph->add_input(), name, t, shape);
        return *this;
    }
    /// An omitted optional input.
    OneNodeModel& skip_input() {
        m_node->add_input("");
        return *this;
    }
    /// An initializer input holding `a`.
    OneNodeModel& constant(const std::string& name, const NDArray& a) {
        m_node->add_input(name);
        auto* t = m_graph->add_initializer();
        t->set_name(name);
        for (int64_t d : a.shape()) t->add_dims(d);
        t->set_data_type(onnx_type(a.dtype()));
        t->set_raw_data(std::string(static_cast<const char*>(a.raw()), a.num_bytes()));
        return *this;
    }
    /// A graph output of `shape` (-1: a symbolic dim).
    OneNodeModel& output(const std::string& name, graph::DType t, const Ints& shape) {
        m_node->add_output(name);
        value_info(m_graph->add_output(), name, t, shape);
        return *this;
    }
    OneNodeModel& attr(const std::string& key, int64_t v) {
        auto* a = add_attr(key, onnx::AttributeProto::INT);
        a->set_i(v);
        return *this;
    }
    OneNodeModel& attr(const std::string& key, double v) {
        auto* a = add_attr(key, onnx::AttributeProto::FLOAT);
        a->set_f(float(v));
        return *this;
    }
    OneNodeModel& attr(const std::string& key, const std::string& v) {
        auto* a = add_attr(key, onnx::AttributeProto::STRING);
        a->set_s(v);
        return *this;
    }
    OneNodeModel& attr(const std::string& key, const Ints& v) {
        auto* a = add_attr(key, onnx::AttributeProto::INTS);
        for (int64_t x : v) a->add_ints(x);
        return *this;
    }
    /// Writes the model to a fresh file under the temp folder and returns its path.
    std::string save(const std::string& tag) const {
        auto dir = std::filesystem::temp_directory_path() / "tessera_onnx_index_tests";
        std::filesystem::create_directories(dir);
        std::string path = (dir / (tag + "_" + std::to_string(::getpid()) + ".onnx")).string();
        std::ofstream out(path, std::ios::binary);
        m_model.SerializeToOstream(&out);
        return path;
    }
    /// Imports (with constant folding) through the driver.
    graph::Graph load(const std::string& tag) const { return driver::load_model(save(tag)); }

private:
    static void value_info(onnx::ValueInfoProto* vi, const std::string& name, graph::DType t,
                           const Ints& shape) {
        vi->set_name(name);
        auto* tt = vi->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(onnx_type(t));
        auto* sh = tt->mutable_shape();
        for (size_t i = 0; i < shape.size(); ++i) {
            if (shape[i] >= 0) sh->add_dim()->set_dim_value(shape[i]);
            else sh->add_dim()->set_dim_param(name + "_d" + std::to_string(i));
        }
    }
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

inline NDArray random_floats(const Ints& shape, uint32_t seed, float lo = -1.f, float hi = 1.f) {
    NDArray a = NDArray::empty({graph::DType::Float32, shape});
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(lo, hi);
    for (int64_t i = 0; i < a.num_elements(); ++i) {
        float v = d(rng);
        a.data<float>()[i] = v == 0.f ? 0.5f : v;
    }
    return a;
}

/// Random int64 values in [lo, hi].
inline NDArray random_ints(const Ints& shape, uint32_t seed, int64_t lo, int64_t hi) {
    NDArray a = NDArray::empty({graph::DType::Int64, shape});
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int64_t> d(lo, hi);
    for (int64_t i = 0; i < a.num_elements(); ++i) a.data<int64_t>()[i] = d(rng);
    return a;
}

inline NDArray ints(const Ints& shape, const Ints& values) {
    NDArray a = NDArray::empty({graph::DType::Int64, shape});
    std::memcpy(a.raw(), values.data(), a.num_bytes());
    return a;
}

inline NDArray floats(const Ints& shape, const std::vector<float>& values) {
    NDArray a = NDArray::empty({graph::DType::Float32, shape});
    std::memcpy(a.raw(), values.data(), a.num_bytes());
    return a;
}

/// Compiles `g` and runs it on `inputs`.
inline std::vector<NDArray> run(const graph::Graph& g, const std::vector<NDArray>& inputs) {
    return driver::build(g)->run(inputs);
}

/// Row-major flat offset of `idx` in `shape`.
inline int64_t offset(const Ints& shape, const Ints& idx) {
    int64_t f = 0;
    for (size_t d = 0; d < shape.size(); ++d) f = f * shape[d] + idx[d];
    return f;
}

/// Row-major multi-index of flat position `f` in `shape`.
inline Ints unravel(const Ints& shape, int64_t f) {
    Ints idx(shape.size());
    for (size_t d = shape.size(); d-- > 0;) {
        idx[d] = f % shape[d];
        f /= shape[d];
    }
    return idx;
}

/// Expects every element of `got` within tol of `want` (float32 arrays).
inline void expect_close(const NDArray& got, const std::vector<double>& want, double tol = 1e-5) {
    ASSERT_EQ(got.num_elements(), int64_t(want.size()));
    for (size_t i = 0; i < want.size(); ++i)
        ASSERT_NEAR(got.data<float>()[i], want[i], tol * (1 + std::abs(want[i]))) << "element " << i;
}

/// The UserError text of `f`, or "" when it does not throw.
template <typename F>
std::string user_error(F&& f) {
    try {
        f();
    } catch (const UserError& e) {
        return e.what();
    }
    return "";
}

}  // namespace tessera::index_test
