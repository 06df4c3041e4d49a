// The schedule tests' small workloads (matmul, conv2d, pooling, softmax, ...)
// and interpreter/JIT runners, compiled into this test program too.
#include "tests/engine/schedule/random_schedule.cpp"  // NOLINT: shared test helper
