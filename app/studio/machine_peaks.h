// Measured peaks of this machine for the roofline: FMA throughput of one core
// and all cores, and memory bandwidth (a STREAM-like triad). Plain C++; run it
// in a job (it takes about half a second).
#pragma once

namespace tessera::studio {

struct MachinePeaks {
    double gflopsOneCore = 0;
    double gflops = 0;  // all hardware threads together
    double gbps = 0;    // triad bandwidth, GB/s
};

/// Times short FMA and triad loops (best of a few repetitions).
MachinePeaks measureMachinePeaks();

}  // namespace tessera::studio
