// Progress of long work on stderr: done, rate and ETA, in place on a terminal, a line every 5 s
// otherwise; the last line says how long it took.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "util/units.hpp"

namespace trainsim::cli {

class Progress {
 public:
  // "  LABEL done/total (pct%)  rate UNIT/s  ETA ..." (run: label "step", unit "steps").
  Progress(bool enabled, std::string label, std::string unit)
      : enabled_(enabled), tty_(::isatty(2) != 0), label_(std::move(label)), unit_(std::move(unit)), start_(Clock::now()), last_(start_) {}
  void update(int64_t done, int64_t total) {
    if (!enabled_ || total <= 0) return;
    const auto now = Clock::now();
    const double since = std::chrono::duration<double>(now - last_).count();
    if (done < total && since < (tty_ ? 0.25 : 5.0)) return;
    last_ = now;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0;
    const double eta = rate > 0 ? static_cast<double>(total - done) / rate : 0;
    const std::string when = done < total ? "ETA " + util::format_duration(eta) : "done in " + util::format_duration(elapsed);
    std::fprintf(stderr, "%s  %s %lld/%lld (%3.0f%%)  %.1f %s/s  %s%s", tty_ ? "\r" : "", label_.c_str(), static_cast<long long>(done),
                 static_cast<long long>(total), 100.0 * static_cast<double>(done) / static_cast<double>(total), rate, unit_.c_str(),
                 when.c_str(), tty_ ? "   " : "\n");
    if (tty_ && done == total) std::fprintf(stderr, "\n");
    std::fflush(stderr);
  }

 private:
  using Clock = std::chrono::steady_clock;
  bool enabled_;
  bool tty_;
  std::string label_, unit_;
  Clock::time_point start_, last_;
};

}  // namespace trainsim::cli
