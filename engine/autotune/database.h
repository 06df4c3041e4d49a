// The tuning database: append-only JSON lines, one measured candidate per
// line, each written with one write() so that a killed session loses at most
// the record in flight; fsync'ed after each measured batch; one writer at a
// time (an exclusive flock; a second gets a clear error). A truncated last
// line (kill -9 mid-write) is skipped on load and reported (skipped_lines_note).
//   {"workload": "llvm:3f..", "target": "llvm", "task": "T_matmul", "trace": {...},
//    "decisions": [...], "times_ms": [1.2, 1.3], "error": "", "flops": 2e9,
//    "timestamp": 1763712000.5, "machine": "x86_64, ...", "opt_level": 2}
#pragma once

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "engine/schedule/trace.h"

namespace tessera::autotune {

/// The LLVM optimization level of records that do not name one (written
/// before records held it): `tessera tune`'s and the build's default level.
constexpr int kDefaultRecordOptLevel = 2;

struct TuningRecord {
    std::string workload;
    std::string target = "llvm";
    std::string task;        // kernel name (for people reading the file)
    schedule::Trace trace;   // replays on the task's unscheduled function
    std::string decisions;   // the candidate's decisions (space.h), JSON
    std::vector<double> times_ms;
    std::string error;       // empty when the run succeeded and was verified
    double flops = 0;
    double timestamp = 0;    // seconds since the epoch
    std::string machine;
    bool baseline = false;   // the default schedule's measurement (not a tuning trial)
    int threads = -1;        // the thread count tuned for (TuneOptions::threads; -1 = unknown)
    /// A re-measurement of a task's finalists (top candidates and the default,
    /// run alternately several times; times_ms holds one median per round), not
    /// a tuning trial. best() prefers confirmed records over single trials.
    bool confirmed = false;
    /// The LLVM optimization level the candidate was compiled and measured at
    /// (MeasureOptions::opt_level): a record measured at O3 is not a record at
    /// O1, so best() and count() can be asked for one level.
    int opt_level = kDefaultRecordOptLevel;
    /// The GPU a "cuda" record was measured on (search_gpu.h gpu_fingerprint:
    /// "NVIDIA H100 80GB HBM3/sm_90"); empty for CPU records and for "cuda"
    /// records written before devices were recorded (unknown device).
    std::string device;

    bool ok() const { return error.empty() && !times_ms.empty(); }
    /// Median of times_ms (infinity for an error).
    double median_ms() const;
    std::string to_json_line() const;
    /// Throws UserError naming `origin` on malformed JSON.
    static TuningRecord from_json_line(const std::string& line, const std::string& origin);
};

class Database {
public:
    /// Opens (creating if absent) the file and loads its records. An empty
    /// path gives an in-memory database. `read_only`: the file must exist
    /// (UserError naming it otherwise) and append() keeps records in memory.
    explicit Database(const std::string& path = "", bool read_only = false);
    ~Database();
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;

    /// Appends one record: its whole line in one write() (O_APPEND), every
    /// result checked (UserError naming the file on a full disk, ...).
    void append(const TuningRecord& r);
    /// fsync: the records appended so far survive a crash of the machine.
    /// Called at the end of each measured batch; the destructor syncs too.
    void sync();
    const std::vector<TuningRecord>& records() const { return m_records; }
    /// The fastest successful record of a workload measured on this machine
    /// (machine_fingerprint(); records without a fingerprint count as local),
    /// or null; among confirmed records when the workload has any (a robust
    /// median beats a single lucky trial). Records from another machine are
    /// kept but never chosen. `opt_level` >= 0: only records measured at that
    /// LLVM level; -1: any level. `threads` >= 0: only records tuned for that
    /// thread count (or, failing those, records that name none); -1: any.
    const TuningRecord* best(const std::string& workload, const std::string& target = "llvm",
                             int opt_level = -1, int threads = -1) const;
    /// Why best() finds nothing for these filters although the file holds a
    /// successful record of the workload for `target`: "measured on another
    /// machine (...)", "measured at LLVM -O3, this build uses -O2", "tuned for
    /// 1 thread(s), this build runs 2". Empty when there is no such record.
    std::string why_not_applied(const std::string& workload, const std::string& target,
                                int opt_level, int threads) const;
    /// Tuning trials (successes and errors, baselines and confirmations excluded) of a workload
    /// on this machine; at one LLVM level when `opt_level` >= 0.
    int count(const std::string& workload, int opt_level = -1) const;
    /// Records measured on another machine (ignored by best() and count()).
    int foreign_records() const { return m_foreign; }
    /// Whether `r` was measured on this machine. A record naming its GPU
    /// (`device`) is keyed to that GPU, not to the host CPU: it counts as
    /// local here, and whether it applies is the GPU tuner's decision
    /// (search_gpu.h, gpu_record_applies).
    static bool is_local(const TuningRecord& r);
    /// Lines of the file that could not be parsed (a torn last write).
    int skipped_lines() const { return m_skipped; }
    /// Why the first skipped line could not be read ("r.jsonl:7: bad tuning record: ...").
    const std::string& first_skipped_reason() const { return m_first_skipped; }
    const std::string& path() const { return m_path; }

private:
    std::string m_path;
    int m_fd = -1;  // O_APPEND, holding an exclusive flock() while open for writing
    std::vector<TuningRecord> m_records;
    // Keys workload|target|level, level "*" for any: the record index.
    std::map<std::string, size_t> m_best;
    std::map<std::string, size_t> m_best_confirmed;  // the same over confirmed records
    std::map<std::string, int> m_count;  // workload|level ("*" for any)
    int m_skipped = 0;
    std::string m_first_skipped;
    int m_foreign = 0;
    void index(size_t i);
    void write_all(const std::string& text);
};

/// "x86_64, <cpu>, <features>; <n> cores": what records are valid for.
std::string machine_fingerprint();

/// A line for people about the unreadable lines of `db` (skipped on load);
/// empty when there are none.
std::string skipped_lines_note(const Database& db);

/// A line for people about the records of `db` that apply here, e.g.
/// "tuning records 'r.jsonl': 40 of 52 from another machine (<fingerprint>)
/// are not applied"; empty when all are local.
std::string foreign_records_note(const Database& db);

}  // namespace tessera::autotune
