// Pipeline schedules as plans: for each pipeline rank, the ordered list of forward and backward
// passes it runs in one step. Pure; the SimGrid engine and the analytic executor run the same plans.
//
//   1F1B, p=4, m=6, rank 0:  F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5   (warm-up p-1-rank forwards)
//   GPipe:                   F0 .. F5 then B0 .. B5
//   interleaved (v chunks):  Megatron's order; chunk c of rank r is model chunk c*p + r.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/spec.hpp"

namespace trainsim::parallel {

enum class Pass { kForward, kBackward };

struct PipelineOp {
  Pass pass = Pass::kForward;
  int64_t micro_batch = 0;  // 0 .. m-1
  int64_t chunk = 0;        // local chunk 0 .. v-1 on this rank
  bool operator==(const PipelineOp&) const = default;
};

// REQUIRES: p >= 1, m >= 1, v >= 1; interleaved: m % p == 0 (config/ checks).
// Returns ops[rank] for rank 0 .. p-1. Every rank runs every (micro_batch, chunk) once forward and
// once backward; a backward of (mb, chunk) comes after its forward.
std::vector<std::vector<PipelineOp>> build_schedule(model::Schedule schedule, int64_t p, int64_t m, int64_t v);

// Forward passes rank `rank` runs before its first backward in Megatron's interleaved schedule
// (v > 1): (p - rank - 1) * 2 + (v - 1) * p, every one of the m v when m == p or fewer remain
// (schedules.py get_pp_rank_microbatches: all_warmup_microbatches). The forwards after them are
// the steady state's, each followed by a backward. The formula is model::interleaved_warmup's,
// which the memory model's in-flight count shares.
int64_t interleaved_warmup(int64_t p, int64_t m, int64_t v, int64_t rank);

// Global model-chunk index of local chunk c on rank r: c * p + r.
inline int64_t model_chunk(int64_t rank, int64_t chunk, int64_t p) { return chunk * p + rank; }

// "F0 F1 B0 ..." (chunk suffix ".c" when v > 1), for tests and traces.
std::string to_string(const std::vector<PipelineOp>& ops, int64_t v = 1);

// Ideal bubble fraction of the schedule (Megatron SC21 Sec. 2.2): (p-1)/m, divided by v when
// interleaved; as a share of the ideal compute time.
double ideal_bubble_fraction(model::Schedule schedule, int64_t p, int64_t m, int64_t v);

}  // namespace trainsim::parallel
