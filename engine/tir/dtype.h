// Scalar and vector element types of the loop IR (float32, int64, bool, ...).
#pragma once

#include <cstdint>
#include <string>

namespace tessera::tir {

/// An element type: a code, a bit width and a vector lane count.
/// Index arithmetic uses int64; tensor data is usually float32.
struct DataType {
    enum Code : uint8_t { Int, UInt, Float, Bool, Handle };
    Code code = Float;
    uint8_t bits = 32;
    uint16_t lanes = 1;

    static constexpr DataType float32(int lanes = 1) { return {Float, 32, uint16_t(lanes)}; }
    static constexpr DataType float64() { return {Float, 64, 1}; }
    static constexpr DataType int64(int lanes = 1) { return {Int, 64, uint16_t(lanes)}; }
    static constexpr DataType int32(int lanes = 1) { return {Int, 32, uint16_t(lanes)}; }
    static constexpr DataType int8() { return {Int, 8, 1}; }
    static constexpr DataType uint8() { return {UInt, 8, 1}; }
    static constexpr DataType boolean(int lanes = 1) { return {Bool, 1, uint16_t(lanes)}; }
    static constexpr DataType handle() { return {Handle, 64, 1}; }

    bool is_float() const { return code == Float; }
    bool is_int() const { return code == Int; }
    bool is_uint() const { return code == UInt; }
    bool is_bool() const { return code == Bool; }
    bool is_integer() const { return code == Int || code == UInt; }
    bool is_scalar() const { return lanes == 1; }
    bool is_vector() const { return lanes > 1; }
    DataType element_of() const { return {code, bits, 1}; }
    DataType with_lanes(int n) const { return {code, bits, uint16_t(n)}; }
    /// Bytes of one element (bool takes one byte in memory).
    int bytes() const { return code == Bool ? 1 : (bits + 7) / 8; }

    bool operator==(const DataType& o) const {
        return code == o.code && bits == o.bits && lanes == o.lanes;
    }
    bool operator!=(const DataType& o) const { return !(*this == o); }

    /// "float32", "int64", "bool", "float32x8".
    std::string str() const;
    /// Parses the spelling of str(); throws UserError on anything else.
    static DataType parse(const std::string& s);
};

}  // namespace tessera::tir
