#include "hardware/cluster.hpp"

namespace trainsim::hardware {

const char* to_string(IntraFabric f) {
  switch (f) {
    case IntraFabric::kNvswitch: return "nvswitch";
    case IntraFabric::kPcie: return "pcie";
    case IntraFabric::kNvlinkBridge: return "nvlink-bridge";
  }
  return "?";
}

const char* to_string(InterTransport t) {
  switch (t) {
    case InterTransport::kInfiniband: return "infiniband";
    case InterTransport::kEfa: return "efa";
  }
  return "?";
}

const char* to_string(Topology t) {
  switch (t) {
    case Topology::kFatTree: return "fat-tree";
    case Topology::kRailOptimized: return "rail-optimized";
    case Topology::kShared: return "shared";
  }
  return "?";
}

}  // namespace trainsim::hardware
