#include "cli/memory_command.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <system_error>

#include "report/memory_report.hpp"
#include "util/error.hpp"

namespace trainsim::cli {
namespace {

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw util::InputError("cannot write " + path + ": " + std::strerror(errno));
    f << text;
    f.flush();
    if (!f) {
      std::error_code ignored;
      std::filesystem::remove(tmp, ignored);
      throw util::InputError("cannot write " + path + ": write failed");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw util::InputError("cannot write " + path + ": " + ec.message());
  }
}

}  // namespace

int run_memory_command(const config::Scenario& scenario, const std::string& json_path, std::ostream& out,
                       std::ostream& err) {
  const report::MemoryPlan plan = report::plan_memory(scenario);
  const std::string table = report::render_memory_table(plan);
  const std::string json = report::memory_json(plan).dump(2) + "\n";
  if (json_path == "-") {
    err << table;
    out << json;
  } else {
    if (!json_path.empty()) write_file_atomically(json_path, json);
    out << table;
  }
  out.flush();
  return plan.fits ? 0 : 1;
}

int run_memory_command(const config::Scenario& scenario, const std::string& json_path) {
  return run_memory_command(scenario, json_path, std::cout, std::cerr);
}

}  // namespace trainsim::cli
