// Seeded random-trace generator and the workloads of the schedule property tests.
#include "tests/engine/schedule/random_schedule.h"

#include <cmath>
#include <random>
#include <stdexcept>

#include "engine/codegen/llvm/llvm_codegen.h"
#include "engine/schedule/schedule_util.h"
#include "engine/te/tensor.h"
#include "engine/tir/interpreter.h"
#include "engine/tir/op.h"
#include "engine/tir/printer.h"

namespace tessera::schedule::test {

using tir::DataType;
using tir::Expr;
using tir::IterVar;
using tir::Var;

namespace {

const DataType f32 = DataType::float32();

Expr clamp(Expr e, int64_t n) { return tir::min(tir::max(e, Expr(int64_t(0))), Expr(n - 1)); }

// Zero-padded (or `fill`-padded) NCHW tensor; indices clamped (select evaluates both sides).
te::Tensor pad_nchw(const te::Tensor& x, int64_t p, double fill) {
    auto s = x.shape();
    return te::compute(
        {s[0], s[1], s[2] + 2 * p, s[3] + 2 * p},
        [&](const std::vector<Var>& i) {
            Expr h = i[2] - p, w = i[3] - p;
            Expr in = h >= int64_t(0) && h < s[2] && w >= int64_t(0) && w < s[3];
            return tir::if_then_else(in, x(i[0], i[1], clamp(h, s[2]), clamp(w, s[3])),
                                     tir::make_const(f32, fill));
        },
        "pad");
}

Workload matmul() {
    te::Tensor A = te::placeholder({6, 7}, f32, "A"), B = te::placeholder({7, 5}, f32, "B");
    IterVar k = te::reduce_axis(7, "k");
    te::Tensor C = te::compute(
        {6, 5}, [&](auto i) { return te::sum(A(i[0], k.var) * B(k.var, i[1]), {k}); }, "C");
    return {"matmul", te::create_prim_func({A, B, C}, "matmul")};
}

Workload batch_matmul() {
    te::Tensor A = te::placeholder({2, 4, 5}, f32, "A"), B = te::placeholder({2, 5, 3}, f32, "B");
    IterVar k = te::reduce_axis(5, "k");
    te::Tensor C = te::compute(
        {2, 4, 3}, [&](auto i) { return te::sum(A(i[0], i[1], k.var) * B(i[0], k.var, i[2]), {k}); },
        "C");
    return {"batch_matmul", te::create_prim_func({A, B, C}, "batch_matmul")};
}

Workload conv2d() {
    te::Tensor X = te::placeholder({1, 2, 7, 7}, f32, "X"), W = te::placeholder({3, 2, 3, 3}, f32, "W");
    te::Tensor P = pad_nchw(X, 1, 0.0);
    IterVar rc = te::reduce_axis(2, "rc"), rh = te::reduce_axis(3, "rh"), rw = te::reduce_axis(3, "rw");
    te::Tensor C = te::compute(
        {1, 3, 4, 4},
        [&](auto i) {
            return te::sum(P(i[0], rc.var, i[2] * 2 + rh.var, i[3] * 2 + rw.var) *
                               W(i[1], rc.var, rh.var, rw.var),
                           {rc, rh, rw});
        },
        "conv");
    return {"conv2d", te::create_prim_func({X, W, C}, "conv2d")};
}

Workload depthwise() {
    te::Tensor X = te::placeholder({1, 3, 5, 5}, f32, "X"), W = te::placeholder({3, 1, 3, 3}, f32, "W");
    te::Tensor P = pad_nchw(X, 1, 0.0);
    IterVar rh = te::reduce_axis(3, "rh"), rw = te::reduce_axis(3, "rw");
    te::Tensor C = te::compute(
        {1, 3, 5, 5},
        [&](auto i) {
            return te::sum(P(i[0], i[1], i[2] + rh.var, i[3] + rw.var) * W(i[1], 0, rh.var, rw.var),
                           {rh, rw});
        },
        "dwconv");
    return {"depthwise_conv2d", te::create_prim_func({X, W, C}, "depthwise")};
}

Workload pooling() {
    te::Tensor X = te::placeholder({1, 2, 6, 6}, f32, "X");
    te::Tensor P = pad_nchw(X, 1, -1e30);
    IterVar rh = te::reduce_axis(3, "rh"), rw = te::reduce_axis(3, "rw");
    te::Tensor C = te::compute(
        {1, 2, 3, 3},
        [&](auto i) { return te::max(P(i[0], i[1], i[2] * 2 + rh.var, i[3] * 2 + rw.var), {rh, rw}); },
        "pool");
    return {"pooling", te::create_prim_func({X, C}, "pooling")};
}

Workload softmax() {
    te::Tensor X = te::placeholder({4, 7}, f32, "X");
    IterVar k1 = te::reduce_axis(7, "k"), k2 = te::reduce_axis(7, "k");
    te::Tensor M = te::compute({4}, [&](auto i) { return te::max(X(i[0], k1.var), {k1}); }, "T_max");
    te::Tensor E = te::compute({4, 7}, [&](auto i) { return tir::exp(X(i[0], i[1]) - M(i[0])); }, "T_exp");
    te::Tensor S = te::compute({4}, [&](auto i) { return te::sum(E(i[0], k2.var), {k2}); }, "T_sum");
    te::Tensor O = te::compute({4, 7}, [&](auto i) { return E(i[0], i[1]) / S(i[0]); }, "T_softmax");
    return {"softmax", te::create_prim_func({X, O}, "softmax")};
}

Workload layer_norm() {
    const int64_t N = 8;
    te::Tensor X = te::placeholder({4, N}, f32, "X");
    te::Tensor G = te::placeholder({N}, f32, "gamma"), B = te::placeholder({N}, f32, "beta");
    IterVar k1 = te::reduce_axis(N, "k"), k2 = te::reduce_axis(N, "k");
    te::Tensor S = te::compute({4}, [&](auto i) { return te::sum(X(i[0], k1.var), {k1}); }, "T_sum");
    te::Tensor M = te::compute({4}, [&](auto i) { return S(i[0]) * (1.0 / N); }, "T_mean");
    te::Tensor D = te::compute({4, N}, [&](auto i) { return X(i[0], i[1]) - M(i[0]); }, "T_diff");
    te::Tensor V = te::compute({4}, [&](auto i) { return te::sum(D(i[0], k2.var) * D(i[0], k2.var), {k2}); },
                               "T_var");
    te::Tensor O = te::compute(
        {4, N},
        [&](auto i) {
            return D(i[0], i[1]) * tir::rsqrt(V(i[0]) * (1.0 / N) + 1e-5) * G(i[1]) + B(i[1]);
        },
        "T_norm");
    return {"layer_norm", te::create_prim_func({X, G, B, O}, "layer_norm")};
}

Workload elementwise_chain() {
    te::Tensor A = te::placeholder({4, 6}, f32, "A");
    te::Tensor B = te::compute({4, 6}, [&](auto i) { return A(i[0], i[1]) * 2.0; }, "T_mul");
    te::Tensor C = te::compute({4, 6}, [&](auto i) { return tir::exp(B(i[0], i[1]) * 0.25) + A(i[0], i[1]); },
                               "T_exp");
    te::Tensor D = te::compute({4, 6}, [&](auto i) { return tir::max(C(i[0], i[1]) - 1.0, Expr(0.0)); },
                               "T_relu");
    return {"elementwise_chain", te::create_prim_func({A, D}, "chain")};
}

template <typename T>
const T& pick(std::mt19937_64& rng, const std::vector<T>& v) {
    return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
}

int64_t extent_of(const Schedule& s, const std::string& loop) {
    auto p = detail::find_loop(s.func()->body, loop);
    const int64_t* e = p ? tir::as_const_int(p->back().as<tir::For>()->extent) : nullptr;
    return e ? *e : 1;
}

// One random primitive with arguments drawn from the schedule's current state.
void random_step(Schedule& s, std::mt19937_64& rng) {
    auto blocks = s.blocks();
    if (blocks.empty()) return;
    std::string b = pick(rng, blocks);
    auto loops = s.get_loops(b);
    auto any_loop = [&]() { return loops.empty() ? std::string("none") : pick(rng, loops); };
    auto r = [&](int n) { return int(std::uniform_int_distribution<int>(0, n - 1)(rng)); };
    static const std::vector<std::string> axes = {"blockIdx.x", "threadIdx.x", "vthread.x", "blockIdx.y"};
    static const std::vector<std::string> scopes = {"global", "shared", "local"};
    switch (r(19)) {
        case 0:
        case 1:
        case 2: {
            std::string l = any_loop();
            int64_t e = extent_of(s, l);
            int64_t f = 1 + r(int(std::max<int64_t>(1, std::min<int64_t>(e, 5))));
            if (r(4) == 0) s.split(l, {-1, f, 1 + r(2)});
            else if (r(2)) s.split(l, {-1, f});
            else s.split(l, {f, -1});
            break;
        }
        case 3:
        case 4: {
            if (loops.size() < 2) return;
            size_t i = size_t(r(int(loops.size()) - 1));
            s.fuse({loops[i], loops[i + 1]});
            break;
        }
        case 5:
        case 6: {
            if (loops.size() < 2) return;
            auto ls = loops;
            std::shuffle(ls.begin(), ls.end(), rng);
            ls.resize(2 + r(int(std::min<size_t>(ls.size(), 4)) - 1));
            s.reorder(ls);
            break;
        }
        case 7: {
            if (loops.size() < 2) return;
            size_t i = size_t(r(int(loops.size()) - 1));
            s.tile(loops[i], loops[i + 1], 1 + r(4), 1 + r(4));
            break;
        }
        case 8: s.parallel(any_loop()); break;
        case 9: s.vectorize(any_loop()); break;
        case 10: s.unroll(any_loop()); break;
        case 11: s.bind(any_loop(), pick(rng, axes)); break;
        case 12:
        case 13: {
            auto cons = s.get_consumers(b);
            if (cons.empty()) return;
            auto cl = s.get_loops(pick(rng, cons));
            if (cl.empty()) return;
            s.compute_at(b, pick(rng, cl));
            break;
        }
        case 14: {
            auto prods = s.get_producers(b);
            if (prods.empty()) return;
            auto pl = s.get_loops(pick(rng, prods));
            if (pl.empty()) return;
            s.reverse_compute_at(b, pick(rng, pl));
            break;
        }
        case 15:
            if (r(2)) s.compute_inline(b);
            else s.reverse_compute_inline(b);
            break;
        case 16:
            if (r(2)) {
                s.cache_read(b, r(3), pick(rng, scopes));
            } else {
                const std::string cache = s.cache_write(b, 0, pick(rng, scopes));
                // Half the time the cache's dimensions in reverse order.
                const tir::Block* root = s.func()->body.as<tir::BlockRealize>()->block_node();
                for (const tir::Buffer& a : root->alloc_buffers)
                    if (a->name == cache && a->shape.size() >= 2 && r(2)) {
                        std::vector<int64_t> perm;
                        for (size_t d = a->shape.size(); d-- > 0;) perm.push_back(int64_t(d));
                        s.transform_layout(cache, perm);
                    }
            }
            break;
        case 17: s.rfactor(any_loop(), r(3)); break;
        case 18:
            if (r(3) == 0) s.annotate(any_loop(), "pragma_unroll_explicit", "1");
            else s.decompose_reduction(b, any_loop());
            break;
    }
}

}  // namespace

std::vector<Workload> workloads() {
    return {matmul(), batch_matmul(), conv2d(), depthwise(), pooling(), softmax(), layer_norm(),
            elementwise_chain()};
}

Schedule random_schedule(const tir::PrimFunc& f, uint64_t seed, int attempts) {
    std::mt19937_64 rng(seed);
    Schedule s(f);
    for (int i = 0; i < attempts; ++i) {
        tir::PrimFunc before = s.func();
        size_t steps = s.trace().steps.size();
        try {
            random_step(s, rng);
        } catch (const ScheduleError& e) {
            if (!s.func().get() || s.func().get() != before.get() || s.trace().steps.size() != steps)
                throw std::logic_error(std::string("a failed step changed the schedule: ") + e.what());
            if (e.step_index() != int(steps))
                throw std::logic_error(std::string("wrong step index in: ") + e.what());
        }
    }
    return s;
}

namespace {
std::vector<std::vector<float>> make_data(const tir::PrimFunc& f, uint64_t seed) {
    std::mt19937 rng(uint32_t(seed * 7919 + 1));
    std::uniform_real_distribution<float> dist(-2.f, 2.f);
    std::vector<std::vector<float>> data;
    for (const tir::Buffer& b : f->params) {
        std::vector<float> v(size_t(b.num_elements()));
        for (float& x : v) {
            do x = dist(rng);
            while (std::fabs(x) < 0.05f);
        }
        data.push_back(std::move(v));
    }
    return data;
}
std::vector<void*> pointers(std::vector<std::vector<float>>& d) {
    std::vector<void*> p;
    for (auto& v : d) p.push_back(v.data());
    return p;
}
}  // namespace

std::vector<std::vector<float>> run_interpreted(const tir::PrimFunc& f, uint64_t seed) {
    auto d = make_data(f, seed);
    tir::interpret(f, pointers(d));
    return d;
}

std::vector<std::vector<float>> run_jit(const tir::PrimFunc& f, uint64_t seed, int llvm_opt_level) {
    auto d = make_data(f, seed);
    codegen::LlvmOptions o;
    o.opt_level = llvm_opt_level;
    auto m = codegen::jit_compile({f}, o);
    auto args = pointers(d);
    m->lookup(f->name)(args.data());
    return d;
}

double max_rel_diff(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
    double worst = a.size() == b.size() ? 0.0 : INFINITY;
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
        if (a[i].size() != b[i].size()) return INFINITY;
        for (size_t j = 0; j < a[i].size(); ++j) {
            double d = std::fabs(double(a[i][j]) - b[i][j]) / std::max(1.0, std::fabs(double(b[i][j])));
            if (!(d <= worst)) worst = std::isnan(d) ? INFINITY : d;
        }
    }
    return worst;
}

}  // namespace tessera::schedule::test
