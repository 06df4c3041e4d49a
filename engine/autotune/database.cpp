// The JSON-lines tuning database (see database.h).
#include "engine/autotune/database.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <thread>

#include <nlohmann/json.hpp>

#include "engine/codegen/llvm/llvm_codegen.h"
#include "engine/core/error.h"

namespace tessera::autotune {

double TuningRecord::median_ms() const {
    if (!ok()) return std::numeric_limits<double>::infinity();
    std::vector<double> t = times_ms;
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

std::string TuningRecord::to_json_line() const {
    nlohmann::json j;
    j["workload"] = workload;
    j["target"] = target;
    j["task"] = task;
    j["trace"] = nlohmann::json::parse(trace.to_json());
    j["decisions"] = decisions.empty() ? nlohmann::json::array() : nlohmann::json::parse(decisions);
    j["times_ms"] = times_ms;
    j["error"] = error;
    j["flops"] = flops;
    j["timestamp"] = timestamp;
    j["machine"] = machine;
    if (baseline) j["baseline"] = true;
    if (threads >= 0) j["threads"] = threads;
    if (confirmed) j["confirmed"] = true;
    j["opt_level"] = opt_level;
    if (!device.empty()) j["device"] = device;
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

TuningRecord TuningRecord::from_json_line(const std::string& line, const std::string& origin) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    TS_USER_CHECK(j.is_object() && j.contains("workload") && j.contains("trace"))
        << origin << ": not a tuning record";
    TuningRecord r;
    try {
        r.workload = j.at("workload").get<std::string>();
        r.target = j.value("target", "llvm");
        r.task = j.value("task", "");
        r.trace = schedule::Trace::from_json(j.at("trace").dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), origin);
        if (j.contains("decisions")) r.decisions = j["decisions"].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        if (j.contains("times_ms")) r.times_ms = j["times_ms"].get<std::vector<double>>();
        r.error = j.value("error", "");
        r.flops = j.value("flops", 0.0);
        r.timestamp = j.value("timestamp", 0.0);
        r.machine = j.value("machine", "");
        r.baseline = j.value("baseline", false);
        r.threads = j.value("threads", -1);
        r.confirmed = j.value("confirmed", false);
        r.device = j.value("device", "");  // absent in CPU and older "cuda" records
        r.opt_level = j.value("opt_level", kDefaultRecordOptLevel);  // absent in older records
        TS_USER_CHECK(r.opt_level >= 0 && r.opt_level <= 3)
            << origin << ": opt_level must be 0..3, got " << r.opt_level;
    } catch (const nlohmann::json::exception& e) {
        throw UserError(origin + ": bad tuning record: " + e.what());
    }
    return r;
}

Database::Database(const std::string& path, bool read_only) : m_path(path) {
    if (path.empty()) return;
    TS_USER_CHECK(!read_only || std::ifstream(path).good())
        << "tuning records '" << path << "' not found";
    if (!read_only) {
        // Lock before reading: a second writer would interleave its records.
        m_fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        TS_USER_CHECK(m_fd >= 0) << "cannot open tuning database '" << path
                                 << "' for writing: " << std::strerror(errno);
        if (::flock(m_fd, LOCK_EX | LOCK_NB) != 0) {
            const int err = errno;
            ::close(m_fd);
            m_fd = -1;
            TS_USER_FAIL() << "tuning database '" << path << "' "
                           << (err == EWOULDBLOCK
                                   ? "is in use by another process (a running `tessera tune` "
                                     "holds its lock): wait for it, or give another --records file"
                                   : std::string("cannot be locked: ") + std::strerror(err));
        }
    }
    std::ifstream in(path, std::ios::binary);
    std::string line;
    int n = 0;
    bool ends_with_newline = true;
    while (std::getline(in, line)) {
        ++n;
        ends_with_newline = !in.eof();
        if (line.empty()) continue;
        try {
            m_records.push_back(TuningRecord::from_json_line(line, path + ":" + std::to_string(n)));
            index(m_records.size() - 1);
        } catch (const UserError& e) {
            // A torn write (kill -9 mid-line) or a damaged line: the rest of
            // the file is still good; say which lines were left out.
            if (m_skipped++ == 0) m_first_skipped = e.what();
        }
    }
    // A torn last line without its newline must not glue onto the next record.
    if (m_fd >= 0 && n > 0 && !ends_with_newline) write_all("\n");
}

Database::~Database() {
    if (m_fd < 0) return;
    ::fsync(m_fd);
    ::close(m_fd);  // releases the lock
}

void Database::write_all(const std::string& text) {
    // O_APPEND: one write() puts the whole line at the end; retried only
    // for the rest of a short write (a full disk, a signal).
    size_t done = 0;
    while (done < text.size()) {
        ssize_t w = ::write(m_fd, text.data() + done, text.size() - done);
        if (w < 0 && errno == EINTR) continue;
        TS_USER_CHECK(w > 0) << "cannot write to tuning database '" << m_path
                             << "': " << std::strerror(errno);
        done += size_t(w);
    }
}

void Database::sync() {
    if (m_fd < 0) return;
    TS_USER_CHECK(::fsync(m_fd) == 0)
        << "cannot sync tuning database '" << m_path << "': " << std::strerror(errno);
}

bool Database::is_local(const TuningRecord& r) {
    static const std::string here = machine_fingerprint();
    if (!r.device.empty()) return true;  // keyed to its GPU (search_gpu.h)
    return r.machine.empty() || r.machine == here;
}

void Database::index(size_t i) {
    const TuningRecord& r = m_records[i];
    if (!is_local(r)) {
        ++m_foreign;
        return;
    }
    const std::string level = std::to_string(r.opt_level);
    if (!r.baseline && !r.confirmed) {
        m_count[r.workload + "|*"]++;
        m_count[r.workload + "|" + level]++;
    }
    if (!r.ok()) return;
    std::map<std::string, size_t>& best = r.confirmed ? m_best_confirmed : m_best;
    for (const std::string& l : {std::string("*"), level})
        for (const std::string& th : {std::string("*"), std::to_string(r.threads)}) {
            const std::string key = r.workload + "|" + r.target + "|" + l + "|" + th;
            auto it = best.find(key);
            if (it == best.end() || r.median_ms() < m_records[it->second].median_ms())
                best[key] = i;
        }
}

void Database::append(const TuningRecord& r) {
    m_records.push_back(r);
    index(m_records.size() - 1);
    if (m_fd >= 0) write_all(r.to_json_line() + "\n");
}

const TuningRecord* Database::best(const std::string& workload, const std::string& target,
                                   int opt_level, int threads) const {
    const std::string base =
        workload + "|" + target + "|" + (opt_level < 0 ? "*" : std::to_string(opt_level)) + "|";
    // A thread count asked for: its records, else records that name none (older files).
    std::vector<std::string> keys = {base + (threads < 0 ? "*" : std::to_string(threads))};
    if (threads >= 0) keys.push_back(base + "-1");
    for (const std::string& key : keys) {
        auto it = m_best_confirmed.find(key);
        if (it != m_best_confirmed.end()) return &m_records[it->second];
        it = m_best.find(key);
        if (it != m_best.end()) return &m_records[it->second];
    }
    return nullptr;
}

std::string Database::why_not_applied(const std::string& workload, const std::string& target,
                                      int opt_level, int threads) const {
    std::string level, thread_count, machine;
    for (const TuningRecord& r : m_records) {
        if (r.workload != workload || r.target != target || !r.ok()) continue;
        if (!is_local(r)) {
            machine = r.machine;
        } else if (opt_level >= 0 && r.opt_level != opt_level) {
            level = "measured at LLVM -O" + std::to_string(r.opt_level) + ", this build uses -O" +
                    std::to_string(opt_level);
        } else if (threads >= 0 && r.threads >= 0 && r.threads != threads) {
            thread_count = "tuned for " + std::to_string(r.threads) +
                           " thread(s), this build runs " +
                           (threads == 0 ? std::string("the runtime's default") : std::to_string(threads));
        }
    }
    if (!thread_count.empty()) return thread_count;
    if (!level.empty()) return level;
    if (!machine.empty()) return "measured on another machine (" + machine + ")";
    return "";
}

int Database::count(const std::string& workload, int opt_level) const {
    auto it = m_count.find(workload + "|" + (opt_level < 0 ? "*" : std::to_string(opt_level)));
    return it == m_count.end() ? 0 : it->second;
}

std::string machine_fingerprint() {
    return codegen::host_target_description() + "; " +
           std::to_string(std::thread::hardware_concurrency()) + " cores";
}

std::string skipped_lines_note(const Database& db) {
    if (db.skipped_lines() == 0) return "";
    return "tuning records '" + db.path() + "': " + std::to_string(db.skipped_lines()) +
           " unreadable line(s) skipped (a write cut short, or a damaged file); first: " +
           db.first_skipped_reason();
}

std::string foreign_records_note(const Database& db) {
    if (db.foreign_records() == 0) return "";
    std::string other;
    for (const TuningRecord& r : db.records())
        if (!Database::is_local(r)) {
            other = r.machine;
            break;
        }
    return "tuning records '" + db.path() + "': " + std::to_string(db.foreign_records()) + " of " +
           std::to_string(db.records().size()) + " were measured on another machine (" + other +
           ") and are not applied; this machine is " + machine_fingerprint();
}

}  // namespace tessera::autotune
