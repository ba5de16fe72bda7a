#include "util/units.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace trainsim::util {
namespace {

struct Split {
  double value = 0;
  std::string unit;
};

// "450GBps" -> {450, "GBps"}. Throws UnitError on a missing number, a missing unit, NaN or inf.
Split split_number(std::string_view text, std::string_view what) {
  std::string s(text);
  // Trim spaces.
  s.erase(0, s.find_first_not_of(" \t"));
  s.erase(s.find_last_not_of(" \t") + 1);
  if (s.empty()) throw UnitError("empty " + std::string(what));
  const char* begin = s.c_str();
  // Decimal only: strtod would also take hexadecimal ("0x10GBps" as 16 GB/s).
  const size_t digits = s.find_first_not_of("+-");
  if (digits != std::string::npos && (s.compare(digits, 2, "0x") == 0 || s.compare(digits, 2, "0X") == 0))
    throw UnitError("'" + s + "' is not a " + std::string(what) + " (decimal numbers only)");
  char* end = nullptr;
  double v = std::strtod(begin, &end);
  if (end == begin) throw UnitError("'" + s + "' is not a " + std::string(what) + " (expected a number with a unit)");
  std::string lowered(begin, static_cast<const char*>(end));
  std::transform(lowered.begin(), lowered.end(), lowered.begin(), ::tolower);
  if (lowered.find("inf") != std::string::npos || lowered.find("nan") != std::string::npos || !std::isfinite(v))
    throw UnitError("'" + s + "' is not a finite " + std::string(what));
  std::string unit(end);
  unit.erase(0, unit.find_first_not_of(" \t"));
  if (unit.empty()) throw UnitError("'" + s + "' has no unit");
  return {v, unit};
}

double binary_multiplier(char c) {
  switch (c) {
    case 'k': case 'K': return 0x1p10;
    case 'M': return 0x1p20;
    case 'G': return 0x1p30;
    case 'T': return 0x1p40;
    case 'P': return 0x1p50;
    case 'E': return 0x1p60;
    default: return 0;
  }
}

double metric_multiplier(char c) {
  switch (c) {
    case 'k': case 'K': return 1e3;
    case 'M': return 1e6;
    case 'G': return 1e9;
    case 'T': return 1e12;
    case 'P': return 1e15;
    case 'E': return 1e18;
    default: return 0;
  }
}

// Parses "<prefix><base>" where base is one of bases; returns prefix multiplier and base index.
bool match_unit(const std::string& unit, const std::vector<std::string>& bases, double& mult, size_t& base_index) {
  for (size_t i = 0; i < bases.size(); ++i) {
    const std::string& b = bases[i];
    if (unit == b) {
      mult = 1;
      base_index = i;
      return true;
    }
    if (unit.size() == b.size() + 1 && unit.compare(1, std::string::npos, b) == 0 && metric_multiplier(unit[0]) > 0) {
      mult = metric_multiplier(unit[0]);
      base_index = i;
      return true;
    }
    if (unit.size() == b.size() + 2 && unit[1] == 'i' && unit.compare(2, std::string::npos, b) == 0 &&
        binary_multiplier(unit[0]) > 0) {
      mult = binary_multiplier(unit[0]);
      base_index = i;
      return true;
    }
  }
  return false;
}

}  // namespace

double parse_bandwidth(std::string_view text) {
  Split s = split_number(text, "bandwidth");
  double mult = 0;
  size_t base = 0;
  // Bps = bytes/s, bps = bits/s (SimGrid's syntax).
  if (!match_unit(s.unit, {"Bps", "bps", "B/s", "b/s"}, mult, base))
    throw UnitError("'" + std::string(text) + "': unknown bandwidth unit '" + s.unit + "' (use e.g. 450GBps or 400Gbps)");
  double v = s.value * mult * ((base == 1 || base == 3) ? 0.125 : 1.0);
  if (!(v > 0)) throw UnitError("bandwidth must be > 0, got '" + std::string(text) + "'");
  if (!std::isfinite(v)) throw UnitError("'" + std::string(text) + "' is not a finite bandwidth");
  return v;
}

double parse_size(std::string_view text) {
  Split s = split_number(text, "size");
  double mult = 0;
  size_t base = 0;
  if (!match_unit(s.unit, {"B", "b"}, mult, base))
    throw UnitError("'" + std::string(text) + "': unknown size unit '" + s.unit + "' (use e.g. 80GB or 80GiB)");
  double v = s.value * mult * (base == 1 ? 0.125 : 1.0);
  if (v < 0) throw UnitError("size must be >= 0, got '" + std::string(text) + "'");
  if (!std::isfinite(v)) throw UnitError("'" + std::string(text) + "' is not a finite size");
  return v;
}

double parse_time(std::string_view text) {
  Split s = split_number(text, "time");
  static const struct {
    const char* unit;
    double seconds;
  } kUnits[] = {{"ps", 1e-12}, {"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1},       {"m", 60},
                {"min", 60},   {"h", 3600}, {"hr", 3600}, {"d", 86400}, {"day", 86400}, {"days", 86400},
                {"w", 604800}};
  for (const auto& u : kUnits) {
    if (s.unit == u.unit) {
      double v = s.value * u.seconds;
      if (v < 0) throw UnitError("time must be >= 0, got '" + std::string(text) + "'");
      return v;
    }
  }
  throw UnitError("'" + std::string(text) + "': unknown time unit '" + s.unit + "' (use e.g. 1us, 30s, 2h)");
}

std::string format_bytes(double bytes) {
  char buf[64];
  const double a = std::fabs(bytes);
  if (a >= 1e12) std::snprintf(buf, sizeof buf, "%.2f TB", bytes / 1e12);
  else if (a >= 1e9) std::snprintf(buf, sizeof buf, "%.1f GB", bytes / 1e9);
  else if (a >= 1e6) std::snprintf(buf, sizeof buf, "%.1f MB", bytes / 1e6);
  else if (a >= 1e3) std::snprintf(buf, sizeof buf, "%.1f kB", bytes / 1e3);
  else std::snprintf(buf, sizeof buf, "%.0f B", bytes);
  return buf;
}

std::string format_bandwidth(double bytes_per_s) { return format_bytes(bytes_per_s) + "/s"; }

std::string format_duration(double seconds) {
  char buf[64];
  const double a = std::fabs(seconds);
  if (a >= 2 * 86400) std::snprintf(buf, sizeof buf, "%.1f days", seconds / 86400);
  else if (a >= 2 * 3600) std::snprintf(buf, sizeof buf, "%.1f h", seconds / 3600);
  else if (a >= 120) std::snprintf(buf, sizeof buf, "%.1f min", seconds / 60);
  else if (a >= 1) std::snprintf(buf, sizeof buf, "%.3f s", seconds);
  else if (a >= 1e-3) std::snprintf(buf, sizeof buf, "%.2f ms", seconds * 1e3);
  else std::snprintf(buf, sizeof buf, "%.2f us", seconds * 1e6);
  return buf;
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  // A candidate the word is a prefix of ("h100" -> "h100-sxm") beats edit distance.
  std::string prefixed;
  for (const auto& c : candidates) {
    if (word.size() >= 2 && c.size() > word.size() &&
        std::equal(word.begin(), word.end(), c.begin(), [](char a, char b) { return std::tolower(a) == std::tolower(b); }) &&
        (prefixed.empty() || c.size() < prefixed.size()))
      prefixed = c;
  }
  if (!prefixed.empty()) return prefixed;
  std::string best;
  size_t best_d = std::string::npos;
  for (const auto& c : candidates) {
    // Levenshtein distance, O(|word| * |c|): candidates are short key names.
    std::vector<size_t> prev(c.size() + 1), cur(c.size() + 1);
    for (size_t j = 0; j <= c.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= word.size(); ++i) {
      cur[0] = i;
      for (size_t j = 1; j <= c.size(); ++j) {
        size_t sub = prev[j - 1] + (std::tolower(word[i - 1]) == std::tolower(c[j - 1]) ? 0 : 1);
        cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
      }
      std::swap(prev, cur);
    }
    if (prev[c.size()] < best_d) {
      best_d = prev[c.size()];
      best = c;
    }
  }
  // Close enough: at most a third of the word's letters wrong (and at least 1 allowed).
  if (best_d == std::string::npos || best_d > std::max<size_t>(1, word.size() / 3)) return "";
  return best;
}

// Appended (config/): SimGrid speed units, "f" or "flops" with a metric prefix.
double parse_flops(std::string_view text) {
  Split s = split_number(text, "speed");
  double mult = 0;
  size_t base = 0;
  if (!match_unit(s.unit, {"f", "flops"}, mult, base) || s.unit.find('i') == 1)
    throw UnitError("'" + std::string(text) + "': unknown speed unit '" + s.unit + "' (use e.g. 989.4Tf)");
  double v = s.value * mult;
  if (!(v > 0)) throw UnitError("speed must be > 0, got '" + std::string(text) + "'");
  if (!std::isfinite(v)) throw UnitError("'" + std::string(text) + "' is not a finite speed");
  return v;
}

}  // namespace trainsim::util
