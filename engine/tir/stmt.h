// Loop-IR statements and PrimFunc.
//
// Blocks follow TensorIR: a Block has iteration variables with domains and
// kinds, is instantiated by a BlockRealize that binds each iteration variable
// to an expression of the surrounding loop variables, and, when it reduces,
// has an `init` statement that runs the first time the reduction iteration
// variables are all at their minimum. Execution order of a SeqStmt is its list
// order; a Serial For runs min, min+1, ... in order; Parallel/Vectorized/
// Unrolled/ThreadBinding loops promise that iterations are independent.
#pragma once

#include "engine/tir/expr.h"

namespace tessera::tir {

struct BufferRegion {
    Buffer buffer;
    std::vector<Range> region;
};

struct BufferStore : StmtNode {
    static constexpr NodeType kType = NodeType::BufferStore;
    Buffer buffer;
    Expr value;
    std::vector<Expr> indices;
    BufferStore(Buffer b, Expr v, std::vector<Expr> i)
        : StmtNode(kType), buffer(std::move(b)), value(std::move(v)), indices(std::move(i)) {}
    static Stmt make(Buffer b, Expr value, std::vector<Expr> indices);
};

enum class ForKind : uint8_t { Serial, Parallel, Vectorized, Unrolled, ThreadBinding };
const char* for_kind_name(ForKind k);

struct For : StmtNode {
    static constexpr NodeType kType = NodeType::For;
    Var loop_var;
    Expr min, extent;
    ForKind kind;
    Stmt body;
    std::string thread_tag;                          // for ThreadBinding
    std::map<std::string, std::string> annotations;  // pragmas, e.g. "pragma_unroll_explicit"
    For(Var v, Expr mn, Expr ext, ForKind k, Stmt b, std::string tag,
        std::map<std::string, std::string> ann)
        : StmtNode(kType), loop_var(std::move(v)), min(std::move(mn)), extent(std::move(ext)),
          kind(k), body(std::move(b)), thread_tag(std::move(tag)), annotations(std::move(ann)) {}
    static Stmt make(Var v, Expr min, Expr extent, ForKind kind, Stmt body,
                     std::string thread_tag = "",
                     std::map<std::string, std::string> annotations = {});
};

struct SeqStmt : StmtNode {
    static constexpr NodeType kType = NodeType::SeqStmt;
    std::vector<Stmt> seq;
    explicit SeqStmt(std::vector<Stmt> s) : StmtNode(kType), seq(std::move(s)) {}
    /// Flattens nested sequences; a single statement is returned as is.
    static Stmt make(std::vector<Stmt> seq);
};

struct IfThenElse : StmtNode {
    static constexpr NodeType kType = NodeType::IfThenElse;
    Expr condition;
    Stmt then_case, else_case;  // else_case may be undefined
    IfThenElse(Expr c, Stmt t, Stmt e)
        : StmtNode(kType), condition(std::move(c)), then_case(std::move(t)), else_case(std::move(e)) {}
    static Stmt make(Expr c, Stmt then_case, Stmt else_case = Stmt());
};

struct LetStmt : StmtNode {
    static constexpr NodeType kType = NodeType::LetStmt;
    Var var;
    Expr value;
    Stmt body;
    LetStmt(Var v, Expr val, Stmt b)
        : StmtNode(kType), var(std::move(v)), value(std::move(val)), body(std::move(b)) {}
    static Stmt make(Var v, Expr value, Stmt body);
};

/// Allocates `buffer` (in its scope) for the duration of `body`.
struct Allocate : StmtNode {
    static constexpr NodeType kType = NodeType::Allocate;
    Buffer buffer;
    Stmt body;
    Allocate(Buffer b, Stmt s) : StmtNode(kType), buffer(std::move(b)), body(std::move(s)) {}
    static Stmt make(Buffer b, Stmt body);
};

struct Evaluate : StmtNode {
    static constexpr NodeType kType = NodeType::Evaluate;
    Expr value;
    explicit Evaluate(Expr v) : StmtNode(kType), value(std::move(v)) {}
    static Stmt make(Expr v);
};

struct Block : StmtNode {
    static constexpr NodeType kType = NodeType::Block;
    std::string name;
    std::vector<IterVar> iter_vars;
    std::vector<BufferRegion> reads, writes;
    Stmt init;  // may be undefined
    Stmt body;
    std::vector<Buffer> alloc_buffers;
    std::map<std::string, std::string> annotations;
    Block(std::string n, std::vector<IterVar> iv, std::vector<BufferRegion> r,
          std::vector<BufferRegion> w, Stmt i, Stmt b, std::vector<Buffer> alloc,
          std::map<std::string, std::string> ann)
        : StmtNode(kType), name(std::move(n)), iter_vars(std::move(iv)), reads(std::move(r)),
          writes(std::move(w)), init(std::move(i)), body(std::move(b)),
          alloc_buffers(std::move(alloc)), annotations(std::move(ann)) {}
    static Stmt make(std::string name, std::vector<IterVar> iter_vars,
                     std::vector<BufferRegion> reads, std::vector<BufferRegion> writes,
                     Stmt init, Stmt body, std::vector<Buffer> alloc_buffers = {},
                     std::map<std::string, std::string> annotations = {});
};

/// Runs `block` with iter_vars[i] = iter_values[i], when `predicate` holds.
struct BlockRealize : StmtNode {
    static constexpr NodeType kType = NodeType::BlockRealize;
    std::vector<Expr> iter_values;
    Expr predicate;
    Stmt block;  // always a Block
    BlockRealize(std::vector<Expr> v, Expr p, Stmt b)
        : StmtNode(kType), iter_values(std::move(v)), predicate(std::move(p)), block(std::move(b)) {}
    static Stmt make(std::vector<Expr> iter_values, Expr predicate, Stmt block);
    const Block* block_node() const { return block.as<Block>(); }
};

/// A function over buffers: the unit of scheduling and code generation.
/// `params` are the buffers the caller passes, inputs first, outputs last.
/// Code generation calls it as `void name(void** args)` with args[i] the
/// data pointer of params[i].
struct PrimFuncNode {
    std::string name;
    std::vector<Buffer> params;
    Stmt body;
    std::map<std::string, std::string> attrs;
};

class PrimFunc {
public:
    PrimFunc() = default;
    PrimFunc(std::string name, std::vector<Buffer> params, Stmt body,
             std::map<std::string, std::string> attrs = {});
    bool defined() const { return m_ptr != nullptr; }
    const PrimFuncNode* get() const { return m_ptr.get(); }
    const PrimFuncNode* operator->() const { return m_ptr.get(); }
    /// A copy with another body (the function itself never changes).
    PrimFunc with_body(Stmt body) const;

private:
    std::shared_ptr<const PrimFuncNode> m_ptr;
};

}  // namespace tessera::tir
