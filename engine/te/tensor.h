// Tensor expressions: the declarative "what" of an operator (TVM's te).
//   A = placeholder({M, K}, float32, "A");
//   k = reduce_axis({0, K}, "k");
//   C = compute({M, N}, [&](auto i) { return sum(A(i[0], k) * B(k, i[1]), {k}); }, "C");
//   PrimFunc f = create_prim_func({A, B, C}, "matmul");
#pragma once

#include <functional>

#include "engine/tir/op.h"
#include "engine/tir/stmt.h"

namespace tessera::te {

using tir::DataType;
using tir::Expr;
using tir::IterVar;
using tir::Var;

struct TensorNode;

/// The result of placeholder() or compute(). Calling it with indices reads it.
class Tensor {
public:
    Tensor() = default;
    explicit Tensor(std::shared_ptr<const TensorNode> p) : m_ptr(std::move(p)) {}
    bool defined() const { return m_ptr != nullptr; }
    const TensorNode* operator->() const { return m_ptr.get(); }
    const TensorNode* get() const { return m_ptr.get(); }
    bool same_as(const Tensor& o) const { return m_ptr == o.m_ptr; }

    /// An element read, T(i, j, ...). Records the tensor as an input of the
    /// compute() being defined, if any.
    Expr operator()(const std::vector<Expr>& indices) const;
    template <typename... Args>
    Expr operator()(Args... args) const {
        return (*this)(std::vector<Expr>{Expr(args)...});
    }
    const std::vector<int64_t>& shape() const;
    DataType dtype() const;
    int ndim() const { return int(shape().size()); }
    const std::string& name() const;

private:
    std::shared_ptr<const TensorNode> m_ptr;
};

struct TensorNode {
    std::string name;
    std::string tag;  // op class for schedules: "elemwise", "broadcast", "injective", "reduce", "conv2d", ...
    std::vector<int64_t> shape;
    DataType dtype;
    tir::Buffer buffer;            // where the tensor lives once lowered
    bool is_placeholder = true;
    std::vector<IterVar> axis;     // spatial axes (compute only)
    Expr body;                     // value at axis (compute only); may be a Reduce
    std::vector<Tensor> inputs;    // tensors read by body (compute only)
};

Tensor placeholder(const std::vector<int64_t>& shape, DataType dtype, const std::string& name);

/// A reduction axis over [dom.min, dom.min + dom.extent).
IterVar reduce_axis(int64_t extent, const std::string& name);

/// Defines out[i...] = f(i...) over `shape`.
Tensor compute(const std::vector<int64_t>& shape,
               const std::function<Expr(const std::vector<Var>&)>& f, const std::string& name,
               const std::string& tag = "");

Expr sum(Expr source, const std::vector<IterVar>& axis);
Expr max(Expr source, const std::vector<IterVar>& axis);
Expr min(Expr source, const std::vector<IterVar>& axis);

/// Lowers the compute graph ending in the non-placeholder `args` into one
/// PrimFunc with the default (naive, row-major loop nest) schedule: each
/// compute stage becomes a loop nest around a Block named after the tensor.
/// `args` lists the function parameters in order (inputs, then outputs);
/// stages not in `args` become buffers allocated in the root block.
tir::PrimFunc create_prim_func(const std::vector<Tensor>& args, const std::string& name);

}  // namespace tessera::te
