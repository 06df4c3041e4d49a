// The defaults the CPU search (tuner.h) and the GPU search (search_gpu.h)
// share, named once with the reason for each. Both run the one search driver
// (search.h): sample a population, evolve it under the XGBoost cost model,
// measure a batch of the best plus an epsilon share of random candidates,
// retrain, repeat; then confirm the best few by measuring them again.
#pragma once

namespace tessera::autotune {

/// Candidates measured per round. The cost model is retrained after each
/// round: 8 gives it 8 retrainings within the default budget of 64 trials
/// while one round still spreads over several candidates.
inline constexpr int kSearchBatch = 8;

/// Candidates the evolutionary search keeps and mutates: 6 rounds' worth, so
/// that the batch is the best sixth by the model's ranking and not the whole
/// population (Ansor keeps 2,048 for budgets of thousands of trials; ours
/// are tens to hundreds, and each generation costs model evaluations).
inline constexpr int kSearchPopulation = 48;

/// Rounds of mutation and crossover per batch: the population's ranking
/// changes little after a few, and each costs a population's evaluations.
inline constexpr int kSearchGenerations = 3;

/// Share of each batch drawn at random instead of by the model: with small
/// budgets the model starts from few points and would otherwise only confirm
/// its first guesses (TVM's 0.05 assumes far larger budgets).
inline constexpr double kSearchEpsilon = 0.2;

/// End-of-run confirmation: the default schedule and the fastest few
/// candidates are measured again in alternating rounds and each keeps the
/// median of its round medians, so that one disturbed round (another process
/// on the machine) cannot crown a candidate. 3 rounds survive one bad round;
/// the top 3 cover candidates within noise of each other.
inline constexpr int kConfirmTop = 3;
inline constexpr int kConfirmRounds = 3;

}  // namespace tessera::autotune
