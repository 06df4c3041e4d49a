// NDArray: a dense, row-major, 64-byte aligned host tensor (DLPack layout).
#pragma once

#include <memory>

#include "engine/graph/graph.h"

namespace tessera::runtime {

using graph::DType;
using graph::TensorType;

class NDArray {
public:
    NDArray() = default;
    /// Zero-filled array of the given type.
    static NDArray empty(const TensorType& type);
    /// Copies `bytes` (must be type.num_bytes() long).
    static NDArray from_bytes(const TensorType& type, const void* bytes, size_t size);
    /// A view of `type` at `offset` bytes into memory owned by `owner` (kept
    /// alive by the view); no copy, no zero fill.
    static NDArray view(const TensorType& type, std::shared_ptr<void> owner, size_t offset);

    bool defined() const { return m_data != nullptr; }
    const TensorType& type() const { return m_type; }
    const std::vector<int64_t>& shape() const { return m_type.shape; }
    DType dtype() const { return m_type.dtype; }
    int64_t num_elements() const { return m_type.num_elements(); }
    size_t num_bytes() const { return size_t(m_type.num_bytes()); }
    void* raw() const { return m_data.get(); }
    template <typename T>
    T* data() const { return static_cast<T*>(raw()); }
    /// Deep copy.
    NDArray copy() const;
    /// Same data viewed with another shape of equal element count.
    NDArray reshaped(const std::vector<int64_t>& shape) const;

private:
    TensorType m_type;
    std::shared_ptr<void> m_data;
};

/// Seeded uniform values in [-1, -0.1] ∪ [0.1, 1] (non-zero) for floats, small
/// non-negative integers for integer types.
NDArray random_ndarray(const TensorType& type, uint64_t seed);

/// Largest absolute and relative difference between two float32 arrays of the
/// same shape; relative uses max(|expected|, 1e-6) as denominator.
struct Difference {
    double max_abs = 0;
    double max_rel = 0;
};
Difference compare(const NDArray& actual, const NDArray& expected);

/// True when every element satisfies |a - e| <= atol + rtol * |e| (numpy's allclose).
bool allclose(const NDArray& actual, const NDArray& expected, double rtol, double atol);

}  // namespace tessera::runtime
