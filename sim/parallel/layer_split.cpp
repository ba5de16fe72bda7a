#include "parallel/layer_split.hpp"

#include "model/memory.hpp"

namespace trainsim::parallel {

std::vector<int64_t> split_layers(int64_t layers, int64_t pp, int64_t virtual_stages) {
  // One implementation for every module: model/ (below parallel/) owns it.
  return model::chunk_layer_counts(layers, pp * virtual_stages);
}

std::string describe_split(int64_t layers, int64_t pp, int64_t virtual_stages) {
  const int64_t n = pp * virtual_stages;
  std::string s = std::to_string(layers) + " layers over ";
  if (virtual_stages > 1)
    s += std::to_string(n) + " chunks (" + std::to_string(pp) + " stages x " + std::to_string(virtual_stages) + ")";
  else
    s += std::to_string(n) + (n == 1 ? " stage" : " stages");
  const int64_t base = layers / n;
  const int64_t longer = layers % n;
  if (longer == 0) return s + ": " + std::to_string(n) + " x " + std::to_string(base);
  const int64_t shorter = n - longer;
  s += ": " + std::to_string(longer) + " x " + std::to_string(base + 1) + ", " + std::to_string(shorter) + " x " +
       std::to_string(base);
  const int64_t at_front = (shorter + 1) / 2;
  const int64_t at_back = shorter / 2;
  if (shorter == 1) return s + " (first)";
  if (shorter == 2) return s + " (first and last)";
  return s + " (first " + std::to_string(at_front) + " and last " + std::to_string(at_back) + ")";
}

}  // namespace trainsim::parallel
