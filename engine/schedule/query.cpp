// Read-only queries over PrimFuncs used by schedule rules and the autotuner.
#include "engine/schedule/query.h"

#include <algorithm>

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

}  // namespace tessera::schedule
