// GPU measurements in a worker process (see gpu_measure_worker.h). The two
// processes talk over a socket pair (no SIGPIPE when the other side died):
// each message is a kind byte, a length and a payload of plain values.
#include "engine/driver/gpu_measure_worker.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <thread>

#include "engine/core/error.h"

namespace tessera::driver {

namespace fs = std::filesystem;

namespace {

// A candidate that keeps the worker busy this long is stopped (a kernel
// that never ends): the trial fails, the next one gets a fresh worker.
constexpr int kReplyTimeoutMs = 120000;

class Writer {
public:
    template <typename T>
    void pod(const T& v) {
        const char* p = reinterpret_cast<const char*>(&v);
        m_out.append(p, sizeof v);
    }
    void bytes(const void* p, size_t n) {
        pod(uint64_t(n));
        m_out.append(static_cast<const char*>(p), n);
    }
    void str(const std::string& s) { bytes(s.data(), s.size()); }
    void array(const runtime::NDArray& a) {
        pod(uint8_t(a.type().dtype));
        pod(uint64_t(a.type().shape.size()));
        for (int64_t d : a.type().shape) pod(d);
        bytes(a.raw(), a.num_bytes());
    }
    const std::string& text() const { return m_out; }

private:
    std::string m_out;
};

class Reader {
public:
    explicit Reader(const std::string& in) : m_in(in) {}
    template <typename T>
    T pod() {
        T v{};
        TS_CHECK(m_pos + sizeof v <= m_in.size()) << "GPU worker message cut short";
        std::memcpy(&v, m_in.data() + m_pos, sizeof v);
        m_pos += sizeof v;
        return v;
    }
    std::string str() {
        uint64_t n = pod<uint64_t>();
        TS_CHECK(m_pos + n <= m_in.size()) << "GPU worker message cut short";
        std::string s = m_in.substr(m_pos, n);
        m_pos += n;
        return s;
    }
    runtime::NDArray array() {
        graph::TensorType t;
        t.dtype = graph::DType(pod<uint8_t>());
        uint64_t rank = pod<uint64_t>();
        for (uint64_t i = 0; i < rank; ++i) t.shape.push_back(pod<int64_t>());
        std::string data = str();
        runtime::NDArray a = runtime::NDArray::empty(t);
        TS_CHECK(data.size() == a.num_bytes()) << "GPU worker array of the wrong size";
        std::memcpy(a.raw(), data.data(), data.size());
        return a;
    }

private:
    const std::string& m_in;
    size_t m_pos = 0;
};

bool send_all(int fd, const char* p, size_t n) {
    while (n > 0) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        p += k;
        n -= size_t(k);
    }
    return true;
}

bool send_message(int fd, char kind, const std::string& payload) {
    Writer head;
    head.pod(kind);
    head.pod(uint64_t(payload.size()));
    return send_all(fd, head.text().data(), head.text().size()) &&
           send_all(fd, payload.data(), payload.size());
}

// Reads exactly n bytes; false on end of file, error or (timeout_ms >= 0) time out.
bool recv_all(int fd, char* p, size_t n, int timeout_ms, bool* timed_out) {
    while (n > 0) {
        if (timeout_ms >= 0) {
            pollfd pfd{fd, POLLIN, 0};
            int r = poll(&pfd, 1, timeout_ms);
            if (r < 0 && errno == EINTR) continue;
            if (r == 0 && timed_out) *timed_out = true;
            if (r <= 0) return false;
        }
        ssize_t k = recv(fd, p, n, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        p += k;
        n -= size_t(k);
    }
    return true;
}

bool recv_message(int fd, char& kind, std::string& payload, int timeout_ms, bool* timed_out) {
    char head[sizeof(char) + sizeof(uint64_t)];
    if (!recv_all(fd, head, sizeof head, timeout_ms, timed_out)) return false;
    kind = head[0];
    uint64_t n = 0;
    std::memcpy(&n, head + 1, sizeof n);
    payload.assign(n, '\0');
    return recv_all(fd, payload.data(), n, timeout_ms, timed_out);
}

void write_plan(Writer& w, const GpuLaunchPlan& p) {
    w.str(p.ptx);
    w.pod(uint64_t(p.kernels.size()));
    for (size_t k = 0; k < p.kernels.size(); ++k) {
        w.str(p.kernels[k]);
        for (int64_t v : p.grids[k]) w.pod(v);
        for (int64_t v : p.blocks[k]) w.pod(v);
        w.pod(p.shared_bytes[k]);
        w.pod(uint64_t(p.args[k].size()));
        for (int a : p.args[k]) w.pod(int32_t(a));
    }
    w.pod(uint64_t(p.workspace_bytes.size()));
    for (int64_t b : p.workspace_bytes) w.pod(b);
}

GpuLaunchPlan read_plan(Reader& r) {
    GpuLaunchPlan p;
    p.ptx = r.str();
    uint64_t n = r.pod<uint64_t>();
    for (uint64_t k = 0; k < n; ++k) {
        p.kernels.push_back(r.str());
        std::array<int64_t, 3> g{}, b{};
        for (int64_t& v : g) v = r.pod<int64_t>();
        for (int64_t& v : b) v = r.pod<int64_t>();
        p.grids.push_back(g);
        p.blocks.push_back(b);
        p.shared_bytes.push_back(r.pod<int64_t>());
        uint64_t na = r.pod<uint64_t>();
        p.args.emplace_back();
        for (uint64_t i = 0; i < na; ++i) p.args.back().push_back(r.pod<int32_t>());
    }
    uint64_t nw = r.pod<uint64_t>();
    for (uint64_t i = 0; i < nw; ++i) p.workspace_bytes.push_back(r.pod<int64_t>());
    return p;
}

}  // namespace

// The worker's loop: task arrays ('A') and measurements ('M') in, times
// ('T'), errors ('E') or a fault ('F', then the end) out.
void gpu_measure_worker_main(int fd) {
    struct Task {
        GpuTaskArrays arrays;
        std::unique_ptr<GpuTaskBuffers> buffers;
    };
    std::map<uint64_t, Task> tasks;
    char kind = 0;
    std::string in;
    while (recv_message(fd, kind, in, -1, nullptr)) {
        Reader r(in);
        if (kind == 'A') {
            Task& t = tasks[r.pod<uint64_t>()];
            t.arrays.first_output = r.pod<uint64_t>();
            uint64_t n = r.pod<uint64_t>(), m = r.pod<uint64_t>();
            for (uint64_t i = 0; i < n; ++i) t.arrays.host.push_back(r.array());
            for (uint64_t i = 0; i < m; ++i) t.arrays.expected.push_back(r.array());
            t.buffers.reset();
            continue;
        }
        Writer out;
        char reply = 'T';
        try {
            Task& t = tasks.at(r.pod<uint64_t>());
            std::string name = r.str();
            int repeat = r.pod<int32_t>();
            double cutoff = r.pod<double>();
            GpuLaunchPlan plan = read_plan(r);
            if (!t.buffers) t.buffers = std::make_unique<GpuTaskBuffers>(t.arrays);
            std::vector<double> times =
                measure_launch_plan(plan, name, t.arrays, *t.buffers, repeat, cutoff);
            out.pod(uint64_t(times.size()));
            for (double v : times) out.pod(v);
        } catch (const runtime::cuda::DeviceFault& e) {
            Writer fault;
            fault.str(e.what());
            send_message(fd, 'F', fault.text());
            _exit(3);  // the context is dead for this process
        } catch (const std::exception& e) {
            reply = 'E';
            out = Writer();
            out.str(e.what());
        }
        if (!send_message(fd, reply, out.text())) break;
    }
    _exit(0);
}

std::string gpu_worker_program() {
    auto runnable = [](const fs::path& p) { return access(p.c_str(), X_OK) == 0; };
    if (const char* env = std::getenv("TESSERA_GPU_WORKER"); env && *env)
        return runnable(env) ? std::string(env) : std::string();
    std::error_code ec;
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (ec) return "";
    for (const fs::path& p : {exe.parent_path() / "tessera-gpu-worker",
                              exe.parent_path().parent_path() / "bin" / "tessera-gpu-worker"})
        if (runnable(p)) return p.string();
    return "";
}

GpuTaskBuffers::GpuTaskBuffers(const GpuTaskArrays& a) {
    for (size_t i = 0; i < a.host.size(); ++i) {
        dev.emplace_back(std::max<size_t>(a.host[i].num_bytes(), 4));
        if (i < a.first_output) dev.back().copy_from_host(a.host[i].raw(), a.host[i].num_bytes());
    }
}

std::vector<double> measure_launch_plan(const GpuLaunchPlan& c, const std::string& name,
                                        const GpuTaskArrays& d, GpuTaskBuffers& b, int repeat,
                                        double cutoff_ms) {
    runtime::cuda::Module module(c.ptx);
    std::vector<runtime::cuda::DeviceBuffer> ws;  // intermediate global buffers
    for (int64_t bytes : c.workspace_bytes) ws.emplace_back(std::max<size_t>(size_t(bytes), 4));
    std::vector<std::vector<uint64_t>> args;
    for (const std::vector<int>& ka : c.args) {
        args.emplace_back();
        for (int i : ka)
            args.back().push_back(size_t(i) < b.dev.size() ? b.dev[size_t(i)].ptr()
                                                           : ws.at(size_t(i) - b.dev.size()).ptr());
    }
    auto launch_all = [&] {
        for (size_t k = 0; k < c.kernels.size(); ++k)
            module.launch(c.kernels[k], c.grids[k], c.blocks[k], c.shared_bytes[k], args[k]);
    };
    for (size_t p = d.first_output; p < d.host.size() && !d.expected.empty(); ++p) {
        // Outputs zeroed: a candidate that skips elements cannot pass on an earlier one's.
        runtime::NDArray zero = runtime::NDArray::empty(d.host[p].type());
        b.dev[p].copy_from_host(zero.raw(), zero.num_bytes());
    }
    launch_all();
    runtime::cuda::synchronize();
    if (!d.expected.empty()) {
        for (size_t p = d.first_output; p < d.host.size(); ++p) {
            runtime::NDArray got = runtime::NDArray::empty(d.host[p].type());
            b.dev[p].copy_to_host(got.raw(), got.num_bytes());
            TS_USER_CHECK(runtime::allclose(got, d.expected[p], 1e-3, 1e-4))
                << name << ": the candidate's output " << p << " differs from the interpreter's";
        }
    }
    std::vector<double> times;
    for (int r = 0; r < repeat; ++r) {
        runtime::cuda::Event start, stop;
        start.record();
        launch_all();
        stop.record();
        times.push_back(stop.elapsed_ms_since(start));
        if (times.front() > cutoff_ms) break;
    }
    return times;
}

std::unique_ptr<GpuMeasureWorker> GpuMeasureWorker::start() {
    const std::string program = gpu_worker_program();
    if (program.empty()) return nullptr;
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return nullptr;
    pid_t pid = -1;
    // Forked from a fresh thread (as the CPU measure workers), then the
    // worker program: a fresh process, since CUDA cannot be used in a mere
    // fork of a process that loaded it (on an H200, cuInit in such a child
    // failed once the tuner had loaded NVRTC).
    std::thread forker([&] {
        pid = fork();
        if (pid != 0) return;
        close(fds[0]);
        // The worker program reads and writes descriptor 3.
        if (fds[1] == 3)
            fcntl(3, F_SETFD, 0);
        else if (dup2(fds[1], 3) != 3)
            _exit(127);
        execl(program.c_str(), program.c_str(), static_cast<char*>(nullptr));
        _exit(127);
    });
    forker.join();
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return nullptr;
    }
    std::unique_ptr<GpuMeasureWorker> w(new GpuMeasureWorker());
    w->m_pid = pid;
    w->m_to = w->m_from = fds[0];
    return w;
}

GpuMeasureWorker::~GpuMeasureWorker() {
    if (m_pid > 0) {
        close(m_to);  // the worker reads the end and leaves
        waitpid(m_pid, nullptr, 0);
    }
}

std::string GpuMeasureWorker::reap() {
    close(m_to);
    int status = 0;
    waitpid(m_pid, &status, 0);
    m_pid = -1;
    if (WIFSIGNALED(status))
        return "the GPU measure worker ended by signal " + std::to_string(WTERMSIG(status)) + " (" +
               strsignal(WTERMSIG(status)) + ")";
    return "the GPU measure worker ended (exit " + std::to_string(WEXITSTATUS(status)) + ")";
}

GpuMeasureWorker::Result GpuMeasureWorker::measure(size_t task, const GpuTaskArrays& arrays,
                                                   const GpuLaunchPlan& plan,
                                                   const std::string& name, int repeat,
                                                   double cutoff_ms) {
    Result res;
    TS_CHECK(alive()) << "GPU measure worker used after it ended";
    bool ok = true;
    if (task >= m_sent.size()) m_sent.resize(task + 1, false);
    if (!m_sent[task]) {
        Writer w;
        w.pod(uint64_t(task));
        w.pod(uint64_t(arrays.first_output));
        w.pod(uint64_t(arrays.host.size()));
        w.pod(uint64_t(arrays.expected.size()));
        for (const auto& a : arrays.host) w.array(a);
        for (const auto& a : arrays.expected) w.array(a);
        ok = send_message(m_to, 'A', w.text());
        m_sent[task] = ok;
    }
    Writer w;
    w.pod(uint64_t(task));
    w.str(name);
    w.pod(int32_t(repeat));
    w.pod(cutoff_ms);
    write_plan(w, plan);
    ok = ok && send_message(m_to, 'M', w.text());
    char kind = 0;
    std::string in;
    bool timed_out = false;
    ok = ok && recv_message(m_from, kind, in, kReplyTimeoutMs, &timed_out);
    if (!ok) {
        if (timed_out) kill(m_pid, SIGKILL);
        res.worker_died = true;
        std::string how = reap();
        res.error = timed_out ? name + ": the candidate ran for over " +
                                    std::to_string(kReplyTimeoutMs / 1000) +
                                    " s; the GPU measure worker was stopped"
                              : name + ": " + how;
        return res;
    }
    Reader r(in);
    if (kind == 'T') {
        uint64_t n = r.pod<uint64_t>();
        for (uint64_t i = 0; i < n; ++i) res.times.push_back(r.pod<double>());
    } else if (kind == 'E') {
        res.error = r.str();
    } else {  // 'F': the kernel faulted; the worker ends
        res.error = "the kernel faulted on the GPU (" + r.str() + "); " + reap();
        res.worker_died = true;
    }
    return res;
}

}  // namespace tessera::driver
