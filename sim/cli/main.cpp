#include "cli/cli.hpp"

int main(int argc, char** argv) { return trainsim::cli::main(argc, argv); }
