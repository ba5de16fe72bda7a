#include "model/spec.hpp"

namespace trainsim::model {

RankHeads rank_heads(const ModelSpec& m, const ParallelSpec& p) {
  return {m.heads / p.tp, std::max<int64_t>(m.kv_heads / p.tp, 1)};
}

bool a2a_splits_heads(const ModelSpec& m, const ParallelSpec& p) {
  const RankHeads h = rank_heads(m, p);
  return h.query % p.cp == 0 && h.key_value % p.cp == 0;
}

double bytes_per_value(Precision p) {
  switch (p) {
    case Precision::kFp32: return 4;
    case Precision::kFp16: return 2;
    case Precision::kBf16: return 2;
    case Precision::kFp8: return 1;
  }
  return 2;
}

const char* to_string(Ffn f) { return f == Ffn::kSwiglu ? "swiglu" : "gelu"; }
const char* to_string(Schedule s) {
  switch (s) {
    case Schedule::kGpipe: return "gpipe";
    case Schedule::k1F1B: return "1f1b";
    case Schedule::kInterleaved: return "interleaved";
  }
  return "?";
}
const char* to_string(Recompute r) {
  switch (r) {
    case Recompute::kNone: return "none";
    case Recompute::kSelective: return "selective";
    case Recompute::kSelectiveOp: return "selective-op";
    case Recompute::kFull: return "full";
  }
  return "?";
}
const char* to_string(Precision p) {
  switch (p) {
    case Precision::kFp32: return "fp32";
    case Precision::kFp16: return "fp16";
    case Precision::kBf16: return "bf16";
    case Precision::kFp8: return "fp8";
  }
  return "?";
}
const char* to_string(Optimizer o) { return o == Optimizer::kAdam ? "adam" : "sgd"; }
const char* to_string(Offload o) {
  switch (o) {
    case Offload::kNone: return "none";
    case Offload::kCpu: return "cpu";
    case Offload::kNvme: return "nvme";
  }
  return "?";
}
const char* to_string(CpComm c) {
  switch (c) {
    case CpComm::kP2p: return "p2p";
    case CpComm::kAllGather: return "all_gather";
    case CpComm::kAllToAll: return "a2a";
  }
  return "?";
}

const char* to_string(EpOverlap o) {
  switch (o) {
    case EpOverlap::kNone: return "none";
    case EpOverlap::kSharedExperts: return "shared_experts";
    case EpOverlap::kMicroBatches: return "micro_batches";
  }
  return "?";
}

}  // namespace trainsim::model
