// `trainsim memory SCENARIO [--set KEY=VALUE]... [--json FILE]` once the scenario is loaded
// (argument parsing and loading belong to cli.cpp).
#pragma once

#include <ostream>
#include <string>

#include "config/scenario.hpp"

namespace trainsim::cli {

// Plans the scenario's memory (report::plan_memory), writes the table to standard output and,
// when json_path is not empty, the JSON report to json_path ("-": ONLY the JSON goes to standard
// output and the table to standard error). The file is written to "<json_path>.tmp" and renamed
// into place, so a failed write leaves no partial file.
// Returns 0 when the scenario fits, 1 when it does not (the table says why and what would fit).
// Throws util::InputError("cannot write FILE: reason") when the JSON file cannot be written.
int run_memory_command(const config::Scenario& scenario, const std::string& json_path);

// Same, writing to the given streams instead of standard output / standard error (tests).
int run_memory_command(const config::Scenario& scenario, const std::string& json_path, std::ostream& out,
                       std::ostream& err);

}  // namespace trainsim::cli
