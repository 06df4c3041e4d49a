// inject_prefetch: turns software_prefetch loop annotations into prefetch
// statements at the top of the innermost serial loops below them.
#include "engine/tir/passes/inject_prefetch.h"

#include <set>
#include <sstream>

#include "engine/core/error.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"
#include "engine/tir/passes/simplify.h"

namespace tessera::tir {

namespace {

struct PrefetchRequest {
    Var var;  // the annotated loop's variable
    std::string buffer;
    int64_t distance;
};

/// Parses "B:d[,B:d...]" of the loop over `var`.
std::vector<PrefetchRequest> parse_requests(const std::string& value, const Var& var) {
    std::vector<PrefetchRequest> out;
    std::stringstream ss(value);
    std::string item;
    while (std::getline(ss, item, ',')) {
        const size_t colon = item.rfind(':');
        TS_USER_CHECK(colon != std::string::npos && colon > 0)
            << "software_prefetch annotation '" << value << "' on loop " << var->name
            << ": expected BUFFER:DISTANCE";
        int64_t d = 0;
        try {
            d = std::stoll(item.substr(colon + 1));
        } catch (const std::exception&) {
            TS_USER_FAIL() << "software_prefetch annotation '" << value << "' on loop " << var->name
                      << ": the distance is not an integer";
        }
        out.push_back({var, item.substr(0, colon), d});
    }
    return out;
}

/// True when `s` holds a serial or parallel loop (one the prefetches would
/// rather go into).
bool has_inner_loop(const Stmt& s) {
    bool found = false;
    post_order_visit(s, [&](const Object* n) {
        if (n->node_type != NodeType::For) return;
        const auto* f = static_cast<const For*>(n);
        if (f->kind == ForKind::Serial || f->kind == ForKind::Parallel) found = true;
    });
    return found;
}

/// Variables bound inside `s` (loops and lets): indices that use them have
/// no value at the top of the body.
std::set<const Variable*> bound_inside(const Stmt& s) {
    std::set<const Variable*> vars;
    post_order_visit(s, [&](const Object* n) {
        if (n->node_type == NodeType::For) vars.insert(static_cast<const For*>(n)->loop_var.get());
        if (n->node_type == NodeType::LetStmt)
            vars.insert(static_cast<const LetStmt*>(n)->var.get());
        if (n->node_type == NodeType::Let) vars.insert(static_cast<const Let*>(n)->var.get());
    });
    return vars;
}

class PrefetchInjector : public IRMutator {
protected:
    using IRMutator::visit;

    Stmt visit(const For* op) override {
        const size_t outer = m_active.size();
        if (auto it = op->annotations.find(kPrefetchAnnotation); it != op->annotations.end())
            for (PrefetchRequest& r : parse_requests(it->second, op->loop_var))
                m_active.push_back(std::move(r));
        Stmt s = IRMutator::visit(op);
        const bool innermost = (op->kind == ForKind::Serial || op->kind == ForKind::Parallel) &&
                               !has_inner_loop(op->body);
        if (innermost && !m_active.empty()) s = with_prefetches(s);
        m_active.resize(outer);
        return s;
    }

private:
    std::vector<PrefetchRequest> m_active;

    /// `loop` with the prefetches of the active requests at the top of its body.
    Stmt with_prefetches(const Stmt& loop) const {
        const For* f = loop.as<For>();
        const std::set<const Variable*> inner = bound_inside(f->body);
        std::vector<Expr> addresses;  // distinct prefetched loads
        post_order_visit(f->body, [&](const Object* n) {
            if (n->node_type != NodeType::BufferLoad) return;
            const auto* load = static_cast<const BufferLoad*>(n);
            if (load->indices.size() != 1) return;  // not flattened
            const Expr& index = load->indices[0];
            for (const Variable* v : inner)
                if (uses_var(index, v)) return;
            for (const PrefetchRequest& r : m_active) {
                if (load->buffer->name != r.buffer || !uses_var(index, r.var.get())) continue;
                std::map<const Variable*, Expr> shift;
                shift[r.var.get()] = Expr(r.var) + make_const(r.var.dtype(), double(r.distance));
                Expr ahead = simplify(BufferLoad::make(load->buffer, {substitute(index, shift)}));
                bool seen = false;
                for (const Expr& a : addresses) seen = seen || structural_equal(a, ahead);
                if (!seen) addresses.push_back(ahead);
            }
        });
        if (addresses.empty()) return loop;
        std::vector<Stmt> seq;
        for (const Expr& a : addresses)
            seq.push_back(Evaluate::make(Call::make(DataType::int32(), kPrefetchIntrinsic, {a})));
        seq.push_back(f->body);
        return For::make(f->loop_var, f->min, f->extent, f->kind, SeqStmt::make(std::move(seq)),
                         f->thread_tag, f->annotations);
    }
};

}  // namespace

PrimFunc inject_prefetch(const PrimFunc& f) {
    Stmt body = PrefetchInjector().mutate(f->body);
    if (body.same_as(f->body)) return f;
    return f.with_body(body);
}

}  // namespace tessera::tir
