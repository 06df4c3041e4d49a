// The fuzzing entry points (fuzz_entries.h).
#include "fuzz/fuzz_entries.h"

#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/autotune/database.h"
#include "engine/core/error.h"
#include "engine/driver/driver.h"
#include "engine/frontend/onnx/onnx_importer.h"
#include "engine/package/package_format.h"
#include "engine/package/package_loader.h"
#include "engine/package/sha256.h"
#include "engine/package/tar.h"
#include "engine/schedule/schedule.h"
#include "engine/schedule/trace.h"
#include "engine/te/tensor.h"

namespace tessera::fuzz {

void import_and_fold(const std::string& bytes) {
    graph::Graph g = frontend::import_onnx_bytes(bytes, "fuzz.onnx");
    driver::BuildOptions o;
    o.opt_level = 2;
    driver::optimize(g, o);
}

namespace {

// The archive with the checksums its index records recomputed, so a mutation
// reaches the parsers behind them (graph.json, params.bin, meta.json, the
// specialisations' index and each specialisation, recursively). lib.so keeps
// its recorded checksum: a package is native code, and code whose bytes do not
// match is refused, not loaded (dlopen of arbitrary bytes is no parser to fuzz).
std::string with_checksums_recomputed(const std::string& bytes, int depth) {
    std::vector<package::TarMember> members = package::read_tar(bytes, "fuzz.tar");
    for (package::TarMember& m : members)
        if (depth < 2 && m.name.size() > 4 && m.name.substr(m.name.size() - 4) == ".tar") {
            try {
                m.data = with_checksums_recomputed(m.data, depth + 1);
            } catch (const UserError&) {  // not an archive: the loader says so
            }
        }
    for (package::TarMember& index : members) {
        if (index.name != package::kMetaMember && index.name != package::kSpecializationsMember)
            continue;
        nlohmann::json j = nlohmann::json::parse(index.data, nullptr, /*allow_exceptions=*/false);
        if (!j.is_object() || !j.contains("members") || !j["members"].is_object()) continue;
        for (const package::TarMember& m : members)
            if (&m != &index && m.name != package::kLibMember && j["members"].contains(m.name))
                j["members"][m.name] = package::sha256_hex(m.data);
        index.data = j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    return package::write_tar(members);
}

}  // namespace

void load_package(const std::string& bytes) {
    // Verified without loading lib.so: a crafted package can make its own
    // checksums agree (libFuzzer did, comparing against the recomputed
    // hash), and dlopen of such bytes crashes in the system's loader. A
    // package is native code from a trusted source (README).
    package::load_package_bytes(with_checksums_recomputed(bytes, 0), "fuzz.tar",
                                /*load_code=*/false);
}

namespace {

// A 16x8x4 GEMM's loop nest: the function every fuzzed trace is replayed on.
const tir::PrimFunc& gemm_func() {
    static const tir::PrimFunc f = [] {
        const tir::DataType f32 = tir::DataType::float32();
        te::Tensor a = te::placeholder({16, 4}, f32, "A");
        te::Tensor b = te::placeholder({4, 8}, f32, "B");
        tir::IterVar k = te::reduce_axis(4, "k");
        te::Tensor c = te::compute(
            {16, 8}, [&](auto i) { return te::sum(a(i[0], k.var) * b(k.var, i[1]), {k}); }, "C");
        return te::create_prim_func({a, b, c}, "gemm");
    }();
    return f;
}

void replay(const schedule::Trace& t) {
    try {
        t.apply(gemm_func());
    } catch (const UserError&) {
        // A step that does not apply: the wanted diagnostic.
    }
}

}  // namespace

void tuning_records_and_traces(const std::string& bytes) {
    std::istringstream in(bytes);
    std::string line;
    int n = 0;
    while (std::getline(in, line) && n < 64) {
        ++n;
        try {
            autotune::TuningRecord r = autotune::TuningRecord::from_json_line(line, "fuzz.jsonl");
            replay(r.trace);
        } catch (const UserError&) {
        }
    }
    replay(schedule::Trace::from_json(bytes, "fuzz trace"));
}

void tensor_pb(const std::string& bytes) { frontend::read_tensor_pb_bytes(bytes, "fuzz.pb"); }

bool rejected(void (*entry)(const std::string&), const std::string& bytes) {
    try {
        entry(bytes);
    } catch (const UserError&) {
        return true;
    }
    return false;
}

}  // namespace tessera::fuzz
