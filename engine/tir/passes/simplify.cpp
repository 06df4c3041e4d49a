// Loop-IR simplification: delegates to arith::Analyzer.
#include "engine/tir/passes/simplify.h"

#include "engine/arith/analyzer.h"
#include "engine/arith/stmt_simplify.h"

namespace tessera::tir {

Expr simplify(const Expr& e) {
    arith::Analyzer ana;
    return ana.simplify(e);
}

Stmt simplify(const Stmt& s) {
    arith::Analyzer ana;
    return arith::simplify_stmt(s, ana, true);
}
PrimFunc simplify(const PrimFunc& f) {
    Stmt body = simplify(f->body);
    return body.same_as(f->body) ? f : f.with_body(body);
}

}  // namespace tessera::tir
