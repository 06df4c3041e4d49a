// Candidate measurement in forked workers (see measure.h).
#include "engine/autotune/measure.h"

#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <thread>

#include "engine/codegen/llvm/llvm_codegen.h"
#include "engine/core/error.h"
#include "engine/runtime/kernel_timing.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"
#include "engine/tir/passes/unroll_loops.h"

namespace tessera::autotune {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The worker: warm-up, timed repeats (runtime::time_kernel, as the profiler
// and the studio time kernels), times written to the pipe as doubles.
[[noreturn]] void worker(runtime::KernelFn fn, void** args, const std::vector<size_t>& bytes,
                         const MeasureOptions& o, int fd, double timeout_s) {
    alarm(unsigned(std::ceil(timeout_s)) + 1);  // a backstop; the parent kills first
    // A crashing candidate dies by its signal at once, whatever handler the
    // process installed (a sanitizer's report, a host application's crash
    // handler) would otherwise take the time limit or exit another way.
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) signal(sig, SIG_DFL);
    runtime::TimingOptions timing = o.timing;
    // One thread: its CPU time, which time-slicing with other processes does not inflate.
    timing.cpu_clock = o.timing.cpu_clock && o.threads == 1;
    runtime::time_kernel(fn, args, bytes, timing, [fd](double ms) {
        if (write(fd, &ms, sizeof ms) != ssize_t(sizeof ms)) _exit(3);
        return true;
    });
    _exit(0);
}

struct CodeSize : tir::IRVisitor {
    int64_t mult = 1, size = 0;
    using tir::IRVisitor::visit;
    void visit(const tir::For* op) override {
        const int64_t* e = tir::as_const_int(op->extent);
        const bool copies = op->kind == tir::ForKind::Unrolled && e && *e > 1 &&
                            *e <= tir::kMaxUnrollExtent;
        const int64_t saved = mult;
        if (copies) mult = std::min<int64_t>(mult * *e, int64_t(1) << 40);
        tir::IRVisitor::visit(op);
        mult = saved;
    }
    void visit(const tir::BufferLoad* op) override {
        size += mult;
        tir::IRVisitor::visit(op);
    }
    void visit(const tir::BufferStore* op) override {
        size += mult;
        tir::IRVisitor::visit(op);
    }
};

}  // namespace

int64_t code_size_estimate(const tir::PrimFunc& f) {
    CodeSize c;
    c.visit_stmt(f->body);
    return c.size;
}

double MeasureResult::median_ms() const {
    if (!ok()) return std::numeric_limits<double>::infinity();
    std::vector<double> t = times_ms;
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

TaskMeasurer::TaskMeasurer(const TuneTask& task, const MeasureOptions& o) : m_task(task), m_o(o) {
    const auto& params = task.func->params;
    std::mt19937_64 rng(0x5eed);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    for (size_t i = 0; i < params.size(); ++i) {
        const size_t bytes =
            std::max<size_t>(1, size_t(params[i].num_elements()) * params[i]->dtype.bits / 8);
        void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        TS_CHECK(p != MAP_FAILED) << "cannot map " << bytes << " bytes for measurement";
        m_args.push_back(p);
        m_bytes.push_back(bytes);
        const bool out = int(i) >= int(params.size()) - task.num_outputs;
        m_is_output.push_back(out);
        if (!out && params[i]->dtype == tir::DataType::float32()) {
            float* f = static_cast<float*>(p);
            for (size_t k = 0; k < bytes / 4; ++k) {
                float v = u(rng);
                f[k] = v == 0.f ? 0.5f : v;
            }
        } else {
            std::memset(p, 0, bytes);  // integer inputs (indices) stay valid as zeros
        }
    }
    // Reference output and the baseline time: the default schedule.
    const MeasureOptions limits = m_o;  // the default schedule is exempt from the compile limits
    m_o.max_code_size = std::numeric_limits<int64_t>::max();
    m_o.compile_limit_s = std::numeric_limits<double>::infinity();
    std::vector<Built> b = build({task.default_func});
    m_o.max_code_size = limits.max_code_size;
    m_o.compile_limit_s = limits.compile_limit_s;
    TS_CHECK(b[0].error.empty()) << "default schedule of '" << task.name
                                 << "' does not compile: " << b[0].error;
    m_default_module = b[0].keep;
    m_baseline = run(b[0]);
    m_baseline.compile_s = b[0].compile_s;
    TS_CHECK(m_baseline.times_ms.size() > 0)
        << "default schedule of '" << task.name << "' failed: " << m_baseline.error;
    for (size_t i = 0; i < params.size(); ++i) {
        if (!m_is_output[i] || params[i]->dtype != tir::DataType::float32()) {
            m_reference.emplace_back();
            continue;
        }
        const float* f = static_cast<const float*>(m_args[i]);
        m_reference.emplace_back(f, f + m_bytes[i] / 4);
    }
    m_baseline.error.clear();
}

TaskMeasurer::~TaskMeasurer() {
    for (size_t i = 0; i < m_args.size(); ++i) munmap(m_args[i], m_bytes[i]);
    for (const auto& [key, buf] : m_packed) munmap(buf.first, buf.second);
}

std::vector<Built> TaskMeasurer::build(const std::vector<tir::PrimFunc>& funcs,
                                       const CancelToken* cancel) const {
    std::vector<Built> out(funcs.size());
    codegen::LlvmOptions lo;
    lo.opt_level = m_o.opt_level;
    lo.threads = m_o.threads;
    auto one = [&](size_t i) {
        auto t0 = Clock::now();
        if (cancel && cancel->cancelled()) {
            out[i].error = "cancelled";
            return;
        }
        const int64_t size = code_size_estimate(funcs[i]);
        if (size > m_o.max_code_size) {
            out[i].error = "compile limit: " + std::to_string(size) +
                           " memory accesses after unrolling (limit " +
                           std::to_string(m_o.max_code_size) + ")";
            return;
        }
        try {
            topi::PrepackResult pre =
                topi::prepack_constant_operands(funcs[i], [&](size_t p) {
                    return p < m_task.constant_params.size() && m_task.constant_params[p];
                });
            std::shared_ptr<codegen::JitModule> jit = codegen::jit_compile({pre.func}, lo);
            out[i].fn = jit->lookup(pre.func->name);
            out[i].keep = jit;
            out[i].prepacked = std::move(pre.operands);
        } catch (const std::exception& e) {
            out[i].error = std::string("compile: ") + e.what();
        }
        out[i].compile_s = seconds_since(t0);
        if (out[i].error.empty() && out[i].compile_s > m_o.compile_limit_s) {
            out[i].error = "compile limit: took " + std::to_string(out[i].compile_s) +
                           " s (limit " + std::to_string(m_o.compile_limit_s) + " s)";
            out[i].fn = nullptr;
        }
    };
    const size_t workers = std::max<size_t>(1, size_t(m_o.workers));
    if (workers == 1 || funcs.size() == 1) {
        for (size_t i = 0; i < funcs.size(); ++i) one(i);
        return out;
    }
    std::atomic<size_t> next{0};
    std::vector<std::thread> pool;
    for (size_t w = 0; w < std::min(workers, funcs.size()); ++w)
        pool.emplace_back([&] {
            for (size_t i; (i = next++) < funcs.size();) one(i);
        });
    for (auto& t : pool) t.join();
    return out;
}

MeasureResult TaskMeasurer::run(const Built& built, const CancelToken* cancel) const {
    std::vector<void*> args = m_args;
    std::vector<size_t> bytes = m_bytes;
    for (const topi::PrepackedOperand& op : built.prepacked) {
        const tir::Buffer& x = m_task.func->params[op.param];
        std::lock_guard<std::mutex> lock(m_packed_mutex);
        const auto key = std::make_tuple(op.param, op.tiled_dim, op.factor);
        auto it = m_packed.find(key);
        if (it == m_packed.end()) {
            const std::vector<uint8_t> panels = topi::pack_panels(
                m_args[op.param], op.shape, size_t(x->dtype.bits / 8), op.tiled_dim, op.factor);
            const size_t n = std::max<size_t>(panels.size(), 1);
            void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
            TS_CHECK(p != MAP_FAILED) << "cannot map " << n << " bytes for measurement";
            std::memcpy(p, panels.data(), panels.size());
            it = m_packed.emplace(key, std::make_pair(p, n)).first;
        }
        args[op.param] = it->second.first;
        bytes[op.param] = it->second.second;
    }
    return run_with(built.fn, args, bytes, cancel);
}

MeasureResult TaskMeasurer::run(runtime::KernelFn fn, const CancelToken* cancel) const {
    return run_with(fn, m_args, m_bytes, cancel);
}

MeasureResult TaskMeasurer::run_with(runtime::KernelFn fn, const std::vector<void*>& args,
                                     const std::vector<size_t>& bytes,
                                     const CancelToken* cancel) const {
    MeasureResult r;
    // Outputs start as NaN: a candidate that skips elements fails verification.
    for (size_t i = 0; i < m_args.size(); ++i)
        if (m_is_output[i]) std::memset(m_args[i], 0xff, m_bytes[i]);
    int fds[2];
    TS_CHECK(pipe(fds) == 0) << "pipe: " << std::strerror(errno);
    std::fflush(nullptr);
    // Forked from a fresh thread: an OpenMP runtime keeps its thread pool in
    // the thread that led a parallel region, and a child forked from such a
    // thread inherits a pool whose threads do not exist there (libgomp waits
    // for them forever). A thread that never led one gives the child a new pool.
    pid_t pid = -1;
    std::thread forker([&]() {
        pid = fork();
        if (pid == 0) {
            close(fds[0]);
            worker(fn, const_cast<void**>(args.data()), bytes, m_o, fds[1], m_o.timeout_s);
        }
    });
    forker.join();
    TS_CHECK(pid >= 0) << "fork: " << std::strerror(errno);
    close(fds[1]);
    auto t0 = Clock::now();
    bool timed_out = false, cancelled = false;
    for (;;) {
        pollfd p{fds[0], POLLIN, 0};
        int n = poll(&p, 1, 50);
        if (n > 0) {
            double ms;
            ssize_t got = read(fds[0], &ms, sizeof ms);
            if (got == ssize_t(sizeof ms)) {
                r.times_ms.push_back(ms);
                continue;
            }
            if (got <= 0) break;  // EOF: the worker is done (or died)
        }
        if (cancel && cancel->cancelled()) {
            cancelled = true;
            break;
        }
        if (seconds_since(t0) > m_o.timeout_s) {
            timed_out = true;
            break;
        }
    }
    if (timed_out || cancelled) kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    close(fds[0]);
    if (cancelled) {
        r.error = "cancelled";
    } else if (timed_out || (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)) {
        r.error = "timeout after " + std::to_string(m_o.timeout_s) + " s";
    } else if (WIFSIGNALED(status)) {
        r.error = std::string("crashed: ") + strsignal(WTERMSIG(status));
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        r.error = "worker exited with status " + std::to_string(WEXITSTATUS(status));
    } else if (r.times_ms.empty()) {
        r.error = "no timing";
    } else if (!m_reference.empty()) {
        r.error = verify();
    }
    if (!r.error.empty()) r.times_ms.clear();
    return r;
}

std::string TaskMeasurer::verify() const {
    for (size_t i = 0; i < m_args.size(); ++i) {
        if (m_reference[i].empty()) continue;
        const float* got = static_cast<const float*>(m_args[i]);
        const std::vector<float>& want = m_reference[i];
        for (size_t k = 0; k < want.size(); ++k) {
            const float w = want[k], g = got[k];
            if (std::isnan(w) && std::isnan(g)) continue;
            if (std::isinf(w) && g == w) continue;
            if (!(std::fabs(g - w) <= m_o.atol + m_o.rtol * std::fabs(w)))
                return "wrong result: " + m_task.func->params[i]->name + "[" + std::to_string(k) +
                       "] = " + std::to_string(g) + ", expected " + std::to_string(w);
        }
    }
    return "";
}

MeasureResult TaskMeasurer::measure(const tir::PrimFunc& f, const CancelToken* cancel) const {
    std::vector<Built> b = build({f});
    if (!b[0].error.empty()) {
        MeasureResult r;
        r.error = b[0].error;
        r.compile_s = b[0].compile_s;
        return r;
    }
    MeasureResult r = run(b[0], cancel);
    r.compile_s = b[0].compile_s;
    return r;
}

}  // namespace tessera::autotune
