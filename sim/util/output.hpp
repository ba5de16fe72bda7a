// Output files are written whole or not at all: to a temporary file beside the target, then
// renamed over it, so an interrupted run leaves either the old file or the complete new one.
#pragma once

#include <string>

namespace trainsim::util {

// Writes `content` to `path` atomically; "-" writes to standard output. Throws std::runtime_error
// (with the path and the system's reason) when the file cannot be written.
void write_output(const std::string& path, const std::string& content);

}  // namespace trainsim::util
