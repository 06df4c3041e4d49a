// Expression builders: operators with constant type promotion and intrinsics.
#include "engine/tir/op.h"

#include <cmath>
#include <limits>

#include "engine/core/error.h"

namespace tessera::tir {

Expr make_const(DataType t, double value) {
    Expr scalar;
    DataType e = t.element_of();
    if (e.is_float()) {
        scalar = FloatImm::make(e, value);
    } else {
        scalar = IntImm::make(e, int64_t(value));
    }
    return t.lanes > 1 ? Broadcast::make(scalar, t.lanes) : scalar;
}

Expr make_zero(DataType t) { return make_const(t, 0); }

namespace {
bool is_const(const Expr& e) { return e.as<IntImm>() || e.as<FloatImm>(); }

double const_value(const Expr& e) {
    if (const IntImm* i = e.as<IntImm>()) return double(i->value);
    return e.as<FloatImm>()->value;
}

// Brings a and b to one type: a constant side takes the other side's type;
// a scalar side is broadcast to the other's lanes.
void unify(Expr& a, Expr& b) {
    TS_CHECK(a.defined() && b.defined()) << "operation on an undefined expression";
    if (a.dtype() == b.dtype()) return;
    if (is_const(b) && !is_const(a)) {
        b = make_const(a.dtype(), const_value(b));
    } else if (is_const(a) && !is_const(b)) {
        a = make_const(b.dtype(), const_value(a));
    } else if (is_const(a) && is_const(b)) {
        // Two constants: the float one wins.
        DataType t = a.dtype().is_float() ? a.dtype() : b.dtype();
        a = make_const(t, const_value(a));
        b = make_const(t, const_value(b));
    }
    if (a.dtype().element_of() == b.dtype().element_of()) {
        if (a.dtype().is_scalar() && b.dtype().is_vector()) a = Broadcast::make(a, b.dtype().lanes);
        if (b.dtype().is_scalar() && a.dtype().is_vector()) b = Broadcast::make(b, a.dtype().lanes);
    }
    TS_CHECK(a.dtype() == b.dtype()) << "operands of types " << a.dtype().str() << " and "
                                     << b.dtype().str() << " need an explicit cast";
}

template <typename Node>
Expr binary(Expr a, Expr b) {
    unify(a, b);
    return Node::make(std::move(a), std::move(b));
}
}  // namespace

Expr operator+(Expr a, Expr b) { return binary<Add>(std::move(a), std::move(b)); }
Expr operator-(Expr a, Expr b) { return binary<Sub>(std::move(a), std::move(b)); }
Expr operator*(Expr a, Expr b) { return binary<Mul>(std::move(a), std::move(b)); }
Expr operator/(Expr a, Expr b) { return binary<Div>(std::move(a), std::move(b)); }
Expr operator%(Expr a, Expr b) { return binary<Mod>(std::move(a), std::move(b)); }
Expr operator-(Expr a) {
    if (const IntImm* i = a.as<IntImm>()) return IntImm::make(i->dtype, -i->value);
    if (const FloatImm* f = a.as<FloatImm>()) return FloatImm::make(f->dtype, -f->value);
    Expr zero = make_zero(a.dtype());
    return Sub::make(zero, std::move(a));
}
Expr operator<(Expr a, Expr b) { return binary<LT>(std::move(a), std::move(b)); }
Expr operator<=(Expr a, Expr b) { return binary<LE>(std::move(a), std::move(b)); }
Expr operator>(Expr a, Expr b) { return binary<GT>(std::move(a), std::move(b)); }
Expr operator>=(Expr a, Expr b) { return binary<GE>(std::move(a), std::move(b)); }
Expr operator==(Expr a, Expr b) { return binary<EQ>(std::move(a), std::move(b)); }
Expr operator!=(Expr a, Expr b) { return binary<NE>(std::move(a), std::move(b)); }
Expr operator&&(Expr a, Expr b) { return binary<And>(std::move(a), std::move(b)); }
Expr operator||(Expr a, Expr b) { return binary<Or>(std::move(a), std::move(b)); }
Expr operator!(Expr a) { return Not::make(std::move(a)); }

Expr floordiv(Expr a, Expr b) { return binary<FloorDiv>(std::move(a), std::move(b)); }
Expr floormod(Expr a, Expr b) { return binary<FloorMod>(std::move(a), std::move(b)); }
Expr min(Expr a, Expr b) { return binary<Min>(std::move(a), std::move(b)); }
Expr max(Expr a, Expr b) { return binary<Max>(std::move(a), std::move(b)); }

Expr select(Expr cond, Expr t, Expr f) {
    unify(t, f);
    return Select::make(std::move(cond), std::move(t), std::move(f));
}
Expr if_then_else(Expr cond, Expr t, Expr f) {
    return select(std::move(cond), std::move(t), std::move(f));
}

Expr cast(DataType t, Expr v) {
    if (v.dtype() == t) return v;
    if (is_const(v) && t.is_scalar()) return make_const(t, const_value(v));
    return Cast::make(t, std::move(v));
}

namespace {
Expr unary_call(const char* name, Expr x) {
    TS_CHECK(x.dtype().is_float()) << name << " of " << x.dtype().str();
    DataType t = x.dtype();
    return Call::make(t, name, {std::move(x)});
}

Expr bitwise_call(const char* name, std::vector<Expr> args) {
    const DataType t = args[0].dtype();
    TS_CHECK(t.is_int() || t.is_uint()) << name << " of " << t.str();
    for (const Expr& a : args)
        TS_CHECK(a.dtype() == t) << name << " of " << a.dtype().str() << " and " << t.str();
    return Call::make(t, name, std::move(args));
}
}  // namespace

Expr bitwise_and(Expr a, Expr b) {
    return bitwise_call("bitwise_and", {std::move(a), std::move(b)});
}
Expr bitwise_or(Expr a, Expr b) { return bitwise_call("bitwise_or", {std::move(a), std::move(b)}); }
Expr bitwise_xor(Expr a, Expr b) {
    return bitwise_call("bitwise_xor", {std::move(a), std::move(b)});
}
Expr bitwise_not(Expr a) { return bitwise_call("bitwise_not", {std::move(a)}); }

Expr reinterpret(DataType t, Expr x) {
    TS_CHECK(t.bits == x.dtype().bits) << "reinterpret " << x.dtype().str() << " as " << t.str();
    const DataType r = t.element_of().with_lanes(x.dtype().lanes);
    return Call::make(r, "reinterpret", {std::move(x)});
}

Expr dot4_u8s8(Expr a, Expr b) {
    const DataType t = a.dtype();
    TS_CHECK(t.is_int() && t.bits == 32 && b.dtype() == t)
        << "dot4_u8s8 of " << t.str() << " and " << b.dtype().str();
    return Call::make(t, kDot4U8S8, {std::move(a), std::move(b)});
}

Expr exp(Expr x) { return unary_call("exp", std::move(x)); }
Expr log(Expr x) { return unary_call("log", std::move(x)); }
Expr sqrt(Expr x) { return unary_call("sqrt", std::move(x)); }
Expr rsqrt(Expr x) { return unary_call("rsqrt", std::move(x)); }
Expr tanh(Expr x) { return unary_call("tanh", std::move(x)); }
Expr erf(Expr x) { return unary_call("erf", std::move(x)); }
Expr sigmoid(Expr x) { return unary_call("sigmoid", std::move(x)); }
Expr fabs(Expr x) { return unary_call("fabs", std::move(x)); }
Expr floor(Expr x) { return unary_call("floor", std::move(x)); }
Expr ceil(Expr x) { return unary_call("ceil", std::move(x)); }
Expr round(Expr x) { return unary_call("round", std::move(x)); }
Expr pow(Expr x, Expr y) {
    unify(x, y);
    DataType t = x.dtype();
    return Call::make(t, "pow", {std::move(x), std::move(y)});
}

Expr max_value(DataType t) {
    DataType e = t.element_of();
    double v = 0;
    // Floats: infinity, the identity of min (a max over only -inf values is -inf).
    if (e.is_float()) {
        v = std::numeric_limits<double>::infinity();
        return make_const(t, v);
    }
    if (e.is_bool()) return make_const(t, 1);
    int64_t iv = e.is_uint() ? (e.bits >= 63 ? std::numeric_limits<int64_t>::max()
                                             : (int64_t(1) << e.bits) - 1)
                             : (e.bits >= 64 ? std::numeric_limits<int64_t>::max()
                                             : (int64_t(1) << (e.bits - 1)) - 1);
    Expr s = IntImm::make(e, iv);
    return t.lanes > 1 ? Broadcast::make(s, t.lanes) : s;
}

Expr min_value(DataType t) {
    DataType e = t.element_of();
    if (e.is_float()) return make_const(t, -std::numeric_limits<double>::infinity());
    if (e.is_bool() || e.is_uint()) return make_const(t, 0);
    int64_t iv = e.bits >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t(1) << (e.bits - 1));
    Expr s = IntImm::make(e, iv);
    return t.lanes > 1 ? Broadcast::make(s, t.lanes) : s;
}

const int64_t* as_const_int(const Expr& e) {
    if (!e.defined()) return nullptr;
    if (const IntImm* i = e.as<IntImm>()) return &i->value;
    if (const Broadcast* b = e.as<Broadcast>()) return as_const_int(b->value);
    return nullptr;
}

bool is_const_int(const Expr& e, int64_t value) {
    const int64_t* v = as_const_int(e);
    return v && *v == value;
}

}  // namespace tessera::tir
