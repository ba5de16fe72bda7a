// Named model shapes for `model.preset:` in a scenario. Dimensions and their sources are in
// presets.cpp (entry ids of ../shared/reference/published_runs.yaml where the shape is there).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/spec.hpp"

namespace trainsim::model {

// The preset's full ModelSpec (its `preset` field = the name), or nullopt for an unknown name.
// Names are lowercase: gpt3-175b, llama2-7b, llama3-405b, megatron-1.7b, ...
std::optional<ModelSpec> find_model_preset(std::string_view name);

// Every preset name, in catalog order (for "did you mean" and error messages).
std::vector<std::string> model_preset_names();

}  // namespace trainsim::model
