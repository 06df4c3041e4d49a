// The loop-IR reference interpreter. Vector expressions are evaluated one
// lane at a time (every vector operation in the IR is lane-wise), so a value
// is a single scalar: an int64 for integer and bool types, a double for float
// types (float32 results are rounded to float after every operation).
#include "engine/tir/interpreter.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

#include "engine/core/error.h"
#include "engine/tir/op.h"

namespace tessera::tir {

namespace {

union Scalar {
    int64_t i;
    double f;
};

Scalar from_int(int64_t v) {
    Scalar s;
    s.i = v;
    return s;
}
Scalar from_float(double v) {
    Scalar s;
    s.f = v;
    return s;
}

int64_t wrap_int(DataType t, int64_t v) {
    if (t.is_bool()) return v != 0;
    if (t.bits >= 64) return v;
    uint64_t mask = (uint64_t(1) << t.bits) - 1;
    uint64_t u = uint64_t(v) & mask;
    if (t.is_int() && (u >> (t.bits - 1)) & 1) u |= ~mask;
    return int64_t(u);
}

double round_float(DataType t, double v) { return t.bits == 32 ? double(float(v)) : v; }

struct BufferData {
    const BufferNode* node;
    uint8_t* data;
    std::vector<int64_t> shape;
    int64_t size;
};

struct Binding {
    const Variable* var;
    Scalar value;
    std::vector<Scalar> lanes;  // non-empty for a vector value
};

class Interpreter {
public:
    void run(const PrimFunc& f, const std::vector<void*>& args) {
        TS_CHECK(args.size() == f->params.size())
            << "interpret(" << f->name << "): " << args.size() << " arguments for "
            << f->params.size() << " parameters";
        for (size_t i = 0; i < args.size(); ++i) {
            TS_CHECK(args[i]) << "interpret(" << f->name << "): argument " << i << " is null";
            push_buffer(f->params[i], static_cast<uint8_t*>(args[i]));
        }
        exec(f->body);
    }

private:
    // ------------------------------------------------------------ scopes

    void push_buffer(const Buffer& b, uint8_t* data) {
        BufferData bd{b.get(), data, {}, 1};
        for (const Expr& d : b->shape) {
            TS_CHECK(d.dtype().is_integer() && d.dtype().is_scalar())
                << "buffer " << b->name << " has a non-integer shape";
            int64_t n = eval(d, 0).i;
            TS_CHECK(n >= 0) << "buffer " << b->name << " has a negative extent " << n;
            bd.shape.push_back(n);
            bd.size *= n;
        }
        m_buffers.push_back(std::move(bd));
    }

    // Allocates a zero-filled buffer; the storage lives until pop_alloc().
    void push_alloc(const Buffer& b) {
        m_storage.push_back(nullptr);
        push_buffer(b, nullptr);
        BufferData& bd = m_buffers.back();
        m_storage.back() = std::make_unique<uint8_t[]>(size_t(bd.size) * b->dtype.bytes() + 1);
        std::memset(m_storage.back().get(), 0, size_t(bd.size) * b->dtype.bytes() + 1);
        bd.data = m_storage.back().get();
    }
    void pop_alloc() {
        m_buffers.pop_back();
        m_storage.pop_back();
    }

    const BufferData& find_buffer(const Buffer& b) {
        for (size_t i = m_buffers.size(); i-- > 0;)
            if (m_buffers[i].node == b.get()) return m_buffers[i];
        TS_FAIL() << "interpret: buffer " << b->name
                  << " is not a parameter or allocation in scope";
    }

    Scalar lookup(const Variable* v, int lane) {
        for (size_t i = m_vars.size(); i-- > 0;) {
            const Binding& b = m_vars[i];
            if (b.var != v) continue;
            if (b.lanes.empty()) return b.value;
            TS_CHECK(lane < int(b.lanes.size())) << "interpret: lane " << lane << " of " << v->name;
            return b.lanes[size_t(lane)];
        }
        TS_FAIL() << "interpret: variable " << v->name << " is used but not defined";
    }

    // ------------------------------------------------------------ memory

    int64_t offset(const BufferData& bd, const std::vector<Expr>& indices, int lane) {
        const std::string& name = bd.node->name;
        if (indices.size() == bd.shape.size()) {
            int64_t off = 0;
            for (size_t d = 0; d < indices.size(); ++d) {
                int64_t i = eval(indices[d], lane).i;
                TS_CHECK(i >= 0 && i < bd.shape[d])
                    << "interpret: index " << i << " out of bounds [0, " << bd.shape[d]
                    << ") in dimension " << d << " of buffer " << name;
                off = off * bd.shape[d] + i;
            }
            return off;
        }
        TS_CHECK(indices.size() == 1)
            << "interpret: buffer " << name << " of rank " << bd.shape.size() << " accessed with "
            << indices.size() << " indices";
        int64_t i = eval(indices[0], lane).i;
        TS_CHECK(i >= 0 && i < bd.size) << "interpret: flat index " << i << " out of bounds [0, "
                                        << bd.size << ") of buffer " << name;
        return i;
    }

    template <typename T>
    static T read_as(const uint8_t* p) {
        T v;
        std::memcpy(&v, p, sizeof(T));
        return v;
    }
    template <typename T>
    static void write_as(uint8_t* p, T v) {
        std::memcpy(p, &v, sizeof(T));
    }

    static Scalar load(const BufferData& bd, int64_t off) {
        DataType t = bd.node->dtype;
        const uint8_t* p = bd.data + off * t.bytes();
        if (t.is_float()) {
            if (t.bits == 32) return from_float(read_as<float>(p));
            if (t.bits == 64) return from_float(read_as<double>(p));
        } else if (t.is_bool()) {
            return from_int(*p != 0);
        } else if (t.is_int()) {
            switch (t.bits) {
                case 8:
                    return from_int(read_as<int8_t>(p));
                case 16:
                    return from_int(read_as<int16_t>(p));
                case 32:
                    return from_int(read_as<int32_t>(p));
                case 64:
                    return from_int(read_as<int64_t>(p));
            }
        } else if (t.is_uint()) {
            switch (t.bits) {
                case 8:
                    return from_int(read_as<uint8_t>(p));
                case 16:
                    return from_int(read_as<uint16_t>(p));
                case 32:
                    return from_int(read_as<uint32_t>(p));
                case 64:
                    return from_int(int64_t(read_as<uint64_t>(p)));
            }
        }
        TS_FAIL() << "interpret: unsupported element type " << t.str() << " of " << bd.node->name;
    }

    static void store(const BufferData& bd, int64_t off, Scalar v) {
        DataType t = bd.node->dtype;
        uint8_t* p = bd.data + off * t.bytes();
        if (t.is_float() && t.bits == 32) return write_as<float>(p, float(v.f));
        if (t.is_float() && t.bits == 64) return write_as<double>(p, v.f);
        if (t.is_bool()) return write_as<uint8_t>(p, v.i != 0);
        if (t.is_integer()) {
            switch (t.bits) {
                case 8:
                    return write_as<uint8_t>(p, uint8_t(v.i));
                case 16:
                    return write_as<uint16_t>(p, uint16_t(v.i));
                case 32:
                    return write_as<uint32_t>(p, uint32_t(v.i));
                case 64:
                    return write_as<int64_t>(p, v.i);
            }
        }
        TS_FAIL() << "interpret: unsupported element type " << t.str() << " of " << bd.node->name;
    }

    // ------------------------------------------------------------ expressions

    static Scalar arith(NodeType op, DataType t, Scalar a, Scalar b);
    static Scalar cast_to(DataType to, DataType from, Scalar v);
    static Scalar reinterpret_bits(DataType to, DataType from, Scalar v);
    static Scalar intrinsic(const std::string& name, DataType t, const Scalar* args, size_t nargs);

    Scalar eval(const Expr& e, int lane) {
        const ExprNode* n = e.get();
        TS_CHECK(n) << "interpret: undefined expression";
        switch (n->node_type) {
            case NodeType::IntImm:
                return from_int(static_cast<const IntImm*>(n)->value);
            case NodeType::FloatImm:
                return from_float(static_cast<const FloatImm*>(n)->value);
            case NodeType::Variable:
                return lookup(static_cast<const Variable*>(n), lane);
#define TS_X(N)                                                                  \
    case NodeType::N: {                                                          \
        const N* op = static_cast<const N*>(n);                                  \
        return arith(NodeType::N, op->a.dtype().element_of(), eval(op->a, lane), \
                     eval(op->b, lane));                                         \
    }
                TS_TIR_BINARY_NODES(TS_X)
#undef TS_X
            case NodeType::Not:
                return from_int(!eval(static_cast<const Not*>(n)->a, lane).i);
            case NodeType::Select: {
                const Select* op = static_cast<const Select*>(n);
                // Only the chosen branch runs: te's if_then_else guards padded reads.
                return eval(eval(op->condition, lane).i ? op->true_value : op->false_value, lane);
            }
            case NodeType::Cast: {
                const Cast* op = static_cast<const Cast*>(n);
                return cast_to(op->dtype.element_of(), op->value.dtype().element_of(),
                               eval(op->value, lane));
            }
            case NodeType::Call: {
                const Call* op = static_cast<const Call*>(n);
                if (op->op == "reinterpret")
                    return reinterpret_bits(op->dtype.element_of(),
                                            op->args.at(0).dtype().element_of(),
                                            eval(op->args[0], lane));
                Scalar args[3] = {};
                TS_CHECK(!op->args.empty() && op->args.size() <= 3)
                    << "interpret: intrinsic " << op->op << " with " << op->args.size()
                    << " arguments";
                for (size_t i = 0; i < op->args.size(); ++i) args[i] = eval(op->args[i], lane);
                return intrinsic(op->op, op->dtype.element_of(), args, op->args.size());
            }
            case NodeType::BufferLoad: {
                const BufferLoad* op = static_cast<const BufferLoad*>(n);
                const BufferData& bd = find_buffer(op->buffer);
                return load(bd, offset(bd, op->indices, lane));
            }
            case NodeType::Ramp: {
                const Ramp* op = static_cast<const Ramp*>(n);
                DataType t = op->dtype.element_of();
                int64_t base = eval(op->base, 0).i, stride = eval(op->stride, 0).i;
                return from_int(wrap_int(t, base + stride * lane));
            }
            case NodeType::Broadcast:
                return eval(static_cast<const Broadcast*>(n)->value, 0);
            case NodeType::Let: {
                const Let* op = static_cast<const Let*>(n);
                m_vars.push_back(Binding{op->var.get(), eval(op->value, lane), {}});
                Scalar r = eval(op->body, lane);
                m_vars.pop_back();
                return r;
            }
            case NodeType::Reduce:
                TS_FAIL() << "interpret: a Reduce expression must be lowered to a block first";
            default:
                break;
        }
        TS_FAIL() << "interpret: statement node in expression position";
    }

    // ------------------------------------------------------------ statements

    void exec(const Stmt& s) {
        if (!s.defined()) return;
        switch (s.node_type()) {
            case NodeType::BufferStore: {
                const BufferStore* op = s.as<BufferStore>();
                const BufferData& bd = find_buffer(op->buffer);
                int lanes = op->value.dtype().lanes;
                for (const Expr& i : op->indices) lanes = std::max<int>(lanes, i.dtype().lanes);
                if (lanes == 1) {
                    Scalar v = eval(op->value, 0);
                    store(bd, offset(bd, op->indices, 0), v);
                    return;
                }
                // Vector store: read every lane before writing any.
                std::vector<Scalar> vals(static_cast<size_t>(lanes), Scalar{});
                std::vector<int64_t> offs(static_cast<size_t>(lanes));
                for (int l = 0; l < lanes; ++l) {
                    vals[size_t(l)] = eval(op->value, l);
                    offs[size_t(l)] = offset(bd, op->indices, l);
                }
                for (int l = 0; l < lanes; ++l) store(bd, offs[size_t(l)], vals[size_t(l)]);
                return;
            }
            case NodeType::For: {
                const For* op = s.as<For>();
                int64_t mn = eval(op->min, 0).i, ext = eval(op->extent, 0).i;
                size_t slot = m_vars.size();
                m_vars.push_back(Binding{op->loop_var.get(), from_int(mn), {}});
                for (int64_t i = mn; i < mn + ext; ++i) {
                    m_vars[slot].value = from_int(i);
                    exec(op->body);
                }
                m_vars.pop_back();
                return;
            }
            case NodeType::SeqStmt:
                for (const Stmt& x : s.as<SeqStmt>()->seq) exec(x);
                return;
            case NodeType::IfThenElse: {
                const IfThenElse* op = s.as<IfThenElse>();
                if (eval(op->condition, 0).i)
                    exec(op->then_case);
                else
                    exec(op->else_case);
                return;
            }
            case NodeType::LetStmt: {
                const LetStmt* op = s.as<LetStmt>();
                Binding b{op->var.get(), eval(op->value, 0), {}};
                int lanes = op->value.dtype().lanes;
                if (lanes > 1)
                    for (int l = 0; l < lanes; ++l) b.lanes.push_back(eval(op->value, l));
                m_vars.push_back(std::move(b));
                exec(op->body);
                m_vars.pop_back();
                return;
            }
            case NodeType::Allocate: {
                const Allocate* op = s.as<Allocate>();
                push_alloc(op->buffer);
                exec(op->body);
                pop_alloc();
                return;
            }
            case NodeType::Evaluate: {
                const Evaluate* op = s.as<Evaluate>();
                // A storage barrier: threads run one after another here.
                if (const Call* c = op->value.as<Call>();
                    c && (c->op == "tir.tvm_storage_sync" || c->op == kPrefetchIntrinsic))
                    return;  // a prefetch is a hint: its address may lie past the buffer
                for (int l = 0; l < op->value.dtype().lanes; ++l) eval(op->value, l);
                return;
            }
            case NodeType::Block: {
                const Block* b = s.as<Block>();
                TS_CHECK(b->iter_vars.empty()) << "interpret: block " << b->name
                                               << " has iteration variables but no BlockRealize";
                run_block(b);
                return;
            }
            case NodeType::BlockRealize: {
                const BlockRealize* op = s.as<BlockRealize>();
                const Block* b = op->block_node();
                TS_CHECK(b && b->iter_vars.size() == op->iter_values.size())
                    << "interpret: malformed BlockRealize";
                if (op->predicate.defined() && !eval(op->predicate, 0).i) return;
                // Values cannot refer to the block's own iteration variables,
                // so binding them one by one is the same as binding at once.
                size_t base = m_vars.size();
                for (size_t i = 0; i < op->iter_values.size(); ++i) {
                    Scalar v = eval(op->iter_values[i], 0);
                    m_vars.push_back(Binding{b->iter_vars[i].var.get(), v, {}});
                }
                run_block(b);
                m_vars.resize(base);
                return;
            }
            default:
                break;
        }
        TS_FAIL() << "interpret: expression node in statement position";
    }

    // Runs a block whose iteration variables are bound.
    void run_block(const Block* b) {
        for (const Buffer& buf : b->alloc_buffers) push_alloc(buf);
        if (b->init.defined()) {
            bool first = true;
            for (const IterVar& iv : b->iter_vars)
                if (iv.kind == IterKind::Reduce &&
                    lookup(iv.var.get(), 0).i != eval(iv.dom.min, 0).i)
                    first = false;
            if (first) exec(b->init);
        }
        exec(b->body);
        for (size_t i = 0; i < b->alloc_buffers.size(); ++i) pop_alloc();
    }

    std::vector<BufferData> m_buffers;
    std::vector<std::unique_ptr<uint8_t[]>> m_storage;
    std::vector<Binding> m_vars;
};

Scalar Interpreter::arith(NodeType op, DataType t, Scalar a, Scalar b) {
    if (t.is_float()) {
        double x = a.f, y = b.f, r = 0;
        switch (op) {
            case NodeType::Add:
                r = x + y;
                break;
            case NodeType::Sub:
                r = x - y;
                break;
            case NodeType::Mul:
                r = x * y;
                break;
            case NodeType::Div:
                r = x / y;
                break;
            case NodeType::Mod:
                r = std::fmod(x, y);
                break;
            case NodeType::FloorDiv:
                r = std::floor(x / y);
                break;
            case NodeType::FloorMod:
                r = x - std::floor(x / y) * y;
                break;
            case NodeType::Min:
                r = y < x ? y : x;
                break;
            case NodeType::Max:
                r = x < y ? y : x;
                break;
            case NodeType::EQ:
                return from_int(x == y);
            case NodeType::NE:
                return from_int(x != y);
            case NodeType::LT:
                return from_int(x < y);
            case NodeType::LE:
                return from_int(x <= y);
            case NodeType::GT:
                return from_int(x > y);
            case NodeType::GE:
                return from_int(x >= y);
            default:
                TS_FAIL() << "interpret: logical operation on " << t.str();
        }
        return from_float(round_float(t, r));
    }
    int64_t x = a.i, y = b.i;
    bool u = t.is_uint() || t.is_bool();
    uint64_t ux = uint64_t(x), uy = uint64_t(y);
    int64_t r = 0;
    switch (op) {
        case NodeType::Add:
            r = int64_t(ux + uy);
            break;
        case NodeType::Sub:
            r = int64_t(ux - uy);
            break;
        case NodeType::Mul:
            r = int64_t(ux * uy);
            break;
        case NodeType::Div:
        case NodeType::Mod:
        case NodeType::FloorDiv:
        case NodeType::FloorMod: {
            TS_CHECK(y != 0) << "interpret: integer division by zero";
            if (u) {
                r = int64_t(op == NodeType::Div || op == NodeType::FloorDiv ? ux / uy : ux % uy);
                break;
            }
            if (y == -1) {  // avoids INT64_MIN / -1
                r = op == NodeType::Div || op == NodeType::FloorDiv ? int64_t(0 - ux) : 0;
                break;
            }
            int64_t q = x / y, m = x % y;
            if (op == NodeType::FloorDiv || op == NodeType::FloorMod) {
                if (m != 0 && ((m < 0) != (y < 0))) {
                    q -= 1;
                    m += y;
                }
            }
            r = op == NodeType::Div || op == NodeType::FloorDiv ? q : m;
            break;
        }
        case NodeType::Min:
            r = u ? int64_t(std::min(ux, uy)) : std::min(x, y);
            break;
        case NodeType::Max:
            r = u ? int64_t(std::max(ux, uy)) : std::max(x, y);
            break;
        case NodeType::EQ:
            return from_int(x == y);
        case NodeType::NE:
            return from_int(x != y);
        case NodeType::LT:
            return from_int(u ? ux < uy : x < y);
        case NodeType::LE:
            return from_int(u ? ux <= uy : x <= y);
        case NodeType::GT:
            return from_int(u ? ux > uy : x > y);
        case NodeType::GE:
            return from_int(u ? ux >= uy : x >= y);
        case NodeType::And:
            return from_int(x != 0 && y != 0);
        case NodeType::Or:
            return from_int(x != 0 || y != 0);
        default:
            TS_FAIL() << "interpret: unknown binary operation";
    }
    return from_int(wrap_int(t, r));
}

Scalar Interpreter::cast_to(DataType to, DataType from, Scalar v) {
    if (to.is_float()) {
        double d = from.is_float()                     ? v.f
                   : from.is_uint() && from.bits == 64 ? double(uint64_t(v.i))
                                                       : double(v.i);
        return from_float(round_float(to, d));
    }
    if (to.is_bool()) return from_int(from.is_float() ? v.f != 0 : v.i != 0);
    if (from.is_float()) {
        double d = std::trunc(v.f);
        if (std::isnan(d)) return from_int(0);
        if (d >= 9.2233720368547758e18)
            return from_int(wrap_int(to, std::numeric_limits<int64_t>::max()));
        if (d <= -9.2233720368547758e18)
            return from_int(wrap_int(to, std::numeric_limits<int64_t>::min()));
        return from_int(wrap_int(to, int64_t(d)));
    }
    return from_int(wrap_int(to, v.i));
}

// The bits of v (of type `from`) as a value of type `to`, of the same width.
Scalar Interpreter::reinterpret_bits(DataType to, DataType from, Scalar v) {
    uint64_t bits = 0;
    if (from.is_float() && from.bits == 32) {
        const float f = float(v.f);
        uint32_t u;
        std::memcpy(&u, &f, sizeof u);
        bits = u;
    } else if (from.is_float()) {
        std::memcpy(&bits, &v.f, sizeof bits);
    } else {
        bits = uint64_t(v.i);
    }
    if (to.is_float() && to.bits == 32) {
        const uint32_t u = uint32_t(bits);
        float f;
        std::memcpy(&f, &u, sizeof f);
        return from_float(f);
    }
    if (to.is_float()) {
        double d;
        std::memcpy(&d, &bits, sizeof d);
        return from_float(d);
    }
    return from_int(wrap_int(to, int64_t(bits)));
}

Scalar Interpreter::intrinsic(const std::string& name, DataType t, const Scalar* args,
                              size_t nargs) {
    if (name == kDot4U8S8) {
        TS_CHECK(nargs == 2) << "interpret: " << name << " takes two arguments";
        const uint32_t a = uint32_t(args[0].i), b = uint32_t(args[1].i);
        int64_t sum = 0;
        for (int s = 0; s < 32; s += 8) sum += int64_t((a >> s) & 0xff) * int8_t((b >> s) & 0xff);
        return from_int(wrap_int(t, sum));
    }
    if (name.rfind("bitwise_", 0) == 0) {  // integers, two's complement in t's width
        TS_CHECK(nargs >= 1) << "interpret: " << name << " needs arguments";
        const int64_t a = args[0].i, b = nargs > 1 ? args[1].i : 0;
        int64_t r = 0;
        if (name == "bitwise_and")
            r = a & b;
        else if (name == "bitwise_or")
            r = a | b;
        else if (name == "bitwise_xor")
            r = a ^ b;
        else if (name == "bitwise_not")
            r = ~a;
        else
            TS_FAIL() << "interpret: unknown intrinsic " << name;
        return from_int(wrap_int(t, r));
    }
    TS_CHECK(t.is_float()) << "interpret: intrinsic " << name << " of type " << t.str();
    auto arg = [&](size_t i) {
        TS_CHECK(i < nargs) << "interpret: intrinsic " << name << " needs " << i + 1
                            << " arguments";
        return args[i].f;
    };
    bool f32 = t.bits == 32;
    double x = arg(0), r;
    if (name == "exp")
        r = f32 ? std::exp(float(x)) : std::exp(x);
    else if (name == "log")
        r = f32 ? std::log(float(x)) : std::log(x);
    else if (name == "sqrt")
        r = f32 ? std::sqrt(float(x)) : std::sqrt(x);
    else if (name == "rsqrt")
        r = f32 ? 1.0f / std::sqrt(float(x)) : 1.0 / std::sqrt(x);
    else if (name == "tanh")
        r = f32 ? std::tanh(float(x)) : std::tanh(x);
    else if (name == "erf")
        r = f32 ? std::erf(float(x)) : std::erf(x);
    else if (name == "sigmoid")
        r = f32 ? 1.0f / (1.0f + std::exp(-float(x))) : 1.0 / (1.0 + std::exp(-x));
    else if (name == "fabs")
        r = std::fabs(x);
    else if (name == "floor")
        r = std::floor(x);
    else if (name == "ceil")
        r = std::ceil(x);
    else if (name == "round")
        r = std::nearbyint(x);  // half to even, like ONNX Round
    else if (name == "trunc")
        r = std::trunc(x);
    else if (name == "sin")
        r = f32 ? std::sin(float(x)) : std::sin(x);
    else if (name == "cos")
        r = f32 ? std::cos(float(x)) : std::cos(x);
    else if (name == "tan")
        r = f32 ? std::tan(float(x)) : std::tan(x);
    else if (name == "asin")
        r = f32 ? std::asin(float(x)) : std::asin(x);
    else if (name == "acos")
        r = f32 ? std::acos(float(x)) : std::acos(x);
    else if (name == "atan")
        r = f32 ? std::atan(float(x)) : std::atan(x);
    else if (name == "sinh")
        r = f32 ? std::sinh(float(x)) : std::sinh(x);
    else if (name == "cosh")
        r = f32 ? std::cosh(float(x)) : std::cosh(x);
    else if (name == "asinh")
        r = f32 ? std::asinh(float(x)) : std::asinh(x);
    else if (name == "acosh")
        r = f32 ? std::acosh(float(x)) : std::acosh(x);
    else if (name == "atanh")
        r = f32 ? std::atanh(float(x)) : std::atanh(x);
    else if (name == "pow")
        r = f32 ? std::pow(float(x), float(arg(1))) : std::pow(x, arg(1));
    else if (name == "fma")
        r = f32 ? std::fma(float(x), float(arg(1)), float(arg(2))) : std::fma(x, arg(1), arg(2));
    else
        TS_FAIL() << "interpret: unknown intrinsic " << name;
    return from_float(round_float(t, r));
}

}  // namespace

void interpret(const PrimFunc& f, const std::vector<void*>& args) {
    TS_CHECK(f.defined()) << "interpret: undefined function";
    Interpreter().run(f, args);
}

}  // namespace tessera::tir
