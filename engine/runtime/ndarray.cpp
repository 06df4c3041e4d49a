// NDArray storage (64-byte aligned, zero filled), random data and comparisons.
#include "engine/runtime/ndarray.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>

#include "engine/core/error.h"

namespace tessera::runtime {

namespace {

constexpr size_t kAlignment = 64;

// Aligned, zero-filled block; at least one alignment unit so that empty
// tensors still have a distinct, valid pointer.
std::shared_ptr<void> allocate(size_t bytes) {
    size_t size = std::max(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
    void* p = std::aligned_alloc(kAlignment, size);
    if (!p) throw std::bad_alloc();
    std::memset(p, 0, size);
    return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
}

// Reads element i of a numeric array as double.
double load_as_double(const NDArray& a, int64_t i) {
    switch (a.dtype()) {
        case DType::Float32:
            return a.data<float>()[i];
        case DType::Float64:
            return a.data<double>()[i];
        case DType::Int64:
            return double(a.data<int64_t>()[i]);
        case DType::Int32:
            return a.data<int32_t>()[i];
        case DType::Int8:
            return a.data<int8_t>()[i];
        case DType::UInt8:
            return a.data<uint8_t>()[i];
        case DType::Bool:
            return a.data<uint8_t>()[i] ? 1.0 : 0.0;
    }
    TS_FAIL() << "unknown dtype";
}

void check_comparable(const NDArray& actual, const NDArray& expected) {
    TS_USER_CHECK(actual.defined() && expected.defined()) << "cannot compare an undefined array";
    TS_USER_CHECK(actual.shape() == expected.shape())
        << "shape mismatch: got " << actual.type().str() << ", expected " << expected.type().str();
}

}  // namespace

NDArray NDArray::empty(const TensorType& type) {
    for (int64_t d : type.shape) TS_USER_CHECK(d >= 0) << "negative dimension in " << type.str();
    NDArray a;
    a.m_type = type;
    a.m_data = allocate(size_t(type.num_bytes()));
    return a;
}

NDArray NDArray::from_bytes(const TensorType& type, const void* bytes, size_t size) {
    TS_USER_CHECK(size == size_t(type.num_bytes()))
        << "data of " << size << " bytes does not fit " << type.str() << " (" << type.num_bytes()
        << " bytes)";
    NDArray a = empty(type);
    if (size) std::memcpy(a.raw(), bytes, size);
    return a;
}

NDArray NDArray::view(const TensorType& type, std::shared_ptr<void> owner, size_t offset) {
    TS_CHECK(owner != nullptr) << "NDArray::view of no memory";
    NDArray a;
    a.m_type = type;
    a.m_data = std::shared_ptr<void>(owner, static_cast<char*>(owner.get()) + offset);
    return a;
}

NDArray NDArray::copy() const {
    if (!defined()) return {};
    return from_bytes(m_type, raw(), num_bytes());
}

NDArray NDArray::reshaped(const std::vector<int64_t>& shape) const {
    TensorType t{m_type.dtype, shape};
    TS_USER_CHECK(t.num_elements() == num_elements())
        << "cannot reshape " << m_type.str() << " to " << t.str();
    NDArray a = *this;
    a.m_type = t;
    return a;
}

NDArray random_ndarray(const TensorType& type, uint64_t seed) {
    NDArray a = NDArray::empty(type);
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> mag(0.1, 1.0);
    std::bernoulli_distribution neg(0.5);
    std::uniform_int_distribution<int> small(0, 9);
    int64_t n = a.num_elements();
    for (int64_t i = 0; i < n; ++i) {
        double v = mag(rng) * (neg(rng) ? -1.0 : 1.0);
        switch (type.dtype) {
            case DType::Float32:
                a.data<float>()[i] = float(v);
                break;
            case DType::Float64:
                a.data<double>()[i] = v;
                break;
            case DType::Int64:
                a.data<int64_t>()[i] = small(rng);
                break;
            case DType::Int32:
                a.data<int32_t>()[i] = small(rng);
                break;
            case DType::Int8:
                a.data<int8_t>()[i] = int8_t(small(rng));
                break;
            case DType::UInt8:
                a.data<uint8_t>()[i] = uint8_t(small(rng));
                break;
            case DType::Bool:
                a.data<uint8_t>()[i] = uint8_t(small(rng) & 1);
                break;
        }
    }
    return a;
}

Difference compare(const NDArray& actual, const NDArray& expected) {
    check_comparable(actual, expected);
    Difference d;
    int64_t n = actual.num_elements();
    for (int64_t i = 0; i < n; ++i) {
        double a = load_as_double(actual, i), e = load_as_double(expected, i);
        if (std::isnan(a) != std::isnan(e)) {
            d.max_abs = d.max_rel = std::numeric_limits<double>::infinity();
            continue;
        }
        if (std::isnan(a)) continue;
        if (std::isinf(a) || std::isinf(e)) {
            if (a != e) d.max_abs = d.max_rel = std::numeric_limits<double>::infinity();
            continue;
        }
        double abs_err = std::fabs(a - e);
        d.max_abs = std::max(d.max_abs, abs_err);
        d.max_rel = std::max(d.max_rel, abs_err / std::max(std::fabs(e), 1e-6));
    }
    return d;
}

bool allclose(const NDArray& actual, const NDArray& expected, double rtol, double atol) {
    check_comparable(actual, expected);
    int64_t n = actual.num_elements();
    for (int64_t i = 0; i < n; ++i) {
        double a = load_as_double(actual, i), e = load_as_double(expected, i);
        if (std::isnan(a) || std::isnan(e)) {
            // Matching NaNs are equal, as in numpy.testing.assert_allclose (ONNX's tests).
            if (std::isnan(a) && std::isnan(e)) continue;
            return false;
        }
        if (std::isinf(a) || std::isinf(e)) {
            if (a != e) return false;
            continue;
        }
        if (!(std::fabs(a - e) <= atol + rtol * std::fabs(e))) return false;
    }
    return true;
}

}  // namespace tessera::runtime
