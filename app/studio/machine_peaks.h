// Measured ceilings of this machine for the roofline: the FMA throughput of
// one core and of all cores together (the widest vector FMA the CPU has:
// AVX-512, else AVX2, else scalar), the same for 8-bit dot products where
// the CPU has them (vpdpbusd, what the integer GEMMs use), and the bandwidth of each cache level and
// of memory (a triad over a working set that fits the level, on every core).
// Plain C++; run it in a job (about a second).
#pragma once

#include <QString>
#include <QVector>

namespace tessera::studio {

struct MemoryRoof {
    QString name;       // "L1", "L2", "L3", "DRAM"
    double gbps = 0;    // all cores together
    bool perCore = false;  // a private cache: scales with the threads that use it
};

struct MachinePeaks {
    double gflopsOneCore = 0;
    double gflops = 0;  // all `cores` together, running at the same time
    int cores = 1;      // hardware threads measured
    QString isa;        // the FMA used: "AVX-512", "AVX2+FMA" or "scalar"
    QVector<MemoryRoof> roofs;  // fastest (L1) first, DRAM last
    /// The 8-bit dot-product ceiling (vpdpbusd chains: 2 operations per byte
    /// product, as integer GEMMs count them); 0 without AVX-512 VNNI / AVX-VNNI.
    double int8GopsOneCore = 0;
    double int8Gops = 0;  // all `cores` together
    QString int8Isa;      // "AVX-512 VNNI", "AVX-VNNI" or empty

    /// The compute ceiling for kernels running on `threads` threads.
    double gflopsFor(int threads) const;
    /// The integer (8-bit dot product) ceiling on `threads` threads; 0 if none.
    double int8GopsFor(int threads) const;
    /// A memory roof for kernels running on `threads` threads.
    double gbpsFor(const MemoryRoof& roof, int threads) const;
    /// How the figures were measured, for a tooltip.
    QString method() const;
};

/// Times FMA chains and triads (best of a few repetitions).
MachinePeaks measureMachinePeaks();

/// The higher of each figure of two measurements of the same machine.
MachinePeaks bestOf(const MachinePeaks& a, const MachinePeaks& b);

}  // namespace tessera::studio
