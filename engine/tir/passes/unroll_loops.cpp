// unroll_loops: Unrolled / pragma_unroll_explicit loops -> copies of the body.
#include "engine/tir/passes/unroll_loops.h"

#include "engine/tir/functor.h"
#include "engine/tir/op.h"
#include "engine/tir/passes/simplify.h"

namespace tessera::tir {
namespace {

bool wants_unroll(const For* op) {
    if (op->kind == ForKind::Unrolled) return true;
    auto it = op->annotations.find("pragma_unroll_explicit");
    return it != op->annotations.end() && it->second != "0" && it->second != "false";
}

class Unroller : public IRMutator {
protected:
    using IRMutator::visit;

    Stmt visit(const For* op) override {
        Stmt s = IRMutator::visit(op);  // inner loops first
        const For* loop = s.as<For>();
        if (!loop || !wants_unroll(loop)) return s;
        const int64_t* ext = as_const_int(loop->extent);
        if (!ext || *ext > kMaxUnrollExtent || *ext < 0) {
            std::map<std::string, std::string> ann = loop->annotations;
            ann.erase("pragma_unroll_explicit");
            ForKind kind = loop->kind == ForKind::Unrolled ? ForKind::Serial : loop->kind;
            return For::make(loop->loop_var, loop->min, loop->extent, kind, loop->body,
                             loop->thread_tag, ann);
        }
        std::vector<Stmt> copies;
        for (int64_t i = 0; i < *ext; ++i) {
            Expr value = simplify(loop->min + Expr(i));
            if (value.dtype() != loop->loop_var.dtype())
                value = Cast::make(loop->loop_var.dtype(), value);
            copies.push_back(simplify(substitute(loop->body, {{loop->loop_var.get(), value}})));
        }
        if (copies.empty()) return Evaluate::make(Expr(0));
        return SeqStmt::make(std::move(copies));
    }
};

}  // namespace

PrimFunc unroll_loops(const PrimFunc& f) {
    Stmt body = Unroller().mutate(f->body);
    return body.same_as(f->body) ? f : f.with_body(body);
}

}  // namespace tessera::tir
