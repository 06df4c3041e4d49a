// OpenBLAS and oneDNN wrappers (compiled against whichever was found).
#include "bench/lib/vendor.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>

#include "engine/core/error.h"

#ifdef TESSERA_WITH_OPENBLAS
#include <cblas.h>
#endif
#ifdef TESSERA_WITH_DNNL
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace tessera::bench {

bool openblas_sgemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c,
                    int threads) {
#ifdef TESSERA_WITH_OPENBLAS
    openblas_set_num_threads(threads > 0 ? threads : 1);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(m), int(n), int(k), 1.0f, a, int(k),
                b, int(n), 0.0f, c, int(n));
    return true;
#else
    (void)m, (void)n, (void)k, (void)a, (void)b, (void)c, (void)threads;
    return false;
#endif
}

std::string openblas_core() {
#ifdef TESSERA_WITH_OPENBLAS
    const char* name = openblas_get_corename();
    return name ? name : "unknown";
#else
    return "none";
#endif
}

std::string onednn_isa() {
#ifdef TESSERA_WITH_DNNL
    switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    default: return "isa " + std::to_string(int(dnnl_get_effective_cpu_isa()));
    }
#else
    return "none";
#endif
}

namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

}  // namespace

std::string comparator_pin_warning() {
    __builtin_cpu_init();
    const bool avx512 = __builtin_cpu_supports("avx512f");
    std::string out;
    if (const char* core = std::getenv("OPENBLAS_CORETYPE"); core && *core && avx512) {
        const std::string c = lower(core);
        const bool weak = c.find("skylakex") == std::string::npos &&
                          c.find("cooperlake") == std::string::npos &&
                          c.find("sapphire") == std::string::npos;
        if (weak)
            out += "warning: OPENBLAS_CORETYPE=" + std::string(core) +
                   " pins OpenBLAS to weaker kernels than this AVX-512 CPU runs; for its best "
                   "kernel run with OPENBLAS_CORETYPE=SkylakeX\n";
    }
    for (const char* var : {"ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"}) {
        const char* isa = std::getenv(var);
        if (isa && *isa && avx512 && lower(isa).find("avx512") == std::string::npos &&
            lower(isa) != "all")
            out += "warning: " + std::string(var) + "=" + isa +
                   " limits oneDNN below this CPU's AVX-512\n";
    }
    return out;
}

#ifdef TESSERA_WITH_DNNL
struct OneDnnConv::Impl {
    dnnl::engine eng{dnnl::engine::kind::cpu, 0};
    dnnl::stream strm{eng};
    dnnl::convolution_forward prim;
    dnnl::convolution_forward::primitive_desc pd;
    dnnl::memory src, wei, dst, dst_plain;
};

OneDnnConv::OneDnnConv(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t r,
                       int64_t s, int64_t stride, int64_t pad, const float* x,
                       const float* weights, int threads)
    : m_impl(std::make_unique<Impl>()) {
    (void)threads;  // oneDNN uses OpenMP: the caller sets omp_set_num_threads.
    using tag = dnnl::memory::format_tag;
    using dt = dnnl::memory::data_type;
    int64_t oh = (h + 2 * pad - r) / stride + 1, ow = (w + 2 * pad - s) / stride + 1;
    dnnl::memory::dims src_d = {n, c, h, w}, wei_d = {k, c, r, s}, dst_d = {n, k, oh, ow};
    auto any = [&](const dnnl::memory::dims& d) { return dnnl::memory::desc(d, dt::f32, tag::any); };
    dnnl::convolution_forward::desc desc(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, any(src_d),
        any(wei_d), any(dst_d), {stride, stride}, {pad, pad}, {pad, pad});
    Impl& p = *m_impl;
    p.pd = dnnl::convolution_forward::primitive_desc(desc, p.eng);
    p.prim = dnnl::convolution_forward(p.pd);
    dnnl::memory src_plain({src_d, dt::f32, tag::nchw}, p.eng, const_cast<float*>(x));
    dnnl::memory wei_plain({wei_d, dt::f32, tag::oihw}, p.eng, const_cast<float*>(weights));
    p.src = dnnl::memory(p.pd.src_desc(), p.eng);
    p.wei = dnnl::memory(p.pd.weights_desc(), p.eng);
    p.dst = dnnl::memory(p.pd.dst_desc(), p.eng);
    p.dst_plain = dnnl::memory({dst_d, dt::f32, tag::nchw}, p.eng);
    dnnl::reorder(src_plain, p.src).execute(p.strm, src_plain, p.src);
    dnnl::reorder(wei_plain, p.wei).execute(p.strm, wei_plain, p.wei);
    p.strm.wait();
}

OneDnnConv::~OneDnnConv() = default;

void OneDnnConv::run() {
    Impl& p = *m_impl;
    p.prim.execute(p.strm, {{DNNL_ARG_SRC, p.src}, {DNNL_ARG_WEIGHTS, p.wei}, {DNNL_ARG_DST, p.dst}});
    p.strm.wait();
}

void OneDnnConv::output(float* y) {
    Impl& p = *m_impl;
    dnnl::reorder(p.dst, p.dst_plain).execute(p.strm, p.dst, p.dst_plain);
    p.strm.wait();
    const size_t bytes = p.dst_plain.get_desc().get_size();
    std::memcpy(y, p.dst_plain.get_data_handle(), bytes);
}

const char* OneDnnConv::impl() const { return m_impl->pd.impl_info_str(); }
#else
struct OneDnnConv::Impl {};
OneDnnConv::OneDnnConv(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                       int64_t, const float*, const float*, int) {
    TS_USER_CHECK(false) << "this build has no oneDNN (install libdnnl-dev and rebuild)";
}
OneDnnConv::~OneDnnConv() = default;
void OneDnnConv::run() {}
void OneDnnConv::output(float*) {}
const char* OneDnnConv::impl() const { return "none"; }
#endif

}  // namespace tessera::bench
