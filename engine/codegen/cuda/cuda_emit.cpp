// CUDA C printing of one device kernel: thread-bound loops become
// blockIdx/threadIdx reads, shared/local allocations become __shared__ and
// register arrays, 4-wide vectorized float loops become float4 accesses.
#include <cmath>
#include <functional>
#include <cstdio>
#include <set>
#include <sstream>

#include "engine/codegen/cuda/cuda_lower.h"
#include "engine/core/error.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"
#include "engine/tir/passes/inject_prefetch.h"
#include "engine/tir/passes/insert_shared_syncs.h"
#include "engine/tir/passes/simplify.h"

namespace tessera::codegen {

using namespace tir;

namespace {

std::string type_name(DataType t) {
    TS_USER_CHECK(t.lanes == 1) << "CUDA codegen: vector type " << t.str()
                                << " outside a 4-wide float loop is not supported";
    switch (t.code) {
        case DataType::Float:
            if (t.bits == 32) return "float";
            if (t.bits == 64) return "double";
            break;
        case DataType::Int:
            if (t.bits == 64) return "long long";
            if (t.bits == 32) return "int";
            if (t.bits == 16) return "short";
            if (t.bits == 8) return "signed char";
            break;
        case DataType::UInt:
            if (t.bits == 64) return "unsigned long long";
            if (t.bits == 32) return "unsigned int";
            if (t.bits == 16) return "unsigned short";
            if (t.bits == 8) return "unsigned char";
            break;
        case DataType::Bool:
            return "bool";
        case DataType::Handle:
            break;
    }
    TS_USER_FAIL() << "CUDA codegen: type " << t.str() << " is not supported";
}

std::string strip_parens(const std::string& s) {
    if (s.size() < 2 || s.front() != '(' || s.back() != ')') return s;
    int depth = 0;
    for (size_t i = 0; i < s.size(); ++i) {
        depth += s[i] == '(' ? 1 : s[i] == ')' ? -1 : 0;
        if (depth == 0 && i + 1 < s.size()) return s;  // "(a) + (b)"
    }
    return s.substr(1, s.size() - 2);
}

std::string float_literal(double v, int bits) {
    if (std::isnan(v)) return bits == 32 ? "__int_as_float(0x7fc00000)" : "__longlong_as_double(0x7ff8000000000000LL)";
    if (std::isinf(v)) {
        if (bits == 32) return v > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)";
        return v > 0 ? "__longlong_as_double(0x7ff0000000000000LL)"
                     : "__longlong_as_double(0xfff0000000000000LL)";
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, bits == 32 ? "%.9g" : "%.17g", v);
    std::string s = buf;
    if (s.find_first_of(".en") == std::string::npos) s += ".0";
    if (bits == 32) s += "f";
    return v < 0 ? "(" + s + ")" : s;
}

// The lane variable's coefficient is 1 and the rest does not use it:
// idx == base + lane. Returns base (undefined when idx has another form).
Expr contiguous_base(const Expr& idx, const Variable* lane);

Expr contiguous_base(const Expr& idx, const Variable* lane) {
    if (idx.get() == lane) return IntImm::make(idx.dtype(), 0);
    if (const Add* a = idx.as<Add>()) {
        if (!uses_var(a->b, lane)) {
            Expr base = contiguous_base(a->a, lane);
            return base.defined() ? simplify(Add::make(base, a->b)) : Expr();
        }
        if (!uses_var(a->a, lane)) {
            Expr base = contiguous_base(a->b, lane);
            return base.defined() ? simplify(Add::make(a->a, base)) : Expr();
        }
    }
    return Expr();
}

// True when e is provably a multiple of n (n > 0).
bool divisible(const Expr& e, int64_t n) {
    if (const int64_t* c = as_const_int(e)) return *c % n == 0;
    if (const Add* a = e.as<Add>()) return divisible(a->a, n) && divisible(a->b, n);
    if (const Sub* s = e.as<Sub>()) return divisible(s->a, n) && divisible(s->b, n);
    if (const Mul* m = e.as<Mul>()) return divisible(m->a, n) || divisible(m->b, n);
    return false;
}

class CudaPrinter {
public:
    CudaPrinter(const DeviceKernel& k, bool fast_math, std::map<std::string, std::string>& helpers)
        : m_k(k), m_fast(fast_math), m_helpers(helpers) {}

    std::string kernel() {
        const CudaKernel& info = m_k.info;
        int64_t threads = info.block[0] * info.block[1] * info.block[2];
        std::ostringstream sig;
        sig << "extern \"C\" __global__ void __launch_bounds__(" << threads << ") " << info.name
            << "(";
        for (size_t i = 0; i < m_k.arg_buffers.size(); ++i) {
            const Buffer& b = m_k.arg_buffers[i];
            sig << (i ? ", " : "") << (m_k.arg_written[i] ? "" : "const ") << type_name(b->dtype)
                << "* __restrict__ " << buffer_name(b);
        }
        sig << ") {\n";
        m_os << sig.str();
        m_indent = 1;
        line() << "// grid (" << info.grid[0] << ", " << info.grid[1] << ", " << info.grid[2]
               << "), block (" << info.block[0] << ", " << info.block[1] << ", " << info.block[2]
               << ")\n";
        m_scopes.emplace_back();
        stmt(m_k.body);
        m_os << "}\n";
        return m_os.str();
    }

private:
    std::ostream& line() {
        for (int i = 0; i < m_indent; ++i) m_os << "  ";
        return m_os;
    }

    std::string unique(const std::string& base) {
        std::string s;
        for (char c : base) s += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
        if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "v" + s;
        std::string name = s;
        for (int k = 1; m_used.count(name); ++k) name = s + "_" + std::to_string(k);
        m_used.insert(name);
        return name;
    }
    std::string var_name(const Variable* v) {
        auto it = m_vars.find(v);
        if (it != m_vars.end()) return it->second;
        return m_vars[v] = unique(v->name);
    }
    std::string buffer_name(const Buffer& b) {
        auto it = m_buffers.find(b.get());
        if (it != m_buffers.end()) return it->second;
        return m_buffers[b.get()] = unique(b->name);
    }

    // ------------------------------------------------------------ expressions
    std::string bin(const std::string& a, const char* op, const std::string& b) {
        return "(" + a + " " + op + " " + b + ")";
    }

    std::string expr(const Expr& e) {
        switch (e.node_type()) {
            case NodeType::IntImm: {
                const IntImm* op = e.as<IntImm>();
                DataType t = op->dtype;
                if (t.is_bool()) return op->value ? "true" : "false";
                if (t.is_int() && t.bits == 64) {
                    if (op->value == INT64_MIN) return "(-9223372036854775807LL - 1)";
                    std::string s = std::to_string(op->value);
                    if (op->value > INT32_MAX || op->value < INT32_MIN) s += "LL";
                    return op->value < 0 ? "(" + s + ")" : s;
                }
                if (t.is_int() && t.bits == 32)
                    return op->value < 0 ? "(" + std::to_string(op->value) + ")" : std::to_string(op->value);
                return "((" + type_name(t) + ")" + std::to_string(op->value) + ")";
            }
            case NodeType::FloatImm: {
                const FloatImm* op = e.as<FloatImm>();
                return float_literal(op->value, op->dtype.bits);
            }
            case NodeType::Variable:
                return var_name(static_cast<const Variable*>(e.get()));
            case NodeType::Add: return binary<Add>(e, "+");
            case NodeType::Sub: return binary<Sub>(e, "-");
            case NodeType::Mul: return binary<Mul>(e, "*");
            case NodeType::Div: return binary<Div>(e, "/");
            case NodeType::Mod: {
                const Mod* op = e.as<Mod>();
                if (op->dtype.is_float())
                    return call_name("fmod", op->dtype) + "(" + expr(op->a) + ", " + expr(op->b) + ")";
                return binary<Mod>(e, "%");
            }
            case NodeType::FloorDiv: return floor_div_mod(e, true);
            case NodeType::FloorMod: return floor_div_mod(e, false);
            case NodeType::Min: {
                const Min* op = e.as<Min>();
                return "min(" + overload_arg(op->a) + ", " + overload_arg(op->b) + ")";
            }
            case NodeType::Max: {
                const Max* op = e.as<Max>();
                return "max(" + overload_arg(op->a) + ", " + overload_arg(op->b) + ")";
            }
            case NodeType::EQ: return binary<EQ>(e, "==");
            case NodeType::NE: return binary<NE>(e, "!=");
            case NodeType::LT: return binary<LT>(e, "<");
            case NodeType::LE: return binary<LE>(e, "<=");
            case NodeType::GT: return binary<GT>(e, ">");
            case NodeType::GE: return binary<GE>(e, ">=");
            case NodeType::And: return binary<And>(e, "&&");
            case NodeType::Or: return binary<Or>(e, "||");
            case NodeType::Not: return "(!" + expr(e.as<Not>()->a) + ")";
            case NodeType::Select: {
                const Select* op = e.as<Select>();
                return "(" + expr(op->condition) + " ? " + expr(op->true_value) + " : " +
                       expr(op->false_value) + ")";
            }
            case NodeType::Cast: {
                const Cast* op = e.as<Cast>();
                return "((" + type_name(op->dtype) + ")" + expr(op->value) + ")";
            }
            case NodeType::Call: return call(e.as<Call>());
            case NodeType::BufferLoad: {
                const BufferLoad* op = e.as<BufferLoad>();
                TS_CHECK(op->indices.size() == 1)
                    << "CUDA codegen: load from '" << op->buffer->name << "' is not flattened";
                return buffer_name(op->buffer) + "[" + strip_parens(expr(op->indices[0])) + "]";
            }
            default:
                break;
        }
        TS_USER_FAIL() << "CUDA codegen: expression kind " << int(e.node_type())
                       << " (Ramp, Broadcast, Let or Reduce) is not supported here";
    }

    // An argument of the overloaded min/max: a 64-bit constant needs its LL
    // suffix, or max(long long, int) is ambiguous.
    std::string overload_arg(const Expr& e) {
        const IntImm* c = e.as<IntImm>();
        if (c && c->dtype == DataType::int64() && c->value != INT64_MIN) {
            std::string s = std::to_string(c->value) + "LL";
            return c->value < 0 ? "(" + s + ")" : s;
        }
        return expr(e);
    }

    template <typename T>
    std::string binary(const Expr& e, const char* op) {
        const T* n = e.as<T>();
        return bin(expr(n->a), op, expr(n->b));
    }

    std::string floor_div_mod(const Expr& e, bool div) {
        const ExprNode* n = e.get();
        Expr a = div ? static_cast<const FloorDiv*>(n)->a : static_cast<const FloorMod*>(n)->a;
        Expr b = div ? static_cast<const FloorDiv*>(n)->b : static_cast<const FloorMod*>(n)->b;
        DataType t = n->dtype;
        if (t.is_float()) {
            std::string q = call_name("floor", t) + "(" + bin(expr(a), "/", expr(b)) + ")";
            return div ? q : bin(expr(a), "-", bin(q, "*", expr(b)));
        }
        // Powers of two: an arithmetic shift / mask is exactly floor division.
        if (const int64_t* c = as_const_int(b); c && *c > 0 && (*c & (*c - 1)) == 0 && t.is_int()) {
            int shift = 0;
            while ((int64_t(1) << shift) < *c) ++shift;
            return div ? bin(expr(a), ">>", std::to_string(shift))
                       : bin(expr(a), "&", std::to_string(*c - 1));
        }
        std::string tn = type_name(t);
        std::string fn = std::string(div ? "ts_floordiv_" : "ts_floormod_") + (t.bits == 64 ? "i64" : "i32");
        m_helpers[fn] =
            div ? "__device__ __forceinline__ " + tn + " " + fn + "(" + tn + " a, " + tn +
                      " b) {\n  " + tn + " q = a / b;\n  return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;\n}\n"
                : "__device__ __forceinline__ " + tn + " " + fn + "(" + tn + " a, " + tn +
                      " b) {\n  " + tn + " r = a % b;\n  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;\n}\n";
        return fn + "(" + expr(a) + ", " + expr(b) + ")";
    }

    // "exp" -> "expf" / "__expf" / "exp" by type and fast-math setting.
    std::string call_name(const std::string& op, DataType t) {
        bool f32 = t.is_float() && t.bits == 32;
        if (!f32) return op;
        if (m_fast && (op == "exp" || op == "log")) return "__" + op + "f";
        return op + "f";
    }

    std::string call(const Call* op) {
        std::vector<std::string> a;
        for (const Expr& x : op->args) a.push_back(expr(x));
        DataType t = op->dtype;
        auto need = [&](size_t n) {
            TS_USER_CHECK(a.size() == n) << "CUDA codegen: intrinsic " << op->op << " takes " << n
                                         << " arguments, got " << a.size();
        };
        const std::string& name = op->op;
        bool f32 = t.is_float() && t.bits == 32;
        if (name == "sigmoid") {
            need(1);
            std::string one = f32 ? "1.0f" : "1.0";
            return "(" + one + " / (" + one + " + " + call_name("exp", t) + "((-" + a[0] + "))))";
        }
        if (name == "rsqrt") {
            need(1);
            return (f32 ? "rsqrtf(" : "rsqrt(") + a[0] + ")";
        }
        if (name == "round") {  // half to even, like ONNX Round
            need(1);
            return (f32 ? "rintf(" : "rint(") + a[0] + ")";
        }
        static const std::set<std::string> unary = {"exp", "log", "sqrt", "tanh", "erf", "fabs",
                                                    "floor", "ceil", "trunc", "sin", "cos",
                                                    "tan", "asin", "acos", "atan", "sinh",
                                                    "cosh", "asinh", "acosh", "atanh"};
        if (unary.count(name)) {
            need(1);
            return call_name(name, t) + "(" + a[0] + ")";
        }
        if (name == "reinterpret") {
            need(1);
            const DataType from = op->args[0].dtype();
            if (t.is_float()) return std::string(t.bits == 32 ? "__int_as_float(" : "__longlong_as_double(") + a[0] + ")";
            if (from.is_float()) return std::string(from.bits == 32 ? "__float_as_int(" : "__double_as_longlong(") + a[0] + ")";
            return a[0];
        }
        if (name == tir::kDot4U8S8) {
            need(2);
            std::string sum;
            for (int s = 0; s < 32; s += 8) {
                const std::string sh = std::to_string(s);
                sum += std::string(s ? " + " : "") + "(int)(((unsigned)(" + a[0] + ") >> " + sh +
                       ") & 255u) * (int)(signed char)((unsigned)(" + a[1] + ") >> " + sh + ")";
            }
            return "(" + sum + ")";
        }
        if (name == "bitwise_not") {
            need(1);
            return "(~" + a[0] + ")";
        }
        if (name == "bitwise_and" || name == "bitwise_or" || name == "bitwise_xor") {
            need(2);
            const char* o = name == "bitwise_and" ? " & " : name == "bitwise_or" ? " | " : " ^ ";
            return "(" + a[0] + o + a[1] + ")";
        }
        if (name == "pow") {
            need(2);
            return call_name("pow", t) + "(" + a[0] + ", " + a[1] + ")";
        }
        if (name == "fma") {
            need(3);
            return call_name("fma", t) + "(" + a[0] + ", " + a[1] + ", " + a[2] + ")";
        }
        TS_USER_FAIL() << "CUDA codegen: intrinsic '" << name << "' is not supported";
    }

    // ------------------------------------------------------------ statements
    void stmt(const Stmt& s) {
        switch (s.node_type()) {
            case NodeType::BufferStore: {
                const BufferStore* op = s.as<BufferStore>();
                TS_CHECK(op->indices.size() == 1)
                    << "CUDA codegen: store to '" << op->buffer->name << "' is not flattened";
                line() << buffer_name(op->buffer) << "[" << strip_parens(expr(op->indices[0]))
                       << "] = " << strip_parens(expr(op->value)) << ";\n";
                return;
            }
            case NodeType::SeqStmt:
                for (const Stmt& c : s.as<SeqStmt>()->seq) stmt(c);
                return;
            case NodeType::For: return for_loop(s.as<For>());
            case NodeType::IfThenElse: {
                const IfThenElse* op = s.as<IfThenElse>();
                line() << "if (" << strip_parens(expr(op->condition)) << ") {\n";
                scoped(op->then_case);
                if (op->else_case.defined()) {
                    line() << "} else {\n";
                    scoped(op->else_case);
                }
                line() << "}\n";
                return;
            }
            case NodeType::LetStmt: {
                const LetStmt* op = s.as<LetStmt>();
                declare(op->var.get(), type_name(op->var.dtype()), strip_parens(expr(op->value)),
                        op->body);
                return;
            }
            case NodeType::Allocate: {
                const Allocate* op = s.as<Allocate>();
                const Buffer& b = op->buffer;
                int64_t n = 1;
                for (const Expr& d : b->shape) n *= *as_const_int(d);
                line() << (b->scope == "shared" ? "__shared__ __align__(16) " : "")
                       << type_name(b->dtype) << " " << buffer_name(b) << "[" << n << "];\n";
                stmt(op->body);
                return;
            }
            case NodeType::Evaluate: {
                if (is_storage_sync(s)) {
                    line() << "__syncthreads();\n";
                    return;
                }
                const Evaluate* op = s.as<Evaluate>();
                if (const Call* c = op->value.as<Call>(); c && c->op == kPrefetchIntrinsic)
                    return;  // a CPU cache hint
                if (!as_const_int(op->value)) line() << "(void)" << expr(op->value) << ";\n";
                return;
            }
            default:
                break;
        }
        TS_CHECK(false) << "CUDA codegen: blocks must be lowered before printing";
    }

    void scoped(const Stmt& s) {
        ++m_indent;
        m_scopes.emplace_back();
        stmt(s);
        m_scopes.pop_back();
        --m_indent;
    }

    // `const T v = value;` then body; in a new brace scope if v is already
    // declared in this one (a variable reused by sibling statements).
    void declare(const Variable* v, const std::string& type, const std::string& value,
                 const Stmt& body, const std::string& comment = "") {
        bool fresh = !m_scopes.back().count(v);
        if (!fresh) {
            line() << "{\n";
            ++m_indent;
            m_scopes.emplace_back();
        }
        m_scopes.back().insert(v);
        line() << "const " << type << " " << var_name(v) << " = " << value << ";" << comment << "\n";
        stmt(body);
        if (!fresh) {
            m_scopes.pop_back();
            --m_indent;
            line() << "}\n";
        }
    }

    void for_loop(const For* op) {
        if (op->kind == ForKind::ThreadBinding) {
            int slot = thread_tag_slot(op->thread_tag);
            if (slot >= 0 && slot < 6) return thread_loop(op, slot);
            line() << "// virtual thread " << op->thread_tag << "\n";
        }
        if (op->kind == ForKind::Vectorized && vector_loop(op)) return;
        if (op->kind == ForKind::Unrolled || op->kind == ForKind::Vectorized ||
            op->kind == ForKind::ThreadBinding)
            line() << "#pragma unroll\n";
        std::string v = var_name(op->loop_var.get());
        std::string type = type_name(op->loop_var.dtype());
        std::string end = is_const_int(op->min, 0)
                              ? strip_parens(expr(op->extent))
                              : strip_parens(expr(simplify(Add::make(op->min, op->extent))));
        line() << "for (" << type << " " << v << " = " << strip_parens(expr(op->min)) << "; " << v
               << " < " << end << "; ++" << v << ") {\n";
        scoped(op->body);
        line() << "}\n";
    }

    void thread_loop(const For* op, int slot) {
        const std::string& tag = op->thread_tag;
        int64_t launch = slot < 3 ? m_k.info.grid[size_t(slot)] : m_k.info.block[size_t(slot - 3)];
        int64_t extent = *as_const_int(op->extent);
        std::string type = type_name(op->loop_var.dtype());
        std::string value = "((" + type + ")" + tag + ")";
        if (!is_const_int(op->min, 0)) value = bin(expr(op->min), "+", value);
        if (extent < launch) {
            line() << "if (" << tag << " < " << extent << ") {\n";
            ++m_indent;
            m_scopes.emplace_back();
            declare(op->loop_var.get(), type, value, op->body);
            m_scopes.pop_back();
            --m_indent;
            line() << "}\n";
        } else {
            declare(op->loop_var.get(), type, value, op->body);
        }
    }

    // A 4-wide vectorized loop over float32 storing to base + lane with
    // base a multiple of 4: float4 loads for contiguous aligned reads, one
    // float4 store (or, into registers, one store per lane: a local array
    // stays in registers only while every index is a constant).
    bool vector_loop(const For* op) {
        const BufferStore* store = op->body.as<BufferStore>();
        if (!store || !is_const_int(op->extent, 4) || !is_const_int(op->min, 0)) return false;
        const Variable* lane = op->loop_var.get();
        if (store->buffer->dtype != DataType::float32() || store->indices.size() != 1) return false;
        const bool to_registers = store->buffer->scope == "local";
        Expr out_base = contiguous_base(store->indices[0], lane);
        if (!out_base.defined() || (!to_registers && !divisible(out_base, 4))) return false;

        // Replace each contiguous aligned float32 load by a float4 temporary.
        struct VecLoad { std::string name; std::string ptr; };
        std::vector<VecLoad> loads;
        class Replacer : public IRMutator {
        public:
            std::function<Expr(const BufferLoad*)> fn;
        protected:
            using IRMutator::visit;
            Expr visit(const BufferLoad* l) override {
                Expr r = fn(l);
                return r.defined() ? r : IRMutator::visit(l);
            }
        } rep;
        rep.fn = [&](const BufferLoad* l) -> Expr {
            if (l->buffer->dtype != DataType::float32() || l->indices.size() != 1 ||
                l->buffer->scope == "local")
                return Expr();
            Expr base = contiguous_base(l->indices[0], lane);
            if (!base.defined() || !divisible(base, 4)) return Expr();
            std::string name = unique("v" + std::to_string(loads.size()));
            loads.push_back({name, "(const float4*)(" + buffer_name(l->buffer) + " + " +
                                       strip_parens(expr(base)) + ")"});
            // One placeholder per load; lane components are chosen per lane.
            Var ph(name, DataType::float32());
            m_vars[ph.get()] = name + ".LANE";
            return ph;
        };
        Expr value = rep.mutate(store->value);
        line() << "{  // vectorized " << op->loop_var.name() << " (4 lanes)\n";
        ++m_indent;
        for (const VecLoad& l : loads) line() << "const float4 " << l.name << " = *" << l.ptr << ";\n";
        std::string out = unique("r");
        if (!to_registers) line() << "float4 " << out << ";\n";
        static const char* kLane[4] = {"x", "y", "z", "w"};
        for (int i = 0; i < 4; ++i) {
            Expr lane_value =
                simplify(substitute(value, {{lane, IntImm::make(lane->dtype, int64_t(i))}}));
            std::string text = strip_parens(expr(lane_value));
            for (size_t p; (p = text.find(".LANE")) != std::string::npos;)
                text.replace(p, 5, std::string(".") + kLane[i]);
            if (to_registers) {
                Expr at = simplify(Add::make(out_base, IntImm::make(out_base.dtype(), int64_t(i))));
                line() << buffer_name(store->buffer) << "[" << strip_parens(expr(at))
                       << "] = " << text << ";\n";
            } else {
                line() << out << "." << kLane[i] << " = " << text << ";\n";
            }
        }
        if (!to_registers)
            line() << "*(float4*)(" << buffer_name(store->buffer) << " + "
                   << strip_parens(expr(out_base)) << ") = " << out << ";\n";
        --m_indent;
        line() << "}\n";
        return true;
    }

    const DeviceKernel& m_k;
    bool m_fast;
    std::map<std::string, std::string>& m_helpers;
    std::ostringstream m_os;
    int m_indent = 0;
    std::set<std::string> m_used;
    std::map<const Variable*, std::string> m_vars;
    std::map<const BufferNode*, std::string> m_buffers;
    std::vector<std::set<const Variable*>> m_scopes;
};

}  // namespace

std::string emit_kernel(const DeviceKernel& k, bool fast_math,
                        std::map<std::string, std::string>& helpers) {
    return CudaPrinter(k, fast_math, helpers).kernel();
}

}  // namespace tessera::codegen
