// Elementwise arithmetic with numpy broadcasting, and reshape.
#include "engine/core/error.h"
#include "engine/graph/op_table.h"

namespace tessera::graph::detail {

namespace {

using Types = std::vector<TensorType>;

Types infer_broadcast(const Node& n, const Types& in) {
    expect_arity(n, in, 2, 2);
    TS_USER_CHECK(in[0].dtype == in[1].dtype)
        << where(n) << ": operand types differ: " << in[0].str() << " and " << in[1].str();
    return {TensorType{in[0].dtype, broadcast_shapes(n, in[0].shape, in[1].shape)}};
}

Types infer_reshape(const Node& n, const Types& in) {
    expect_arity(n, in, 1, 1);
    TS_USER_CHECK(n.attrs.count("newshape")) << where(n) << ": missing attribute 'newshape'";
    std::vector<int64_t> shape = n.attr_ints("newshape");
    int64_t count = 1;
    for (int64_t d : shape) {
        TS_USER_CHECK(d >= 0) << where(n) << ": newshape " << shape_str(shape)
                              << " must be fully resolved (no -1)";
        count *= d;
    }
    TS_USER_CHECK(count == in[0].num_elements())
        << where(n) << ": cannot reshape " << in[0].str() << " (" << in[0].num_elements()
        << " elements) to " << shape_str(shape) << " (" << count << " elements)";
    return {TensorType{in[0].dtype, shape}};
}

}  // namespace

void add_tensor_ops(std::vector<OpDef>& table) {
    table.push_back({"add", "Elementwise a + b with numpy broadcasting", OpPattern::Broadcast,
                     infer_broadcast});
    table.push_back({"subtract", "Elementwise a - b with numpy broadcasting", OpPattern::Broadcast,
                     infer_broadcast});
    table.push_back({"multiply", "Elementwise a * b with numpy broadcasting", OpPattern::Broadcast,
                     infer_broadcast});
    table.push_back({"divide", "Elementwise a / b with numpy broadcasting", OpPattern::Broadcast,
                     infer_broadcast});
    table.push_back({"reshape",
                     "Same data in row-major order with the shape given by attribute newshape",
                     OpPattern::Injective, infer_reshape});
}

}  // namespace tessera::graph::detail
