// The CUDA driver API through dlopen/dlsym: the few entry points Tessera
// needs, declared here with their C signatures (no cuda.h, no libcuda link).
#include "engine/runtime/cuda_driver.h"

#include <dlfcn.h>

#include <mutex>

#include "engine/core/error.h"

namespace tessera::runtime::cuda {

namespace {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = void*;
using CUmodule = void*;
using CUfunction = void*;
using CUevent = void*;
using CUstream = void*;

constexpr int kAttrMaxThreadsPerBlock = 1;
constexpr int kAttrMaxSharedPerBlock = 8;
constexpr int kAttrMaxRegistersPerBlock = 12;
constexpr int kAttrMultiprocessors = 16;
constexpr int kAttrCcMajor = 75;
constexpr int kAttrCcMinor = 76;
constexpr int kJitErrorLogBuffer = 5;
constexpr int kJitErrorLogBufferSize = 6;

struct Api {
    CUresult (*cuInit)(unsigned) = nullptr;
    CUresult (*cuDriverGetVersion)(int*) = nullptr;
    CUresult (*cuDeviceGetCount)(int*) = nullptr;
    CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
    CUresult (*cuDeviceGetName)(char*, int, CUdevice) = nullptr;
    CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice) = nullptr;
    CUresult (*cuDeviceTotalMem)(size_t*, CUdevice) = nullptr;
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
    CUresult (*cuCtxSetCurrent)(CUcontext) = nullptr;
    CUresult (*cuCtxSynchronize)() = nullptr;
    CUresult (*cuMemAlloc)(CUdeviceptr*, size_t) = nullptr;
    CUresult (*cuMemFree)(CUdeviceptr) = nullptr;
    CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t) = nullptr;
    CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t) = nullptr;
    CUresult (*cuModuleLoadDataEx)(CUmodule*, const void*, unsigned, int*, void**) = nullptr;
    CUresult (*cuModuleUnload)(CUmodule) = nullptr;
    CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
    CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                               unsigned, unsigned, CUstream, void**, void**) = nullptr;
    CUresult (*cuEventCreate)(CUevent*, unsigned) = nullptr;
    CUresult (*cuEventRecord)(CUevent, CUstream) = nullptr;
    CUresult (*cuEventSynchronize)(CUevent) = nullptr;
    CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent) = nullptr;
    CUresult (*cuEventDestroy)(CUevent) = nullptr;
    CUresult (*cuGetErrorString)(CUresult, const char**) = nullptr;

    bool ok = false;
    std::string reason;
    CUdevice device = 0;
    CUcontext context = nullptr;
    DeviceInfo info;
    // After a kernel fault: the context is dead for the rest of the process.
    bool faulted = false;
    std::string fault;
};


template <typename F>
bool load_symbol(void* lib, F& fn, std::initializer_list<const char*> names) {
    for (const char* n : names) {
        if (void* p = dlsym(lib, n)) {
            fn = reinterpret_cast<F>(p);
            return true;
        }
    }
    return false;
}

std::string error_text(const Api& api, CUresult r) {
    const char* s = nullptr;
    if (api.cuGetErrorString && api.cuGetErrorString(r, &s) == 0 && s) return s;
    return "CUDA error " + std::to_string(r);
}

Api& api_instance() {
    static Api api;
    static std::once_flag once;
    std::call_once(once, [] {
        void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            api.reason = "no CUDA device is available (libcuda.so.1 not found)";
            return;
        }
#define TS_SYM(field, ...)                                                                   \
    if (!load_symbol(lib, api.field, {__VA_ARGS__})) {                                       \
        api.reason = "no CUDA device is available (libcuda.so.1 lacks " #field ")";          \
        return;                                                                              \
    }
        TS_SYM(cuInit, "cuInit")
        TS_SYM(cuDriverGetVersion, "cuDriverGetVersion")
        TS_SYM(cuDeviceGetCount, "cuDeviceGetCount")
        TS_SYM(cuDeviceGet, "cuDeviceGet")
        TS_SYM(cuDeviceGetName, "cuDeviceGetName")
        TS_SYM(cuDeviceGetAttribute, "cuDeviceGetAttribute")
        TS_SYM(cuDeviceTotalMem, "cuDeviceTotalMem_v2")
        TS_SYM(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")
        TS_SYM(cuCtxSetCurrent, "cuCtxSetCurrent")
        TS_SYM(cuCtxSynchronize, "cuCtxSynchronize")
        TS_SYM(cuMemAlloc, "cuMemAlloc_v2")
        TS_SYM(cuMemFree, "cuMemFree_v2")
        TS_SYM(cuMemcpyHtoD, "cuMemcpyHtoD_v2")
        TS_SYM(cuMemcpyDtoH, "cuMemcpyDtoH_v2")
        TS_SYM(cuModuleLoadDataEx, "cuModuleLoadDataEx")
        TS_SYM(cuModuleUnload, "cuModuleUnload")
        TS_SYM(cuModuleGetFunction, "cuModuleGetFunction")
        TS_SYM(cuLaunchKernel, "cuLaunchKernel")
        TS_SYM(cuEventCreate, "cuEventCreate")
        TS_SYM(cuEventRecord, "cuEventRecord")
        TS_SYM(cuEventSynchronize, "cuEventSynchronize")
        TS_SYM(cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime")
        TS_SYM(cuEventDestroy, "cuEventDestroy_v2")
        TS_SYM(cuGetErrorString, "cuGetErrorString")
#undef TS_SYM
        if (CUresult r = api.cuInit(0); r != 0) {
            api.reason = "no CUDA device is available (cuInit failed: " + error_text(api, r) + ")";
            return;
        }
        int count = 0;
        if (api.cuDeviceGetCount(&count) != 0 || count == 0) {
            api.reason = "no CUDA device is available (the driver reports no device)";
            return;
        }
        if (CUresult r = api.cuDeviceGet(&api.device, 0); r != 0) {
            api.reason = "no CUDA device is available (" + error_text(api, r) + ")";
            return;
        }
        if (CUresult r = api.cuDevicePrimaryCtxRetain(&api.context, api.device); r != 0) {
            api.reason = "no CUDA device is available (no context: " + error_text(api, r) + ")";
            return;
        }
        char name[256] = {};
        api.cuDeviceGetName(name, sizeof name - 1, api.device);
        DeviceInfo& d = api.info;
        d.name = name;
        auto attr = [&](int a) {
            int v = 0;
            api.cuDeviceGetAttribute(&v, a, api.device);
            return v;
        };
        d.cc_major = attr(kAttrCcMajor);
        d.cc_minor = attr(kAttrCcMinor);
        d.multiprocessors = attr(kAttrMultiprocessors);
        d.max_threads_per_block = attr(kAttrMaxThreadsPerBlock);
        d.max_shared_per_block = attr(kAttrMaxSharedPerBlock);
        d.registers_per_block = attr(kAttrMaxRegistersPerBlock);
        size_t mem = 0;
        api.cuDeviceTotalMem(&mem, api.device);
        d.total_memory = int64_t(mem);
        api.cuDriverGetVersion(&d.driver_version);
        api.ok = true;
    });
    return api;
}

// The API with the primary context current on this thread.
Api& api() {
    Api& a = api_instance();
    TS_USER_CHECK(a.ok) << a.reason;
    if (a.faulted)
        throw DeviceFault("the GPU context is unusable after a kernel fault (" + a.fault +
                          "); nothing runs on the GPU in this process any more");
    a.cuCtxSetCurrent(a.context);
    return a;
}

// The errors after which the context is unusable (CUDA's "sticky" errors):
// illegal address, launch timeout, hardware stack error, illegal
// instruction, misaligned address, invalid address space, invalid PC,
// launch failed.
bool sticky(CUresult r) { return r == 700 || r == 702 || (r >= 714 && r <= 719); }

// Throws for a failed call: DeviceFault (and the context marked faulted) for
// a kernel fault, InternalError for anything else.
void fail(CUresult r, const std::string& what) {
    Api& a = api_instance();
    if (sticky(r)) {
        a.faulted = true;
        a.fault = error_text(a, r);
        throw DeviceFault(what + ": " + a.fault);
    }
    TS_CHECK(false) << what << ": " << error_text(a, r);
}

void check(CUresult r, const char* what) {
    if (r != 0) fail(r, std::string("CUDA ") + what + " failed");
}

}  // namespace

bool available() { return api_instance().ok; }

std::string unavailable_reason() { return api_instance().ok ? "" : api_instance().reason; }

const DeviceInfo& device_info() { return api().info; }

void require_available(const std::string& what) {
    TS_USER_CHECK(available()) << what << ": " << unavailable_reason();
}

bool faulted() { return api_instance().faulted; }

DeviceBuffer::DeviceBuffer(size_t bytes) : m_bytes(bytes) {
    Api& a = api();
    CUdeviceptr p = 0;
    CUresult r = a.cuMemAlloc(&p, bytes == 0 ? 1 : bytes);
    m_ptr = p;
    TS_USER_CHECK(r == 0) << "cannot allocate " << bytes << " bytes of GPU memory: "
                          << error_text(a, r);
}

DeviceBuffer::~DeviceBuffer() {
    if (m_ptr) {
        Api& a = api_instance();
        a.cuCtxSetCurrent(a.context);
        a.cuMemFree(m_ptr);
    }
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept : m_ptr(o.m_ptr), m_bytes(o.m_bytes) {
    o.m_ptr = 0;
    o.m_bytes = 0;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
        DeviceBuffer tmp(std::move(*this));
        m_ptr = o.m_ptr;
        m_bytes = o.m_bytes;
        o.m_ptr = 0;
        o.m_bytes = 0;
    }
    return *this;
}

void DeviceBuffer::copy_from_host(const void* src, size_t bytes) {
    TS_CHECK(bytes <= m_bytes) << "host-to-device copy of " << bytes << " bytes into " << m_bytes;
    if (bytes) check(api().cuMemcpyHtoD(m_ptr, src, bytes), "host-to-device copy");
}

void DeviceBuffer::copy_to_host(void* dst, size_t bytes) const {
    TS_CHECK(bytes <= m_bytes) << "device-to-host copy of " << bytes << " bytes from " << m_bytes;
    if (bytes) check(api().cuMemcpyDtoH(dst, m_ptr, bytes), "device-to-host copy");
}

Module::Module(const std::string& image) {
    Api& a = api();
    std::string log(8192, '\0');
    int opts[2] = {kJitErrorLogBuffer, kJitErrorLogBufferSize};
    void* vals[2] = {log.data(), reinterpret_cast<void*>(uintptr_t(log.size()))};
    CUresult r = a.cuModuleLoadDataEx(&m_module, image.c_str(), 2, opts, vals);
    log.resize(log.find('\0') == std::string::npos ? log.size() : log.find('\0'));
    TS_USER_CHECK(r == 0) << "the GPU driver cannot load the compiled kernels: " << error_text(a, r)
                          << (log.empty() ? "" : "; " + log)
                          << " (PTX from NVRTC 13 needs a CUDA 13 driver)";
}

Module::~Module() {
    if (m_module) {
        Api& a = api_instance();
        a.cuCtxSetCurrent(a.context);
        a.cuModuleUnload(m_module);
    }
}

void* Module::function(const std::string& name) {
    for (auto& [n, f] : m_functions)
        if (n == name) return f;
    CUfunction f = nullptr;
    check(api().cuModuleGetFunction(&f, m_module, name.c_str()), "cuModuleGetFunction");
    m_functions.emplace_back(name, f);
    return f;
}

void Module::launch(const std::string& name, const std::array<int64_t, 3>& grid,
                    const std::array<int64_t, 3>& block, int64_t shared_bytes,
                    const std::vector<uint64_t>& args) {
    void* f = function(name);
    std::vector<uint64_t> values = args;
    std::vector<void*> params;
    for (uint64_t& v : values) params.push_back(&v);
    CUresult r = api().cuLaunchKernel(f, unsigned(grid[0]), unsigned(grid[1]), unsigned(grid[2]),
                                      unsigned(block[0]), unsigned(block[1]), unsigned(block[2]),
                                      unsigned(shared_bytes), nullptr, params.data(), nullptr);
    if (r != 0) fail(r, "launch of kernel '" + name + "' failed");
}

void synchronize() {
    CUresult r = api().cuCtxSynchronize();
    if (r != 0) fail(r, "a GPU kernel failed");
}

Event::Event() { check(api().cuEventCreate(&m_event, 0), "cuEventCreate"); }

Event::~Event() {
    if (m_event) api_instance().cuEventDestroy(m_event);
}

void Event::record() { check(api().cuEventRecord(m_event, nullptr), "cuEventRecord"); }

float Event::elapsed_ms_since(const Event& start) const {
    Api& a = api();
    check(a.cuEventSynchronize(m_event), "cuEventSynchronize");
    float ms = 0;
    check(a.cuEventElapsedTime(&ms, start.m_event, m_event), "cuEventElapsedTime");
    return ms;
}

}  // namespace tessera::runtime::cuda
