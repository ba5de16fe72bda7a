// Errors a user can meet. Every bad input becomes an InputError that the CLI prints as
// "FILE:LINE:COL: message" and turns into exit code 2; nothing below cli/ calls exit().
#pragma once

#include <stdexcept>
#include <string>

namespace trainsim::util {

// Where a value came from. line/col are 1-based; 0 means "unknown" and is not printed.
struct SourceLocation {
  std::string file;  // path as the user typed it, or "--set" for command-line overrides
  int line = 0;
  int col = 0;

  // "file:line:col" (or "file" when the position is unknown).
  std::string str() const;
};

// Bad input: unreadable file, YAML error, unknown key, invalid value. Exit code 2.
class InputError : public std::runtime_error {
 public:
  InputError(SourceLocation where, const std::string& message);
  // Without a location (e.g. a bad command-line flag).
  explicit InputError(const std::string& message);

  const SourceLocation& where() const { return where_; }
  // The message without the location prefix.
  const std::string& message() const { return message_; }

 private:
  SourceLocation where_;
  std::string message_;
};

// A valid scenario that cannot run as asked (e.g. does not fit in memory). Exit code 1.
class InfeasibleError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace trainsim::util
