#include "cli/cli.hpp"

#include <cstdio>

namespace trainsim::cli {

int main(int argc, char** argv) {
  std::fprintf(stderr, "trainsim: not built yet\n");
  return 2;
}

}  // namespace trainsim::cli
