// Package export: emit_object → `cc -shared` → lib.so; graph.json from the
// executor's kernel calls; params.bin from its bound constants; meta.json
// with target, CPU features, options and the members' sha256.
#include "engine/driver/package_export.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "engine/codegen/llvm/llvm_codegen.h"
#include "engine/core/error.h"
#include "engine/core/thread_guard.h"
#include "engine/driver/package_export_cuda.h"
#include "engine/package/package_format.h"
#include "engine/package/sha256.h"
#include "engine/package/tar.h"

namespace tessera::package {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

// A temporary folder removed on scope exit.
struct TempDir {
    fs::path path;
    TempDir() {
        const char* t = std::getenv("TMPDIR");
        std::string tmpl = std::string(t && *t ? t : "/tmp") + "/tessera-pkg-XXXXXX";
        TS_USER_CHECK(mkdtemp(tmpl.data()) != nullptr)
            << "cannot create a temporary folder under " << tmpl;
        path = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

std::string link_shared_library(const std::string& object, const std::string& linker) {
    TempDir dir;
    std::string obj = (dir.path / "kernels.o").string();
    std::string lib = (dir.path / "lib.so").string();
    std::string log = (dir.path / "link.log").string();
    write_file_bytes(obj, object);
    // -fopenmp: parallel loops call libgomp (GOMP_parallel); -lm: expf, tanhf, erff.
    std::string cmd = quote(linker) + " -shared -fopenmp -o " + quote(lib) + " " + quote(obj) +
                      " -lm > " + quote(log) + " 2>&1";
    int rc = std::system(cmd.c_str());
    std::string out = fs::exists(log) ? read_file_bytes(log) : "";
    TS_USER_CHECK(rc == 0 && fs::exists(lib))
        << "linking lib.so with '" << linker << "' failed (exit " << rc << "): " << out
        << "; a package needs a C compiler (cc) on the compiling machine";
    return read_file_bytes(lib);
}

// The kernels the tuning records scheduled (driver::CompiledModel::record_uses).
json tuned_kernels(const driver::CompiledModel& model) {
    json names = json::array();
    for (const driver::RecordUse& u : model.record_uses)
        if (u.applied) names.push_back(u.kernel);
    return names;
}

// How the kernels were scheduled: each kernel a hand trace or a tuning record
// scheduled, with its trace (what `--trace` / the studio replays), and how
// many kernels each source scheduled ("default", "record", "hand", "none").
json schedules_of(const driver::CompiledModel& model, json& sources) {
    json out = json::array();
    sources = json::object();
    for (size_t k = 0; k < model.schedules.size() && k < model.kernels.size(); ++k) {
        const driver::KernelSchedule& ks = model.schedules[k];
        sources[ks.source] = sources.value(ks.source, 0) + 1;
        if (ks.source != "hand" && ks.source != "record") continue;
        out.push_back({{"kernel", model.kernels[k]->name},
                       {"source", ks.source},
                       {"node", ks.source == "hand" ? ks.traced_node : ks.anchor},
                       {"trace", json::parse(ks.trace.to_json())}});
    }
    return out;
}
}  // namespace

std::string export_package(const driver::CompiledModel& model, const ExportOptions& options,
                           const std::string& path) {
    assert_engine_work_allowed("driver::export_package");
    TS_USER_CHECK(options.target == model.target)
        << "cannot export a model built for '" << model.target << "' as a '" << options.target
        << "' package";
    if (model.cuda) return export_cuda_package(*model.cuda, options, path);
    std::string meta_text;
    write_file_bytes(path, package_archive(model, options, meta_text));
    return meta_text;
}

std::string package_archive(const driver::CompiledModel& model, const ExportOptions& options,
                            std::string& meta_text) {
    TS_USER_CHECK(options.target == model.target && !model.cuda)
        << "a package archive of a model built for '" << model.target
        << "' is written by export_package";
    TS_USER_CHECK(model.executor != nullptr)
        << "model '" << model.graph.name << "' was scheduled but not compiled (jit = false)";
    const runtime::GraphExecutor& ex = *model.executor;
    const graph::Graph& g = model.graph;
    const auto& types = ex.value_types();
    const bool named = g.values.size() == types.size();

    codegen::LlvmOptions lo;
    lo.opt_level = options.opt_level;
    std::string lib = link_shared_library(codegen::emit_object(model.kernels, lo), options.linker);

    json values = json::array();
    std::string params;
    for (int v = 0; v < int(types.size()); ++v) {
        json jv = {{"name", named ? g.values[size_t(v)].name : "v" + std::to_string(v)},
                   {"dtype", graph::dtype_name(types[size_t(v)].dtype)},
                   {"shape", types[size_t(v)].shape}};
        runtime::NDArray c = ex.constant(v);
        if (c.defined()) {
            params.append((64 - params.size() % 64) % 64, '\0');
            jv["param_offset"] = params.size();
            params.append(static_cast<const char*>(c.raw()), c.num_bytes());
        }
        values.push_back(jv);
    }
    json nodes = json::array();
    for (const graph::Node& n : g.nodes) nodes.push_back({{"name", n.name}, {"op", n.op}});
    json calls = json::array();
    for (const runtime::KernelCall& c : ex.calls())
        calls.push_back(
            {{"kernel", c.kernel}, {"args", c.args}, {"nodes", c.nodes}, {"flops", c.flops}});
    json gj = {{"format_version", options.format_version},
               {"name", g.name},
               {"values", values},
               {"inputs", ex.input_values()},
               {"outputs", ex.output_values()},
               {"nodes", nodes},
               {"calls", calls}};
    std::string graph_text = gj.dump(1, ' ', false, nlohmann::json::error_handler_t::replace);

    // "x86_64-pc-linux-gnu, znver3, +avx2,+fma,..."
    std::string host = codegen::host_target_description();
    std::string triple = host.substr(0, host.find(", "));
    std::string rest = host.substr(std::min(host.size(), triple.size() + 2));
    std::string cpu = rest.substr(0, rest.find(", "));
    std::string features = rest.substr(std::min(rest.size(), cpu.size() + 2));
    json sources;
    const json schedules = schedules_of(model, sources);
    json meta = {{"format_version", options.format_version},
                 {"engine_version", engine_version()},
                 {"target", options.target},
                 {"triple", triple},
                 {"cpu", cpu},
                 {"cpu_features", checked_subset(features)},
                 {"llvm_features", features},
                 {"opt_level", options.opt_level},
                 {"passes", options.passes},
                 {"schedules", schedules},
                 {"schedule_sources", sources},
                 {"records", options.records},
                 {"tuned_kernels", tuned_kernels(model)},
                 {"threads", options.threads},
                 {"model", g.name},
                 {"kernels", ex.calls().size()},
                 {"members",
                  {{kLibMember, sha256_hex(lib)},
                   {kGraphMember, sha256_hex(graph_text)},
                   {kParamsMember, sha256_hex(params)}}}};
    meta_text = meta.dump(1, ' ', false, nlohmann::json::error_handler_t::replace);
    return write_tar({{kMetaMember, meta_text},
                      {kGraphMember, graph_text},
                      {kParamsMember, params},
                      {kLibMember, lib}});
}

std::string export_specialized_package(const std::vector<Specialization>& specs,
                                       const ExportOptions& options, const std::string& path) {
    TS_USER_CHECK(!specs.empty()) << "a package needs at least one set of input shapes";
    TS_USER_CHECK(options.target == "llvm")
        << "packages of several input shapes are written for the llvm target only";
    std::vector<TarMember> members;
    json index = json::array();
    json checksums = json::object();
    std::set<std::string> seen;
    for (size_t k = 0; k < specs.size(); ++k) {
        json shapes = json::object();
        for (const auto& [name, dims] : specs[k].shapes) shapes[name] = dims;
        TS_USER_CHECK(seen.insert(shapes.dump()).second)
            << "the input shapes " << shapes.dump() << " are given twice";
        std::string meta_text;
        std::string member = "specialization_" + std::to_string(k) + ".tar";
        std::string bytes = package_archive(*specs[k].model, options, meta_text);
        index.push_back({{"member", member}, {"shapes", shapes}});
        checksums[member] = sha256_hex(bytes);
        members.push_back({member, std::move(bytes)});
    }
    json top = {{"format_version", options.format_version},
                {"engine_version", engine_version()},
                {"target", options.target},
                {"specializations", index},
                {"members", checksums}};
    std::string text = top.dump(1, ' ', false, nlohmann::json::error_handler_t::replace);
    members.insert(members.begin(), TarMember{kSpecializationsMember, text});
    write_file_bytes(path, write_tar(members));
    return text;
}

}  // namespace tessera::package
