// Vectorized loops as real vector code: the loop variable becomes a Ramp
// (base, 1, lanes), scalars meeting vectors are broadcast, and affine index
// arithmetic on Ramps folds back into Ramps, so contiguous accesses become
// plain vector loads and stores (other vector indices become gathers). Loops
// longer than two native vectors run as a serial loop of vector chunks plus
// a shorter vector tail. Bodies this cannot handle (an inner parallel or
// vectorized loop, an allocation, a condition or a let that depends on the
// lane, a store to a lane-independent location) fall back to a scalar loop
// with LLVM's loop-vectorizer hint.
#include "engine/codegen/llvm/codegen_llvm.h"
#include "engine/core/error.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"
#include "engine/tir/structural_equal.h"

namespace tessera::codegen {

using namespace tessera::tir;

namespace {

class Vectorizer : public IRMutator {
public:
    Vectorizer(const Variable* var, Expr base, int lanes)
        : m_var(var), m_base(base), m_lanes(lanes) {}
    bool ok = true;

    using IRMutator::mutate;

protected:
    using IRMutator::visit;

    Expr bcast(const Expr& e) const {
        return e.dtype().lanes == 1 ? Broadcast::make(e, m_lanes) : e;
    }

    Expr visit(const Variable* op) override {
        if (op == m_var) return Ramp::make(m_base, make_const(m_base.dtype(), 1), m_lanes);
        return IRMutator::visit(op);
    }

    // Affine folding keeps contiguous indices recognisable.
    static Expr fold_add(const Expr& a, const Expr& b, bool sub) {
        const Ramp* ra = a.as<Ramp>();
        const Ramp* rb = b.as<Ramp>();
        const Broadcast* ba = a.as<Broadcast>();
        const Broadcast* bb = b.as<Broadcast>();
        auto op = [&](Expr x, Expr y) { return sub ? Sub::make(x, y) : Add::make(x, y); };
        if (ra && bb) return Ramp::make(op(ra->base, bb->value), ra->stride, ra->lanes);
        if (ba && rb && !sub)
            return Ramp::make(Add::make(ba->value, rb->base), rb->stride, rb->lanes);
        if (ra && rb)
            return Ramp::make(op(ra->base, rb->base), op(ra->stride, rb->stride), ra->lanes);
        if (ba && bb) return Broadcast::make(op(ba->value, bb->value), ba->lanes);
        return op(a, b);
    }

    template <typename Node>
    Expr binary(const Node* op) {
        Expr a = mutate(op->a), b = mutate(op->b);
        if (a.same_as(op->a) && b.same_as(op->b)) return Expr(op);
        a = bcast(a);
        b = bcast(b);
        if constexpr (Node::kType == NodeType::Add) return fold_add(a, b, false);
        if constexpr (Node::kType == NodeType::Sub) return fold_add(a, b, true);
        if constexpr (Node::kType == NodeType::Mul) {
            const Ramp* ra = a.as<Ramp>();
            const Ramp* rb = b.as<Ramp>();
            const Broadcast* ba = a.as<Broadcast>();
            const Broadcast* bb = b.as<Broadcast>();
            if (ra && bb)
                return Ramp::make(Mul::make(ra->base, bb->value), Mul::make(ra->stride, bb->value),
                                  m_lanes);
            if (ba && rb)
                return Ramp::make(Mul::make(ba->value, rb->base), Mul::make(ba->value, rb->stride),
                                  m_lanes);
        }
        return Node::make(a, b);
    }

#define TS_X(N) \
    Expr visit(const N* op) override { return binary(op); }
    TS_TIR_BINARY_NODES(TS_X)
#undef TS_X

    Expr visit(const Not* op) override {
        Expr a = mutate(op->a);
        return a.same_as(op->a) ? Expr(op) : Not::make(a);
    }
    Expr visit(const Select* op) override {
        Expr c = mutate(op->condition), t = mutate(op->true_value), f = mutate(op->false_value);
        if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value))
            return Expr(op);
        return Select::make(c, bcast(t), bcast(f));
    }
    Expr visit(const Cast* op) override {
        Expr v = mutate(op->value);
        if (v.same_as(op->value)) return Expr(op);
        return Cast::make(op->dtype.with_lanes(v.dtype().lanes), v);
    }
    Expr visit(const Call* op) override {
        bool changed = false;
        std::vector<Expr> args = mutate_exprs(op->args, &changed);
        if (!changed) return Expr(op);
        for (Expr& a : args) a = bcast(a);
        return Call::make(op->dtype.with_lanes(m_lanes), op->op, args);
    }
    Expr visit(const BufferLoad* op) override {
        bool changed = false;
        std::vector<Expr> idx = mutate_exprs(op->indices, &changed);
        if (!changed) return Expr(op);
        return BufferLoad::make(op->buffer, idx);
    }
    Expr visit(const Let* op) override {
        Expr v = mutate(op->value);
        if (v.dtype().lanes > 1) ok = false;
        return IRMutator::visit(op);
    }
    Stmt visit(const LetStmt* op) override {
        Expr v = mutate(op->value);
        if (v.dtype().lanes > 1) ok = false;
        return IRMutator::visit(op);
    }
    Stmt visit(const BufferStore* op) override {
        bool changed = false;
        std::vector<Expr> idx = mutate_exprs(op->indices, &changed);
        Expr value = mutate(op->value);
        int lanes = 1;
        for (const Expr& i : idx) lanes = std::max<int>(lanes, i.dtype().lanes);
        if (lanes == 1) {
            // Every lane would write the same element: not a data-parallel store.
            if (!value.same_as(op->value)) ok = false;
            return Stmt(op);
        }
        return BufferStore::make(op->buffer, bcast(value), idx);
    }
    Stmt visit(const For* op) override {
        Expr mn = mutate(op->min), ext = mutate(op->extent);
        if (op->kind == ForKind::Parallel || op->kind == ForKind::Vectorized ||
            !mn.same_as(op->min) || !ext.same_as(op->extent))
            ok = false;
        return IRMutator::visit(op);
    }
    Stmt visit(const IfThenElse* op) override {
        Expr c = mutate(op->condition);
        if (!c.same_as(op->condition)) ok = false;
        return IRMutator::visit(op);
    }
    Stmt visit(const Allocate* op) override {
        ok = false;
        return Stmt(op);
    }

private:
    const Variable* m_var;
    Expr m_base;
    int m_lanes;
};

}  // namespace

bool CodeGenLLVM::emit_tree_reduction(const For* op) {
    const int64_t* cext = as_const_int(op->extent);
    if (op->kind != ForKind::Serial || !cext || *cext < 4 || *cext > 64 || (*cext & (*cext - 1)) ||
        !op->loop_var.dtype().is_int())
        return false;
    // The body: the update, or (a lowered block's init) the init guarded by
    // the first iteration, then the update.
    const BufferStore* init = nullptr;
    const BufferStore* st = op->body.as<BufferStore>();
    if (const SeqStmt* seq = op->body.as<SeqStmt>(); seq && seq->seq.size() == 2) {
        const IfThenElse* first = seq->seq[0].as<IfThenElse>();
        const EQ* cond = first ? first->condition.as<EQ>() : nullptr;
        if (!cond || first->else_case.defined() || cond->a.get() != op->loop_var.get() ||
            !structural_equal(cond->b, op->min))
            return false;
        init = first->then_case.as<BufferStore>();
        st = seq->seq[1].as<BufferStore>();
        if (!init || !st || !init->buffer.same_as(st->buffer) || init->indices.size() != 1 ||
            st->indices.size() != 1 || !structural_equal(init->indices[0], st->indices[0]) ||
            uses_var(init->value, op->loop_var.get()))
            return false;
    }
    if (!st || st->indices.size() != 1 || uses_var(st->indices[0], op->loop_var.get()))
        return false;
    const DataType t = st->value.dtype();
    if (t.lanes != 1 || !t.is_float() || st->buffer->dtype != t) return false;
    const NodeType kind = st->value.node_type();
    const Expr *a = nullptr, *b = nullptr;
    if (const Add* x = st->value.as<Add>()) a = &x->a, b = &x->b;
    if (const Max* x = st->value.as<Max>()) a = &x->a, b = &x->b;
    if (const Min* x = st->value.as<Min>()) a = &x->a, b = &x->b;
    if (!a) return false;
    auto is_acc = [&](const Expr& e) {
        const BufferLoad* l = e.as<BufferLoad>();
        return l && l->buffer.same_as(st->buffer) && l->indices.size() == 1 &&
               structural_equal(l->indices[0], st->indices[0]);
    };
    const Expr* x = is_acc(*a) ? b : is_acc(*b) ? a : nullptr;
    if (!x) return false;
    bool reads_acc = false;
    post_order_visit(Evaluate::make(*x), [&](const Object* n) {
        if (n->node_type == NodeType::BufferLoad &&
            static_cast<const BufferLoad*>(n)->buffer.same_as(st->buffer))
            reads_acc = true;
    });
    if (reads_acc) return false;
    const int lanes = int(*cext);
    Vectorizer v(op->loop_var.get(), op->min, lanes);
    const Expr vx = v.mutate(*x);
    if (!v.ok || vx.dtype().lanes != lanes) return false;
    if (init) emit_store(init);  // the first iteration always runs (N >= 4)
    llvm::Value* values = emit(vx);
    llvm::Value* acc = emit(BufferLoad::make(st->buffer, st->indices));
    llvm::Value* result = nullptr;
    if (kind == NodeType::Add) {
        // Reassociated as the rfactor that made the partial sums already is.
        llvm::IRBuilderBase::FastMathFlagGuard guard(m_b);
        llvm::FastMathFlags fmf = m_b.getFastMathFlags();
        fmf.setAllowReassoc();
        m_b.setFastMathFlags(fmf);
        result = m_b.CreateFAddReduce(acc, values);
    } else if (kind == NodeType::Max) {
        result = m_b.CreateMaxNum(acc, m_b.CreateFPMaxReduce(values));
    } else {
        result = m_b.CreateMinNum(acc, m_b.CreateFPMinReduce(values));
    }
    const BufferInfo& buf = buffer_info(st->buffer);
    int scalar = 0;
    llvm::Value* addr = element_address(buf, st->indices[0], &scalar);
    m_b.CreateAlignedStore(result, addr, llvm::Align(buf.dtype.bytes()));
    return true;
}

bool CodeGenLLVM::emit_vectorized(const For* op) {
    const int64_t* cext = as_const_int(op->extent);
    if (!cext || *cext < 2 || !op->loop_var.dtype().is_int()) return false;
    const int64_t extent = *cext;
    const int native = m_features.find("+avx512f") != std::string::npos ? 16
                       : m_features.find("+avx") != std::string::npos   ? 8
                                                                        : 4;
    const int64_t chunk = extent <= 4 * native ? extent : 2 * native;
    const int64_t chunks = extent / chunk, tail = extent % chunk;
    const DataType vt = op->loop_var.dtype();

    // Vectorize once to check the body is supported.
    auto vectorized = [&](Expr base, int lanes, bool* ok) {
        if (lanes == 1) return substitute(op->body, {{op->loop_var.get(), base}});
        Vectorizer v(op->loop_var.get(), base, lanes);
        Stmt s = v.mutate(op->body);
        *ok = v.ok;
        return s;
    };
    bool ok = true;
    Var c(op->loop_var.name() + ".c", vt);
    Expr chunk_base = op->min + c * make_const(vt, double(chunk));
    Stmt main_body = vectorized(chunk_base, int(chunk), &ok);
    Stmt tail_body;
    if (ok && tail > 0) {
        Expr tail_base = op->min + make_const(vt, double(chunks * chunk));
        tail_body = vectorized(tail_base, int(tail), &ok);
    }
    if (!ok) return false;
    ++m_vectorized_depth;
    if (chunks == 1) {
        bind_var(c, llvm::ConstantInt::get(llvm_type(vt), 0));
        emit(main_body);
        unbind_var(c);
    } else {
        emit(For::make(c, make_const(vt, 0), make_const(vt, double(chunks)), ForKind::Serial,
                       main_body));
    }
    if (tail_body.defined()) emit(tail_body);
    --m_vectorized_depth;
    return true;
}

}  // namespace tessera::codegen
