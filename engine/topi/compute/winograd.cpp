// Winograd F(2x2,3x3) / F(4x4,3x3) transform matrices and the weight transform.
#include "engine/topi/compute/winograd.h"

#include "engine/core/error.h"

namespace tessera::topi {

const WinogradMatrices& winograd_matrices(int64_t m) {
    // Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks" (2015).
    static const WinogradMatrices f2 = {
        2,
        4,
        {1, 1, 1, 0,  //
         0, 1, -1, -1},
        {1, 0, -1, 0,  //
         0, 1, 1, 0,   //
         0, -1, 1, 0,  //
         0, 1, 0, -1},
        {1, 0, 0,        //
         0.5, 0.5, 0.5,  //
         0.5, -0.5, 0.5, //
         0, 0, 1}};
    static const WinogradMatrices f4 = {
        4,
        6,
        {1, 1, 1, 1, 1, 0,    //
         0, 1, -1, 2, -2, 0,  //
         0, 1, 1, 4, 4, 0,    //
         0, 1, -1, 8, -8, 1},
        {4, 0, -5, 0, 1, 0,    //
         0, -4, -4, 1, 1, 0,   //
         0, 4, -4, -1, 1, 0,   //
         0, -2, -1, 2, 1, 0,   //
         0, 2, -1, -2, 1, 0,   //
         0, 4, 0, -5, 0, 1},
        {1.0 / 4, 0, 0,                    //
         -1.0 / 6, -1.0 / 6, -1.0 / 6,     //
         -1.0 / 6, 1.0 / 6, -1.0 / 6,      //
         1.0 / 24, 1.0 / 12, 1.0 / 6,      //
         1.0 / 24, -1.0 / 12, 1.0 / 6,     //
         0, 0, 1}};
    TS_USER_CHECK(m == 2 || m == 4) << "winograd: output tile must be 2 or 4, got " << m;
    return m == 2 ? f2 : f4;
}

std::vector<float> winograd_transform_weight(const std::vector<float>& packed, int64_t OCo,
                                             int64_t ICo, int64_t ib, int64_t ob, int64_t m) {
    const WinogradMatrices& W = winograd_matrices(m);
    const int64_t a = W.alpha;
    TS_CHECK(int64_t(packed.size()) == OCo * ICo * 9 * ib * ob) << "winograd weight size";
    std::vector<float> u(size_t(a * a * OCo * ICo * ib * ob));
    for (int64_t oc = 0; oc < OCo; ++oc)
        for (int64_t ic = 0; ic < ICo; ++ic)
            for (int64_t i = 0; i < ib; ++i)
                for (int64_t o = 0; o < ob; ++o) {
                    double g[3][3], t[6][3];
                    for (int r = 0; r < 3; ++r)
                        for (int s = 0; s < 3; ++s)
                            g[r][s] = packed[size_t(((((oc * ICo + ic) * 3 + r) * 3 + s) * ib + i) * ob + o)];
                    for (int64_t e = 0; e < a; ++e)  // t = G g
                        for (int s = 0; s < 3; ++s) {
                            double acc = 0;
                            for (int r = 0; r < 3; ++r) acc += W.G[size_t(e * 3 + r)] * g[r][s];
                            t[e][s] = acc;
                        }
                    for (int64_t e = 0; e < a; ++e)  // U = t G^T
                        for (int64_t n = 0; n < a; ++n) {
                            double acc = 0;
                            for (int s = 0; s < 3; ++s) acc += t[e][s] * W.G[size_t(n * 3 + s)];
                            u[size_t(((((e * a + n) * OCo + oc) * ICo + ic) * ib + i) * ob + o)] =
                                float(acc);
                        }
                }
    return u;
}

}  // namespace tessera::topi
