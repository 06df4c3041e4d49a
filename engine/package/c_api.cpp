// The C interface (tessera_runtime.h) over load_package and GraphExecutor:
// exceptions become status codes plus a per-thread error message.
#include "engine/package/tessera_runtime.h"

#include <cstring>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/core/error.h"
#include "engine/package/package_loader.h"

struct TesseraModel {
    std::shared_ptr<tessera::package::LoadedPackage> pkg;
    std::vector<std::string> input_dtypes, output_dtypes;
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

tessera::runtime::GraphExecutor* ex(const TesseraModel* m) {
    return m && m->pkg ? m->pkg->executor.get() : nullptr;
}

bool in_range(const TesseraModel* m, int i, bool input) {
    auto* e = ex(m);
    if (!e || i < 0) return false;
    return size_t(i) < (input ? e->num_inputs() : e->num_outputs());
}

int null_model() {
    g_last_error = "null TesseraModel";
    return TESSERA_USER_ERROR;
}

}  // namespace

extern "C" {

const char* tessera_last_error(void) { return g_last_error.c_str(); }

TesseraModel* tessera_model_load(const char* package_path) {
    TesseraModel* out = nullptr;
    guarded([&] {
        TS_USER_CHECK(package_path != nullptr) << "tessera_model_load: null path";
        auto m = std::make_unique<TesseraModel>();
        m->pkg = tessera::package::load_package(package_path);
        TS_USER_CHECK(m->pkg->executor != nullptr)
            << package_path << ": a CUDA package; this C interface runs llvm packages "
            << "(run CUDA packages with `tessera run`)";
        auto* e = m->pkg->executor.get();
        for (size_t i = 0; i < e->num_inputs(); ++i)
            m->input_dtypes.push_back(tessera::graph::dtype_name(e->input_type(i).dtype));
        for (size_t i = 0; i < e->num_outputs(); ++i)
            m->output_dtypes.push_back(tessera::graph::dtype_name(e->output_type(i).dtype));
        out = m.release();
    });
    return out;
}

void tessera_model_free(TesseraModel* model) { delete model; }

int tessera_model_num_inputs(const TesseraModel* m) { return ex(m) ? int(ex(m)->num_inputs()) : -1; }
int tessera_model_num_outputs(const TesseraModel* m) {
    return ex(m) ? int(ex(m)->num_outputs()) : -1;
}

const char* tessera_model_input_name(const TesseraModel* m, int i) {
    return in_range(m, i, true) ? ex(m)->input_names()[size_t(i)].c_str() : nullptr;
}
const char* tessera_model_output_name(const TesseraModel* m, int i) {
    return in_range(m, i, false) ? ex(m)->output_names()[size_t(i)].c_str() : nullptr;
}
const char* tessera_model_input_dtype(const TesseraModel* m, int i) {
    return in_range(m, i, true) ? m->input_dtypes[size_t(i)].c_str() : nullptr;
}
const char* tessera_model_output_dtype(const TesseraModel* m, int i) {
    return in_range(m, i, false) ? m->output_dtypes[size_t(i)].c_str() : nullptr;
}
int tessera_model_input_ndim(const TesseraModel* m, int i) {
    return in_range(m, i, true) ? int(ex(m)->input_type(size_t(i)).shape.size()) : -1;
}
int tessera_model_output_ndim(const TesseraModel* m, int i) {
    return in_range(m, i, false) ? int(ex(m)->output_type(size_t(i)).shape.size()) : -1;
}
const int64_t* tessera_model_input_shape(const TesseraModel* m, int i) {
    return in_range(m, i, true) ? ex(m)->input_type(size_t(i)).shape.data() : nullptr;
}
const int64_t* tessera_model_output_shape(const TesseraModel* m, int i) {
    return in_range(m, i, false) ? ex(m)->output_type(size_t(i)).shape.data() : nullptr;
}
int64_t tessera_model_input_bytes(const TesseraModel* m, int i) {
    return in_range(m, i, true) ? ex(m)->input_type(size_t(i)).num_bytes() : -1;
}
int64_t tessera_model_output_bytes(const TesseraModel* m, int i) {
    return in_range(m, i, false) ? ex(m)->output_type(size_t(i)).num_bytes() : -1;
}

int tessera_model_set_input(TesseraModel* m, int i, const void* data, size_t bytes) {
    if (!ex(m)) return null_model();
    return guarded([&] {
        TS_USER_CHECK(in_range(m, i, true)) << "input index " << i << " out of range; the model has "
                                            << ex(m)->num_inputs() << " inputs";
        const auto& t = ex(m)->input_type(size_t(i));
        TS_USER_CHECK(data != nullptr && int64_t(bytes) == t.num_bytes())
            << "input " << i << " ('" << ex(m)->input_names()[size_t(i)] << "') takes "
            << t.num_bytes() << " bytes (" << t.str() << "), got " << bytes;
        ex(m)->set_input(size_t(i), tessera::runtime::NDArray::from_bytes(t, data, bytes));
    });
}

int tessera_model_set_input_by_name(TesseraModel* m, const char* name, const void* data,
                                    size_t bytes) {
    if (!ex(m)) return null_model();
    int index = -1;
    int rc = guarded([&] {
        TS_USER_CHECK(name != nullptr) << "null input name";
        index = int(ex(m)->input_index(name));
    });
    return rc == TESSERA_OK ? tessera_model_set_input(m, index, data, bytes) : rc;
}

int tessera_model_set_num_threads(TesseraModel* m, int threads) {
    if (!ex(m)) return null_model();
    return guarded([&] { ex(m)->set_num_threads(threads); });
}

int tessera_model_run(TesseraModel* m) {
    if (!ex(m)) return null_model();
    return guarded([&] { ex(m)->run(); });
}

int tessera_model_get_output(const TesseraModel* m, int i, void* data, size_t bytes) {
    if (!ex(m)) return null_model();
    return guarded([&] {
        TS_USER_CHECK(in_range(m, i, false)) << "output index " << i
                                             << " out of range; the model has "
                                             << ex(m)->num_outputs() << " outputs";
        tessera::runtime::NDArray out = ex(m)->get_output(size_t(i));
        TS_USER_CHECK(data != nullptr && bytes == out.num_bytes())
            << "output " << i << " has " << out.num_bytes() << " bytes (" << out.type().str()
            << "), the buffer " << bytes;
        std::memcpy(data, out.raw(), bytes);
    });
}

int64_t tessera_model_peak_bytes(const TesseraModel* m) { return ex(m) ? ex(m)->peak_bytes() : -1; }

const char* tessera_model_meta_json(const TesseraModel* m) {
    return m && m->pkg ? m->pkg->meta_json.c_str() : nullptr;
}

const char* tessera_model_profile_json(TesseraModel* m, int repeat) {
    if (!ex(m)) {
        null_model();
        return nullptr;
    }
    int rc = guarded([&] {
        nlohmann::json arr = nlohmann::json::array();
        for (const auto& p : ex(m)->profile(repeat)) {
            nlohmann::json names = nlohmann::json::array();
            for (int n : p.nodes) names.push_back(m->pkg->node_names[size_t(n)]);
            arr.push_back({{"kernel", p.kernel},
                           {"nodes", names},
                           {"calls", p.calls},
                           {"seconds", p.seconds},
                           {"flops", p.flops},
                           {"bytes", p.bytes}});
        }
        m->profile = arr.dump();
    });
    return rc == TESSERA_OK ? m->profile.c_str() : nullptr;
}

}  // extern "C"
