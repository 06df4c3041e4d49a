// Helpers for the LLVM code generation tests: building loop nests with
// blocks, random data, running a PrimFunc through the JIT and the interpreter.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "engine/codegen/llvm/llvm_codegen.h"
#include "engine/graph/graph.h"
#include "engine/tir/interpreter.h"
#include "engine/tir/op.h"
#include "engine/tir/stmt.h"

namespace tessera::test {

using namespace tessera::tir;

/// Uniform random floats in [lo, hi), none closer to zero than 0.05.
inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -2.f, float hi = 2.f) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(n);
    for (float& x : v) {
        do x = dist(rng);
        while (std::fabs(x) < 0.05f);
    }
    return v;
}

inline Buffer float_buffer(const std::string& name, const std::vector<int64_t>& shape,
                           const std::string& scope = "global") {
    std::vector<Expr> s;
    for (int64_t d : shape) s.push_back(Expr(d));
    return Buffer(name, DataType::float32(), s, scope);
}

inline Expr ld(const Buffer& b, std::vector<Expr> idx) { return BufferLoad::make(b, std::move(idx)); }
inline Stmt st(const Buffer& b, Expr v, std::vector<Expr> idx) {
    return BufferStore::make(b, std::move(v), std::move(idx));
}
inline Expr true_expr() { return IntImm::make(DataType::boolean(), 1); }

using BlockBody = std::function<Stmt(const std::vector<Var>&)>;

/// A serial loop nest over `spatial` then `reduce` extents around one Block
/// named `name` whose iteration variables (spatial first, then reduce) are
/// bound to the loop variables. `init` (optional) is the reduction init.
inline Stmt block_nest(const std::string& name, const std::vector<int64_t>& spatial,
                       const std::vector<int64_t>& reduce, const BlockBody& body,
                       const BlockBody& init = {}) {
    std::vector<IterVar> ivs;
    std::vector<Var> block_vars, loop_vars;
    std::vector<Expr> values;
    std::vector<int64_t> extents = spatial;
    extents.insert(extents.end(), reduce.begin(), reduce.end());
    for (size_t i = 0; i < extents.size(); ++i) {
        bool is_reduce = i >= spatial.size();
        Var v(name + "_v" + std::to_string(i));
        Var l(name + "_i" + std::to_string(i));
        ivs.push_back({v, Range{Expr(0), Expr(extents[i])},
                       is_reduce ? IterKind::Reduce : IterKind::Spatial, ""});
        block_vars.push_back(v);
        loop_vars.push_back(l);
        values.push_back(l);
    }
    Stmt block = Block::make(name, ivs, {}, {}, init ? init(block_vars) : Stmt(), body(block_vars));
    Stmt s = BlockRealize::make(values, true_expr(), block);
    for (size_t i = extents.size(); i-- > 0;)
        s = For::make(loop_vars[i], Expr(0), Expr(extents[i]), ForKind::Serial, s);
    return s;
}

/// The root block of a function, owning `allocs`.
inline Stmt root_block(Stmt body, std::vector<Buffer> allocs = {}) {
    return BlockRealize::make({}, true_expr(),
                              Block::make("root", {}, {}, {}, Stmt(), std::move(body),
                                          std::move(allocs)));
}

/// JIT-compiles f alone and calls it with `args`.
inline void run_jit(const PrimFunc& f, std::vector<void*> args, int opt_level = 2) {
    codegen::LlvmOptions options;
    options.opt_level = opt_level;
    auto module = codegen::jit_compile({f}, options);
    module->lookup(f->name)(args.data());
}

/// Element-wise closeness with a relative and absolute tolerance.
template <typename T>
void expect_close(const std::vector<T>& got, const std::vector<T>& want, double tol = 1e-5,
                  const std::string& what = "") {
    ASSERT_EQ(got.size(), want.size()) << what;
    int bad = 0;
    for (size_t i = 0; i < got.size() && bad < 10; ++i) {
        double g = double(got[i]), w = double(want[i]);
        if (!(std::fabs(g - w) <= tol * (1.0 + std::fabs(w)))) {
            ADD_FAILURE() << what << " element " << i << ": got " << g << ", want " << w;
            ++bad;
        }
    }
}

/// A graph of one float32 node `op` with inputs of shapes `ins` (graph inputs
/// "in0"...) and one output "out" of shape `out`.
inline graph::Graph one_node(const std::string& op, const std::vector<std::vector<int64_t>>& ins,
                      std::vector<int64_t> out, std::map<std::string, graph::AttrValue> attrs = {}) {
    graph::Graph g;
    graph::Node n;
    n.op = op;
    n.name = "k";
    n.attrs = std::move(attrs);
    auto add = [&](const std::string& name, std::vector<int64_t> shape) {
        graph::Value v;
        v.name = name;
        v.type = {graph::DType::Float32, std::move(shape)};
        return g.add_value(v);
    };
    for (size_t i = 0; i < ins.size(); ++i) {
        int v = add("in" + std::to_string(i), ins[i]);
        g.inputs.push_back(v);
        n.inputs.push_back(v);
    }
    int o = add("out", std::move(out));
    g.outputs = {o};
    n.outputs = {o};
    g.add_node(n);
    return g;
}

}  // namespace tessera::test
