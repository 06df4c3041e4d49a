// Constructors (make) of the loop-IR nodes, with their type rules.
#include "engine/core/error.h"
#include "engine/tir/op.h"
#include "engine/tir/stmt.h"

namespace tessera::tir {

namespace {
template <typename T, typename... Args>
Expr make_expr(Args&&... args) {
    return Expr(std::static_pointer_cast<const ExprNode>(std::make_shared<const T>(std::forward<Args>(args)...)));
}
template <typename T, typename... Args>
Stmt make_stmt(Args&&... args) {
    return Stmt(std::static_pointer_cast<const StmtNode>(std::make_shared<const T>(std::forward<Args>(args)...)));
}
}  // namespace

Expr::Expr(const ExprNode* p)
    : m_ptr(p ? std::static_pointer_cast<const ExprNode>(p->shared_from_this()) : nullptr) {}
Expr::Expr(int v) : Expr(IntImm::make(DataType::int64(), v)) {}
Expr::Expr(int64_t v) : Expr(IntImm::make(DataType::int64(), v)) {}
Expr::Expr(float v) : Expr(FloatImm::make(DataType::float32(), v)) {}
Expr::Expr(double v) : Expr(FloatImm::make(DataType::float32(), v)) {}

Stmt::Stmt(const StmtNode* p)
    : m_ptr(p ? std::static_pointer_cast<const StmtNode>(p->shared_from_this()) : nullptr) {}

Var::Var(const std::string& name, DataType t) : Expr(make_expr<Variable>(t, name)) {}

Range Range::from_extent(Expr extent) { return Range{Expr(0), std::move(extent)}; }

Buffer::Buffer(std::string name, DataType dtype, std::vector<Expr> shape, std::string scope)
    : m_ptr(std::make_shared<const BufferNode>(
          BufferNode{std::move(name), dtype, std::move(shape), std::move(scope)})) {}

std::vector<int64_t> Buffer::const_shape() const {
    std::vector<int64_t> out;
    for (const Expr& e : m_ptr->shape) {
        const int64_t* v = as_const_int(e);
        TS_CHECK(v) << "buffer " << m_ptr->name << " has a symbolic shape";
        out.push_back(*v);
    }
    return out;
}

int64_t Buffer::num_elements() const {
    int64_t n = 1;
    for (int64_t d : const_shape()) n *= d;
    return n;
}

Expr IntImm::make(DataType t, int64_t v) {
    TS_CHECK(t.is_integer() || t.is_bool()) << "IntImm of type " << t.str();
    TS_CHECK(t.is_scalar()) << "IntImm must be scalar";
    if (t.is_bool()) v = v != 0;
    return make_expr<IntImm>(t, v);
}

Expr FloatImm::make(DataType t, double v) {
    TS_CHECK(t.is_float() && t.is_scalar()) << "FloatImm of type " << t.str();
    if (t.bits == 32) v = double(float(v));
    return make_expr<FloatImm>(t, v);
}

namespace {
constexpr bool is_comparison(NodeType t) {
    return t == NodeType::EQ || t == NodeType::NE || t == NodeType::LT || t == NodeType::LE ||
           t == NodeType::GT || t == NodeType::GE;
}
}  // namespace

template <NodeType T>
Expr BinaryNode<T>::make(Expr a, Expr b) {
    TS_CHECK(a.defined() && b.defined()) << "binary op on an undefined operand";
    TS_CHECK(a.dtype() == b.dtype()) << "binary op on mismatched types " << a.dtype().str()
                                    << " and " << b.dtype().str();
    DataType t = a.dtype();
    if constexpr (is_comparison(T)) {
        t = DataType::boolean(a.dtype().lanes);
    } else if constexpr (T == NodeType::And || T == NodeType::Or) {
        TS_CHECK(t.is_bool()) << "logical op on " << t.str();
    }
    return make_expr<BinaryNode<T>>(t, std::move(a), std::move(b));
}

#define TS_X(N) template struct BinaryNode<NodeType::N>;
TS_TIR_BINARY_NODES(TS_X)
#undef TS_X

Expr Not::make(Expr a) {
    TS_CHECK(a.dtype().is_bool()) << "Not of " << a.dtype().str();
    DataType t = a.dtype();
    return make_expr<Not>(t, std::move(a));
}

Expr Select::make(Expr c, Expr t, Expr f) {
    TS_CHECK(c.dtype().is_bool()) << "Select condition of type " << c.dtype().str();
    TS_CHECK(t.dtype() == f.dtype()) << "Select branches of types " << t.dtype().str() << " and "
                                     << f.dtype().str();
    DataType ty = t.dtype();
    return make_expr<Select>(ty, std::move(c), std::move(t), std::move(f));
}

Expr Cast::make(DataType t, Expr v) {
    TS_CHECK(t.lanes == v.dtype().lanes) << "Cast changes lanes";
    return make_expr<Cast>(t, std::move(v));
}

Expr Call::make(DataType t, std::string op, std::vector<Expr> args) {
    return make_expr<Call>(t, std::move(op), std::move(args));
}

Expr BufferLoad::make(Buffer b, std::vector<Expr> indices) {
    TS_CHECK(b.defined()) << "load from an undefined buffer";
    int lanes = 1;
    for (const Expr& i : indices) {
        TS_CHECK(i.defined() && i.dtype().is_integer())
            << "index into " << b->name << " must be an integer";
        lanes = std::max<int>(lanes, i.dtype().lanes);
    }
    DataType t = b->dtype.with_lanes(lanes);
    return make_expr<BufferLoad>(t, std::move(b), std::move(indices));
}

Expr Ramp::make(Expr base, Expr stride, int lanes) {
    TS_CHECK(base.dtype().is_scalar() && base.dtype() == stride.dtype()) << "Ramp operand types";
    TS_CHECK(lanes > 1) << "Ramp needs lanes > 1";
    DataType t = base.dtype().with_lanes(lanes);
    return make_expr<Ramp>(t, std::move(base), std::move(stride), lanes);
}

Expr Broadcast::make(Expr value, int lanes) {
    TS_CHECK(value.dtype().is_scalar()) << "Broadcast of a vector";
    TS_CHECK(lanes > 1) << "Broadcast needs lanes > 1";
    DataType t = value.dtype().with_lanes(lanes);
    return make_expr<Broadcast>(t, std::move(value), lanes);
}

Expr Let::make(Var var, Expr value, Expr body) {
    TS_CHECK(var.dtype() == value.dtype()) << "Let binds " << var.name() << " to another type";
    DataType t = body.dtype();
    return make_expr<Let>(t, std::move(var), std::move(value), std::move(body));
}

const char* reduce_kind_name(ReduceKind k) {
    switch (k) {
        case ReduceKind::Sum: return "sum";
        case ReduceKind::Prod: return "prod";
        case ReduceKind::Max: return "max";
        case ReduceKind::Min: return "min";
    }
    return "?";
}

Expr Reduce::make(ReduceKind c, Expr source, std::vector<IterVar> axis) {
    DataType t = source.dtype();
    Expr r = make_expr<Reduce>(t, c, std::move(source), std::move(axis));
    // A reduction over an empty axis is its identity (a max over nothing is
    // -inf, a product 1): no loop of extent 0 would ever run its init.
    const Reduce* red = r.as<Reduce>();
    for (const IterVar& iv : red->axis) {
        const int64_t* extent = as_const_int(iv.dom.extent);
        if (extent && *extent == 0) return red->identity();
    }
    return r;
}

Expr Reduce::identity() const {
    switch (combiner) {
        case ReduceKind::Sum: return make_zero(dtype);
        case ReduceKind::Prod: return make_const(dtype, 1);
        case ReduceKind::Max: return min_value(dtype);
        case ReduceKind::Min: return max_value(dtype);
    }
    TS_FAIL() << "unknown reduce kind";
}

Expr Reduce::combine(Expr acc, Expr value) const {
    switch (combiner) {
        case ReduceKind::Sum: return Add::make(std::move(acc), std::move(value));
        case ReduceKind::Prod: return Mul::make(std::move(acc), std::move(value));
        case ReduceKind::Max: return Max::make(std::move(acc), std::move(value));
        case ReduceKind::Min: return Min::make(std::move(acc), std::move(value));
    }
    TS_FAIL() << "unknown reduce kind";
}

// ---------------------------------------------------------------- statements

Stmt BufferStore::make(Buffer b, Expr value, std::vector<Expr> indices) {
    TS_CHECK(b.defined() && value.defined()) << "store of undefined buffer or value";
    TS_CHECK(value.dtype().element_of() == b->dtype)
        << "store of " << value.dtype().str() << " into " << b->dtype.str() << " buffer " << b->name;
    return make_stmt<BufferStore>(std::move(b), std::move(value), std::move(indices));
}

const char* for_kind_name(ForKind k) {
    switch (k) {
        case ForKind::Serial: return "serial";
        case ForKind::Parallel: return "parallel";
        case ForKind::Vectorized: return "vectorized";
        case ForKind::Unrolled: return "unroll";
        case ForKind::ThreadBinding: return "thread_binding";
    }
    return "?";
}

Stmt For::make(Var v, Expr min, Expr extent, ForKind kind, Stmt body, std::string thread_tag,
               std::map<std::string, std::string> annotations) {
    TS_CHECK(v.defined() && min.defined() && extent.defined() && body.defined()) << "incomplete For";
    return make_stmt<For>(std::move(v), std::move(min), std::move(extent), kind, std::move(body),
                          std::move(thread_tag), std::move(annotations));
}

Stmt SeqStmt::make(std::vector<Stmt> seq) {
    std::vector<Stmt> flat;
    for (Stmt& s : seq) {
        if (!s.defined()) continue;
        if (const SeqStmt* inner = s.as<SeqStmt>()) {
            flat.insert(flat.end(), inner->seq.begin(), inner->seq.end());
        } else {
            flat.push_back(std::move(s));
        }
    }
    if (flat.size() == 1) return flat[0];
    return make_stmt<SeqStmt>(std::move(flat));
}

Stmt IfThenElse::make(Expr c, Stmt then_case, Stmt else_case) {
    TS_CHECK(c.dtype().is_bool()) << "if condition of type " << c.dtype().str();
    return make_stmt<IfThenElse>(std::move(c), std::move(then_case), std::move(else_case));
}

Stmt LetStmt::make(Var v, Expr value, Stmt body) {
    TS_CHECK(v.dtype() == value.dtype()) << "LetStmt binds " << v.name() << " to another type";
    return make_stmt<LetStmt>(std::move(v), std::move(value), std::move(body));
}

Stmt Allocate::make(Buffer b, Stmt body) { return make_stmt<Allocate>(std::move(b), std::move(body)); }

Stmt Evaluate::make(Expr v) { return make_stmt<Evaluate>(std::move(v)); }

Stmt Block::make(std::string name, std::vector<IterVar> iter_vars, std::vector<BufferRegion> reads,
                 std::vector<BufferRegion> writes, Stmt init, Stmt body,
                 std::vector<Buffer> alloc_buffers, std::map<std::string, std::string> annotations) {
    return make_stmt<Block>(std::move(name), std::move(iter_vars), std::move(reads),
                            std::move(writes), std::move(init), std::move(body),
                            std::move(alloc_buffers), std::move(annotations));
}

Stmt BlockRealize::make(std::vector<Expr> iter_values, Expr predicate, Stmt block) {
    const Block* b = block.as<Block>();
    TS_CHECK(b) << "BlockRealize of a non-block";
    TS_CHECK(b->iter_vars.size() == iter_values.size())
        << "block " << b->name << " binds " << iter_values.size() << " values to "
        << b->iter_vars.size() << " iteration variables";
    if (!predicate.defined()) predicate = IntImm::make(DataType::boolean(), 1);
    return make_stmt<BlockRealize>(std::move(iter_values), std::move(predicate), std::move(block));
}

PrimFunc::PrimFunc(std::string name, std::vector<Buffer> params, Stmt body,
                   std::map<std::string, std::string> attrs)
    : m_ptr(std::make_shared<const PrimFuncNode>(
          PrimFuncNode{std::move(name), std::move(params), std::move(body), std::move(attrs)})) {}

PrimFunc PrimFunc::with_body(Stmt body) const {
    return PrimFunc(m_ptr->name, m_ptr->params, std::move(body), m_ptr->attrs);
}

}  // namespace tessera::tir
