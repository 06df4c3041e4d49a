// nn.conv2d lowered and interpreted vs a naive reference: strides, padding,
// bias, depthwise and general groups, dilation.
#include "tests/engine/topi/topi_test_util.h"

namespace tessera::topi::testing {
namespace {

struct ConvParams {
    Shape x, w;
    bool bias = false;
    std::vector<int64_t> strides{1, 1}, pad{0, 0, 0, 0}, dil{1, 1};
    int64_t groups = 1;
    Shape out() const {
        int64_t oh = (x[2] + pad[0] + pad[2] - dil[0] * (w[2] - 1) - 1) / strides[0] + 1;
        int64_t ow = (x[3] + pad[1] + pad[3] - dil[1] * (w[3] - 1) - 1) / strides[1] + 1;
        return {x[0], w[0], oh, ow};
    }
};

Data reference_conv(const ConvParams& p, const Data& x, const Data& w, const Data* b) {
    Shape o = p.out();
    int64_t C = p.x[1], H = p.x[2], W = p.x[3];
    int64_t K = p.w[0], Cg = p.w[1], KH = p.w[2], KW = p.w[3];
    int64_t Kg = K / p.groups;
    Data out(size_t(numel(o)));
    for (int64_t n = 0; n < o[0]; ++n)
        for (int64_t k = 0; k < K; ++k)
            for (int64_t oy = 0; oy < o[2]; ++oy)
                for (int64_t ox = 0; ox < o[3]; ++ox) {
                    double acc = b ? (*b)[size_t(k)] : 0.0;
                    for (int64_t c = 0; c < Cg; ++c)
                        for (int64_t ky = 0; ky < KH; ++ky)
                            for (int64_t kx = 0; kx < KW; ++kx) {
                                int64_t iy = oy * p.strides[0] + ky * p.dil[0] - p.pad[0];
                                int64_t ix = ox * p.strides[1] + kx * p.dil[1] - p.pad[1];
                                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                                int64_t ic = (k / Kg) * Cg + c;
                                acc += double(x[size_t(((n * C + ic) * H + iy) * W + ix)]) *
                                       w[size_t(((k * Cg + c) * KH + ky) * KW + kx)];
                            }
                    out[size_t(((n * K + k) * o[2] + oy) * o[3] + ox)] = float(acc);
                }
    return out;
}

void check_conv(const ConvParams& p) {
    std::vector<Shape> ins = {p.x, p.w};
    if (p.bias) ins.push_back({p.w[0]});
    OneNode t(
        "nn.conv2d", ins, p.out(),
        {{"strides", p.strides}, {"padding", p.pad}, {"dilation", p.dil}, {"groups", p.groups}});
    Data x = random_data(p.x, 1), w = random_data(p.w, 2), b = random_data({p.w[0]}, 3);
    std::vector<Data> args = {x, w};
    if (p.bias) args.push_back(b);
    Data expected = reference_conv(p, x, w, p.bias ? &b : nullptr);
    expect_close(t.run(args), expected);
}

TEST(Conv2d, Plain3x3) {
    ConvParams p;
    p.x = {1, 3, 6, 5};
    p.w = {4, 3, 3, 3};
    check_conv(p);
}

TEST(Conv2d, Stride2Pad1Bias) {
    ConvParams p;
    p.x = {2, 3, 7, 8};
    p.w = {5, 3, 3, 3};
    p.bias = true;
    p.strides = {2, 2};
    p.pad = {1, 1, 1, 1};
    check_conv(p);
}

TEST(Conv2d, AsymmetricPaddingAndStrides) {
    ConvParams p;
    p.x = {1, 2, 6, 7};
    p.w = {3, 2, 2, 3};
    p.bias = true;
    p.strides = {1, 2};
    p.pad = {0, 2, 1, 1};
    check_conv(p);
}

TEST(Conv2d, DepthwiseGroupsEqualChannels) {
    ConvParams p;
    p.x = {1, 4, 6, 6};
    p.w = {4, 1, 3, 3};
    p.groups = 4;
    p.pad = {1, 1, 1, 1};
    p.bias = true;
    check_conv(p);
}

TEST(Conv2d, DepthwiseWithChannelMultiplier) {
    ConvParams p;
    p.x = {1, 3, 5, 5};
    p.w = {6, 1, 3, 3};
    p.groups = 3;
    check_conv(p);
}

TEST(Conv2d, TwoGroups) {
    ConvParams p;
    p.x = {1, 4, 5, 6};
    p.w = {6, 2, 3, 3};
    p.groups = 2;
    p.strides = {2, 1};
    p.pad = {1, 0, 1, 0};
    check_conv(p);
}

TEST(Conv2d, Dilated) {
    ConvParams p;
    p.x = {1, 2, 9, 8};
    p.w = {3, 2, 3, 3};
    p.dil = {2, 3};
    p.pad = {2, 1, 2, 1};
    check_conv(p);
}

TEST(Conv2d, BiasIsSeparateStage) {
    ConvParams p;
    p.x = {1, 2, 4, 4};
    p.w = {3, 2, 3, 3};
    OneNode t("nn.conv2d", {p.x, p.w, {3}}, p.out());
    std::vector<te::Tensor> ins = {te::placeholder(p.x, tir::DataType::float32(), "x"),
                                   te::placeholder(p.w, tir::DataType::float32(), "w"),
                                   te::placeholder({3}, tir::DataType::float32(), "b")};
    auto outs = compute_node(t.g.nodes[0], ins, {t.g.values[3].type});
    ASSERT_EQ(outs.size(), 1u);
    EXPECT_EQ(outs[0]->tag, "broadcast");
    ASSERT_EQ(outs[0]->inputs.size(), 2u);
    const te::Tensor& conv =
        outs[0]->inputs[0].same_as(ins[2]) ? outs[0]->inputs[1] : outs[0]->inputs[0];
    EXPECT_EQ(conv->tag, "conv2d");
    EXPECT_NE(conv->body.as<tir::Reduce>(), nullptr) << "the reduction stays a pure sum";
}

TEST(Conv2d, BadGroupsIsUserError) {
    OneNode t("nn.conv2d", {{1, 4, 5, 5}, {4, 2, 3, 3}}, {1, 4, 3, 3}, {{"groups", int64_t(3)}});
    EXPECT_THROW(lower_node(t.g, t.node), UserError);
}

}  // namespace
}  // namespace tessera::topi::testing
