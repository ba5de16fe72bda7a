// How a model's transformer layers are cut into pipeline chunks when they do not divide evenly.
//
//   126 layers, pp 16:   [7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7]
//                         ^ embedding                            output ^
//
// The chunks at the two ends of the model also hold the embedding and the output layer, so they
// are the ones given one layer less (Llama 3 405B: 126 layers on 16 stages, first and last stage
// one layer short). Pure; config/ reports the split, the cost model uses it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace trainsim::parallel {

// Layers of each of the pp * virtual_stages chunks, in model order (chunk i; with interleaving
// chunk i lives on pipeline rank i % pp). Every chunk holds floor(L/n) or floor(L/n) + 1 layers;
// the short chunks sit at the ends, alternating first, last, second, second-to-last, ...
// REQUIRES: pp >= 1, virtual_stages >= 1, layers >= max(1, pp * virtual_stages - 2) (only the two
// end chunks may be empty: they still hold the embedding, or the output layer and loss).
std::vector<int64_t> split_layers(int64_t layers, int64_t pp, int64_t virtual_stages = 1);

// The fewest layers split_layers accepts: every chunk holds one, but the two end chunks may hold none.
inline int64_t min_layers(int64_t pp, int64_t virtual_stages = 1) {
  return pp * virtual_stages > 2 ? pp * virtual_stages - 2 : 1;
}

// One line for notes: "126 layers over 16 stages: 14 x 8, 2 x 7 (first and last)";
// "128 layers over 16 stages: 16 x 8"; with interleaving "... over 32 chunks (16 stages x 2): ...".
// Same REQUIRES as split_layers.
std::string describe_split(int64_t layers, int64_t pp, int64_t virtual_stages = 1);

}  // namespace trainsim::parallel
