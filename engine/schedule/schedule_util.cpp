// Internal helpers of the schedule primitives (see schedule_util.h).
#include "engine/schedule/schedule_util.h"

#include <algorithm>

#include "engine/arith/analyzer.h"
#include "engine/arith/linear_form.h"
#include "engine/core/error.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"
#include "engine/tir/passes/simplify.h"

namespace tessera::schedule::detail {

using namespace tir;

std::vector<Stmt> sequence(const Stmt& s) {
    if (const SeqStmt* q = s.as<SeqStmt>()) return q->seq;
    return {s};
}

std::vector<Stmt> children(const Stmt& s) {
    switch (s.node_type()) {
        case NodeType::For: return {s.as<For>()->body};
        case NodeType::SeqStmt: return s.as<SeqStmt>()->seq;
        case NodeType::IfThenElse: {
            const IfThenElse* op = s.as<IfThenElse>();
            if (op->else_case.defined()) return {op->then_case, op->else_case};
            return {op->then_case};
        }
        case NodeType::LetStmt: return {s.as<LetStmt>()->body};
        case NodeType::Allocate: return {s.as<Allocate>()->body};
        case NodeType::Block: {
            const Block* b = s.as<Block>();
            if (b->init.defined()) return {b->init, b->body};
            return {b->body};
        }
        case NodeType::BlockRealize: return {s.as<BlockRealize>()->block};
        default: return {};
    }
}

namespace {
bool search(const Stmt& s, const std::function<bool(const Stmt&)>& pred, Path& path,
            std::vector<Path>* all) {
    path.push_back(s);
    if (pred(s)) {
        if (!all) return true;
        all->push_back(path);
    }
    for (const Stmt& c : children(s))
        if (c.defined() && search(c, pred, path, all)) return true;
    path.pop_back();
    return false;
}
}  // namespace

std::optional<Path> find_path(const Stmt& root, const std::function<bool(const Stmt&)>& pred) {
    Path p;
    if (search(root, pred, p, nullptr)) return p;
    return std::nullopt;
}

std::vector<Path> find_all(const Stmt& root, const std::function<bool(const Stmt&)>& pred) {
    Path p;
    std::vector<Path> all;
    search(root, pred, p, &all);
    return all;
}

std::optional<Path> find_loop(const Stmt& root, const std::string& name) {
    return find_path(root, [&](const Stmt& s) {
        const For* f = s.as<For>();
        return f && f->loop_var.name() == name;
    });
}

std::optional<Path> find_block(const Stmt& root, const std::string& name) {
    return find_path(root, [&](const Stmt& s) {
        const BlockRealize* r = s.as<BlockRealize>();
        return r && r->block_node()->name == name;
    });
}

namespace {
Stmt with_child(const Stmt& parent, const Stmt& old, const Stmt& now) {
    switch (parent.node_type()) {
        case NodeType::For: {
            const For* f = parent.as<For>();
            if (!now.defined()) return Stmt();
            return For::make(f->loop_var, f->min, f->extent, f->kind, now, f->thread_tag,
                             f->annotations);
        }
        case NodeType::SeqStmt: {
            std::vector<Stmt> seq;
            for (const Stmt& s : parent.as<SeqStmt>()->seq) {
                if (s.same_as(old)) {
                    if (now.defined()) seq.push_back(now);
                } else {
                    seq.push_back(s);
                }
            }
            if (seq.empty()) return Stmt();
            return SeqStmt::make(seq);
        }
        case NodeType::IfThenElse: {
            const IfThenElse* op = parent.as<IfThenElse>();
            Stmt t = op->then_case.same_as(old) ? now : op->then_case;
            Stmt e = op->else_case.same_as(old) ? now : op->else_case;
            if (!t.defined()) return Stmt();
            return IfThenElse::make(op->condition, t, e);
        }
        case NodeType::LetStmt: {
            const LetStmt* op = parent.as<LetStmt>();
            if (!now.defined()) return Stmt();
            return LetStmt::make(op->var, op->value, now);
        }
        case NodeType::Allocate: {
            const Allocate* op = parent.as<Allocate>();
            if (!now.defined()) return Stmt();
            return Allocate::make(op->buffer, now);
        }
        case NodeType::Block: {
            const Block* b = parent.as<Block>();
            Stmt init = b->init, body = b->body;
            if (b->init.defined() && b->init.same_as(old)) {
                init = now;
            } else {
                body = now.defined() ? now : Evaluate::make(Expr(0));
            }
            return Block::make(b->name, b->iter_vars, b->reads, b->writes, init, body,
                               b->alloc_buffers, b->annotations);
        }
        case NodeType::BlockRealize: {
            const BlockRealize* r = parent.as<BlockRealize>();
            if (!now.defined()) return Stmt();
            return BlockRealize::make(r->iter_values, r->predicate, now);
        }
        default: TS_FAIL() << "schedule: statement without children on a path";
    }
}
}  // namespace

Stmt replace_on_path(const Path& path, const Stmt& leaf) {
    Stmt cur = leaf;
    for (size_t i = path.size() - 1; i-- > 0;) cur = with_child(path[i], path[i + 1], cur);
    return cur;
}

std::vector<const For*> loops_on_path(const Path& path) {
    std::vector<const For*> loops;
    for (size_t i = 0; i + 1 < path.size(); ++i) {
        if (path[i].as<Block>()) loops.clear();
        if (const For* f = path[i].as<For>()) loops.push_back(f);
    }
    return loops;
}

std::set<std::string> var_names(const Stmt& root, const Variable* except) {
    std::set<std::string> names;
    find_all(root, [&](const Stmt& s) {
        if (const For* f = s.as<For>()) {
            if (f->loop_var.get() != except) names.insert(f->loop_var.name());
        } else if (const Block* b = s.as<Block>()) {
            for (const IterVar& iv : b->iter_vars) names.insert(iv.var.name());
        }
        return false;
    });
    return names;
}

std::string fresh_name(const std::string& base, std::set<std::string>& used) {
    std::string name = base;
    for (int i = 1; used.count(name); ++i) name = base + "_" + std::to_string(i);
    used.insert(name);
    return name;
}

std::vector<const BlockRealize*> blocks_under(const Stmt& s) {
    std::vector<const BlockRealize*> out;
    find_all(s, [&](const Stmt& x) {
        if (const BlockRealize* r = x.as<BlockRealize>()) out.push_back(r);
        return false;
    });
    return out;
}

namespace {
void add_unique(std::vector<Buffer>& v, const Buffer& b) {
    for (const Buffer& x : v)
        if (x.same_as(b)) return;
    v.push_back(b);
}
void walk_block(const Block* b, const std::function<void(const Object*)>& f) {
    if (b->init.defined()) post_order_visit(b->init, f);
    post_order_visit(b->body, f);
}
}  // namespace

std::vector<Buffer> loaded_buffers(const Block* b) {
    std::vector<Buffer> out;
    walk_block(b, [&](const Object* n) {
        if (n->node_type == NodeType::BufferLoad)
            add_unique(out, static_cast<const BufferLoad*>(n)->buffer);
    });
    return out;
}

std::vector<Buffer> stored_buffers(const Block* b) {
    std::vector<Buffer> out;
    walk_block(b, [&](const Object* n) {
        if (n->node_type == NodeType::BufferStore)
            add_unique(out, static_cast<const BufferStore*>(n)->buffer);
    });
    return out;
}

std::vector<std::vector<Expr>> load_indices(const Block* b, const Buffer& buf) {
    std::vector<std::vector<Expr>> out;
    walk_block(b, [&](const Object* n) {
        if (n->node_type == NodeType::BufferLoad) {
            auto* l = static_cast<const BufferLoad*>(n);
            if (l->buffer.same_as(buf)) out.push_back(l->indices);
        }
    });
    return out;
}

bool uses_any_var(const Expr& e, const std::set<const Variable*>& vars) {
    bool found = false;
    post_order_visit(Evaluate::make(e), [&](const Object* n) {
        if (n->node_type == NodeType::Variable && vars.count(static_cast<const Variable*>(n)))
            found = true;
    });
    return found;
}


// True when v appears in e as a term of a sum (with a constant factor), so
// that different values of v give different values of e: v is not only under
// a division, modulo, min or max. Conservative.
bool distinct_in(const std::vector<Expr>& bindings, const Variable* v) {
    std::set<int64_t> divs, mods;
    for (const Expr& e : bindings) {
        if (used_linearly(e, v)) return true;
        post_order_visit(Evaluate::make(e), [&](const Object* n) {
            if (n->node_type == NodeType::FloorDiv) {
                auto* d = static_cast<const FloorDiv*>(n);
                if (d->a.as<Variable>() == v && as_const_int(d->b)) divs.insert(*as_const_int(d->b));
            } else if (n->node_type == NodeType::FloorMod) {
                auto* m = static_cast<const FloorMod*>(n);
                if (m->a.as<Variable>() == v && as_const_int(m->b)) mods.insert(*as_const_int(m->b));
            }
        });
    }
    for (int64_t c : mods)
        if (divs.count(c)) return true;
    return false;
}

bool used_linearly(const Expr& e, const Variable* v) {
    if (e.as<Variable>()) return e.as<Variable>() == v;
    if (const Add* a = e.as<Add>()) return used_linearly(a->a, v) || used_linearly(a->b, v);
    if (const Sub* a = e.as<Sub>()) return used_linearly(a->a, v) || used_linearly(a->b, v);
    if (const Mul* m = e.as<Mul>()) {
        if (const int64_t* c = as_const_int(m->b)) return *c != 0 && used_linearly(m->a, v);
        if (const int64_t* c = as_const_int(m->a)) return *c != 0 && used_linearly(m->b, v);
    }
    return false;
}


namespace {
// Loads/stores by buffer; loads under a Select branch count as the whole buffer.
class AccessCollector : public IRVisitor {
public:
    std::vector<Buffer> reads, writes;
    std::map<const BufferNode*, std::vector<std::vector<Expr>>> acc;
    std::set<const BufferNode*> whole;

protected:
    using IRVisitor::visit;
    void visit(const BufferLoad* op) override {
        add_unique(reads, op->buffer);
        acc[op->buffer.get()].push_back(op->indices);
        if (m_guard) whole.insert(op->buffer.get());
        IRVisitor::visit(op);
    }
    void visit(const BufferStore* op) override {
        add_unique(writes, op->buffer);
        acc[op->buffer.get()].push_back(op->indices);
        IRVisitor::visit(op);
    }
    void visit(const Select* op) override {
        visit_expr(op->condition);
        ++m_guard;
        visit_expr(op->true_value);
        visit_expr(op->false_value);
        --m_guard;
    }

private:
    int m_guard = 0;
};

BufferRegion region_of(const Buffer& b, const AccessCollector& c) {
    BufferRegion r{b, {}};
    const auto& list = c.acc.at(b.get());
    bool same = !c.whole.count(b.get());
    for (const auto& a : list)
        for (size_t i = 0; same && i < a.size(); ++i)
            if (a.size() != list[0].size() || !structural_equal(a[i], list[0][i])) same = false;
    if (same) {
        for (const Expr& i : list[0]) r.region.push_back(Range{i, Expr(1)});
    } else {
        for (const Expr& d : b->shape) r.region.push_back(Range{Expr(0), d});
    }
    return r;
}
}  // namespace

Stmt with_regions(const Block* b, Stmt init, Stmt body, std::vector<IterVar> iter_vars,
                  std::string name) {
    AccessCollector c;
    if (init.defined()) c.visit_stmt(init);
    c.visit_stmt(body);
    std::vector<BufferRegion> reads, writes;
    for (const Buffer& x : c.reads) reads.push_back(region_of(x, c));
    for (const Buffer& x : c.writes) writes.push_back(region_of(x, c));
    return Block::make(std::move(name), std::move(iter_vars), reads, writes, std::move(init),
                       std::move(body), b->alloc_buffers, b->annotations);
}

Expr simp(const Expr& e) { return simplify(e); }
Expr int_const(int64_t v) { return IntImm::make(DataType::int64(), v); }
bool is_true(const Expr& e) { return !e.defined() || is_const_int(simplify(e), 1); }

// ---------------------------------------------------------------- bounds

Interval relax(const Expr& e, const std::map<const Variable*, Interval>& dom) {
    // arith::eval_set over the variables' ranges: the engine's one bounds analysis.
    std::map<const Variable*, Range> ranges;
    for (const auto& [v, iv] : dom) {
        if (!iv.ok()) return {};
        ranges[v] = Range{iv.lo, simp(iv.hi - iv.lo + int_const(1))};
    }
    arith::Analyzer ana;
    const arith::IntSet set = arith::eval_set(e, ranges, ana);
    if (!set.bounded()) return {};
    return {simp(set.min), simp(set.max)};
}

std::optional<int64_t> const_diff(const Expr& a, const Expr& b) {
    arith::LinearForm l = arith::to_linear(simp(a));
    l.add(arith::to_linear(simp(b)), -1);
    for (const arith::LinearTerm& term : l.terms)
        if (term.coeff != 0) return std::nullopt;
    return l.constant;
}

namespace {

// True when every variable of e is in `vars`.
bool free_vars_within(const Expr& e, const std::set<const Variable*>& vars) {
    struct Finder : IRVisitor {
        const std::set<const Variable*>* allowed = nullptr;
        bool outside = false;
        using IRVisitor::visit;
        void visit(const Variable* op) override { outside |= !allowed->count(op); }
    } finder;
    finder.allowed = &vars;
    finder.visit_expr(e);
    return !finder.outside;
}

}  // namespace

std::optional<std::pair<int64_t, int64_t>> num_bound(
    const Expr& e, const std::map<const Variable*, std::pair<int64_t, int64_t>>& env) {
    // arith's constant bounds with the variables bound; a free variable fails.
    std::set<const Variable*> bound;
    for (const auto& [v, r] : env) bound.insert(v);
    if (!free_vars_within(e, bound)) return std::nullopt;
    arith::Analyzer ana;
    for (const auto& [v, r] : env) ana.bind(Var(v), arith::ConstIntBound{r.first, r.second});
    const arith::ConstIntBound b = ana.const_int_bound(e);
    if (!b.bounded()) return std::nullopt;
    return std::pair{b.min_value, b.max_value};
}

std::map<const Variable*, std::pair<int64_t, int64_t>> loop_env(const Path& path) {
    std::map<const Variable*, std::pair<int64_t, int64_t>> env;
    for (const Stmt& s : path) {
        const For* f = s.as<For>();
        if (!f) continue;
        auto mn = num_bound(f->min, env), ext = num_bound(f->extent, env);
        if (!mn || !ext) continue;
        env[f->loop_var.get()] = {mn->first, mn->second + ext->second - 1};
    }
    return env;
}

}  // namespace tessera::schedule::detail
