// The one list of loop-IR node kinds. The node-type enum, the visitor and the
// mutator are all generated from these macros (Halide's IRVisitor style).
#pragma once

#define TS_TIR_BINARY_NODES(X) \
    X(Add)                     \
    X(Sub)                     \
    X(Mul)                     \
    X(Div)                     \
    X(Mod)                     \
    X(FloorDiv)                \
    X(FloorMod)                \
    X(Min)                     \
    X(Max)                     \
    X(EQ)                      \
    X(NE)                      \
    X(LT)                      \
    X(LE)                      \
    X(GT)                      \
    X(GE)                      \
    X(And)                     \
    X(Or)

#define TS_TIR_EXPR_NODES(X) \
    X(IntImm)                \
    X(FloatImm)              \
    X(Variable)              \
    TS_TIR_BINARY_NODES(X)   \
    X(Not)                   \
    X(Select)                \
    X(Cast)                  \
    X(Call)                  \
    X(BufferLoad)            \
    X(Ramp)                  \
    X(Broadcast)             \
    X(Let)                   \
    X(Reduce)

#define TS_TIR_STMT_NODES(X) \
    X(BufferStore)           \
    X(For)                   \
    X(SeqStmt)               \
    X(IfThenElse)            \
    X(LetStmt)               \
    X(Allocate)              \
    X(Evaluate)              \
    X(Block)                 \
    X(BlockRealize)
