// TensorProto <-> constant data and NDArray: initializers, Constant nodes and
// the input_N.pb / output_N.pb files of ONNX test data.
#include <cstring>
#include <fstream>
#include <sstream>

#include "engine/core/checked_math.h"
#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_context.h"
#include "engine/frontend/onnx/onnx_dtype.h"
#include "engine/frontend/onnx/onnx_external_data.h"
#include "engine/frontend/onnx/onnx_importer.h"

namespace tessera::frontend {

namespace onnx_import {

using graph::DType;

onnx::ModelProto read_model_proto(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    TS_USER_CHECK(in.good()) << "cannot open model '" << path << "'";
    std::ostringstream ss;
    ss << in.rdbuf();
    onnx::ModelProto model;
    TS_USER_CHECK(model.ParseFromString(ss.str()))
        << "'" << path << "' is not a valid ONNX model (protobuf parse failed)";
    inline_external_data(model, path);
    return model;
}

graph::DType dtype_from_onnx(int elem_type, const std::string& what) {
    switch (elem_type) {
        case onnx::TensorProto_DataType_FLOAT:
            return DType::Float32;
        case onnx::TensorProto_DataType_DOUBLE:
            return DType::Float64;
        case onnx::TensorProto_DataType_INT64:
            return DType::Int64;
        case onnx::TensorProto_DataType_INT32:
            return DType::Int32;
        case onnx::TensorProto_DataType_INT8:
            return DType::Int8;
        case onnx::TensorProto_DataType_UINT8:
            return DType::UInt8;
        case onnx::TensorProto_DataType_BOOL:
            return DType::Bool;
        default:
            // float16, int16, uint32, ...: computed in a wider dtype (onnx_dtype.cpp).
            if (is_boundary_elem_type(elem_type)) return boundary_compute_dtype(elem_type);
            break;
    }
    std::string type_name =
        onnx::TensorProto_DataType_IsValid(elem_type)
            ? onnx::TensorProto_DataType_Name(onnx::TensorProto_DataType(elem_type))
            : std::to_string(elem_type);
    TS_USER_FAIL() << what << ": element type " << type_name
                   << " is not supported (float32, float64, int64, int32, int8, uint8, bool are)";
}

int dtype_to_onnx(graph::DType t) {
    switch (t) {
        case DType::Float32:
            return onnx::TensorProto_DataType_FLOAT;
        case DType::Float64:
            return onnx::TensorProto_DataType_DOUBLE;
        case DType::Int64:
            return onnx::TensorProto_DataType_INT64;
        case DType::Int32:
            return onnx::TensorProto_DataType_INT32;
        case DType::Int8:
            return onnx::TensorProto_DataType_INT8;
        case DType::UInt8:
            return onnx::TensorProto_DataType_UINT8;
        case DType::Bool:
            return onnx::TensorProto_DataType_BOOL;
    }
    return onnx::TensorProto_DataType_UNDEFINED;
}

namespace {

// Copies a typed repeated field into `bytes`, converting each element to T.
template <typename T, typename Field>
void copy_field(const Field& f, std::vector<uint8_t>& bytes) {
    bytes.resize(size_t(f.size()) * sizeof(T));
    T* out = reinterpret_cast<T*>(bytes.data());
    for (int i = 0; i < f.size(); ++i) out[i] = T(f.Get(i));
}

}  // namespace

ConstTensor decode_tensor(const onnx::TensorProto& t, const std::string& what) {
    TS_USER_CHECK(t.data_location() != onnx::TensorProto_DataLocation_EXTERNAL)
        << what << ": its data is in an external file, read only with the model from its own file";
    // Narrow and half-precision tensors are always widened to their compute
    // dtype (float16 -> float32, ...), weights and test data alike.
    if (is_boundary_elem_type(t.data_type())) return decode_boundary_tensor(t, what);
    ConstTensor c;
    c.type.dtype = dtype_from_onnx(t.data_type(), what);
    for (int64_t d : t.dims()) {
        TS_USER_CHECK(d >= 0) << what << ": negative dimension " << d;
        c.type.shape.push_back(d);
    }
    const int64_t count = checked_elements(c.type.shape);
    TS_USER_CHECK(count >= 0) << what << ": shape " << c.type.str() << " is too large";
    const size_t nbytes = size_t(c.type.num_bytes());
    TS_USER_CHECK(t.has_raw_data() || nbytes <= (size_t(1) << 34))
        << what << ": shape " << c.type.str() << " is too large";
    auto data = std::make_shared<graph::ConstantData>();
    std::vector<uint8_t>& bytes = data->bytes;
    if (t.has_raw_data()) {
        const std::string& raw = t.raw_data();
        TS_USER_CHECK(raw.size() == nbytes)
            << what << ": raw_data holds " << raw.size() << " bytes, shape " << c.type.str()
            << " needs " << nbytes;
        bytes.assign(raw.begin(), raw.end());  // ONNX raw data is little-endian, like the host
    } else {
        int64_t stored = 0;
        switch (c.type.dtype) {
            case DType::Float32:
                copy_field<float>(t.float_data(), bytes);
                stored = t.float_data_size();
                break;
            case DType::Float64:
                copy_field<double>(t.double_data(), bytes);
                stored = t.double_data_size();
                break;
            case DType::Int64:
                copy_field<int64_t>(t.int64_data(), bytes);
                stored = t.int64_data_size();
                break;
            case DType::Int32:
                copy_field<int32_t>(t.int32_data(), bytes);
                stored = t.int32_data_size();
                break;
            case DType::Int8:
                copy_field<int8_t>(t.int32_data(), bytes);
                stored = t.int32_data_size();
                break;
            case DType::UInt8:
                copy_field<uint8_t>(t.int32_data(), bytes);
                stored = t.int32_data_size();
                break;
            case DType::Bool:
                copy_field<uint8_t>(t.int32_data(), bytes);
                stored = t.int32_data_size();
                break;
        }
        TS_USER_CHECK(stored == count) << what << ": holds " << stored << " values, shape "
                                       << c.type.str() << " needs " << count;
    }
    c.data = std::move(data);
    return c;
}

void encode_tensor(const graph::TensorType& type, const void* data, const std::string& name,
                   onnx::TensorProto* out) {
    out->Clear();
    out->set_name(name);
    out->set_data_type(dtype_to_onnx(type.dtype));
    for (int64_t d : type.shape) out->add_dims(d);
    out->set_raw_data(std::string(static_cast<const char*>(data), size_t(type.num_bytes())));
}

}  // namespace onnx_import

runtime::NDArray read_tensor_pb(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    TS_USER_CHECK(in.good()) << "cannot open tensor file '" << path
                             << "': " << std::strerror(errno);
    std::ostringstream ss;
    ss << in.rdbuf();
    return read_tensor_pb_bytes(ss.str(), path);
}

runtime::NDArray read_tensor_pb_bytes(const std::string& bytes, const std::string& what) {
    onnx::TensorProto t;
    TS_USER_CHECK(t.ParseFromString(bytes))
        << "'" << what << "' is not a valid ONNX TensorProto (protobuf parse failed)";
    onnx_import::ConstTensor c = onnx_import::decode_tensor(t, "'" + what + "'");
    return runtime::NDArray::from_bytes(c.type, c.data->bytes.data(), c.data->bytes.size());
}

void write_tensor_pb(const runtime::NDArray& a, const std::string& name, const std::string& path) {
    TS_USER_CHECK(a.defined()) << "write_tensor_pb('" << path << "'): the array is empty";
    onnx::TensorProto t;
    onnx_import::encode_tensor(a.type(), a.raw(), name, &t);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    TS_USER_CHECK(out.good()) << "cannot write tensor file '" << path
                              << "': " << std::strerror(errno);
    TS_USER_CHECK(t.SerializeToOstream(&out)) << "failed writing tensor file '" << path << "'";
    out.close();
    TS_USER_CHECK(!out.fail()) << "failed writing tensor file '" << path << "'";
}

}  // namespace tessera::frontend
