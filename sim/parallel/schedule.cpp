#include "parallel/schedule.hpp"

#include <algorithm>

#include "model/memory.hpp"

namespace trainsim::parallel {
namespace {

std::vector<PipelineOp> gpipe(int64_t m) {
  std::vector<PipelineOp> ops;
  for (int64_t i = 0; i < m; ++i) ops.push_back({Pass::kForward, i, 0});
  for (int64_t i = 0; i < m; ++i) ops.push_back({Pass::kBackward, i, 0});
  return ops;
}

std::vector<PipelineOp> one_f_one_b(int64_t p, int64_t m, int64_t rank) {
  std::vector<PipelineOp> ops;
  const int64_t warmup = std::min(p - rank - 1, m);
  int64_t next_f = 0;
  int64_t next_b = 0;
  for (; next_f < warmup; ++next_f) ops.push_back({Pass::kForward, next_f, 0});
  while (next_f < m) {
    ops.push_back({Pass::kForward, next_f++, 0});
    ops.push_back({Pass::kBackward, next_b++, 0});
  }
  while (next_b < m) ops.push_back({Pass::kBackward, next_b++, 0});
  return ops;
}

// Megatron-LM's interleaved 1F1B: virtual micro-batch k (0 .. m*v-1) of a rank maps to
// chunk (k / p) % v (reversed for backward) and micro-batch (k / (p*v)) * p + k % p.
std::vector<PipelineOp> interleaved(int64_t p, int64_t m, int64_t v, int64_t rank) {
  const int64_t total = m * v;
  auto op_at = [&](int64_t k, Pass pass) {
    int64_t chunk = (k / p) % v;
    if (pass == Pass::kBackward) chunk = v - 1 - chunk;
    return PipelineOp{pass, (k / (p * v)) * p + k % p, chunk};
  };
  const int64_t warmup = interleaved_warmup(p, m, v, rank);
  std::vector<PipelineOp> ops;
  int64_t f = 0;
  int64_t b = 0;
  for (; f < warmup; ++f) ops.push_back(op_at(f, Pass::kForward));
  while (f < total) {
    ops.push_back(op_at(f++, Pass::kForward));
    ops.push_back(op_at(b++, Pass::kBackward));
  }
  while (b < total) ops.push_back(op_at(b++, Pass::kBackward));
  return ops;
}

}  // namespace

int64_t interleaved_warmup(int64_t p, int64_t m, int64_t v, int64_t rank) {
  return model::interleaved_warmup(p, m, v, rank);
}

std::vector<std::vector<PipelineOp>> build_schedule(model::Schedule schedule, int64_t p, int64_t m, int64_t v) {
  std::vector<std::vector<PipelineOp>> plan(static_cast<size_t>(p));
  for (int64_t r = 0; r < p; ++r) {
    switch (schedule) {
      case model::Schedule::kGpipe: plan[r] = gpipe(m); break;
      case model::Schedule::k1F1B: plan[r] = one_f_one_b(p, m, r); break;
      case model::Schedule::kInterleaved: plan[r] = v > 1 ? interleaved(p, m, v, r) : one_f_one_b(p, m, r); break;
    }
  }
  return plan;
}

std::string to_string(const std::vector<PipelineOp>& ops, int64_t v) {
  std::string s;
  for (const auto& op : ops) {
    if (!s.empty()) s += ' ';
    s += op.pass == Pass::kForward ? 'F' : 'B';
    s += std::to_string(op.micro_batch);
    if (v > 1) s += "." + std::to_string(op.chunk);
  }
  return s;
}

double ideal_bubble_fraction(model::Schedule schedule, int64_t p, int64_t m, int64_t v) {
  const double f = static_cast<double>(p - 1) / static_cast<double>(m);
  return schedule == model::Schedule::kInterleaved ? f / static_cast<double>(v) : f;
}

}  // namespace trainsim::parallel
