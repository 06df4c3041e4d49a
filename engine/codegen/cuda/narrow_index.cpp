// Narrowing of index arithmetic to int32: loop/let variables first, then
// every expression bottom-up, with casts where 32-bit indices meet 64-bit data.
#include "engine/codegen/cuda/narrow_index.h"

#include <limits>
#include <map>

#include "engine/tir/functor.h"
#include "engine/tir/op.h"

namespace tessera::codegen {

using namespace tir;

namespace {

constexpr int64_t kMax32 = std::numeric_limits<int32_t>::max();

bool fits32(int64_t v) { return v >= -kMax32 - 1 && v <= kMax32; }

bool is_i64(DataType t) { return t.code == DataType::Int && t.bits == 64; }
bool is_i32(DataType t) { return t.code == DataType::Int && t.bits == 32; }

class Narrow : public IRMutator {
protected:
    Expr visit(const Variable* op) override {
        auto it = m_vars.find(op);
        return it != m_vars.end() ? Expr(it->second) : IRMutator::visit(op);
    }

    // Same type for both operands: an int32 side widens unless the other is
    // an int64 constant that fits (then the constant narrows).
    std::pair<Expr, Expr> unify(Expr a, Expr b) {
        DataType ta = a.dtype(), tb = b.dtype();
        if (ta == tb) return {a, b};
        if (is_i32(ta) && is_i64(tb)) {
            const IntImm* c = b.as<IntImm>();
            if (c && fits32(c->value)) return {a, IntImm::make(ta, c->value)};
            return {Cast::make(tb, a), b};
        }
        if (is_i64(ta) && is_i32(tb)) {
            auto [y, x] = unify(b, a);
            return {x, y};
        }
        return {a, b};
    }

#define TS_X(N)                                                    \
    Expr visit(const N* op) override {                             \
        auto [a, b] = unify(mutate(op->a), mutate(op->b));         \
        if (a.same_as(op->a) && b.same_as(op->b)) return Expr(op); \
        return N::make(a, b);                                      \
    }
    TS_TIR_BINARY_NODES(TS_X)
#undef TS_X

    Expr visit(const Select* op) override {
        Expr c = mutate(op->condition);
        auto [t, f] = unify(mutate(op->true_value), mutate(op->false_value));
        return Select::make(c, t, f);
    }

    Expr visit(const Call* op) override {
        std::vector<Expr> args;
        for (const Expr& a : op->args) args.push_back(keep_type(mutate(a), a.dtype()));
        return Call::make(op->dtype, op->op, args);
    }

    Expr visit(const Ramp* op) override {
        auto [base, stride] = unify(mutate(op->base), mutate(op->stride));
        return Ramp::make(base, stride, op->lanes);
    }

    Expr visit(const Let* op) override {  // rare in kernels: keep the variable's type
        Expr v = keep_type(mutate(op->value), op->value.dtype());
        return Let::make(op->var, v, mutate(op->body));
    }

    Stmt visit(const For* op) override {
        const int64_t* mn = as_const_int(op->min);
        const int64_t* ext = as_const_int(op->extent);
        if (!is_i64(op->loop_var.dtype()) || op->loop_var.dtype().lanes != 1 || !mn || !ext ||
            !fits32(*mn) || !fits32(*mn + *ext))
            return IRMutator::visit(op);
        Var v(op->loop_var.name(), DataType::int32());
        m_vars[op->loop_var.get()] = v;
        Stmt body = mutate(op->body);
        return For::make(v, IntImm::make(DataType::int32(), *mn),
                         IntImm::make(DataType::int32(), *ext), op->kind, body, op->thread_tag,
                         op->annotations);
    }

    Stmt visit(const LetStmt* op) override {
        Expr value = mutate(op->value);
        if (is_i64(op->var.dtype()) && is_i32(value.dtype())) {
            Var v(op->var.name(), DataType::int32());
            m_vars[op->var.get()] = v;
            return LetStmt::make(v, value, mutate(op->body));
        }
        return LetStmt::make(op->var, keep_type(value, op->value.dtype()), mutate(op->body));
    }

    Stmt visit(const BufferStore* op) override {
        std::vector<Expr> idx;
        for (const Expr& i : op->indices) idx.push_back(mutate(i));
        return BufferStore::make(op->buffer, keep_type(mutate(op->value), op->value.dtype()), idx);
    }

private:
    static Expr keep_type(const Expr& e, DataType t) {
        return e.dtype() == t ? e : Cast::make(t, e);
    }

    std::map<const Variable*, Var> m_vars;
};

}  // namespace

bool fits_int32_indices(const Stmt& body, const std::vector<Buffer>& args,
                        const std::array<int64_t, 3>& grid, const std::array<int64_t, 3>& block) {
    bool ok = true;
    auto check_buffer = [&](const Buffer& b) {
        int64_t n = 1;
        for (int64_t d : b.const_shape()) {
            if (d < 0 || (d > 0 && n > kMax32 / d)) {
                ok = false;
                return;
            }
            n *= d;
        }
    };
    for (const Buffer& b : args) check_buffer(b);
    post_order_visit(body, [&](const Object* n) {
        if (n->node_type == NodeType::BufferLoad)
            check_buffer(static_cast<const BufferLoad*>(n)->buffer);
        if (n->node_type == NodeType::BufferStore)
            check_buffer(static_cast<const BufferStore*>(n)->buffer);
        if (n->node_type == NodeType::Allocate)
            check_buffer(static_cast<const Allocate*>(n)->buffer);
        if (n->node_type == NodeType::For) {
            const For* f = static_cast<const For*>(n);
            const int64_t* mn = as_const_int(f->min);
            const int64_t* ext = as_const_int(f->extent);
            if (!mn || !ext || !fits32(*mn) || !fits32(*mn + *ext)) ok = false;
        }
    });
    int64_t threads = 1;
    for (int64_t d : grid) threads *= d;
    for (int64_t d : block) threads *= d;
    return ok && threads <= kMax32;
}

Stmt narrow_index_types(const Stmt& body) { return Narrow().mutate(body); }

}  // namespace tessera::codegen
