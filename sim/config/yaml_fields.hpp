// Reading a YAML tree with every complaint pinned to where the user wrote the value: FILE:LINE:COL
// for the file, --set:N:COL for the N-th command-line override. Internal to config/.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/scenario.hpp"
#include "util/error.hpp"

namespace trainsim::config::detail {

// Source positions of a tree merged from a file and --set overrides. File nodes carry yaml-cpp
// marks (0-based; reported 1-based); nodes an override put in are registered by dotted path,
// and everything under a registered path is reported at that override.
class Locations {
 public:
  explicit Locations(std::string file) : file_(std::move(file)) {}

  const std::string& file() const { return file_; }
  // Records that override number `index` (1-based) set `path`, its key segment at key_col and
  // its value at value_col (1-based columns within KEY=VALUE).
  void add_override(const std::string& path, int index, int key_col, int value_col);

  util::SourceLocation key(const std::string& path, const YAML::Node& key) const;
  util::SourceLocation value(const std::string& path, const YAML::Node& value) const;
  util::SourceLocation mark(const YAML::Mark& m) const;
  // The file with no position, for things that are nowhere in particular.
  util::SourceLocation whole_file() const { return {file_, 0, 0}; }

 private:
  const util::SourceLocation* find_override(const std::map<std::string, util::SourceLocation>& m,
                                            const std::string& path) const;
  std::string file_;
  std::map<std::string, util::SourceLocation> override_keys_;
  std::map<std::string, util::SourceLocation> override_values_;
};

// One key of a map: its dotted path, value node and the positions of key and value.
struct Field {
  std::string path;
  YAML::Node node;
  util::SourceLocation key_at;
  util::SourceLocation value_at;
};

// A YAML map whose keys are checked against a fixed list at construction: an unknown key throws
// "unknown key 'k' in PATH (did you mean 'x'?)", a repeated one "duplicate key ...".
class Block {
 public:
  // path "" is the top level. where = the position of the block's own key (for "missing key").
  // REQUIRES: node is a map or null (null = an empty block).
  Block(const Locations& locs, std::string path, YAML::Node node, util::SourceLocation where,
        std::vector<std::string> keys);

  const std::string& path() const { return path_; }
  const util::SourceLocation& where() const { return where_; }
  std::string child_path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

  // The key's field; nullopt when the key is absent or its value is null.
  std::optional<Field> get(const std::string& key) const;
  // Throws "missing key 'k' in PATH" (+ " (" note ")") at where() when get() would be nullopt.
  Field require(const std::string& key, const std::string& note = "") const;
  // A nested map block; nullopt when absent or null; throws "PATH.k must be a map, got ..." otherwise.
  std::optional<Block> block(const std::string& key, std::vector<std::string> keys) const;
  // "in model" or "at top level".
  std::string where_words() const;

 private:
  const Locations* locs_;
  std::string path_;
  util::SourceLocation where_;
  std::map<std::string, std::pair<YAML::Node, YAML::Node>> entries_;  // key -> (key node, value node)
};

[[noreturn]] void fail(const util::SourceLocation& at, const std::string& message);

// "'abc'" for a scalar, "a map", "a list", "null": the `got ...` part of messages.
std::string describe(const YAML::Node& node);

// Typed reads. Each throws util::InputError at field.value_at with the texts listed in scenario.cpp.
int64_t to_int(const Field& f, int64_t min, int64_t max);
double to_number(const Field& f, double lo, double hi, bool lo_open = false, bool hi_open = false);
bool to_bool(const Field& f);
std::string to_text(const Field& f);  // any scalar
// Index of the value in `choices`; error lists them with a did-you-mean.
size_t to_choice(const Field& f, const std::vector<std::string>& choices);
// Quantities with units (util/units.hpp); `positive` rejects 0.
double to_size(const Field& f, bool positive);
double to_bandwidth(const Field& f);
double to_time(const Field& f, bool positive);
double to_flops(const Field& f);

// The one YAML document in `text` (null when there is none). Throws InputError at where(mark)
// for a syntax error ("invalid YAML: ...") or a second document.
YAML::Node load_one_document(const std::string& text,
                             const std::function<util::SourceLocation(const YAML::Mark&)>& where);

// Applies `--set` overrides to the parsed file tree (root must be a map or null; a null root
// becomes a map). Registers every path it touches with `locs`. Throws InputError at --set:N:COL.
void apply_overrides(YAML::Node& root, const std::vector<Override>& overrides, Locations& locs);

}  // namespace trainsim::config::detail
