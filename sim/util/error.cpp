#include "util/error.hpp"

namespace trainsim::util {

std::string SourceLocation::str() const {
  if (line <= 0) return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(col);
}

InputError::InputError(SourceLocation where, const std::string& message)
    : std::runtime_error(where.str().empty() ? message : where.str() + ": " + message),
      where_(std::move(where)),
      message_(message) {}

InputError::InputError(const std::string& message) : std::runtime_error(message), message_(message) {}

}  // namespace trainsim::util
