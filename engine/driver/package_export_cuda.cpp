// CUDA package export: kernels.ptx and kernels.cu from the NVRTC module,
// graph.json with each call's launches, params.bin from the graph's
// constants, meta.json with target, arch, NVRTC version and checksums.
#include "engine/driver/package_export_cuda.h"

#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/core/thread_guard.h"
#include "engine/package/package_cuda.h"
#include "engine/package/package_format.h"
#include "engine/package/sha256.h"
#include "engine/package/tar.h"

namespace tessera::package {

using nlohmann::json;

std::string cuda_package_bytes(const driver::CudaModel& model, const ExportOptions& options,
                               std::string* meta_out) {
    TS_USER_CHECK(options.target == "cuda")
        << "export_cuda_package writes target cuda, not '" << options.target << "'";
    const graph::Graph& g = model.graph;
    TS_USER_CHECK(!model.compiled.ptx.empty())
        << "model '" << g.name << "' has no PTX; compile it with NVRTC (codegen::build_cuda)";

    json values = json::array();
    std::string params;
    for (const graph::Value& v : g.values) {
        json jv = {
            {"name", v.name}, {"dtype", graph::dtype_name(v.type.dtype)}, {"shape", v.type.shape}};
        if (v.is_constant()) {
            const auto& bytes = v.constant->bytes;
            TS_USER_CHECK(int64_t(bytes.size()) == v.type.num_bytes())
                << "constant '" << v.name << "' holds " << bytes.size() << " bytes but its type "
                << v.type.str() << " needs " << v.type.num_bytes();
            params.append((64 - params.size() % 64) % 64, '\0');
            jv["param_offset"] = params.size();
            params.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
        }
        values.push_back(jv);
    }
    json nodes = json::array();
    for (const graph::Node& n : g.nodes) nodes.push_back({{"name", n.name}, {"op", n.op}});
    json calls = json::array();
    size_t launches = 0;
    for (const runtime::CudaCall& c : model.calls) {
        json jl = json::array();
        for (const runtime::CudaLaunch& l : c.launches) {
            jl.push_back({{"kernel", l.kernel},
                          {"grid", l.grid},
                          {"block", l.block},
                          {"shared_bytes", l.shared_bytes},
                          {"args", l.args}});
            ++launches;
        }
        calls.push_back({{"name", c.name},
                         {"values", c.values},
                         {"workspace_bytes", c.workspace_bytes},
                         {"nodes", c.nodes},
                         {"flops", c.flops},
                         {"launches", jl}});
    }
    json gj = {{"format_version", options.format_version},
               {"name", g.name},
               {"values", values},
               {"inputs", g.inputs},
               {"outputs", g.outputs},
               {"nodes", nodes},
               {"calls", calls}};
    std::string graph_text = gj.dump(1, ' ', false, nlohmann::json::error_handler_t::replace);

    // The GPU kernels' schedules are the target's rules (or records), not
    // traces a package could list.
    const json schedules = json::array();
    const std::string& ptx = model.compiled.ptx;
    const std::string& source = model.compiled.source;
    json meta = {{"format_version", options.format_version},
                 {"engine_version", engine_version()},
                 {"target", "cuda"},
                 {"arch", model.compiled.arch},
                 {"nvrtc", codegen::nvrtc_version()},
                 {"opt_level", options.opt_level},
                 {"passes", options.passes},
                 {"schedules", schedules},
                 {"records", options.records},
                 {"model", g.name},
                 {"kernels", model.calls.size()},
                 {"launches", launches},
                 {"members",
                  {{kPtxMember, sha256_hex(ptx)},
                   {kCudaSourceMember, sha256_hex(source)},
                   {kGraphMember, sha256_hex(graph_text)},
                   {kParamsMember, sha256_hex(params)}}}};
    std::string meta_text = meta.dump(1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (meta_out) *meta_out = meta_text;
    return write_tar({{kMetaMember, meta_text},
                      {kGraphMember, graph_text},
                      {kParamsMember, params},
                      {kPtxMember, ptx},
                      {kCudaSourceMember, source}});
}

std::string export_cuda_package(const driver::CudaModel& model, const ExportOptions& options,
                                const std::string& path) {
    assert_engine_work_allowed("driver::export_cuda_package");
    std::string meta;
    std::string tar = cuda_package_bytes(model, options, &meta);
    write_file_bytes(path, tar);
    return meta;
}

}  // namespace tessera::package
