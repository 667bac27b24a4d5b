// peak.h: what one core can do at most: the FMA-throughput probe and the clock it runs at.
// The benchmark divides every GFLOP/s it prints by this peak, so the probe must be right on every
// CPU a learner has; see bench/peak.c for how it is built and docs/kernels.md for why.
//
//   tw_peak p;
//   if (tw_peak_fma(&p, tw_peak_best_isa(), 0, 5, 0.05)) printf("%.1f GFLOP/s\n", p.gflops);
#ifndef TW_PEAK_H
#define TW_PEAK_H

typedef struct {
    const char *isa;     // "avx512", "avx2" or "neon"
    int    lanes;        // floats per vector register: 16, 8 or 4
    int    chains;       // independent FMA dependency chains in the probe's loop
    double gflops;       // best of the runs: 2 * lanes * chains * iterations / seconds
} tw_peak;

// The widest ISA this build and this CPU can probe ("avx512", "avx2", "neon"), or NULL.
const char *tw_peak_best_isa(void);

// The probe's default number of chains for an ISA: enough to cover latency x throughput of the
// FMA units on Intel, AMD and Arm cores with room to spare (see peak.c); 0 if the ISA is unknown.
int tw_peak_default_chains(const char *isa);

// The largest chain count the probe for `isa` supports (one register per chain): 32, 16 or 32.
int tw_peak_max_chains(const char *isa);

// Runs the FMA probe of `isa` with `chains` chains (0: the default) `runs` times, each about
// `run_seconds` long, and keeps the fastest run (noise from other processes only slows a run
// down). Returns 1 and fills *p, or 0 if this build/CPU has no such probe or chains is not
// supported (chains must be a multiple of 4 between 4 and tw_peak_max_chains(isa)).
int tw_peak_fma(tw_peak *p, const char *isa, int chains, int runs, double run_seconds);

// The core clock in GHz, measured by timing a long chain of dependent integer additions
// (latency one cycle on every x86-64 and AArch64 core), best of `runs` runs of about
// `run_seconds`; 0 if this build has no such loop (neither x86-64 nor AArch64 with GNU C).
double tw_peak_clock_ghz(int runs, double run_seconds);

#endif
