// Default GPU schedule: fuse each stage's spatial loops, split the fused
// loop into blockIdx.x x threadIdx.x, keep reductions serial per thread.
#include "engine/topi/schedule_gpu.h"

#include <set>

#include "engine/core/error.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"
#include "engine/topi/schedule_gpu_rules.h"
#include "engine/topi/topi.h"

namespace tessera::topi {

using namespace tir;

namespace {

bool has_thread_binding(const Stmt& s) {
    bool found = false;
    post_order_visit(s, [&](const Object* n) {
        if (n->node_type == NodeType::For &&
            static_cast<const For*>(n)->kind == ForKind::ThreadBinding)
            found = true;
    });
    return found;
}

std::set<const Variable*> vars_of(const Expr& e) {
    std::set<const Variable*> vs;
    post_order_visit(Evaluate::make(e), [&](const Object* n) {
        if (n->node_type == NodeType::Variable) vs.insert(static_cast<const Variable*>(n));
    });
    return vs;
}

// One stage: For chain around a BlockRealize.
Stmt bind_stage(const Stmt& nest, const GpuScheduleOptions& opt) {
    gpu_rules::Stage stage;
    if (opt.tiled_rules && gpu_rules::analyze_stage(nest, stage)) {
        if (Stmt r = gpu_rules::gemm_stage(stage); r.defined()) return r;
        if (Stmt r = gpu_rules::block_reduce_stage(stage, opt.block_reduce_min_extent); r.defined())
            return r;
    }
    std::vector<const For*> loops;
    Stmt s = nest;
    while (const For* f = s.as<For>()) {
        loops.push_back(f);
        s = f->body;
    }
    const BlockRealize* br = s.as<BlockRealize>();
    if (!br || loops.empty()) return nest;
    const Block* block = br->block_node();
    std::set<const Variable*> reduce_vars;
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
        if (block->iter_vars[i].kind == IterKind::Spatial) continue;
        auto vs = vars_of(br->iter_values[i]);
        reduce_vars.insert(vs.begin(), vs.end());
    }
    // The outer spatial loops with constant extents from 0.
    size_t n = 0;
    int64_t total = 1;
    std::vector<int64_t> extents;
    for (const For* f : loops) {
        const int64_t* ext = as_const_int(f->extent);
        if (reduce_vars.count(f->loop_var.get()) || !ext || !is_const_int(f->min, 0) ||
            f->kind != ForKind::Serial)
            break;
        extents.push_back(*ext);
        total *= *ext;
        ++n;
    }
    if (n == 0 || total <= 0) return nest;

    int64_t threads = std::min<int64_t>(opt.threads_per_block, total);
    int64_t blocks = (total + threads - 1) / threads;
    std::string base;
    for (size_t i = 0; i < n; ++i) base += loops[i]->loop_var.name() + "_";
    Var bx(base + "fused_0"), tx(base + "fused_1");
    // The original loop variables stay, defined from the fused index, so
    // the generated code reads like the loop nest it came from.
    Var fv(base + "fused");
    Expr fused = blocks == 1 ? Expr(tx) : bx * Expr(threads) + tx;
    Stmt body = loops[n - 1]->body;
    int64_t stride = 1;
    std::vector<Expr> values(n);
    for (size_t i = n; i-- > 0;) {
        Expr v = stride == 1 ? Expr(fv) : floordiv(fv, Expr(stride));
        if (i > 0) v = floormod(v, Expr(extents[i]));
        if (extents[i] == 1) v = Expr(int64_t(0));
        values[i] = v;
        stride *= extents[i];
    }
    for (size_t i = n; i-- > 0;) body = LetStmt::make(loops[i]->loop_var, values[i], body);
    if (blocks * threads != total) body = IfThenElse::make(fv < Expr(total), body);
    body = LetStmt::make(fv, fused, body);
    body =
        For::make(tx, Expr(int64_t(0)), Expr(threads), ForKind::ThreadBinding, body, "threadIdx.x");
    if (blocks == 1) return body;  // one block: no blockIdx.x loop
    return For::make(bx, Expr(int64_t(0)), Expr(blocks), ForKind::ThreadBinding, body,
                     "blockIdx.x");
}

}  // namespace

PrimFunc schedule_gpu_default(const PrimFunc& f, const GpuScheduleOptions& options) {
    TS_CHECK(f.defined()) << "schedule_gpu_default: undefined function";
    if (has_thread_binding(f->body)) return f;
    const BlockRealize* root_br = f->body.as<BlockRealize>();
    const Block* root = root_br ? root_br->block_node() : nullptr;
    TS_CHECK(root && root->iter_vars.empty())
        << "schedule_gpu_default: function '" << f->name << "' has no root block";
    std::vector<Stmt> stages;
    if (const SeqStmt* seq = root->body.as<SeqStmt>()) {
        for (const Stmt& c : seq->seq) stages.push_back(bind_stage(c, options));
    } else {
        stages.push_back(bind_stage(root->body, options));
    }
    Stmt block = Block::make(root->name, root->iter_vars, root->reads, root->writes, root->init,
                             SeqStmt::make(stages), root->alloc_buffers, root->annotations);
    return f.with_body(BlockRealize::make(root_br->iter_values, root_br->predicate, block));
}

PrimFunc lower_node_gpu(const graph::Graph& g, int node, const GpuScheduleOptions& options) {
    return schedule_gpu_default(lower_node(g, node), options);
}

}  // namespace tessera::topi
