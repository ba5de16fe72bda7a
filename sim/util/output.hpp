// Output files are written whole or not at all: to a temporary file beside the target (created
// with mkstemp, never under a predictable name), then renamed over it, so an interrupted run leaves
// either the old file or the complete new one. A symlink is followed to the file it names; a
// device, FIFO or socket (/dev/null, /dev/stdout, a pipe) is written through, never replaced.
#pragma once

#include <string>

namespace trainsim::util {

// Writes `content` to `path` atomically; "-" writes to standard output. Throws util::InputError
// ("PATH: cannot write: reason", exit 2) when the file cannot be written.
void write_output(const std::string& path, const std::string& content);

}  // namespace trainsim::util
