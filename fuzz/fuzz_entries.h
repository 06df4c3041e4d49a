// What each libFuzzer target feeds its bytes to (fuzz/fuzz_*.cpp), kept in a
// library so that the test suite replays the corpora and regression inputs
// through exactly the same code (tests/fuzz_replay_test.cpp) on every run.
// A UserError is the wanted outcome for bad input and is swallowed here;
// anything else escaping (another exception, a crash, a hang) is a finding.
#pragma once

#include <string>

namespace tessera::fuzz {

/// ONNX import, then the -O2 graph passes with constant folding (the
/// interpreter / JIT evaluate folded nodes); no kernel code generation.
void import_and_fold(const std::string& bytes);

/// A package archive: the sha256 members of meta.json (and of a package of
/// several shapes' specializations.json, each specialisation in turn) are
/// recomputed first, so that mutations of graph.json, params.bin, meta.json
/// and the index reach the loader past the checksums; lib.so's is not (native
/// code that does not match its checksum is refused, never loaded).
void load_package(const std::string& bytes);

/// Tuning-database lines (TuningRecord::from_json_line), each record's trace
/// replayed on a small GEMM, and the bytes as one trace JSON document.
void tuning_records_and_traces(const std::string& bytes);

/// An ONNX TensorProto file (.pb test data).
void tensor_pb(const std::string& bytes);

/// Runs `entry` and swallows UserError; true when it was a UserError.
bool rejected(void (*entry)(const std::string&), const std::string& bytes);

}  // namespace tessera::fuzz
