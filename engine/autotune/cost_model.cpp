// XGBoost cost model through the C API (libxgboost-dev).
#include "engine/autotune/cost_model.h"

#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "engine/core/error.h"

namespace tessera::autotune {

namespace {

void check(int rc, const char* what) {
    TS_CHECK(rc == 0) << "XGBoost " << what << ": " << XGBGetLastError();
}

DMatrixHandle make_matrix(const std::vector<std::vector<float>>& x) {
    const size_t cols = x.empty() ? 0 : x[0].size();
    std::vector<float> flat;
    flat.reserve(x.size() * cols);
    for (const auto& row : x) flat.insert(flat.end(), row.begin(), row.end());
    DMatrixHandle h = nullptr;
    check(XGDMatrixCreateFromMat(flat.data(), x.size(), cols, NAN, &h), "DMatrix");
    return h;
}

std::vector<double> ranks(const std::vector<double>& v) {
    std::vector<size_t> idx(v.size());
    std::iota(idx.begin(), idx.end(), 0);
    std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
    std::vector<double> r(v.size());
    for (size_t i = 0; i < idx.size();) {
        size_t j = i;
        while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
        for (size_t k = i; k <= j; ++k) r[idx[k]] = double(i + j) / 2.0;
        i = j + 1;
    }
    return r;
}

}  // namespace

struct CostModel::Impl {
    std::vector<std::vector<float>> x;
    std::vector<std::string> task;
    std::vector<double> seconds;
    BoosterHandle booster = nullptr;
    ~Impl() {
        if (booster) XGBoosterFree(booster);
    }
};

CostModel::CostModel() : m(std::make_unique<Impl>()) {}
CostModel::~CostModel() = default;

void CostModel::add(const std::vector<float>& features, const std::string& task, double seconds) {
    m->x.push_back(features);
    m->task.push_back(task);
    m->seconds.push_back(seconds);
}

bool CostModel::trained() const { return m->booster != nullptr; }
size_t CostModel::size() const { return m->x.size(); }

void CostModel::train() {
    if (m->x.size() < 4) return;
    std::map<std::string, double> best;
    for (size_t i = 0; i < m->x.size(); ++i)
        if (m->seconds[i] > 0) {
            auto it = best.find(m->task[i]);
            if (it == best.end() || m->seconds[i] < it->second) best[m->task[i]] = m->seconds[i];
        }
    std::vector<float> labels(m->x.size(), 0.f);
    for (size_t i = 0; i < m->x.size(); ++i)
        if (m->seconds[i] > 0) labels[i] = float(best[m->task[i]] / m->seconds[i]);
    DMatrixHandle d = make_matrix(m->x);
    check(XGDMatrixSetFloatInfo(d, "label", labels.data(), labels.size()), "labels");
    if (m->booster) XGBoosterFree(m->booster), m->booster = nullptr;
    BoosterHandle b = nullptr;
    check(XGBoosterCreate(&d, 1, &b), "create");
    const std::pair<const char*, const char*> params[] = {
        {"nthread", "1"},   {"max_depth", "6"},   {"eta", "0.2"},   {"subsample", "1.0"},
        {"min_child_weight", "1"}, {"objective", "reg:squarederror"}, {"verbosity", "0"}};
    for (const auto& [k, v] : params) check(XGBoosterSetParam(b, k, v), "param");
    for (int it = 0; it < 40; ++it) check(XGBoosterUpdateOneIter(b, it, d), "train");
    XGDMatrixFree(d);
    m->booster = b;
}

std::vector<double> CostModel::predict(const std::vector<std::vector<float>>& x) const {
    std::vector<double> out(x.size(), 0.0);
    if (!m->booster || x.empty()) return out;
    DMatrixHandle d = make_matrix(x);
    bst_ulong len = 0;
    const float* res = nullptr;
    check(XGBoosterPredict(m->booster, d, 0, 0, 0, &len, &res), "predict");
    for (size_t i = 0; i < x.size() && i < size_t(len); ++i) out[i] = res[i];
    XGDMatrixFree(d);
    return out;
}

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
    const size_t n = std::min(a.size(), b.size());
    if (n < 3) return 0;
    std::vector<double> ra = ranks({a.begin(), a.begin() + long(n)});
    std::vector<double> rb = ranks({b.begin(), b.begin() + long(n)});
    double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / double(n);
    double mb = std::accumulate(rb.begin(), rb.end(), 0.0) / double(n);
    double sab = 0, saa = 0, sbb = 0;
    for (size_t i = 0; i < n; ++i) {
        sab += (ra[i] - ma) * (rb[i] - mb);
        saa += (ra[i] - ma) * (ra[i] - ma);
        sbb += (rb[i] - mb) * (rb[i] - mb);
    }
    return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : 0;
}

}  // namespace tessera::autotune
