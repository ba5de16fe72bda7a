// trainsim's command line: `trainsim run|sweep|variance|memory ...` (CONTRACT.md).
#pragma once

namespace trainsim::cli {

// Parses argv, runs the subcommand, returns the process exit code:
// 0 success, 1 valid but infeasible, 2 bad input, 130 interrupted.
int main(int argc, char** argv);

}  // namespace trainsim::cli
