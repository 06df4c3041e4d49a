// Models with float16, bfloat16, uint32 and uint64 inputs and outputs: import
// widens them (float16 -> float32, uint32 -> int64), the model computes in the
// wide type and returns results in the declared type; Cast to FLOAT16 rounds.
#define ONNX_ML 1
#define ONNX_NAMESPACE onnx
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "engine/core/error.h"
#include "engine/driver/boundary_types.h"
#include "engine/driver/driver.h"
#include "engine/frontend/onnx/onnx_importer.h"
#include "engine/runtime/half_float.h"
#include "onnx/onnx_pb.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using graph::DType;
using runtime::NDArray;

struct Io {
    std::string name;
    int elem_type;
    std::vector<int64_t> shape;
};

void set_type(onnx::ValueInfoProto* vi, const Io& io) {
    vi->set_name(io.name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(io.elem_type);
    for (int64_t d : io.shape) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

struct NodeSpec {
    std::string op;
    std::vector<std::string> inputs, outputs;
    int64_t to = -1;  // Cast's "to"
};

// Writes a one-graph ONNX model (opset 13) into a fresh temporary folder; returns its path.
std::string write_model(const std::string& name, const std::vector<Io>& inputs,
                        const std::vector<Io>& outputs, const std::vector<NodeSpec>& nodes) {
    onnx::ModelProto m;
    m.set_ir_version(7);
    m.add_opset_import()->set_version(13);
    onnx::GraphProto* g = m.mutable_graph();
    g->set_name(name);
    for (const Io& io : inputs) set_type(g->add_input(), io);
    for (const Io& io : outputs) set_type(g->add_output(), io);
    for (const NodeSpec& s : nodes) {
        onnx::NodeProto* n = g->add_node();
        n->set_op_type(s.op);
        for (const auto& i : s.inputs) n->add_input(i);
        for (const auto& o : s.outputs) n->add_output(o);
        if (s.to >= 0) {
            onnx::AttributeProto* a = n->add_attribute();
            a->set_name("to");
            a->set_type(onnx::AttributeProto_AttributeType_INT);
            a->set_i(s.to);
        }
    }
    fs::path dir = fs::temp_directory_path() / ("tessera_dtype_" + name + "_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::string path = (dir / "model.onnx").string();
    std::ofstream out(path, std::ios::binary);
    m.SerializeToOstream(&out);
    return path;
}

NDArray random_floats(std::vector<int64_t> shape, float lo, float hi, uint64_t seed) {
    NDArray a = NDArray::empty({DType::Float32, std::move(shape)});
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> d(lo, hi);
    for (int64_t i = 0; i < a.num_elements(); ++i) {
        float v = d(rng);
        a.data<float>()[i] = std::fabs(v) < 0.05f ? 0.5f : v;
    }
    return a;
}

constexpr int kFloat16 = onnx::TensorProto_DataType_FLOAT16;
constexpr int kFloat = onnx::TensorProto_DataType_FLOAT;
constexpr int kUint32 = onnx::TensorProto_DataType_UINT32;
constexpr int kUint64 = onnx::TensorProto_DataType_UINT64;

TEST(BoundaryModel, Float16InputsComputeInFloat32AndReturnRoundedFloat16) {
    // z = Sqrt(Abs(Div(a, b))) declared float16 throughout.
    std::string path = write_model(
        "half", {{"a", kFloat16, {4, 5}}, {"b", kFloat16, {4, 5}}}, {{"z", kFloat16, {4, 5}}},
        {{"Div", {"a", "b"}, {"q"}}, {"Abs", {"q"}, {"p"}}, {"Sqrt", {"p"}, {"z"}}});
    graph::Graph g = driver::load_model(path);
    EXPECT_EQ(g.values[size_t(g.inputs[0])].type, (graph::TensorType{DType::Float32, {4, 5}}));
    frontend::BoundaryTypes types = frontend::read_boundary_types(path);
    EXPECT_EQ(types.input_types, (std::vector<std::string>{"float16", "float16"}));
    EXPECT_EQ(types.output_types, (std::vector<std::string>{"float16"}));

    // The user's inputs as float16 TensorProto files, read back widened.
    fs::path dir = fs::path(path).parent_path();
    NDArray a = random_floats({4, 5}, -3, 3, 1), b = random_floats({4, 5}, -2, 2, 2);
    frontend::write_tensor_pb_as(a, "float16", "a", (dir / "input_0.pb").string());
    frontend::write_tensor_pb_as(b, "float16", "b", (dir / "input_1.pb").string());
    NDArray ha = frontend::read_tensor_pb((dir / "input_0.pb").string());
    NDArray hb = frontend::read_tensor_pb((dir / "input_1.pb").string());
    ASSERT_EQ(ha.dtype(), DType::Float32);
    for (int64_t i = 0; i < 20; ++i)
        EXPECT_EQ(ha.data<float>()[i], runtime::round_to_half(a.data<float>()[i]));

    std::vector<NDArray> out = driver::to_declared_outputs(driver::build(g)->run({ha, hb}),
                                                           types.output_types);
    ASSERT_EQ(out.size(), 1u);
    for (int64_t i = 0; i < 20; ++i) {
        float want = runtime::round_to_half(
            std::sqrt(std::fabs(ha.data<float>()[i] / hb.data<float>()[i])));
        EXPECT_EQ(out[0].data<float>()[i], want) << i;
    }
    // Written in the declared type, the output reads back to the same values.
    frontend::write_tensor_pb_as(out[0], "float16", "z", (dir / "output_0.pb").string());
    NDArray back = frontend::read_tensor_pb((dir / "output_0.pb").string());
    EXPECT_EQ(std::memcmp(back.raw(), out[0].raw(), out[0].num_bytes()), 0);
    EXPECT_EQ(fs::file_size(dir / "output_0.pb") < 20 * 4, true);  // 2 bytes per element
    fs::remove_all(dir);
}

TEST(BoundaryModel, CastToFloat16RoundsInsideTheGraph) {
    std::string path = write_model("cast16", {{"x", kFloat, {64}}}, {{"y", kFloat, {64}}},
                                   {{"Cast", {"x"}, {"h"}, kFloat16}, {"Cast", {"h"}, {"y"}, kFloat}});
    graph::Graph g = driver::load_model(path);
    NDArray x = random_floats({64}, -70000, 70000, 3);
    x.data<float>()[0] = 1.0f + std::ldexp(1.0f, -11);  // a tie
    x.data<float>()[1] = std::ldexp(3.0f, -25);        // a subnormal tie
    NDArray y = driver::build(g)->run({x}).at(0);
    for (int64_t i = 0; i < 64; ++i)
        EXPECT_EQ(y.data<float>()[i], runtime::round_to_half(x.data<float>()[i])) << i;
    fs::remove_all(fs::path(path).parent_path());
}

TEST(BoundaryModel, Uint32ArithmeticWrapsModulo2To32) {
    std::string path = write_model(
        "u32", {{"a", kUint32, {6}}, {"b", kUint32, {6}}},
        {{"s", kUint32, {6}}, {"d", kUint32, {6}}, {"m", kUint32, {6}}},
        {{"Add", {"a", "b"}, {"s"}}, {"Sub", {"a", "b"}, {"d"}}, {"Mul", {"a", "b"}, {"m"}}});
    graph::Graph g = driver::load_model(path);
    EXPECT_EQ(g.values[size_t(g.inputs[0])].type.dtype, DType::Int64);
    std::vector<int64_t> av = {4294967295, 1, 0, 123456789, 4000000000, 7};
    std::vector<int64_t> bv = {2, 2, 4294967295, 987654321, 4000000000, 5};
    NDArray a = NDArray::from_bytes({DType::Int64, {6}}, av.data(), 48);
    NDArray b = NDArray::from_bytes({DType::Int64, {6}}, bv.data(), 48);
    std::vector<NDArray> out = driver::build(g)->run({a, b});
    for (size_t i = 0; i < 6; ++i) {
        uint32_t x = uint32_t(av[i]), y = uint32_t(bv[i]);
        EXPECT_EQ(out[0].data<int64_t>()[i], int64_t(uint32_t(x + y))) << i;
        EXPECT_EQ(out[1].data<int64_t>()[i], int64_t(uint32_t(x - y))) << i;
        EXPECT_EQ(out[2].data<int64_t>()[i], int64_t(uint32_t(x * y))) << i;
    }
    fs::remove_all(fs::path(path).parent_path());
}

TEST(BoundaryModel, Uint64ModuloIsRefusedWithTheTypeNamed) {
    // Unsigned remainder of values >= 2^63 has no exact int64 form here.
    std::string path = write_model("u64", {{"a", kUint64, {3}}, {"b", kUint64, {3}}},
                                   {{"c", kUint64, {3}}}, {{"Mod", {"a", "b"}, {"c"}}});
    try {
        driver::load_model(path);
        ADD_FAILURE() << "uint64 Mod imported";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("element type UINT64 is not supported by Mod"),
                  std::string::npos)
            << e.what();
    }
    // Wrap-around-exact ops are fine.
    std::string add = write_model("u64add", {{"a", kUint64, {3}}, {"b", kUint64, {3}}},
                                  {{"c", kUint64, {3}}}, {{"Add", {"a", "b"}, {"c"}}});
    EXPECT_NO_THROW(driver::load_model(add));
    fs::remove_all(fs::path(path).parent_path());
    fs::remove_all(fs::path(add).parent_path());
}

std::string node_case(const std::string& name) {
    return std::string(TESSERA_ONNX_TESTDATA) + "/node/" + name;
}

TEST(BoundaryModel, OnnxCastCasesPass) {
    for (const char* name : {"test_cast_FLOAT_to_FLOAT16", "test_cast_FLOAT16_to_FLOAT",
                             "test_cast_FLOAT_to_BFLOAT16", "test_cast_BFLOAT16_to_FLOAT",
                             "test_max_uint32", "test_min_int16", "test_mod_uint16"}) {
        if (!fs::exists(node_case(name))) GTEST_SKIP() << "no ONNX test data";
        driver::ConformanceResult r = driver::run_conformance_case(node_case(name));
        EXPECT_EQ(r.status, driver::ConformanceResult::Passed) << name << ": " << r.message;
    }
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

TEST(BoundaryModel, Uint64OrderingIsExactAboveTwoTo63) {
    std::string path = write_model(
        "u64ord", {{"a", kUint64, {5}}, {"b", kUint64, {5}}},
        {{"mx", kUint64, {5}}, {"mn", kUint64, {5}}, {"lt", onnx::TensorProto_DataType_BOOL, {5}}},
        {{"Max", {"a", "b"}, {"mx"}}, {"Min", {"a", "b"}, {"mn"}}, {"Less", {"a", "b"}, {"lt"}}});
    graph::Graph g = driver::load_model(path);
    // uint64 bit patterns held in int64: 2^64 - 1, 2^63, 2^63 - 1, 0, 5.
    std::vector<uint64_t> au = {~uint64_t(0), uint64_t(1) << 63, (uint64_t(1) << 63) - 1, 0, 5};
    std::vector<uint64_t> bu = {1, (uint64_t(1) << 63) - 1, uint64_t(1) << 63, ~uint64_t(0), 3};
    NDArray a = NDArray::from_bytes({DType::Int64, {5}}, au.data(), 40);
    NDArray b = NDArray::from_bytes({DType::Int64, {5}}, bu.data(), 40);
    std::vector<NDArray> out = driver::build(g)->run({a, b});
    for (size_t i = 0; i < 5; ++i) {
        EXPECT_EQ(uint64_t(out[0].data<int64_t>()[i]), std::max(au[i], bu[i])) << i;
        EXPECT_EQ(uint64_t(out[1].data<int64_t>()[i]), std::min(au[i], bu[i])) << i;
        EXPECT_EQ(out[2].data<uint8_t>()[i] != 0, au[i] < bu[i]) << i;
    }
    fs::remove_all(fs::path(path).parent_path());
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

std::string write_tensor(const onnx::TensorProto& t, const std::string& name) {
    std::string path = (fs::temp_directory_path() /
                        ("tessera_dtype_" + name + "_" + std::to_string(::getpid()) + ".pb"))
                           .string();
    std::ofstream out(path, std::ios::binary);
    t.SerializeToOstream(&out);
    return path;
}

TEST(BoundaryTensor, TypedFieldsWidenAndBadSizesAreUserErrors) {
    onnx::TensorProto h;
    h.set_data_type(kFloat16);
    h.add_dims(3);
    for (int bits : {0x3c00, 0xc000, 0x0001}) h.add_int32_data(bits);  // 1, -2, 2^-24
    std::string p = write_tensor(h, "typed16");
    NDArray a = frontend::read_tensor_pb(p);
    ASSERT_EQ(a.type(), (graph::TensorType{DType::Float32, {3}}));
    EXPECT_EQ(a.data<float>()[0], 1.0f);
    EXPECT_EQ(a.data<float>()[1], -2.0f);
    EXPECT_EQ(a.data<float>()[2], std::ldexp(1.0f, -24));

    onnx::TensorProto u;
    u.set_data_type(kUint32);
    u.add_dims(2);
    u.add_uint64_data(4294967295u);
    u.add_uint64_data(7);
    std::string q = write_tensor(u, "typed32");
    NDArray b = frontend::read_tensor_pb(q);
    ASSERT_EQ(b.dtype(), DType::Int64);
    EXPECT_EQ(b.data<int64_t>()[0], 4294967295);

    onnx::TensorProto bad;
    bad.set_data_type(kFloat16);
    bad.add_dims(1000000000);  // a huge shape with 6 bytes of data: refused before allocating
    bad.set_raw_data(std::string(6, '\0'));
    std::string r = write_tensor(bad, "bad16");
    try {
        frontend::read_tensor_pb(r);
        ADD_FAILURE() << "a short float16 tensor was read";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("raw_data holds 6 bytes"), std::string::npos) << e.what();
    }
    for (const auto& f : {p, q, r}) fs::remove(f);
}

}  // namespace
}  // namespace tessera
