// Winograd minimal filtering F(m x m, 3 x 3) (Lavin & Gray): the constant
// transform matrices and the compile-time weight transform U = G g G^T of
// nn.conv2d_winograd_NCHWc.
#pragma once

#include <cstdint>
#include <vector>

namespace tessera::topi {

/// The transforms of F(m x m, 3 x 3), alpha = m + 2, row-major doubles:
/// Y = A^T [(G g G^T) .* (B^T d B)] A computes the 3 x 3 correlation of an
/// alpha x alpha input tile d with the filter g as an m x m output tile.
struct WinogradMatrices {
    int m = 0, alpha = 0;
    std::vector<double> AT;  // m x alpha
    std::vector<double> BT;  // alpha x alpha
    std::vector<double> G;   // alpha x 3
};

/// The matrices for output tile m = 2 or 4; throws UserError otherwise.
const WinogradMatrices& winograd_matrices(int64_t m);

/// Packed OIHW[ib]i[ob]o 3x3 weights (OCo, ICo, 3, 3, ib, ob) transformed
/// into U = G g G^T per (output, input) channel pair, laid out
/// (alpha, alpha, OCo, ICo, ib, ob), computed in double precision.
std::vector<float> winograd_transform_weight(const std::vector<float>& packed, int64_t OCo,
                                             int64_t ICo, int64_t ib, int64_t ob, int64_t m);

}  // namespace tessera::topi
