#include "config/yaml_fields.hpp"

#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "util/units.hpp"

namespace trainsim::config::detail {
namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// %g without the '+' and leading zeros of the exponent: 1e18, 0.5, 1000.
std::string format_number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  std::string s(buf);
  const auto e = s.find('e');
  if (e == std::string::npos) return s;
  std::string mant = s.substr(0, e);
  std::string exp = s.substr(e + 1);
  bool neg = false;
  if (!exp.empty() && (exp[0] == '+' || exp[0] == '-')) {
    neg = exp[0] == '-';
    exp.erase(0, 1);
  }
  exp.erase(0, std::min(exp.find_first_not_of('0'), exp.size() - 1));
  return mant + "e" + (neg ? "-" : "") + exp;
}

// Parses the whole text as a finite or infinite double; false when it is not a number.
bool parse_double(const std::string& text, double& out) {
  std::string s = trim(text);
  const std::string l = lower(s);
  for (const char* special : {".inf", "+.inf", "-.inf", ".nan", "inf", "+inf", "-inf", "nan", "infinity", "-infinity"}) {
    if (l == special) {
      out = l.find("nan") != std::string::npos ? std::nan("") : (l[0] == '-' ? -INFINITY : INFINITY);
      return true;
    }
  }
  const char* b = s.data();
  const char* e = b + s.size();
  if (b != e && *b == '+') ++b;
  if (b == e) return false;
  auto [p, ec] = std::from_chars(b, e, out, std::chars_format::general);
  if (p != e) return false;
  if (ec == std::errc::result_out_of_range) {
    // Overflow is infinite; underflow is as good as zero.
    out = std::strtod(s.c_str(), nullptr);
    return true;
  }
  return ec == std::errc();
}

const std::string& scalar_or_fail(const Field& f, const std::string& expected) {
  if (!f.node.IsScalar()) fail(f.value_at, f.path + " must be " + expected + ", got " + describe(f.node));
  return f.node.Scalar();
}

template <typename Parse>
double unit_value(const Field& f, const std::string& expected, Parse parse) {
  const std::string& text = scalar_or_fail(f, expected);
  try {
    return parse(text);
  } catch (const util::UnitError& e) {
    fail(f.value_at, f.path + ": " + e.what());
  }
}

void check_at_most(const Field& f, double v, double max, const std::string& unit) {
  if (v > max) fail(f.value_at, f.path + " must be at most " + format_number(max) + " " + unit + ", got '" + f.node.Scalar() + "'");
}

// Sees the events of one YAML document and remembers where it starts; with `stop`, throws Stop
// at the start so that nothing more is parsed.
class DocumentProbe : public YAML::EventHandler {
 public:
  struct Stop {};
  explicit DocumentProbe(bool stop) : stop_(stop) {}
  bool started = false;
  YAML::Mark start;

  void OnDocumentStart(const YAML::Mark& mark) override {
    started = true;
    start = mark;
    if (stop_) throw Stop{};
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

 private:
  bool stop_;
};

}  // namespace

void fail(const util::SourceLocation& at, const std::string& message) { throw util::InputError(at, message); }

std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar: return "'" + node.Scalar() + "'";
    case YAML::NodeType::Map: return "a map";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Null: return "null";
    case YAML::NodeType::Undefined: return "nothing";
  }
  return "?";
}

namespace {
constexpr int kMaxFlowDepth = 64;
}  // namespace

YAML::Node load_one_document(const std::string& text,
                             const std::function<util::SourceLocation(const YAML::Mark&)>& where) {
  // What yaml-cpp reports obscurely ("bad character found while scanning hex number", "illegal map
  // value", "bad file"): a NUL byte, a tab in an indentation, flow collections nested past any
  // scenario's depth. Said plainly, at their place.
  {
    int line = 0, col = 0, depth = 0;
    bool indent = true;
    for (size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      YAML::Mark m;
      m.pos = static_cast<int>(i);
      m.line = line;
      m.column = col;
      if (c == '\0') fail(where(m), "NUL byte: not a text file");
      if (c == '\t' && indent) fail(where(m), "tab in the indentation: YAML indents with spaces");
      if (c == '[' || c == '{') {
        if (++depth > kMaxFlowDepth)
          fail(where(m), "lists or maps nested more than " + std::to_string(kMaxFlowDepth) + " deep: not a scenario");
      } else if (c == ']' || c == '}') {
        depth = std::max(0, depth - 1);
      }
      if (c == '\n') {
        ++line;
        col = 0;
        indent = true;
      } else {
        ++col;
        if (c != ' ') indent = false;
      }
    }
  }
  // Not YAML::LoadAll: yaml-cpp 0.7 loops forever, allocating, on a document that starts with a
  // stray ',' (yaml-cpp issue #1040). Load the first document, then probe for a second one.
  try {
    YAML::Node root = YAML::Load(text);
    std::istringstream in(text);
    YAML::Parser parser(in);
    DocumentProbe first(false);
    if (parser.HandleNextDocument(first)) {
      DocumentProbe second(true);
      try {
        parser.HandleNextDocument(second);
      } catch (const DocumentProbe::Stop&) {
      }
      if (second.started && second.start.pos == first.start.pos) {
        // The parser did not move: the token there (the stray ',') is what it cannot take.
        const size_t pos = static_cast<size_t>(std::max(0, second.start.pos));
        fail(where(second.start), "invalid YAML: unexpected '" + text.substr(pos, 1) + "'");
      }
      if (second.started) fail(where(second.start), "expected one YAML document, found another");
    }
    return root;
  } catch (const YAML::Exception& e) {
    fail(where(e.mark), "invalid YAML: " + e.msg);
  }
}

// ---- Locations ----

void Locations::add_override(const std::string& path, int index, int key_col, int value_col) {
  override_keys_[path] = {"--set", index, key_col};
  override_values_[path] = {"--set", index, value_col};
}

const util::SourceLocation* Locations::find_override(const std::map<std::string, util::SourceLocation>& m,
                                                     const std::string& path) const {
  std::string p = path;
  while (true) {
    auto it = m.find(p);
    if (it != m.end()) return &it->second;
    const auto dot = p.rfind('.');
    if (dot == std::string::npos) return nullptr;
    p.erase(dot);
  }
}

util::SourceLocation Locations::mark(const YAML::Mark& m) const {
  if (m.is_null() || m.line < 0) return whole_file();
  return {file_, m.line + 1, m.column + 1};
}

util::SourceLocation Locations::key(const std::string& path, const YAML::Node& key) const {
  if (auto it = override_keys_.find(path); it != override_keys_.end()) return it->second;
  if (const auto* o = find_override(override_values_, path)) return *o;
  return mark(key.Mark());
}

util::SourceLocation Locations::value(const std::string& path, const YAML::Node& value) const {
  if (const auto* o = find_override(override_values_, path)) return *o;
  return mark(value.Mark());
}

// ---- Block ----

Block::Block(const Locations& locs, std::string path, YAML::Node node, util::SourceLocation where,
             std::vector<std::string> keys)
    : locs_(&locs), path_(std::move(path)), where_(std::move(where)) {
  if (!node.IsDefined() || node.IsNull()) return;
  for (auto it = node.begin(); it != node.end(); ++it) {
    // Copies: the iterator hands out a temporary pair, references into it would dangle.
    const YAML::Node k = it->first;
    const YAML::Node v = it->second;
    if (!k.IsScalar()) fail(locs.mark(k.Mark()), "keys must be plain names, got " + describe(k) + " " + where_words());
    const std::string name = k.Scalar();
    const std::string child = child_path(name);
    if (std::find(keys.begin(), keys.end(), name) == keys.end()) {
      std::string msg = "unknown key '" + name + "' " + where_words();
      const std::string guess = util::closest_match(name, keys);
      msg += guess.empty() ? " (valid keys: " + util::join(keys) + ")" : " (did you mean '" + guess + "'?)";
      fail(locs.key(child, k), msg);
    }
    auto [pos, inserted] = entries_.emplace(name, std::make_pair(k, v));
    if (!inserted)
      fail(locs.key(child, k), "duplicate key '" + name + "' " + where_words() + " (first at line " +
                                   std::to_string(locs.key(child, pos->second.first).line) + ")");
  }
}

std::string Block::where_words() const { return path_.empty() ? "at top level" : "in " + path_; }

std::optional<Field> Block::get(const std::string& key) const {
  auto it = entries_.find(key);
  if (it == entries_.end() || it->second.second.IsNull()) return std::nullopt;
  const std::string p = child_path(key);
  return Field{p, it->second.second, locs_->key(p, it->second.first), locs_->value(p, it->second.second)};
}

Field Block::require(const std::string& key, const std::string& note) const {
  if (auto f = get(key)) return *f;
  fail(where_, "missing key '" + key + "' " + where_words() + (note.empty() ? "" : " (" + note + ")"));
}

std::optional<Block> Block::block(const std::string& key, std::vector<std::string> keys) const {
  auto f = get(key);
  if (!f) return std::nullopt;
  if (!f->node.IsMap()) fail(f->value_at, f->path + " must be a map, got " + describe(f->node));
  return Block(*locs_, f->path, f->node, f->key_at, std::move(keys));
}

// ---- typed reads ----

int64_t to_int(const Field& f, int64_t min, int64_t max) {
  const std::string kind = min == 1 ? "a positive integer" : min == 0 ? "a non-negative integer" : "an integer";
  const std::string s = trim(scalar_or_fail(f, kind));
  const char* b = s.data();
  const char* e = b + s.size();
  if (b != e && *b == '+') ++b;
  int64_t v = 0;
  auto [p, ec] = std::from_chars(b, e, v);
  if (b == e || p != e || (ec != std::errc() && ec != std::errc::result_out_of_range))
    fail(f.value_at, f.path + " must be " + kind + ", got '" + f.node.Scalar() + "'");
  const bool negative = *b == '-';
  if (ec == std::errc::result_out_of_range && !negative)
    fail(f.value_at, f.path + " must be at most " + std::to_string(max) + ", got '" + f.node.Scalar() + "'");
  if (negative && ec == std::errc::result_out_of_range) v = std::numeric_limits<int64_t>::min();
  if (v < min) fail(f.value_at, f.path + " must be " + kind + ", got '" + f.node.Scalar() + "'");
  if (v > max) fail(f.value_at, f.path + " must be at most " + std::to_string(max) + ", got '" + f.node.Scalar() + "'");
  return v;
}

double to_number(const Field& f, double lo, double hi, bool lo_open, bool hi_open) {
  const std::string& s = scalar_or_fail(f, "a number");
  double v = 0;
  if (!parse_double(s, v)) fail(f.value_at, f.path + " must be a number, got '" + s + "'");
  if (!std::isfinite(v)) fail(f.value_at, f.path + " must be a finite number, got '" + s + "'");
  const bool below = lo_open ? !(v > lo) : !(v >= lo);
  const bool above = hi_open ? !(v < hi) : !(v <= hi);
  if (below || above) {
    std::string range;
    if (std::isinf(hi)) range = (lo_open ? "> " : ">= ") + format_number(lo);
    else
      range = std::string("in ") + (lo_open ? "(" : "[") + format_number(lo) + ", " + format_number(hi) + (hi_open ? ")" : "]");
    fail(f.value_at, f.path + " must be " + range + ", got '" + s + "'");
  }
  return v;
}

bool to_bool(const Field& f) {
  const std::string& s = scalar_or_fail(f, "true or false");
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  fail(f.value_at, f.path + " must be true or false, got '" + s + "'");
}

std::string to_text(const Field& f) {
  const std::string& s = scalar_or_fail(f, "a string");
  // Text reaches the terminal and the JSON report: valid UTF-8 only, no control characters
  // (issue 21 item 8: a 0xFF in `name` made the JSON writer throw, exit 3).
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    bool ok = len > 0 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(s[i + k]) >> 6) == 0x2;
    if (!ok) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", c);
      fail(f.value_at, f.path + " must be UTF-8 text: byte " + std::to_string(i + 1) + " is " + hex);
    }
    if (c < 0x20 || c == 0x7F) fail(f.value_at, f.path + " must not contain control characters (byte " + std::to_string(i + 1) + ")");
    i += len;
  }
  return s;
}

size_t to_choice(const Field& f, const std::vector<std::string>& choices) {
  const std::string& s = scalar_or_fail(f, "one of " + util::join(choices));
  for (size_t i = 0; i < choices.size(); ++i)
    if (s == choices[i]) return i;
  std::string msg = f.path + " must be one of " + util::join(choices) + ", got '" + s + "'";
  const std::string guess = util::closest_match(s, choices);
  if (!guess.empty()) msg += " (did you mean '" + guess + "'?)";
  fail(f.value_at, msg);
}

// Upper bounds keep every downstream product finite: 1 EB, 1 EB/s, ~300 years, 1e21 flop/s.
double to_size(const Field& f, bool positive) {
  const double v = unit_value(f, "a size such as \"80GB\"", [](const std::string& t) { return util::parse_size(t); });
  if (positive && !(v > 0)) fail(f.value_at, f.path + " must be > 0, got '" + f.node.Scalar() + "'");
  check_at_most(f, v, 1e18, "bytes");
  return v;
}

double to_bandwidth(const Field& f) {
  const double v =
      unit_value(f, "a bandwidth such as \"450GBps\"", [](const std::string& t) { return util::parse_bandwidth(t); });
  check_at_most(f, v, 1e18, "bytes/s");
  return v;
}

double to_time(const Field& f, bool positive) {
  const double v = unit_value(f, "a time such as \"5us\"", [](const std::string& t) { return util::parse_time(t); });
  if (positive && !(v > 0)) fail(f.value_at, f.path + " must be > 0, got '" + f.node.Scalar() + "'");
  check_at_most(f, v, 1e10, "s");
  return v;
}

double to_flops(const Field& f) {
  const double v = unit_value(f, "a speed such as \"989.4Tf\"", [](const std::string& t) { return util::parse_flops(t); });
  check_at_most(f, v, 1e21, "flop/s");
  return v;
}

// ---- overrides ----

namespace {
constexpr size_t kMaxKeyDepth = 8;
}  // namespace

void apply_overrides(YAML::Node& root, const std::vector<Override>& overrides, Locations& locs) {
  if (!root.IsMap()) {
    if (overrides.empty() || !(root.IsNull() || !root.IsDefined())) return;  // the caller reports a non-map root
    root.reset(YAML::Node(YAML::NodeType::Map));
  }
  for (size_t i = 0; i < overrides.size(); ++i) {
    const int index = static_cast<int>(i + 1);
    const Override& o = overrides[i];
    const int value_col = static_cast<int>(o.key.size()) + 2;
    // Split KEY on dots, remembering where each segment starts (1-based).
    std::vector<std::pair<std::string, int>> segments;
    size_t start = 0;
    while (true) {
      const size_t dot = o.key.find('.', start);
      const std::string seg = o.key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      if (seg.empty()) fail({"--set", index, static_cast<int>(start) + 1}, "empty key segment in '" + o.key + "'");
      segments.emplace_back(seg, static_cast<int>(start) + 1);
      // Scenario keys nest 3 deep (cluster.inter_node.topology); beyond a few more levels the
      // path cannot name anything, and building it costs memory per level (issue 21 item 7).
      if (segments.size() > kMaxKeyDepth)
        fail({"--set", index, 1}, "'" + o.key.substr(0, 60) + "...' has more than " + std::to_string(kMaxKeyDepth) +
                                      " dot-separated parts; scenario keys have at most 4");
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    const YAML::Node value = load_one_document(o.value, [&](const YAML::Mark& m) {
      return util::SourceLocation{"--set", index, value_col + (m.is_null() || m.column < 0 ? 0 : m.column)};
    });
    YAML::Node cur;
    cur.reset(root);
    std::string path;
    for (size_t s = 0; s + 1 < segments.size(); ++s) {
      const auto& [seg, col] = segments[s];
      path += (path.empty() ? "" : ".") + seg;
      const YAML::Node& const_cur = cur;
      YAML::Node child = const_cur[seg];
      if (!child.IsDefined() || child.IsNull()) {
        // `child` may be a zombie (invalid) node, which yaml-cpp refuses to rebind: take a fresh one.
        cur[seg] = YAML::Node(YAML::NodeType::Map);
        locs.add_override(path, index, col, col);
        YAML::Node created = const_cur[seg];
        cur.reset(created);
      } else if (!child.IsMap()) {
        fail({"--set", index, col}, "cannot set " + o.key + ": " + path + " is not a map");
      } else {
        cur.reset(child);
      }
    }
    const auto& [last, last_col] = segments.back();
    path += (path.empty() ? "" : ".") + last;
    cur[last] = value;
    locs.add_override(path, index, last_col, value_col);
  }
}

}  // namespace trainsim::config::detail
