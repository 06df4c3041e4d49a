// Read-only queries over PrimFuncs used by schedule rules and the autotuner.
#include "engine/schedule/query.h"

#include <algorithm>
#include <memory>

#include "engine/arith/analyzer.h"
#include "engine/schedule/schedule_util.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"

namespace tessera::schedule {

const tir::Block* find_block(const tir::PrimFunc& f, const std::string& name) {
    const tir::Block* found = nullptr;
    tir::post_order_visit(f->body, [&](const tir::Object* o) {
        if (o->node_type == tir::NodeType::Block) {
            auto* b = static_cast<const tir::Block*>(o);
            if (b->name == name) found = b;
        }
    });
    return found;
}

int64_t loop_extent(const tir::PrimFunc& f, const std::string& loop) {
    int64_t ext = -1;
    tir::post_order_visit(f->body, [&](const tir::Object* o) {
        if (o->node_type == tir::NodeType::For) {
            auto* l = static_cast<const tir::For*>(o);
            if (l->loop_var.name() == loop) {
                const int64_t* c = tir::as_const_int(l->extent);
                ext = c ? *c : -1;
            }
        }
    });
    return ext;
}

std::string kind_dropped_by(const tir::PrimFunc& f, const Step& step) {
    if (step.op != "split" && step.op != "fuse") return {};
    for (const std::string& loop : step.loops) {
        const std::optional<detail::Path> path = detail::find_loop(f->body, loop);
        const tir::For* l = path ? path->back().as<tir::For>() : nullptr;
        if (!l || l->kind == tir::ForKind::Serial) continue;
        const std::string kind = l->kind == tir::ForKind::ThreadBinding
                                     ? "bound to " + l->thread_tag
                                 : l->kind == tir::ForKind::Unrolled ? "unrolled"
                                                                     : tir::for_kind_name(l->kind);
        return "loop '" + loop + "' was " + kind + ": " +
               (step.op == "split" ? "its parts are serial; mark one of them again"
                                   : "the fused loop is serial; mark it again");
    }
    return {};
}

bool is_reduction(const tir::Block* b) {
    for (const tir::IterVar& iv : b->iter_vars)
        if (iv.kind == tir::IterKind::Reduce) return true;
    return false;
}

int64_t work(const Schedule& s, const std::vector<std::string>& loops) {
    int64_t w = 1;
    for (const std::string& l : loops) w *= std::max<int64_t>(loop_extent(s.func(), l), 1);
    return w;
}

std::optional<int64_t> element_step(const tir::Block* b, const tir::BufferLoad* load,
                                    const tir::Var& var) {
    tir::Expr offset = tir::Expr(int64_t(0));
    for (size_t d = 0; d < load->indices.size(); ++d) {
        const int64_t* extent = tir::as_const_int(load->buffer->shape[d]);
        if (!extent) return std::nullopt;
        offset = offset * tir::Expr(*extent) + load->indices[d];
    }
    arith::Analyzer ana;
    std::vector<std::unique_ptr<arith::ScopedBind>> bounds;
    for (const tir::IterVar& iv : b->iter_vars)
        bounds.push_back(std::make_unique<arith::ScopedBind>(ana, iv.var, iv.dom));
    const tir::Expr moved = tir::substitute(offset, {{var.get(), var + tir::Expr(int64_t(1))}});
    const tir::Expr delta = ana.simplify(moved - offset);
    if (const int64_t* d = tir::as_const_int(delta)) return *d;
    return std::nullopt;
}

}  // namespace tessera::schedule
