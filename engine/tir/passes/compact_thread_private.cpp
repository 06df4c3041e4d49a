// Per-thread register arrays indexed by the thread variable lose that index.
#include "engine/tir/passes/compact_thread_private.h"

#include <map>
#include <set>

#include "engine/tir/functor.h"
#include "engine/tir/op.h"

namespace tessera::tir {

namespace {

struct ThreadVar {
    std::string tag;
    int64_t extent = 0;
};

struct Usage {
    bool ok = true;
    std::string tag;
};

class Shrink : public IRMutator {
public:
    explicit Shrink(std::map<const BufferNode*, Buffer> to) : m_to(std::move(to)) {}

protected:
    using IRMutator::visit;
    Expr visit(const BufferLoad* op) override {
        Expr e = IRMutator::visit(op);
        const BufferLoad* l = e.as<BufferLoad>();
        auto it = m_to.find(l->buffer.get());
        if (it == m_to.end()) return e;
        return BufferLoad::make(it->second,
                                std::vector<Expr>(l->indices.begin() + 1, l->indices.end()));
    }
    Stmt visit(const BufferStore* op) override {
        Stmt s = IRMutator::visit(op);
        const BufferStore* st = s.as<BufferStore>();
        auto it = m_to.find(st->buffer.get());
        if (it == m_to.end()) return s;
        return BufferStore::make(it->second, st->value,
                                 std::vector<Expr>(st->indices.begin() + 1, st->indices.end()));
    }
    Stmt visit(const Allocate* op) override {
        Stmt body = mutate(op->body);
        auto it = m_to.find(op->buffer.get());
        if (it != m_to.end()) return Allocate::make(it->second, body);
        return body.same_as(op->body) ? Stmt(op) : Allocate::make(op->buffer, body);
    }

private:
    std::map<const BufferNode*, Buffer> m_to;
};

}  // namespace

Stmt compact_thread_private(const Stmt& s) {
    std::map<const Variable*, ThreadVar> tvars;
    std::map<const BufferNode*, Buffer> allocated;
    post_order_visit(s, [&](const Object* n) {
        if (n->node_type == NodeType::For) {
            auto* f = static_cast<const For*>(n);
            const int64_t* ext = as_const_int(f->extent);
            if (f->kind == ForKind::ThreadBinding && ext && is_const_int(f->min, 0) &&
                f->thread_tag.rfind("threadIdx.", 0) == 0)
                tvars[f->loop_var.get()] = {f->thread_tag, *ext};
        } else if (n->node_type == NodeType::Allocate) {
            auto* a = static_cast<const Allocate*>(n);
            if (a->buffer->scope == "local" && a->buffer->shape.size() >= 2)
                allocated[a->buffer.get()] = a->buffer;
        }
    });
    std::map<const BufferNode*, Usage> usage;
    auto check = [&](const Buffer& b, const std::vector<Expr>& idx) {
        if (!allocated.count(b.get())) return;
        Usage& u = usage[b.get()];
        const Variable* v = idx.empty() ? nullptr : idx[0].as<Variable>();
        auto it = v ? tvars.find(v) : tvars.end();
        const int64_t* dim = as_const_int(b->shape[0]);
        if (it == tvars.end() || !dim || *dim != it->second.extent ||
            (!u.tag.empty() && u.tag != it->second.tag)) {
            u.ok = false;
            return;
        }
        u.tag = it->second.tag;
    };
    post_order_visit(s, [&](const Object* n) {
        if (n->node_type == NodeType::BufferLoad) {
            auto* l = static_cast<const BufferLoad*>(n);
            check(l->buffer, l->indices);
        } else if (n->node_type == NodeType::BufferStore) {
            auto* st = static_cast<const BufferStore*>(n);
            check(st->buffer, st->indices);
        }
    });
    std::map<const BufferNode*, Buffer> to;
    for (const auto& [node, u] : usage) {
        if (!u.ok) continue;
        const Buffer& b = allocated[node];
        std::vector<Expr> shape(b->shape.begin() + 1, b->shape.end());
        to[node] = Buffer(b->name, b->dtype, shape, b->scope);
    }
    if (to.empty()) return s;
    return Shrink(std::move(to)).mutate(s);
}

PrimFunc compact_thread_private(const PrimFunc& f) {
    Stmt body = compact_thread_private(f->body);
    return body.same_as(f->body) ? f : f.with_body(body);
}

}  // namespace tessera::tir
