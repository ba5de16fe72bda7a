#include "cli/memory_command.hpp"

#include <iostream>

#include "report/memory_report.hpp"
#include "util/output.hpp"

namespace trainsim::cli {

int run_memory_command(const config::Scenario& scenario, const std::string& json_path, std::ostream& out,
                       std::ostream& err) {
  const report::MemoryPlan plan = report::plan_memory(scenario);
  const std::string table = report::render_memory_table(plan);
  const std::string json = report::memory_json(plan).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (json_path == "-") {
    err << table;
    out << json;
  } else {
    if (!json_path.empty()) util::write_output(json_path, json);
    out << table;
  }
  out.flush();
  return plan.fits ? 0 : 1;
}

int run_memory_command(const config::Scenario& scenario, const std::string& json_path) {
  return run_memory_command(scenario, json_path, std::cout, std::cerr);
}

}  // namespace trainsim::cli
