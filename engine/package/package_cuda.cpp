// CUDA package loading: members and checksums, graph.json with per-call
// launches, params.bin, then the device checks and a CudaGraphExecutor.
#include "engine/package/package_cuda.h"

#include <map>
#include <nlohmann/json.hpp>

#include "engine/core/checked_math.h"
#include "engine/core/error.h"
#include "engine/package/package_format.h"
#include "engine/package/package_json.h"
#include "engine/runtime/cuda_driver.h"

namespace tessera::package {

namespace {

using nlohmann::json;

std::array<int64_t, 3> dims3(const json& j, const std::string& what, const std::string& kernel) {
    auto v = j.get<std::vector<int64_t>>();
    TS_USER_CHECK(v.size() == 3 && v[0] > 0 && v[1] > 0 && v[2] > 0)
        << what << ": kernel '" << kernel << "' has bad launch dimensions in graph.json";
    return {v[0], v[1], v[2]};
}

void check_members(const json& meta, const std::map<std::string, const TarMember*>& members,
                   const std::string& what) {
    const std::vector<const char*> names = {kPtxMember, kCudaSourceMember, kGraphMember,
                                            kParamsMember};
    for (const char* name : names)
        TS_USER_CHECK(members.count(name))
            << what << ": the CUDA package has no member '" << name << "'; recompile it";
    check_version_and_checksums(meta, members, names, what);
    std::string target = meta.value("target", std::string());
    TS_USER_CHECK(target == "cuda")
        << what << ": package holds kernels.ptx but its meta.json target is '" << target
        << "'; the package is corrupt";
}

runtime::CudaCall read_call(const json& cj, int num_values, int num_nodes,
                            const std::string& what) {
    runtime::CudaCall c;
    c.name = cj.at("name").get<std::string>();
    for (const json& v : cj.at("values")) {
        int i = v.get<int>();
        TS_USER_CHECK(i >= 0 && i < num_values)
            << what << ": call '" << c.name << "' refers to value " << i << " of " << num_values
            << "; the package is corrupt";
        c.values.push_back(i);
    }
    for (const json& b : cj.at("workspace_bytes")) {
        int64_t bytes = b.get<int64_t>();
        TS_USER_CHECK(bytes >= 0) << what << ": call '" << c.name << "' has a negative workspace";
        c.workspace_bytes.push_back(bytes);
    }
    for (const json& n : cj.at("nodes")) {
        int k = n.get<int>();
        TS_USER_CHECK(k >= 0 && k < num_nodes)
            << what << ": call '" << c.name << "' refers to node " << k;
        c.nodes.push_back(k);
    }
    c.flops = cj.value("flops", 0.0);
    const size_t num_args = c.values.size() + c.workspace_bytes.size();
    for (const json& lj : cj.at("launches")) {
        runtime::CudaLaunch l;
        l.kernel = lj.at("kernel").get<std::string>();
        l.grid = dims3(lj.at("grid"), what, l.kernel);
        l.block = dims3(lj.at("block"), what, l.kernel);
        l.shared_bytes = lj.value("shared_bytes", int64_t(0));
        for (const json& a : lj.at("args")) {
            int i = a.get<int>();
            TS_USER_CHECK(i >= 0 && size_t(i) < num_args)
                << what << ": kernel '" << l.kernel << "' argument " << i
                << " is out of range; the package is corrupt";
            l.args.push_back(i);
        }
        c.launches.push_back(std::move(l));
    }
    return c;
}

}  // namespace

bool is_cuda_package(const std::vector<TarMember>& members) {
    for (const TarMember& m : members)
        if (m.name == kPtxMember) return true;
    return false;
}

int cuda_arch_number(const std::string& arch) {
    const std::string prefix = "compute_";
    if (arch.rfind(prefix, 0) != 0 || arch.size() == prefix.size()) return -1;
    int n = 0;
    for (size_t i = prefix.size(); i < arch.size(); ++i) {
        if (arch[i] < '0' || arch[i] > '9' || n > 10000) return -1;
        n = n * 10 + (arch[i] - '0');
    }
    return n;
}

CudaPackageContents read_cuda_package(const std::vector<TarMember>& all, const std::string& what) {
    std::map<std::string, const TarMember*> members;
    for (const TarMember& m : all) members[m.name] = &m;
    TS_USER_CHECK(members.count(kMetaMember))
        << what << ": the package has no member 'meta.json'; recompile it";
    json meta = parse_member_json(members[kMetaMember]->data, what, kMetaMember);
    CudaPackageContents c;
    try {  // a field of the wrong type is a corrupt package, not our bug
        check_members(meta, members, what);
        c.arch = meta.value("arch", std::string());
    } catch (const json::exception& e) {
        TS_USER_FAIL() << what << ": meta.json is malformed (" << e.what()
                       << "); the package is corrupt";
    }
    TS_USER_CHECK(cuda_arch_number(c.arch) > 0)
        << what << ": meta.json names no CUDA architecture (arch '" << c.arch
        << "'); the package is corrupt";
    c.ptx = members[kPtxMember]->data;
    json g = parse_member_json(members[kGraphMember]->data, what, kGraphMember);
    const std::string& params = members[kParamsMember]->data;
    try {
        c.name = g.value("name", std::string());
        for (const json& v : g.at("values")) {
            graph::TensorType t{parse_member_dtype(v.at("dtype").get<std::string>(), what),
                                v.at("shape").get<std::vector<int64_t>>()};
            TS_USER_CHECK(checked_elements(t.shape) >= 0)
                << what << ": graph.json has a negative or enormous shape";
            runtime::NDArray constant;
            if (v.contains("param_offset")) {
                int64_t off = v["param_offset"].get<int64_t>();
                TS_USER_CHECK(off >= 0 && uint64_t(off) + uint64_t(t.num_bytes()) <= params.size())
                    << what << ": constant '" << v.value("name", std::string())
                    << "' lies outside params.bin; the package is corrupt";
                constant =
                    runtime::NDArray::from_bytes(t, params.data() + off, size_t(t.num_bytes()));
            }
            c.types.push_back(t);
            c.constants.push_back(constant);
        }
        const int n = int(c.types.size());
        auto index = [&](const json& j) {
            int v = j.get<int>();
            TS_USER_CHECK(v >= 0 && v < n) << what << ": graph.json refers to value " << v << " of "
                                           << n << "; the package is corrupt";
            return v;
        };
        for (const json& j : g.at("inputs")) c.inputs.push_back(index(j));
        for (const json& j : g.at("outputs")) c.outputs.push_back(index(j));
        for (int v : c.inputs) c.input_names.push_back(g["values"][size_t(v)].value("name", ""));
        for (int v : c.outputs) c.output_names.push_back(g["values"][size_t(v)].value("name", ""));
        for (const json& nd : g.at("nodes")) {
            c.node_names.push_back(nd.value("name", std::string()));
            c.node_ops.push_back(nd.value("op", std::string()));
        }
        for (const json& cj : g.at("calls")) {
            c.calls.push_back(read_call(cj, n, int(c.node_names.size()), what));
            c.total_flops += c.calls.back().flops;
        }
    } catch (const nlohmann::json::exception& e) {
        TS_USER_FAIL() << what << ": graph.json is malformed (" << e.what()
                       << "); the package is corrupt";
    }
    for (const runtime::CudaCall& call : c.calls)
        for (const runtime::CudaLaunch& l : call.launches)
            TS_USER_CHECK(c.ptx.find(".entry " + l.kernel + "(") != std::string::npos)
                << what << ": kernels.ptx has no kernel '" << l.kernel
                << "'; the package is corrupt";
    return c;
}

std::shared_ptr<runtime::CudaGraphExecutor> load_cuda_executor(const CudaPackageContents& c,
                                                               const std::string& what) {
    runtime::cuda::require_available("cannot run CUDA package '" + what + "'");
    const runtime::cuda::DeviceInfo& dev = runtime::cuda::device_info();
    const int have = dev.cc_major * 10 + dev.cc_minor;
    TS_USER_CHECK(have >= cuda_arch_number(c.arch))
        << what << ": the package's PTX is for " << c.arch << " but " << dev.name
        << " has compute capability " << dev.cc_major << "." << dev.cc_minor
        << "; recompile the model on this machine (tessera compile --target cuda)";
    return std::make_shared<runtime::CudaGraphExecutor>(c.types, c.constants, c.inputs, c.outputs,
                                                        c.calls, c.ptx);
}

}  // namespace tessera::package
