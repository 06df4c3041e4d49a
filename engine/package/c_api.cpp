// The C interface (tessera_runtime.h) over load_package and GraphExecutor
// (llvm packages) or CudaGraphExecutor (cuda packages, through the driver
// API loaded with dlopen): exceptions become status codes plus a per-thread
// error message.
#include "engine/package/tessera_runtime.h"

#include <cstring>
#include <exception>
#include <nlohmann/json.hpp>
#include <map>
#include <string>

#include "engine/core/error.h"
#include "engine/package/package_json.h"
#include "engine/package/package_loader.h"

struct TesseraModel {
    /// The package as loaded; `pkg` is what runs: the same, or for a package
    /// of several input shapes the selected specialisation (the first at load).
    std::shared_ptr<tessera::package::LoadedPackage> root;
    std::shared_ptr<tessera::package::LoadedPackage> pkg;
    std::vector<std::string> input_dtypes, output_dtypes;
    std::vector<tessera::runtime::TensorType> input_types, output_types;
    std::vector<std::string> input_names, output_names;
    int64_t peak_bytes = -1;
    std::string profile;
};

namespace {

thread_local std::string g_last_error;

template <typename F>
int guarded(F&& f) {
    try {
        f();
        g_last_error.clear();
        return TESSERA_OK;
    } catch (const tessera::UserError& e) {
        g_last_error = e.what();
        return TESSERA_USER_ERROR;
    } catch (const std::exception& e) {
        g_last_error = e.what();
        return TESSERA_INTERNAL_ERROR;
    }
}

tessera::runtime::GraphExecutor* cpu(const TesseraModel* m) {
    return m && m->pkg ? m->pkg->executor.get() : nullptr;
}
tessera::runtime::CudaGraphExecutor* gpu(const TesseraModel* m) {
    return m && m->pkg ? m->pkg->cuda_executor.get() : nullptr;
}
/// True when the model holds a runnable executor (either kind).
bool loaded(const TesseraModel* m) { return cpu(m) || gpu(m); }

bool in_range(const TesseraModel* m, int i, bool input) {
    if (!loaded(m) || i < 0) return false;
    return size_t(i) < (input ? m->input_types.size() : m->output_types.size());
}

int null_model() {
    g_last_error = "null TesseraModel";
    return TESSERA_USER_ERROR;
}

/// Device bytes of every graph value of a CUDA package (its graph.json).
int64_t cuda_value_bytes(const tessera::package::LoadedPackage& pkg) {
    nlohmann::json g = tessera::package::parse_member_json(pkg.graph_json, pkg.path, "graph.json");
    int64_t total = 0;
    for (const nlohmann::json& v : g.at("values")) {
        tessera::graph::TensorType t{
            tessera::package::parse_member_dtype(v.at("dtype").get<std::string>(), pkg.path),
            v.at("shape").get<std::vector<int64_t>>()};
        total += t.num_bytes();
    }
    return total;
}

void describe(TesseraModel& m) {
    m.input_types.clear();
    m.output_types.clear();
    m.input_dtypes.clear();
    m.output_dtypes.clear();
    if (auto* e = cpu(&m)) {
        for (size_t i = 0; i < e->num_inputs(); ++i) m.input_types.push_back(e->input_type(i));
        for (size_t i = 0; i < e->num_outputs(); ++i) m.output_types.push_back(e->output_type(i));
        m.input_names = e->input_names();
        m.output_names = e->output_names();
        m.peak_bytes = e->peak_bytes();
    } else {
        auto* g = gpu(&m);
        for (size_t i = 0; i < g->num_inputs(); ++i) m.input_types.push_back(g->input_type(i));
        for (size_t i = 0; i < g->num_outputs(); ++i) m.output_types.push_back(g->output_type(i));
        m.input_names = m.pkg->input_names;
        m.output_names = m.pkg->output_names;
        m.input_names.resize(m.input_types.size());
        m.output_names.resize(m.output_types.size());
        m.peak_bytes = cuda_value_bytes(*m.pkg);
    }
    for (const auto& t : m.input_types) m.input_dtypes.push_back(tessera::graph::dtype_name(t.dtype));
    for (const auto& t : m.output_types)
        m.output_dtypes.push_back(tessera::graph::dtype_name(t.dtype));
}

}  // namespace

extern "C" {

const char* tessera_last_error(void) { return g_last_error.c_str(); }

TesseraModel* tessera_model_load(const char* package_path) {
    TesseraModel* out = nullptr;
    guarded([&] {
        TS_USER_CHECK(package_path != nullptr) << "tessera_model_load: null path";
        auto m = std::make_unique<TesseraModel>();
        m->root = tessera::package::load_package(package_path);
        m->pkg = m->root->specializations.empty() ? m->root
                                                   : m->root->specializations.front().package;
        // A CUDA package without a driver already failed in load_package
        // ("cannot run CUDA package '...': no CUDA device is available").
        TS_USER_CHECK(loaded(m.get())) << package_path << ": the package holds no executor";
        describe(*m);
        out = m.release();
    });
    return out;
}

void tessera_model_free(TesseraModel* model) { delete model; }

int tessera_model_num_specializations(const TesseraModel* m) {
    return m && m->root ? int(m->root->specializations.size()) : -1;
}

int tessera_model_select_input_shapes(TesseraModel* m, int num_inputs, const int* ndims,
                                      const int64_t* const* dims) {
    if (!loaded(m)) return null_model();
    return guarded([&] {
        TS_USER_CHECK(num_inputs == int(m->input_names.size()) && ndims && dims)
            << "tessera_model_select_input_shapes: the model has " << m->input_names.size()
            << " inputs, " << num_inputs << " shapes were given";
        std::map<std::string, std::vector<int64_t>> shapes;
        for (int i = 0; i < num_inputs; ++i) {
            TS_USER_CHECK(ndims[i] >= 0 && (ndims[i] == 0 || dims[i]))
                << "tessera_model_select_input_shapes: bad shape of input " << i;
            shapes[m->input_names[size_t(i)]] = std::vector<int64_t>(dims[i], dims[i] + ndims[i]);
        }
        if (m->root->specializations.empty()) {  // one set of shapes: it must be that one
            for (size_t i = 0; i < m->input_types.size(); ++i)
                TS_USER_CHECK(shapes[m->input_names[i]] == m->input_types[i].shape)
                    << m->root->path << " was compiled for input '" << m->input_names[i] << "' of "
                    << m->input_types[i].str() << " only";
            return;
        }
        const tessera::package::LoadedPackage& chosen =
            tessera::package::select_specialization(*m->root, shapes);
        for (const auto& s : m->root->specializations)
            if (s.package.get() == &chosen) m->pkg = s.package;
        describe(*m);
    });
}

int tessera_model_num_inputs(const TesseraModel* m) {
    return loaded(m) ? int(m->input_types.size()) : -1;
}
int tessera_model_num_outputs(const TesseraModel* m) {
    return loaded(m) ? int(m->output_types.size()) : -1;
}

const char* tessera_model_input_name(const TesseraModel* m, int i) {
    return in_range(m, i, true) ? m->input_names[size_t(i)].c_str() : nullptr;
}
const char* tessera_model_output_name(const TesseraModel* m, int i) {
    return in_range(m, i, false) ? m->output_names[size_t(i)].c_str() : nullptr;
}
const char* tessera_model_input_dtype(const TesseraModel* m, int i) {
    return in_range(m, i, true) ? m->input_dtypes[size_t(i)].c_str() : nullptr;
}
const char* tessera_model_output_dtype(const TesseraModel* m, int i) {
    return in_range(m, i, false) ? m->output_dtypes[size_t(i)].c_str() : nullptr;
}
int tessera_model_input_ndim(const TesseraModel* m, int i) {
    return in_range(m, i, true) ? int(m->input_types[size_t(i)].shape.size()) : -1;
}
int tessera_model_output_ndim(const TesseraModel* m, int i) {
    return in_range(m, i, false) ? int(m->output_types[size_t(i)].shape.size()) : -1;
}
const int64_t* tessera_model_input_shape(const TesseraModel* m, int i) {
    return in_range(m, i, true) ? m->input_types[size_t(i)].shape.data() : nullptr;
}
const int64_t* tessera_model_output_shape(const TesseraModel* m, int i) {
    return in_range(m, i, false) ? m->output_types[size_t(i)].shape.data() : nullptr;
}
int64_t tessera_model_input_bytes(const TesseraModel* m, int i) {
    return in_range(m, i, true) ? m->input_types[size_t(i)].num_bytes() : -1;
}
int64_t tessera_model_output_bytes(const TesseraModel* m, int i) {
    return in_range(m, i, false) ? m->output_types[size_t(i)].num_bytes() : -1;
}

int tessera_model_set_input(TesseraModel* m, int i, const void* data, size_t bytes) {
    if (!loaded(m)) return null_model();
    return guarded([&] {
        TS_USER_CHECK(in_range(m, i, true)) << "input index " << i << " out of range; the model has "
                                            << m->input_types.size() << " inputs";
        const auto& t = m->input_types[size_t(i)];
        TS_USER_CHECK(data != nullptr && int64_t(bytes) == t.num_bytes())
            << "input " << i << " ('" << m->input_names[size_t(i)] << "') takes "
            << t.num_bytes() << " bytes (" << t.str() << "), got " << bytes;
        auto a = tessera::runtime::NDArray::from_bytes(t, data, bytes);
        if (cpu(m)) cpu(m)->set_input(size_t(i), a);
        else gpu(m)->set_input(size_t(i), a);
    });
}

int tessera_model_set_input_by_name(TesseraModel* m, const char* name, const void* data,
                                    size_t bytes) {
    if (!loaded(m)) return null_model();
    int index = -1;
    int rc = guarded([&] {
        TS_USER_CHECK(name != nullptr) << "null input name";
        for (size_t i = 0; i < m->input_names.size() && index < 0; ++i)
            if (m->input_names[i] == name) index = int(i);
        if (index < 0 && cpu(m)) index = int(cpu(m)->input_index(name));  // its own message
        TS_USER_CHECK(index >= 0) << "the model has no input named '" << name << "'";
    });
    return rc == TESSERA_OK ? tessera_model_set_input(m, index, data, bytes) : rc;
}

int tessera_model_set_num_threads(TesseraModel* m, int threads) {
    if (!loaded(m)) return null_model();
    return guarded([&] {
        if (cpu(m)) cpu(m)->set_num_threads(threads);  // CUDA packages: nothing to set
    });
}

int tessera_model_run(TesseraModel* m) {
    if (!loaded(m)) return null_model();
    return guarded([&] {
        if (cpu(m)) cpu(m)->run();
        else gpu(m)->run();
    });
}

int tessera_model_get_output(const TesseraModel* m, int i, void* data, size_t bytes) {
    if (!loaded(m)) return null_model();
    return guarded([&] {
        TS_USER_CHECK(in_range(m, i, false)) << "output index " << i
                                             << " out of range; the model has "
                                             << m->output_types.size() << " outputs";
        tessera::runtime::NDArray out =
            cpu(m) ? cpu(m)->get_output(size_t(i)) : gpu(m)->get_output(size_t(i));
        TS_USER_CHECK(data != nullptr && bytes == out.num_bytes())
            << "output " << i << " has " << out.num_bytes() << " bytes (" << out.type().str()
            << "), the buffer " << bytes;
        std::memcpy(data, out.raw(), bytes);
    });
}

int64_t tessera_model_peak_bytes(const TesseraModel* m) { return loaded(m) ? m->peak_bytes : -1; }

const char* tessera_model_meta_json(const TesseraModel* m) {
    return m && m->pkg ? m->pkg->meta_json.c_str() : nullptr;
}

const char* tessera_model_profile_json(TesseraModel* m, int repeat) {
    if (!loaded(m)) {
        null_model();
        return nullptr;
    }
    int rc = guarded([&] {
        nlohmann::json arr = nlohmann::json::array();
        auto profiles = cpu(m) ? cpu(m)->profile(repeat) : gpu(m)->profile(repeat);
        for (const auto& p : profiles) {
            nlohmann::json names = nlohmann::json::array();
            for (int n : p.nodes) names.push_back(m->pkg->node_names[size_t(n)]);
            arr.push_back({{"kernel", p.kernel},
                           {"nodes", names},
                           {"calls", p.calls},
                           {"seconds", p.seconds},
                           {"flops", p.flops},
                           {"bytes", p.bytes}});
        }
        m->profile = arr.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    });
    return rc == TESSERA_OK ? m->profile.c_str() : nullptr;
}

}  // extern "C"
