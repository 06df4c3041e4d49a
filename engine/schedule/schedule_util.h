// Internal helpers of the schedule primitives: finding loops and blocks by
// name, rebuilding the immutable IR along a path, names, and the integer
// bound analysis used by compute_at and friends.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/tir/functor.h"
#include "engine/tir/stmt.h"

namespace tessera::schedule::detail {

using tir::Expr;
using tir::Stmt;
using tir::Var;

/// The statements from the root down to a found node (the last element).
using Path = std::vector<Stmt>;

/// The children of a statement, in execution order.
std::vector<Stmt> children(const Stmt& s);
/// A SeqStmt's statements, else `s` alone (a root block's body as a list).
std::vector<Stmt> sequence(const Stmt& s);

/// Depth-first search; returns the path to the first node where pred holds.
std::optional<Path> find_path(const Stmt& root, const std::function<bool(const Stmt&)>& pred);
/// Paths to every node where pred holds, in pre-order.
std::vector<Path> find_all(const Stmt& root, const std::function<bool(const Stmt&)>& pred);

std::optional<Path> find_loop(const Stmt& root, const std::string& name);
/// Path to the BlockRealize of the named block.
std::optional<Path> find_block(const Stmt& root, const std::string& name);

/// Rebuilds the path with its last node replaced by `leaf`. An undefined leaf
/// removes the node; loops and sequences left empty disappear too.
Stmt replace_on_path(const Path& path, const Stmt& leaf);

/// The For nodes of `path` below its last Block (exclusive of the end node
/// when it is a For), outermost first.
std::vector<const tir::For*> loops_on_path(const Path& path);

/// Every Variable name used as a loop or block variable.
std::set<std::string> var_names(const Stmt& root, const tir::Variable* except = nullptr);
/// base if unused, else base_1, base_2, ...; the result is added to `used`.
std::string fresh_name(const std::string& base, std::set<std::string>& used);

/// Blocks (their BlockRealize) below a statement.
std::vector<const tir::BlockRealize*> blocks_under(const Stmt& s);
/// Buffers a block loads / stores (from its body and init), in order.
std::vector<tir::Buffer> loaded_buffers(const tir::Block* b);
std::vector<tir::Buffer> stored_buffers(const tir::Block* b);
/// Every index list under which the block loads `buf`.
std::vector<std::vector<Expr>> load_indices(const tir::Block* b, const tir::Buffer& buf);

using tir::uses_var;  // True when the expression mentions the variable.
bool uses_any_var(const Expr& e, const std::set<const tir::Variable*>& vars);
/// True when v appears in e as a term of a sum (distinct v give distinct e).
bool used_linearly(const Expr& e, const tir::Variable* v);
/// True when distinct values of v give distinct binding tuples: v is used
/// linearly, or as both v // c and v % c (a fused loop). Conservative.
bool distinct_in(const std::vector<Expr>& bindings, const tir::Variable* v);

/// Recomputes a block's read/write regions from its body: a point region when
/// every access uses the same indices, else the whole buffer.
Stmt with_regions(const tir::Block* b, Stmt init, Stmt body, std::vector<tir::IterVar> iter_vars,
                  std::string name);

/// A symbolic interval [lo, hi] (inclusive); undefined lo when unknown.
struct Interval {
    Expr lo, hi;
    bool ok() const { return lo.defined(); }
};
/// Bounds of e when the variables in `dom` range over their intervals.
Interval relax(const Expr& e, const std::map<const tir::Variable*, Interval>& dom);
/// a - b when it is a constant (linear forms over non-linear atoms).
std::optional<int64_t> const_diff(const Expr& a, const Expr& b);
/// Numeric bounds of e given numeric bounds of variables (free variables fail).
std::optional<std::pair<int64_t, int64_t>> num_bound(
    const Expr& e, const std::map<const tir::Variable*, std::pair<int64_t, int64_t>>& env);
/// Numeric ranges of every loop variable on a path (outer loops first).
std::map<const tir::Variable*, std::pair<int64_t, int64_t>> loop_env(const Path& path);

/// Simplified int expression helpers.
Expr simp(const Expr& e);
Expr int_const(int64_t v);
bool is_true(const Expr& e);

}  // namespace tessera::schedule::detail
