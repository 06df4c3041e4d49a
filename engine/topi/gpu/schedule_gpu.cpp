// Default GPU schedule: fuse each stage's spatial loops, split the fused
// loop into blockIdx.x x threadIdx.x, keep reductions serial per thread.
#include "engine/topi/gpu/schedule_gpu.h"

#include <algorithm>
#include <set>

#include "engine/core/error.h"
#include "engine/schedule/schedule.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"
#include "engine/topi/gpu/schedule_gpu_rules.h"
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

// The For chain of a stage and its BlockRealize (null when not that shape).
const BlockRealize* stage_loops(const Stmt& nest, std::vector<const For*>& loops) {
    Stmt s = nest;
    while (const For* f = s.as<For>()) {
        loops.push_back(f);
        s = f->body;
    }
    return s.as<BlockRealize>();
}

// The block vars of a block that stores at exactly them, in order.
bool identity_store(const Block* b, const std::vector<Expr>& indices, std::vector<Var>& vars) {
    if (indices.size() != b->iter_vars.size()) return false;
    for (size_t i = 0; i < indices.size(); ++i) {
        if (indices[i].get() != b->iter_vars[i].var.get()) return false;
        vars.push_back(b->iter_vars[i].var);
    }
    return true;
}

// Whether `next` is an elementwise stage over the output of the reduction
// stage `red` (same extents, identity indices, reading it only at its own
// point), and `red`'s output is read by nothing else and is no parameter.
bool find_epilogue(const PrimFunc& f, const Stmt& red, const Stmt& next,
                   const std::vector<Stmt>& later, gpu_rules::Epilogue& ep) {
    gpu_rules::Stage st;
    if (!gpu_rules::analyze_stage(red, st)) return false;
    const Buffer& c = st.update->buffer;
    for (const Buffer& p : f->params)
        if (p.same_as(c)) return false;
    if (st.update->indices.size() != st.spatial.size()) return false;
    for (size_t i = 0; i < st.spatial.size(); ++i)
        if (st.update->indices[i].get() != st.spatial[i].var.get()) return false;
    std::vector<const For*> loops;
    const BlockRealize* br = stage_loops(next, loops);
    if (!br || (br->predicate.defined() && !is_const_int(br->predicate, 1))) return false;
    const Block* b = br->block_node();
    const BufferStore* store = b->body.as<BufferStore>();
    if (!store || b->init.defined() || !b->alloc_buffers.empty() ||
        loops.size() != b->iter_vars.size() || loops.size() != st.spatial.size())
        return false;
    for (size_t i = 0; i < loops.size(); ++i) {
        const IterVar& iv = b->iter_vars[i];
        const int64_t* e = as_const_int(iv.dom.extent);
        const int64_t* ce = as_const_int(st.spatial[i].dom.extent);
        if (iv.kind != IterKind::Spatial || !e || !ce || *e != *ce ||
            br->iter_values[i].get() != loops[i]->loop_var.get() ||
            !is_const_int(loops[i]->min, 0) || loops[i]->kind != ForKind::Serial)
            return false;
    }
    std::vector<Var> vars;
    if (!identity_store(b, store->indices, vars)) return false;
    bool ok = true;
    post_order_visit(Evaluate::make(store->value), [&](const Object* n) {
        if (n->node_type != NodeType::BufferLoad) return;
        const auto* l = static_cast<const BufferLoad*>(n);
        if (l->buffer.same_as(store->buffer)) ok = false;
        if (!l->buffer.same_as(c)) return;
        if (l->indices.size() != vars.size()) ok = false;
        for (size_t i = 0; ok && i < vars.size(); ++i)
            if (l->indices[i].get() != vars[i].get()) ok = false;
    });
    for (const Stmt& s : later)
        post_order_visit(s, [&](const Object* n) {
            if (n->node_type == NodeType::BufferLoad &&
                static_cast<const BufferLoad*>(n)->buffer.same_as(c))
                ok = false;
        });
    if (!ok) return false;
    ep = {c, store->buffer, vars, store->value};
    return true;
}

// One stage: For chain around a BlockRealize. With an epilogue, `fused`
// says whether the stage took it (else the caller binds it on its own).
Stmt bind_stage(const Stmt& nest, const GpuScheduleOptions& opt,
                const gpu_rules::Epilogue* ep = nullptr, bool* took_epilogue = nullptr) {
    if (took_epilogue) *took_epilogue = false;
    gpu_rules::Stage stage;
    if (opt.tiled_rules && gpu_rules::analyze_stage(nest, stage)) {
        if (Stmt r = gpu_rules::gemm_stage(stage, ep, opt.gemm_min_blocks); r.defined()) {
            if (took_epilogue) *took_epilogue = ep != nullptr;
            return r;
        }
        if (Stmt r = gpu_rules::block_reduce_stage(stage, opt.block_reduce_min_extent, ep);
            r.defined()) {
            if (took_epilogue) *took_epilogue = ep != nullptr;
            return r;
        }
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
    if (ep && n == ep->vars.size()) {  // every spatial loop fused: the thread owns one output
        std::vector<Expr> idx;
        for (size_t i = 0; i < n; ++i) idx.push_back(loops[i]->loop_var);
        const Buffer& c = ep->in;
        body = SeqStmt::make({body, gpu_rules::epilogue_store(*ep, idx, BufferLoad::make(c, idx))});
        if (took_epilogue) *took_epilogue = true;
    }
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

namespace {

constexpr int64_t kMaxInlinedNodes = 4096;

// Expression nodes of `s`, counted as the tree codegen walks (at most `cap`).
int64_t tree_size(const Stmt& s, int64_t cap) {
    int64_t n = 0;
    post_order_visit(s, [&](const Object*) { n = std::min(n + 1, cap); });
    return n;
}

// Whether substituting block `name`'s value into every read keeps each
// reader under kMaxInlinedNodes: a stage lower_group computed into its own
// buffer because it is read many times per element (a tree ensemble's levels,
// each a gather indexed by the one before) would grow exponentially.
bool small_enough_to_inline(const PrimFunc& f, const std::string& name) {
    std::vector<const Block*> blocks;
    post_order_visit(f->body, [&](const Object* o) {
        if (o->node_type == NodeType::Block) blocks.push_back(static_cast<const Block*>(o));
    });
    const Block* stage = nullptr;
    for (const Block* b : blocks)
        if (b->name == name) stage = b;
    if (!stage || stage->writes.size() != 1) return true;  // compute_inline decides
    const BufferNode* buffer = stage->writes[0].buffer.get();
    const int64_t own = tree_size(stage->body, kMaxInlinedNodes + 1);
    for (const Block* b : blocks) {
        if (b == stage || !b->body.defined()) continue;
        int64_t reads = 0;
        post_order_visit(b->body, [&](const Object* o) {
            if (o->node_type == NodeType::BufferLoad &&
                static_cast<const BufferLoad*>(o)->buffer.get() == buffer)
                ++reads;
        });
        if (reads > 0 && tree_size(b->body, kMaxInlinedNodes + 1) + reads * own > kMaxInlinedNodes)
            return false;
    }
    return true;
}

}  // namespace

PrimFunc inline_spatial_stages(const PrimFunc& f) {
    schedule::Schedule s(f);
    for (const std::string& b : s.blocks()) {
        if (!small_enough_to_inline(s.func(), b)) continue;
        try {
            s.compute_inline(b);  // refuses outputs, reductions and non-injective blocks
        } catch (const schedule::ScheduleError&) {
        }
    }
    return s.func();
}

PrimFunc schedule_gpu_default(const PrimFunc& func, const GpuScheduleOptions& options) {
    TS_CHECK(func.defined()) << "schedule_gpu_default: undefined function";
    if (has_thread_binding(func->body)) return func;
    const PrimFunc f = options.inline_stages ? inline_spatial_stages(func) : func;
    const BlockRealize* root_br = f->body.as<BlockRealize>();
    const Block* root = root_br ? root_br->block_node() : nullptr;
    TS_CHECK(root && root->iter_vars.empty())
        << "schedule_gpu_default: function '" << f->name << "' has no root block";
    std::vector<Stmt> nests;
    if (const SeqStmt* seq = root->body.as<SeqStmt>()) {
        nests = seq->seq;
    } else {
        nests.push_back(root->body);
    }
    std::vector<Stmt> stages;
    for (size_t i = 0; i < nests.size(); ++i) {
        gpu_rules::Epilogue ep;
        std::vector<Stmt> later(nests.begin() + std::ptrdiff_t(std::min(i + 2, nests.size())),
                                nests.end());
        if (options.fuse_epilogues && i + 1 < nests.size() &&
            find_epilogue(f, nests[i], nests[i + 1], later, ep)) {
            bool fused = false;
            stages.push_back(bind_stage(nests[i], options, &ep, &fused));
            if (fused) {
                ++i;  // the epilogue runs in the reduction's kernel
                continue;
            }
            stages.back() = bind_stage(nests[i], options);
        } else {
            stages.push_back(bind_stage(nests[i], options));
        }
    }
    // A reduction whose epilogue took its results leaves its buffer unused.
    Stmt body = SeqStmt::make(stages);
    std::set<const void*> used;
    post_order_visit(body, [&](const Object* n) {
        if (n->node_type == NodeType::BufferLoad)
            used.insert(static_cast<const BufferLoad*>(n)->buffer.get());
        if (n->node_type == NodeType::BufferStore)
            used.insert(static_cast<const BufferStore*>(n)->buffer.get());
    });
    std::vector<Buffer> allocs;
    for (const Buffer& b : root->alloc_buffers)
        if (used.count(b.get())) allocs.push_back(b);
    Stmt block = Block::make(root->name, root->iter_vars, root->reads, root->writes, root->init,
                             body, allocs, root->annotations);
    return f.with_body(BlockRealize::make(root_br->iter_values, root_br->predicate, block));
}

PrimFunc lower_node_gpu(const graph::Graph& g, int node, const GpuScheduleOptions& options) {
    return schedule_gpu_default(lower_node(g, node), options);
}

}  // namespace tessera::topi
