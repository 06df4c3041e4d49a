// Outputs in their declared ONNX types (float16 rounding, narrow integer wrap)
// and bfloat16 test data stored as UINT16 bits.
#include "engine/driver/boundary_types.h"

#include "engine/core/error.h"
#include "engine/runtime/half_float.h"

namespace tessera::driver {

using runtime::NDArray;

NDArray to_declared(const NDArray& a, const std::string& declared) {
    if (declared.empty() || declared == "uint64" || !a.defined()) return a;
    NDArray out = a.copy();
    runtime::narrow_to_declared(out.dtype(), out.raw(), out.num_elements(), declared);
    return out;
}

std::vector<NDArray> to_declared_outputs(const std::vector<NDArray>& outputs,
                                         const std::vector<std::string>& declared) {
    std::vector<NDArray> out;
    for (size_t i = 0; i < outputs.size(); ++i)
        out.push_back(i < declared.size() ? to_declared(outputs[i], declared[i]) : outputs[i]);
    return out;
}

std::vector<NDArray> bfloat16_bits_as_values(const std::vector<NDArray>& arrays,
                                             const std::vector<std::string>& declared) {
    std::vector<NDArray> out;
    for (size_t i = 0; i < arrays.size(); ++i) {
        const NDArray& a = arrays[i];
        bool bits = i < declared.size() && declared[i] == "bfloat16" && a.defined() &&
                    a.dtype() == graph::DType::Int32;
        if (!bits) {
            out.push_back(a);
            continue;
        }
        NDArray f = NDArray::empty({graph::DType::Float32, a.shape()});
        for (int64_t k = 0; k < a.num_elements(); ++k) {
            int32_t v = a.data<int32_t>()[k];
            TS_USER_CHECK(v >= 0 && v <= 0xffff)
                << "test array " << i << " holds " << v << ", not a bfloat16 bit pattern";
            f.data<float>()[k] = runtime::bfloat16_bits_to_float(uint16_t(v));
        }
        out.push_back(f);
    }
    return out;
}

}  // namespace tessera::driver
