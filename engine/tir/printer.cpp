// TVMScript-like text of loop IR. Names are made unique per printed text:
// distinct variables or buffers that share a name get suffixes _1, _2, ...
#include "engine/tir/printer.h"

#include <charconv>
#include <cmath>
#include <set>
#include <sstream>

#include "engine/core/error.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"

namespace tessera::tir {

namespace {

// Python operator precedence, loosest first.
enum Prec { kOr, kAnd, kNot, kCmp, kAdd, kMul, kUnary, kAtom };

std::string quote(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

std::string format_double(double v, DataType t) {
    if (std::isnan(v)) return "\"nan\"";
    if (std::isinf(v)) return v > 0 ? "\"inf\"" : "\"-inf\"";
    char buf[64];
    std::to_chars_result r = t.bits == 32 ? std::to_chars(buf, buf + sizeof buf, float(v))
                                          : std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

// A Python identifier made from a node's name.
// Concatenates in order: a braced list evaluates its elements left to right,
// which fixes the order in which names are given out.
std::string cat(std::initializer_list<std::string> parts) {
    std::string out;
    for (const std::string& p : parts) out += p;
    return out;
}

std::string sanitize(const std::string& name) {
    std::string out;
    for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
    if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "v" + out;
    return out;
}

// The loop variables of a statement, outer loops and earlier siblings
// first.
class LoopVars : public IRVisitor {
public:
    std::vector<const Variable*> vars;

protected:
    using IRVisitor::visit;
    void visit(const For* op) override {
        vars.push_back(op->loop_var.get());
        IRVisitor::visit(op);
    }
};

class Printer {
public:
    /// Names the loops of `s` before anything else: a loop prints with the
    /// name a schedule gives it (the name a trace's steps use), and a block
    /// variable or buffer of the same name takes the suffix.
    void name_loops_first(const Stmt& s) {
        LoopVars loops;
        loops.visit_stmt(s);
        for (const Variable* v : loops.vars) var(v);
    }
    std::string expr(const Expr& e, int prec = kOr);
    void stmt(const Stmt& s);
    void func(const PrimFunc& f);
    std::string text() const { return m_os.str(); }
    int indent = 0;

private:
    std::string name_of(const void* key, const std::string& hint);
    std::string var(const Variable* v) { return name_of(v, v->name); }
    std::string buffer(const Buffer& b) { return name_of(b.get(), b->name); }
    std::string binary(const char* op, int prec, int my, const Expr& a, const Expr& b,
                       bool cmp = false);
    std::string call(const std::string& fn, const std::vector<Expr>& args);
    std::string indices(const std::vector<Expr>& idx);
    std::string stop(const Expr& min, const Expr& extent);
    std::string region(const BufferRegion& r);
    std::string shape(const std::vector<Expr>& shape);
    std::string buffer_decl(const Buffer& b, const char* fn);
    void line(const std::string& s) { m_os << std::string(size_t(indent) * 4, ' ') << s << "\n"; }
    void body(const Stmt& s) {
        ++indent;
        stmt(s);
        --indent;
    }
    void for_loop(const For* op);
    void block(const Block* b, const BlockRealize* realize);

    std::map<const void*, std::string> m_names;
    std::set<std::string> m_used;
    std::ostringstream m_os;
};

std::string Printer::name_of(const void* key, const std::string& hint) {
    auto it = m_names.find(key);
    if (it != m_names.end()) return it->second;
    std::string base = sanitize(hint), name = base;
    for (int i = 1; m_used.count(name); ++i) name = base + "_" + std::to_string(i);
    m_used.insert(name);
    m_names[key] = name;
    return name;
}

std::string Printer::binary(const char* op, int prec, int my, const Expr& a, const Expr& b,
                            bool cmp) {
    std::string s = cat({expr(a, cmp ? my + 1 : my), " ", op, " ", expr(b, my + 1)});
    return my < prec ? "(" + s + ")" : s;
}

std::string Printer::call(const std::string& fn, const std::vector<Expr>& args) {
    std::string s = fn + "(";
    for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + expr(args[i]);
    return s + ")";
}

std::string Printer::indices(const std::vector<Expr>& idx) {
    if (idx.empty()) return "[()]";
    std::string s = "[";
    for (size_t i = 0; i < idx.size(); ++i) s += (i ? ", " : "") + expr(idx[i]);
    return s + "]";
}

std::string Printer::stop(const Expr& min, const Expr& extent) {
    const int64_t *m = as_const_int(min), *e = as_const_int(extent);
    if (m && e && min.as<IntImm>() && extent.as<IntImm>()) return std::to_string(*m + *e);
    if (is_const_int(min, 0) && min.as<IntImm>()) return expr(extent);
    if (min.dtype() == extent.dtype()) return expr(Add::make(min, extent));
    return cat({expr(min, kAdd), " + ", expr(extent, kMul)});
}

std::string Printer::region(const BufferRegion& r) {
    std::string s = buffer(r.buffer);
    if (r.region.empty()) return s + "[()]";
    s += "[";
    for (size_t i = 0; i < r.region.size(); ++i) {
        const Range& rg = r.region[i];
        s += i ? ", " : "";
        if (is_const_int(rg.extent, 1) && rg.extent.as<IntImm>())
            s += expr(rg.min);
        else
            s += cat({expr(rg.min), ":", stop(rg.min, rg.extent)});
    }
    return s + "]";
}

std::string Printer::shape(const std::vector<Expr>& shape) {
    std::string s = "(";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + expr(shape[i]);
    return s + (shape.size() == 1 ? ",)" : ")");
}

std::string Printer::buffer_decl(const Buffer& b, const char* fn) {
    std::string s = std::string(fn) + "(" + shape(b->shape) + ", " + quote(b->dtype.str());
    if (b->scope != "global") s += ", scope=" + quote(b->scope);
    return s + ")";
}

std::string Printer::expr(const Expr& e, int prec) {
    if (!e.defined()) return "<undefined>";
    auto wrap = [&](int my, const std::string& s) { return my < prec ? "(" + s + ")" : s; };
    DataType t = e.dtype();
    switch (e.node_type()) {
        case NodeType::IntImm: {
            int64_t v = e.as<IntImm>()->value;
            if (t.is_bool()) return v ? "True" : "False";
            if (t == DataType::int64())
                return v < 0 ? wrap(kUnary, std::to_string(v)) : std::to_string(v);
            return "T." + t.str() + "(" + std::to_string(v) + ")";
        }
        case NodeType::FloatImm:
            return "T." + t.str() + "(" + format_double(e.as<FloatImm>()->value, t) + ")";
        case NodeType::Variable:
            return var(e.as<Variable>());
        case NodeType::Add:
            return binary("+", prec, kAdd, e.as<Add>()->a, e.as<Add>()->b);
        case NodeType::Sub:
            return binary("-", prec, kAdd, e.as<Sub>()->a, e.as<Sub>()->b);
        case NodeType::Mul:
            return binary("*", prec, kMul, e.as<Mul>()->a, e.as<Mul>()->b);
        case NodeType::Div: {
            const Div* op = e.as<Div>();
            if (t.is_float()) return binary("/", prec, kMul, op->a, op->b);
            return call("T.truncdiv", {op->a, op->b});
        }
        case NodeType::Mod:
            return call("T.truncmod", {e.as<Mod>()->a, e.as<Mod>()->b});
        case NodeType::FloorDiv:
            return binary("//", prec, kMul, e.as<FloorDiv>()->a, e.as<FloorDiv>()->b);
        case NodeType::FloorMod:
            return binary("%", prec, kMul, e.as<FloorMod>()->a, e.as<FloorMod>()->b);
        case NodeType::Min:
            return call("T.min", {e.as<Min>()->a, e.as<Min>()->b});
        case NodeType::Max:
            return call("T.max", {e.as<Max>()->a, e.as<Max>()->b});
        case NodeType::EQ:
            return binary("==", prec, kCmp, e.as<EQ>()->a, e.as<EQ>()->b, true);
        case NodeType::NE:
            return binary("!=", prec, kCmp, e.as<NE>()->a, e.as<NE>()->b, true);
        case NodeType::LT:
            return binary("<", prec, kCmp, e.as<LT>()->a, e.as<LT>()->b, true);
        case NodeType::LE:
            return binary("<=", prec, kCmp, e.as<LE>()->a, e.as<LE>()->b, true);
        case NodeType::GT:
            return binary(">", prec, kCmp, e.as<GT>()->a, e.as<GT>()->b, true);
        case NodeType::GE:
            return binary(">=", prec, kCmp, e.as<GE>()->a, e.as<GE>()->b, true);
        case NodeType::And:
            return binary("and", prec, kAnd, e.as<And>()->a, e.as<And>()->b);
        case NodeType::Or:
            return binary("or", prec, kOr, e.as<Or>()->a, e.as<Or>()->b);
        case NodeType::Not:
            return wrap(kNot, "not " + expr(e.as<Not>()->a, kNot));
        case NodeType::Select: {
            const Select* op = e.as<Select>();
            return call("T.Select", {op->condition, op->true_value, op->false_value});
        }
        case NodeType::Cast:
            return "T.Cast(" + quote(t.str()) + ", " + expr(e.as<Cast>()->value) + ")";
        case NodeType::Call: {
            const Call* op = e.as<Call>();
            return call("T." + op->op, op->args);
        }
        case NodeType::BufferLoad: {
            const BufferLoad* op = e.as<BufferLoad>();
            return cat({buffer(op->buffer), indices(op->indices)});
        }
        case NodeType::Ramp: {
            const Ramp* op = e.as<Ramp>();
            return cat({"T.Ramp(", expr(op->base), ", ", expr(op->stride), ", ",
                        std::to_string(op->lanes), ")"});
        }
        case NodeType::Broadcast: {
            const Broadcast* op = e.as<Broadcast>();
            return "T.Broadcast(" + expr(op->value) + ", " + std::to_string(op->lanes) + ")";
        }
        case NodeType::Let: {
            const Let* op = e.as<Let>();
            std::string v = expr(op->value);
            return cat({"T.let(", var(op->var.get()), ", ", v, ", ", expr(op->body), ")"});
        }
        case NodeType::Reduce: {
            const Reduce* op = e.as<Reduce>();
            std::string s = std::string("T.") + reduce_kind_name(op->combiner) + "(" +
                            expr(op->source) + ", axis=[";
            for (size_t i = 0; i < op->axis.size(); ++i)
                s += (i ? ", " : "") + var(op->axis[i].var.get());
            return s + "])";
        }
        default:
            break;
    }
    TS_FAIL() << "printer: statement node in expression position";
}

void Printer::for_loop(const For* op) {
    auto gridable = [](const For* f) {
        return f->kind == ForKind::Serial && f->annotations.empty() && is_const_int(f->min, 0) &&
               f->min.as<IntImm>();
    };
    std::vector<const For*> chain{op};
    if (gridable(op)) {
        while (true) {
            const For* inner = chain.back()->body.as<For>();
            if (!inner || !gridable(inner)) break;
            chain.push_back(inner);
        }
    }
    if (chain.size() > 1) {
        std::string vars, extents;
        for (size_t i = 0; i < chain.size(); ++i) {
            if (i) {
                vars += ", ";
                extents += ", ";
            }
            vars += var(chain[i]->loop_var.get());
            extents += expr(chain[i]->extent);
        }
        line("for " + vars + " in T.grid(" + extents + "):");
        body(chain.back()->body);
        return;
    }
    std::string v = var(op->loop_var.get());
    std::string range = is_const_int(op->min, 0) && op->min.as<IntImm>()
                            ? expr(op->extent)
                            : cat({expr(op->min), ", ", stop(op->min, op->extent)});
    std::string s = "for " + v + " in T." + for_kind_name(op->kind) + "(" + range;
    if (op->kind == ForKind::ThreadBinding) s += ", thread=" + quote(op->thread_tag);
    if (!op->annotations.empty()) {
        s += ", annotations={";
        bool first = true;
        for (const auto& [k, val] : op->annotations) {
            s += (first ? "" : ", ") + quote(k) + ": " + quote(val);
            first = false;
        }
        s += "}";
    }
    line(s + "):");
    body(op->body);
}

void Printer::block(const Block* b, const BlockRealize* realize) {
    bool implicit_root = realize && b->name == "root" && b->iter_vars.empty() && b->reads.empty() &&
                         b->writes.empty() && !b->init.defined() && b->alloc_buffers.empty() &&
                         b->annotations.empty() && is_const_int(realize->predicate, 1);
    if (implicit_root) {
        line("# with T.block(\"root\")");
        stmt(b->body);
        return;
    }
    line("with T.block(" + quote(b->name) + "):");
    ++indent;
    for (size_t i = 0; i < b->iter_vars.size(); ++i) {
        const IterVar& iv = b->iter_vars[i];
        const char* kind = iv.kind == IterKind::Spatial  ? "spatial"
                           : iv.kind == IterKind::Reduce ? "reduce"
                                                         : "opaque";
        std::string dom =
            is_const_int(iv.dom.min, 0) && iv.dom.min.as<IntImm>()
                ? expr(iv.dom.extent)
                : cat({"(", expr(iv.dom.min), ", ", stop(iv.dom.min, iv.dom.extent), ")"});
        // The binding is printed before the variable so outer names come first.
        std::string value =
            realize && i < realize->iter_values.size() ? ", " + expr(realize->iter_values[i]) : "";
        line(var(iv.var.get()) + " = T.axis." + kind + "(" + dom + value + ")");
    }
    if (realize && !is_const_int(realize->predicate, 1))
        line("T.where(" + expr(realize->predicate) + ")");
    bool root = b->name == "root" && b->iter_vars.empty();
    if (!(root && b->reads.empty() && b->writes.empty())) {
        std::string r, w;
        for (size_t i = 0; i < b->reads.size(); ++i) r += (i ? ", " : "") + region(b->reads[i]);
        for (size_t i = 0; i < b->writes.size(); ++i) w += (i ? ", " : "") + region(b->writes[i]);
        line("T.reads(" + r + ")");
        line("T.writes(" + w + ")");
    }
    if (!b->annotations.empty()) {
        std::string s = "T.block_attr({";
        bool first = true;
        for (const auto& [k, val] : b->annotations) {
            s += (first ? "" : ", ") + quote(k) + ": " + quote(val);
            first = false;
        }
        line(s + "})");
    }
    for (const Buffer& buf : b->alloc_buffers)
        line(cat({buffer(buf), " = ", buffer_decl(buf, "T.alloc_buffer")}));
    if (b->init.defined()) {
        line("with T.init():");
        body(b->init);
    }
    stmt(b->body);
    --indent;
}

void Printer::stmt(const Stmt& s) {
    if (!s.defined()) return;
    switch (s.node_type()) {
        case NodeType::BufferStore: {
            const BufferStore* op = s.as<BufferStore>();
            std::string lhs = cat({buffer(op->buffer), indices(op->indices)});
            line(lhs + " = " + expr(op->value));
            return;
        }
        case NodeType::For:
            for_loop(s.as<For>());
            return;
        case NodeType::SeqStmt:
            for (const Stmt& x : s.as<SeqStmt>()->seq) stmt(x);
            return;
        case NodeType::IfThenElse: {
            const IfThenElse* op = s.as<IfThenElse>();
            line("if " + expr(op->condition) + ":");
            body(op->then_case);
            if (op->else_case.defined()) {
                line("else:");
                body(op->else_case);
            }
            return;
        }
        case NodeType::LetStmt: {
            const LetStmt* op = s.as<LetStmt>();
            std::string v = expr(op->value);
            line(var(op->var.get()) + ": T." + op->var.dtype().str() + " = " + v);
            stmt(op->body);
            return;
        }
        case NodeType::Allocate: {
            const Allocate* op = s.as<Allocate>();
            const Buffer& b = op->buffer;
            line(buffer(b) + " = T.allocate(" + shape(b->shape) + ", " + quote(b->dtype.str()) +
                 ", " + quote(b->scope) + ")");
            stmt(op->body);
            return;
        }
        case NodeType::Evaluate:
            line("T.evaluate(" + expr(s.as<Evaluate>()->value) + ")");
            return;
        case NodeType::Block:
            block(s.as<Block>(), nullptr);
            return;
        case NodeType::BlockRealize: {
            const BlockRealize* op = s.as<BlockRealize>();
            block(op->block_node(), op);
            return;
        }
        default:
            break;
    }
    TS_FAIL() << "printer: expression node in statement position";
}

void Printer::func(const PrimFunc& f) {
    line("@T.prim_func");
    std::string params;
    for (size_t i = 0; i < f->params.size(); ++i) {
        const Buffer& b = f->params[i];
        params += cat({i ? ", " : "", buffer(b), ": ", buffer_decl(b, "T.Buffer")});
    }
    line("def " + sanitize(f->name) + "(" + params + "):");
    name_loops_first(f->body);
    ++indent;
    if (!f->attrs.empty()) {
        std::string s = "T.func_attr({";
        bool first = true;
        for (const auto& [k, v] : f->attrs) {
            s += (first ? "" : ", ") + quote(k) + ": " + quote(v);
            first = false;
        }
        line(s + "})");
    }
    stmt(f->body);
    --indent;
}

}  // namespace

std::string print(const Expr& e) {
    Printer p;
    return p.expr(e);
}

std::string print(const Stmt& s, int indent) {
    Printer p;
    p.indent = indent;
    p.name_loops_first(s);
    p.stmt(s);
    return p.text();
}

std::string print(const PrimFunc& f) {
    Printer p;
    p.func(f);
    return p.text();
}

}  // namespace tessera::tir
