// Loop-IR expressions: immutable, reference-counted nodes with a type tag.
//
// Semantics: integer arithmetic is 64-bit two's complement; Div and Mod on
// integers truncate toward zero (C semantics), FloorDiv/FloorMod round toward
// negative infinity. Div on floats is IEEE division. Comparison nodes yield
// bool. And/Or do not short-circuit (both sides are pure). Select evaluates
// both branches (they must be safe to evaluate).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/tir/dtype.h"
#include "engine/tir/node_list.h"

namespace tessera::tir {

enum class NodeType : uint8_t {
#define TS_X(N) N,
    TS_TIR_EXPR_NODES(TS_X) TS_TIR_STMT_NODES(TS_X)
#undef TS_X
};

/// Base of every IR node. Nodes are created by each struct's static make()
/// and never change afterwards.
struct Object : std::enable_shared_from_this<Object> {
    const NodeType node_type;
    explicit Object(NodeType t) : node_type(t) {}
    virtual ~Object() = default;
    Object(const Object&) = delete;
    Object& operator=(const Object&) = delete;
};

struct ExprNode : Object {
    DataType dtype;
    ExprNode(NodeType t, DataType d) : Object(t), dtype(d) {}
};

struct StmtNode : Object {
    explicit StmtNode(NodeType t) : Object(t) {}
};

/// A handle to an immutable expression node.
class Expr {
public:
    Expr() = default;
    explicit Expr(std::shared_ptr<const ExprNode> p) : m_ptr(std::move(p)) {}
    /// Re-wraps a node that is already owned by some handle.
    Expr(const ExprNode* p);  // NOLINT: implicit, Halide style
    Expr(int v);              // NOLINT: int64 constant
    Expr(int64_t v);          // NOLINT: int64 constant
    Expr(float v);            // NOLINT: float32 constant
    Expr(double v);           // NOLINT: float32 constant

    bool defined() const { return m_ptr != nullptr; }
    const ExprNode* get() const { return m_ptr.get(); }
    const ExprNode* operator->() const { return m_ptr.get(); }
    DataType dtype() const { return m_ptr->dtype; }
    NodeType node_type() const { return m_ptr->node_type; }
    bool same_as(const Expr& o) const { return m_ptr == o.m_ptr; }

    template <typename T>
    const T* as() const {
        return m_ptr && m_ptr->node_type == T::kType ? static_cast<const T*>(m_ptr.get())
                                                     : nullptr;
    }

private:
    std::shared_ptr<const ExprNode> m_ptr;
};

/// A handle to an immutable statement node.
class Stmt {
public:
    Stmt() = default;
    explicit Stmt(std::shared_ptr<const StmtNode> p) : m_ptr(std::move(p)) {}
    Stmt(const StmtNode* p);  // NOLINT: implicit, Halide style

    bool defined() const { return m_ptr != nullptr; }
    const StmtNode* get() const { return m_ptr.get(); }
    const StmtNode* operator->() const { return m_ptr.get(); }
    NodeType node_type() const { return m_ptr->node_type; }
    bool same_as(const Stmt& o) const { return m_ptr == o.m_ptr; }

    template <typename T>
    const T* as() const {
        return m_ptr && m_ptr->node_type == T::kType ? static_cast<const T*>(m_ptr.get())
                                                     : nullptr;
    }

private:
    std::shared_ptr<const StmtNode> m_ptr;
};

// ---------------------------------------------------------------- leaves

struct IntImm : ExprNode {
    static constexpr NodeType kType = NodeType::IntImm;
    int64_t value;
    IntImm(DataType t, int64_t v) : ExprNode(kType, t), value(v) {}
    static Expr make(DataType t, int64_t v);
};

struct FloatImm : ExprNode {
    static constexpr NodeType kType = NodeType::FloatImm;
    double value;
    FloatImm(DataType t, double v) : ExprNode(kType, t), value(v) {}
    static Expr make(DataType t, double v);
};

/// A variable. Identity is the node itself, not the name: two Vars with the
/// same name are different variables.
struct Variable : ExprNode {
    static constexpr NodeType kType = NodeType::Variable;
    std::string name;
    Variable(DataType t, std::string n) : ExprNode(kType, t), name(std::move(n)) {}
};

/// Handle to a Variable node (an Expr that is known to be a variable).
class Var : public Expr {
public:
    Var() = default;
    explicit Var(const std::string& name, DataType t = DataType::int64());
    explicit Var(const Variable* v) : Expr(v) {}
    const Variable* get() const { return static_cast<const Variable*>(Expr::get()); }
    const Variable* operator->() const { return get(); }
    const std::string& name() const { return get()->name; }
};

/// A half-open interval [min, min + extent).
struct Range {
    Expr min;
    Expr extent;
    static Range from_extent(Expr extent);
};

/// A buffer: a named, typed, multi-dimensional array in some storage scope.
/// Scopes: "global" (heap / device global memory), "shared" (GPU shared memory,
/// one copy per thread block), "local" (registers / stack, one per thread).
/// Identity is the node itself.
struct BufferNode {
    std::string name;
    DataType dtype;
    std::vector<Expr> shape;
    std::string scope = "global";
};

class Buffer {
public:
    Buffer() = default;
    Buffer(std::string name, DataType dtype, std::vector<Expr> shape,
           std::string scope = "global");
    bool defined() const { return m_ptr != nullptr; }
    const BufferNode* get() const { return m_ptr.get(); }
    const BufferNode* operator->() const { return m_ptr.get(); }
    bool same_as(const Buffer& o) const { return m_ptr == o.m_ptr; }
    bool operator<(const Buffer& o) const { return m_ptr < o.m_ptr; }
    /// Shape as constants; throws InternalError if a dimension is symbolic.
    std::vector<int64_t> const_shape() const;
    int64_t num_elements() const;

private:
    std::shared_ptr<const BufferNode> m_ptr;
};

/// Iteration variable kinds of a Block (TensorIR): spatial (data parallel) or
/// reduction; thread index only for thread-bound loops.
enum class IterKind : uint8_t { Spatial, Reduce, ThreadIndex };

struct IterVar {
    Var var;
    Range dom;
    IterKind kind = IterKind::Spatial;
    std::string thread_tag;  // for ThreadIndex: "blockIdx.x", "threadIdx.y", ...
};

// ---------------------------------------------------------------- binary ops

template <NodeType T>
struct BinaryNode : ExprNode {
    static constexpr NodeType kType = T;
    Expr a, b;
    BinaryNode(DataType t, Expr a_, Expr b_) : ExprNode(T, t), a(std::move(a_)), b(std::move(b_)) {}
    /// Makes the node; both operands must have the same type. Comparisons and
    /// logic yield bool with the operands' lane count.
    static Expr make(Expr a, Expr b);
};

#define TS_X(N) using N = BinaryNode<NodeType::N>;
TS_TIR_BINARY_NODES(TS_X)
#undef TS_X

// ---------------------------------------------------------------- other exprs

struct Not : ExprNode {
    static constexpr NodeType kType = NodeType::Not;
    Expr a;
    Not(DataType t, Expr a_) : ExprNode(kType, t), a(std::move(a_)) {}
    static Expr make(Expr a);
};

struct Select : ExprNode {
    static constexpr NodeType kType = NodeType::Select;
    Expr condition, true_value, false_value;
    Select(DataType t, Expr c, Expr tv, Expr fv)
        : ExprNode(kType, t), condition(std::move(c)), true_value(std::move(tv)),
          false_value(std::move(fv)) {}
    static Expr make(Expr c, Expr t, Expr f);
};

struct Cast : ExprNode {
    static constexpr NodeType kType = NodeType::Cast;
    Expr value;
    Cast(DataType t, Expr v) : ExprNode(kType, t), value(std::move(v)) {}
    static Expr make(DataType t, Expr v);
};

/// A pure math intrinsic, by name: exp, log, sqrt, rsqrt, tanh, erf, sigmoid,
/// fabs, floor, ceil, round, trunc, pow, fma, sin, cos.
struct Call : ExprNode {
    static constexpr NodeType kType = NodeType::Call;
    std::string op;
    std::vector<Expr> args;
    Call(DataType t, std::string o, std::vector<Expr> a)
        : ExprNode(kType, t), op(std::move(o)), args(std::move(a)) {}
    static Expr make(DataType t, std::string op, std::vector<Expr> args);
};

/// Reads buffer[indices...]. A vector load has one Ramp index (after flattening).
struct BufferLoad : ExprNode {
    static constexpr NodeType kType = NodeType::BufferLoad;
    Buffer buffer;
    std::vector<Expr> indices;
    BufferLoad(DataType t, Buffer b, std::vector<Expr> i)
        : ExprNode(kType, t), buffer(std::move(b)), indices(std::move(i)) {}
    static Expr make(Buffer b, std::vector<Expr> indices);
};

/// The vector (base, base + stride, ..., base + (lanes-1) * stride).
struct Ramp : ExprNode {
    static constexpr NodeType kType = NodeType::Ramp;
    Expr base, stride;
    int lanes;
    Ramp(DataType t, Expr b, Expr s, int l)
        : ExprNode(kType, t), base(std::move(b)), stride(std::move(s)), lanes(l) {}
    static Expr make(Expr base, Expr stride, int lanes);
};

struct Broadcast : ExprNode {
    static constexpr NodeType kType = NodeType::Broadcast;
    Expr value;
    int lanes;
    Broadcast(DataType t, Expr v, int l) : ExprNode(kType, t), value(std::move(v)), lanes(l) {}
    static Expr make(Expr value, int lanes);
};

struct Let : ExprNode {
    static constexpr NodeType kType = NodeType::Let;
    Var var;
    Expr value, body;
    Let(DataType t, Var v, Expr val, Expr b)
        : ExprNode(kType, t), var(std::move(v)), value(std::move(val)), body(std::move(b)) {}
    static Expr make(Var var, Expr value, Expr body);
};

enum class ReduceKind : uint8_t { Sum, Prod, Max, Min };
const char* reduce_kind_name(ReduceKind k);

/// A commutative reduction of `source` over `axis` (tensor-expression level
/// only: te lowering turns it into a Block with an init and an update).
struct Reduce : ExprNode {
    static constexpr NodeType kType = NodeType::Reduce;
    ReduceKind combiner;
    Expr source;
    std::vector<IterVar> axis;
    Reduce(DataType t, ReduceKind c, Expr s, std::vector<IterVar> ax)
        : ExprNode(kType, t), combiner(c), source(std::move(s)), axis(std::move(ax)) {}
    static Expr make(ReduceKind c, Expr source, std::vector<IterVar> axis);
    /// The identity of the combiner for the type (0, 1, -inf, +inf).
    Expr identity() const;
    /// combiner(acc, value).
    Expr combine(Expr acc, Expr value) const;
};

}  // namespace tessera::tir
