// Graph ops for narrow and half-precision dtypes at the graph boundary:
// narrow_cast keeps a value in its compute dtype but limits it to the value
// set of a declared ONNX type (float16/bfloat16 rounding, int16/uint16/uint32 wrap).
#include "engine/core/error.h"
#include "engine/core/small_types.h"
#include "engine/graph/op_table.h"

namespace tessera::graph::detail {

namespace {

// The compute dtype of a narrow_cast "dtype" attribute; UserError naming the node otherwise.
DType narrow_compute_dtype(const Node& n, const std::string& declared) {
    if (declared == "float16" || declared == "bfloat16") return DType::Float32;
    if (declared == "int16" || declared == "uint16") return DType::Int32;
    if (declared == "uint32") return DType::Int64;
    if (auto small = small_type(declared))
        return small_type_is_float(*small) ? DType::Float32 : DType::Int32;
    TS_USER_FAIL() << where(n) << ": dtype '" << declared
                   << "' is not a narrow type (float16, bfloat16, int16, uint16, uint32, "
                      "float8e4m3fn, float8e4m3fnuz, float8e5m2, float8e5m2fnuz, float8e8m0, "
                      "float4e2m1, int4, uint4, int2, uint2)";
}

std::vector<TensorType> infer_narrow_cast(const Node& n, const std::vector<TensorType>& in) {
    expect_arity(n, in, 1, 1);
    const std::string declared = n.attr_str("dtype");
    DType want = narrow_compute_dtype(n, declared);
    const std::string rounding = n.attr_str("rounding", "nearest_even");
    TS_USER_CHECK(rounding == "nearest_even" || (rounding == "toward_zero" && declared == "bfloat16"))
        << where(n) << ": rounding '" << rounding << "' is not supported for " << declared
        << " (nearest_even; toward_zero for bfloat16)";
    TS_USER_CHECK(in[0].dtype == want)
        << where(n) << ": " << declared << " values are computed as " << dtype_name(want)
        << ", got " << in[0].str();
    return {in[0]};
}

}  // namespace

void add_dtype_ops(std::vector<OpDef>& table) {
    table.push_back({"narrow_cast",
                     "Rounds float32 to float16/bfloat16/float8/float4 or wraps integers to "
                     "int16/uint16/uint32/int4/uint4/int2/uint2 (attribute dtype; "
                     "rounding=toward_zero truncates bfloat16; saturate=0 lets float8 overflow "
                     "to inf/NaN); the dtype stays the compute dtype",
                     OpPattern::ElemWise, infer_narrow_cast});
}

}  // namespace tessera::graph::detail
