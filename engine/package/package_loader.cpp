// Package loading: tar members → checks → graph.json and params.bin →
// lib.so opened from memory (memfd) → GraphExecutor.
#include "engine/package/package_loader.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "engine/core/checked_math.h"
#include "engine/core/error.h"
#include "engine/package/package_cuda.h"
#include "engine/package/package_format.h"
#include "engine/package/package_json.h"
#include "engine/package/tar.h"

namespace tessera::package {

namespace {

using nlohmann::json;

// An opened lib.so; closed when the last executor using it goes. The
// in-memory file stays open as long: the dynamic loader knows a library by
// its path, and a second package opened while this one is loaded must not
// get the same /proc/self/fd/N name (dlopen would hand back this library).
struct Library {
    void* handle = nullptr;
    int fd = -1;
    ~Library() {
        if (handle) dlclose(handle);
        if (fd >= 0) close(fd);
    }
};

std::shared_ptr<Library> open_library(const std::string& bytes, const std::string& what) {
    // dlopen needs a path: an anonymous in-memory file avoids temp files.
    int fd = memfd_create("tessera-package-lib.so", MFD_CLOEXEC);
    std::string path;
    std::string tmp_path;
    if (fd >= 0) {
        path = "/proc/self/fd/" + std::to_string(fd);
    } else {
        const char* dir = std::getenv("TMPDIR");
        tmp_path = std::string(dir && *dir ? dir : "/tmp") + "/tessera-lib-XXXXXX";
        fd = mkstemp(tmp_path.data());
        TS_USER_CHECK(fd >= 0) << what << ": cannot create a temporary file for lib.so";
        path = tmp_path;
    }
    size_t done = 0;
    while (done < bytes.size()) {
        ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
        if (n <= 0) break;
        done += size_t(n);
    }
    auto lib = std::make_shared<Library>();
    if (done == bytes.size()) lib->handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    std::string err = lib->handle ? "" : (done == bytes.size() ? dlerror() : "short write");
    if (tmp_path.empty() && lib->handle)
        lib->fd = fd;  // closed with the library
    else
        close(fd);
    if (!tmp_path.empty()) unlink(tmp_path.c_str());
    TS_USER_CHECK(lib->handle != nullptr)
        << what << ": cannot load lib.so (" << err
        << "); the package was built for another system or is corrupt";
    return lib;
}

void check_meta(const json& meta, const std::map<std::string, const TarMember*>& members,
                const std::string& what) {
    check_version_and_checksums(meta, members, {kLibMember, kGraphMember, kParamsMember}, what);

    std::string target = meta.value("target", std::string());
    TS_USER_CHECK(target == "llvm")
        << what << ": package target '" << target << "' cannot run here; this runtime runs llvm";
    TS_USER_CHECK(meta.contains("cpu_features") && meta["cpu_features"].is_array())
        << what << ": meta.json has no cpu_features list; the package is corrupt";
    std::string missing;
    for (const json& f : meta["cpu_features"]) {
        TS_USER_CHECK(f.is_string()) << what << ": meta.json cpu_features holds a non-string";
        std::string name = f.get<std::string>();
        if (!host_has_cpu_feature(name)) missing += (missing.empty() ? "" : ", ") + name;
    }
    TS_USER_CHECK(missing.empty())
        << what << ": compiled for a CPU with features this CPU lacks (" << missing
        << "; package CPU '" << meta.value("cpu", std::string("?"))
        << "'); recompile the model on this machine";
}

std::shared_ptr<LoadedPackage> load_cuda_package(const std::vector<TarMember>& all,
                                                 const std::string& what, bool load_code) {
    CudaPackageContents c = read_cuda_package(all, what);
    auto pkg = std::make_shared<LoadedPackage>();
    pkg->path = what;
    pkg->target = "cuda";
    for (const TarMember& m : all) {
        if (m.name == kMetaMember) pkg->meta_json = m.data;
        if (m.name == kGraphMember) pkg->graph_json = m.data;
    }
    if (load_code) pkg->cuda_executor = load_cuda_executor(c, what);  // UserError without a device
    pkg->name = c.name;
    pkg->node_names = c.node_names;
    pkg->node_ops = c.node_ops;
    pkg->total_flops = c.total_flops;
    pkg->input_names = c.input_names;
    pkg->output_names = c.output_names;
    return pkg;
}

std::shared_ptr<LoadedPackage> load_archive(const std::string& bytes, const std::string& what,
                                            bool allow_specializations, bool load_code);

// A package of several input shapes: the index, then each member a whole package.
std::shared_ptr<LoadedPackage> load_specialized(
    const std::map<std::string, const TarMember*>& members, const std::string& what,
    bool load_code) {
    const std::string& text = members.at(kSpecializationsMember)->data;
    json idx = parse_member_json(text, what, kSpecializationsMember);
    auto pkg = std::make_shared<LoadedPackage>();
    pkg->path = what;
    pkg->meta_json = text;
    try {
        const json& list = idx.at("specializations");
        TS_USER_CHECK(list.is_array() && !list.empty())
            << what << ": specializations.json lists no specialisation; the package is corrupt";
        std::vector<std::string> names;
        for (const json& s : list) {
            names.push_back(s.at("member").get<std::string>());
            TS_USER_CHECK(members.count(names.back()) && names.back() != kSpecializationsMember)
                << what << ": specializations.json names member '" << names.back()
                << "', which the package does not hold; the package is corrupt";
        }
        std::vector<const char*> cnames;
        for (const std::string& n : names) cnames.push_back(n.c_str());
        check_version_and_checksums(idx, members, cnames, what);
        for (size_t k = 0; k < list.size(); ++k) {
            PackageSpecialization spec;
            for (const auto& [name, dims] : list[k].at("shapes").items())
                spec.shapes[name] = dims.get<std::vector<int64_t>>();
            spec.package = load_archive(members.at(names[k])->data,
                                        what + " (" + names[k] + ")", false, load_code);
            pkg->specializations.push_back(std::move(spec));
        }
    } catch (const json::exception& e) {  // a field of the wrong type
        TS_USER_FAIL() << what << ": specializations.json is malformed (" << e.what()
                       << "); the package is corrupt";
    }
    const LoadedPackage& first = *pkg->specializations.front().package;
    pkg->name = first.name;
    pkg->target = first.target;
    pkg->input_names = first.executor ? first.executor->input_names() : first.input_names;
    pkg->output_names = first.executor ? first.executor->output_names() : first.output_names;
    pkg->node_names = first.node_names;
    pkg->node_ops = first.node_ops;
    pkg->graph_json = first.graph_json;
    return pkg;
}

}  // namespace

std::string shapes_text(const std::map<std::string, std::vector<int64_t>>& shapes) {
    std::string s;
    for (const auto& [name, dims] : shapes) {
        s += (s.empty() ? "" : ", ") + name + ": ";
        for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
        if (dims.empty()) s += "scalar";
    }
    return s;
}

const LoadedPackage& select_specialization(
    const LoadedPackage& pkg, const std::map<std::string, std::vector<int64_t>>& input_shapes) {
    if (pkg.specializations.empty()) return pkg;
    for (const PackageSpecialization& s : pkg.specializations) {
        bool match = true;
        for (const auto& [name, dims] : s.shapes) {
            auto it = input_shapes.find(name);
            match = match && it != input_shapes.end() && it->second == dims;
        }
        if (match) return *s.package;
    }
    TS_USER_FAIL() << pkg.path << " holds no specialisation for the input shapes "
                   << shapes_text(input_shapes) << "; it was compiled for "
                   << specialization_list(pkg)
                   << " (compile it again with --shape-set for these shapes)";
}

std::string specialization_list(const LoadedPackage& pkg) {
    std::string s;
    for (const PackageSpecialization& spec : pkg.specializations)
        s += (s.empty() ? "" : "; ") + shapes_text(spec.shapes);
    return s;
}

bool looks_like_package(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    char h[512] = {};
    if (!in.read(h, sizeof h)) return false;
    return std::memcmp(h + 257, "ustar", 5) == 0;
}

std::shared_ptr<LoadedPackage> load_package(const std::string& path) {
    return load_package_bytes(read_file_bytes(path), path);
}

std::shared_ptr<LoadedPackage> load_package_bytes(const std::string& bytes,
                                                  const std::string& what, bool load_code) {
    return load_archive(bytes, what, true, load_code);
}

namespace {

std::shared_ptr<LoadedPackage> load_archive(const std::string& bytes, const std::string& what,
                                            bool allow_specializations, bool load_code) {
    std::vector<TarMember> all = read_tar(bytes, what);
    std::map<std::string, const TarMember*> members;
    for (const TarMember& m : all) members[m.name] = &m;
    if (members.count(kSpecializationsMember)) {
        TS_USER_CHECK(allow_specializations)
            << what << ": a specialisation holds specialisations itself; the package is corrupt";
        return load_specialized(members, what, load_code);
    }
    if (is_cuda_package(all)) return load_cuda_package(all, what, load_code);
    for (const char* name : {kMetaMember, kLibMember, kGraphMember, kParamsMember}) {
        TS_USER_CHECK(members.count(name))
            << what << ": the package has no member '" << name
            << "' (a package holds lib.so, graph.json, params.bin and meta.json); recompile it";
    }
    const std::string& meta_text = members[kMetaMember]->data;
    json meta = parse_member_json(meta_text, what, kMetaMember);
    try {
        check_meta(meta, members, what);
    } catch (const json::exception& e) {  // a field of the wrong type
        TS_USER_FAIL() << what << ": meta.json is malformed (" << e.what()
                       << "); the package is corrupt";
    }
    json g = parse_member_json(members[kGraphMember]->data, what, kGraphMember);
    const std::string& params = members[kParamsMember]->data;

    auto pkg = std::make_shared<LoadedPackage>();
    pkg->path = what;
    pkg->meta_json = meta_text;
    pkg->graph_json = members[kGraphMember]->data;
    std::vector<graph::TensorType> types;
    std::vector<runtime::NDArray> constants;
    std::vector<int> inputs, outputs;
    std::vector<std::string> input_names, output_names;
    std::vector<runtime::KernelCall> calls;
    std::shared_ptr<Library> lib;
    try {
        pkg->name = g.value("name", std::string());
        for (const json& v : g.at("values")) {
            graph::TensorType t{parse_member_dtype(v.at("dtype").get<std::string>(), what),
                                v.at("shape").get<std::vector<int64_t>>()};
            TS_USER_CHECK(checked_elements(t.shape) >= 0)
                << what << ": graph.json has a negative or enormous shape";
            types.push_back(t);
            runtime::NDArray c;
            if (v.contains("param_offset")) {
                int64_t off = v["param_offset"].get<int64_t>();
                TS_USER_CHECK(off >= 0 && uint64_t(off) + uint64_t(t.num_bytes()) <= params.size())
                    << what << ": constant '" << v.value("name", std::string()) << "' lies outside "
                    << "params.bin; the package is corrupt";
                c = runtime::NDArray::from_bytes(t, params.data() + off, size_t(t.num_bytes()));
            }
            constants.push_back(c);
        }
        const int n = int(types.size());
        auto index = [&](const json& j) {
            int v = j.get<int>();
            TS_USER_CHECK(v >= 0 && v < n) << what << ": graph.json refers to value " << v
                                           << " of " << n << "; the package is corrupt";
            return v;
        };
        for (const json& j : g.at("inputs")) inputs.push_back(index(j));
        for (const json& j : g.at("outputs")) outputs.push_back(index(j));
        for (int v : inputs) input_names.push_back(g["values"][size_t(v)].value("name", ""));
        for (int v : outputs) output_names.push_back(g["values"][size_t(v)].value("name", ""));
        for (const json& nd : g.at("nodes")) {
            pkg->node_names.push_back(nd.value("name", std::string()));
            pkg->node_ops.push_back(nd.value("op", std::string()));
        }
        if (load_code) lib = open_library(members[kLibMember]->data, what);
        for (const json& cj : g.at("calls")) {
            runtime::KernelCall c;
            c.kernel = cj.at("kernel").get<std::string>();
            for (const json& a : cj.at("args")) c.args.push_back(index(a));
            for (const json& nd : cj.at("nodes")) {
                int k = nd.get<int>();
                TS_USER_CHECK(k >= 0 && k < int(pkg->node_names.size()))
                    << what << ": graph.json call refers to node " << k;
                c.nodes.push_back(k);
            }
            c.flops = cj.value("flops", 0.0);
            if (lib) {
                c.fn = reinterpret_cast<runtime::KernelFn>(dlsym(lib->handle, c.kernel.c_str()));
                TS_USER_CHECK(c.fn != nullptr)
                    << what << ": lib.so has no kernel '" << c.kernel << "'; the package is corrupt";
            }
            pkg->total_flops += c.flops;
            calls.push_back(std::move(c));
        }
    } catch (const json::exception& e) {
        TS_USER_FAIL() << what << ": graph.json is malformed (" << e.what()
                       << "); the package is corrupt";
    }
    if (!lib) {  // verified, not loaded: no executor
        pkg->input_names = std::move(input_names);
        pkg->output_names = std::move(output_names);
        return pkg;
    }
    pkg->executor = std::make_shared<runtime::GraphExecutor>(
        std::move(types), std::move(constants), std::move(inputs), std::move(outputs),
        std::move(calls), lib);
    pkg->executor->set_io_names(std::move(input_names), std::move(output_names));
    // The OpenMP runtime lib.so links (dlsym on a handle searches its dependencies).
    if (auto setter = reinterpret_cast<runtime::ThreadSetter>(
            dlsym(lib->handle, "omp_set_num_threads")))
        pkg->executor->set_thread_setter(setter);
    return pkg;
}

}  // namespace

}  // namespace tessera::package
