// The learned cost model: gradient-boosted trees (XGBoost) over loop-IR
// features, predicting a candidate's throughput relative to the best one
// measured for its task. Retrained as measurements arrive.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace tessera::autotune {

class CostModel {
public:
    CostModel();
    ~CostModel();
    CostModel(const CostModel&) = delete;
    CostModel& operator=(const CostModel&) = delete;

    /// One measurement: features of a candidate of task `task`, its run time
    /// (seconds; <= 0 for an error, which scores 0).
    void add(const std::vector<float>& features, const std::string& task, double seconds);
    /// Retrains on everything added (labels: best time of the task / time).
    void train();
    bool trained() const;
    size_t size() const;

    /// Predicted relative throughput (higher is better); zeros before training.
    std::vector<double> predict(const std::vector<std::vector<float>>& x) const;

private:
    struct Impl;
    std::unique_ptr<Impl> m;
};

/// Spearman rank correlation of two equally long series (0 when undefined).
double spearman(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace tessera::autotune
