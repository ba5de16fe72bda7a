#include "report/series.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "report/run_report.hpp"

namespace trainsim::report {

namespace {

// Inverse of the standard normal CDF (Acklam's rational approximation, |error| < 1.2e-9).
double normal_quantile(double p) {
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                             1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01,  -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00};
  const double lo = 0.02425;
  if (p < lo) {
    const double q = std::sqrt(-2 * std::log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > 1 - lo) return -normal_quantile(1 - p);
  const double q = p - 0.5, r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

// 99% quantile of chi-square with k degrees of freedom (Wilson-Hilferty): a seed-to-seed component
// is claimed only when the windows spread clearly beyond their noise.
double chi2_99(double k) {
  const double h = 2.0 / (9.0 * k);
  return k * std::pow(1 - h + 2.3263479 * std::sqrt(h), 3);
}

}  // namespace

SeriesStats analyse_series(const std::vector<std::vector<double>>& series, double slow_tau_s) {
  SeriesStats s;
  s.slow_tau_s = slow_tau_s;
  const size_t r = series.size();
  const size_t n = series.empty() ? 0 : series.front().size() - 1;  // warm-up dropped
  s.window = static_cast<int64_t>(n);
  std::vector<double> all;
  for (const auto& x : series) all.insert(all.end(), x.begin() + 1, x.end());
  s.steps = static_cast<int64_t>(all.size());
  if (all.empty()) return s;
  const Stats pooled = stats_of(all);
  s.mean = pooled.mean;
  s.p50 = pooled.p50;
  s.p99 = pooled.p99;
  double var = 0;
  for (double v : all) var += (v - s.mean) * (v - s.mean);
  var /= static_cast<double>(all.size());
  s.sd = std::sqrt(var);
  // Each seed's window about its own mean: the within-run noise and its autocorrelation (a seed's
  // persistent offset is not correlation in time: it is tested below), averaged over the seeds,
  // summed up to Sokal's window.
  std::vector<double> own(r, 0);
  for (size_t i = 0; i < r; ++i) {
    for (size_t t = 1; t < series[i].size(); ++t) own[i] += series[i][t];
    own[i] /= static_cast<double>(n);
  }
  double var_w = 0;
  for (size_t i = 0; i < r; ++i)
    for (size_t t = 1; t < series[i].size(); ++t) var_w += (series[i][t] - own[i]) * (series[i][t] - own[i]);
  var_w /= static_cast<double>(all.size());
  s.within_sd = std::sqrt(var_w);
  if (var_w > 0 && n >= 2) {
    auto rho = [&](size_t k) {
      double c = 0;
      size_t count = 0;
      for (size_t i = 0; i < r; ++i)
        for (size_t t = 1; t + k < series[i].size(); ++t, ++count) c += (series[i][t] - own[i]) * (series[i][t + k] - own[i]);
      return count > 0 ? c / static_cast<double>(count) / var_w : 0.0;
    };
    double tau = 1;
    for (size_t m = 1; m < n; ++m) {
      tau += 2 * rho(m);
      if (static_cast<double>(m) >= 5 * tau) break;
    }
    // Batch means over quarters of each window see correlation longer than Sokal's window sums
    // (a tenant busy for tens of steps): tau = batch x var(batch means) / sd_w^2; the larger wins.
    const size_t b = n / 4;
    if (b >= 2) {
      double sq = 0;
      size_t batches = 0;
      for (size_t i = 0; i < r; ++i)
        for (size_t k = 0; k + 1 <= n / b; ++k, ++batches) {
          double m = 0;
          for (size_t t = 1 + k * b; t < 1 + (k + 1) * b; ++t) m += series[i][t];
          m /= static_cast<double>(b);
          sq += (m - own[i]) * (m - own[i]);
        }
      // About each seed's own mean: (batches per seed - 1) degrees of freedom each.
      const double per_seed = static_cast<double>(n / b);
      const double var_bm = batches > r ? sq / (static_cast<double>(r) * (per_seed - 1)) : 0;
      tau = std::max(tau, static_cast<double>(b) * var_bm / var_w);
    }
    s.tau_steps = std::clamp(tau, 1.0, static_cast<double>(n));
  }
  // Window means: more spread than within-run noise explains persists for the whole run.
  const std::vector<double>& means = own;
  // Without noise inside the windows (a per-run ECMP hash, say) any spread between them persists.
  s.separable = var_w == 0 || static_cast<double>(n) >= kSeparableTaus * s.tau_steps;
  if (r >= 2) {
    double mm = 0;
    for (double m : means) mm += m;
    mm /= static_cast<double>(r);
    double v = 0;
    for (double m : means) v += (m - mm) * (m - mm);
    v /= static_cast<double>(r - 1);
    s.window_means_sd = std::sqrt(v);
    const double within = var_w * s.tau_steps / static_cast<double>(n);
    if (slow_tau_s > 0)
      s.slow_sd = std::sqrt(std::max(0.0, v - within));
    else if (s.separable && (within <= 0 ? v > 0 : static_cast<double>(r - 1) * v / within > chi2_99(static_cast<double>(r - 1))))
      s.between_sd = std::sqrt(std::max(0.0, v - within));
  }
  return s;
}

double DailyCycle::sd() const { return std::sqrt((a * a + b * b) / 2); }

DailyCycle remove_daily_cycle(std::vector<std::vector<double>>& series, const std::vector<double>& start_hours) {
  // Normal equations of y = m + a c + b s over every pooled step, c, s the cosine and sine of its hour.
  double n[3][3] = {}, rhs[3] = {};
  std::vector<std::vector<std::array<double, 2>>> basis(series.size());
  for (size_t i = 0; i < series.size() && i < start_hours.size(); ++i) {
    double clock = 0;
    for (size_t t = 0; t < series[i].size(); ++t) {
      const double phase = 2 * M_PI * (start_hours[i] + clock / 3600) / 24;
      basis[i].push_back({std::cos(phase), std::sin(phase)});
      clock += series[i][t];
      if (t == 0) continue;  // warm-up
      const double x[3] = {1, basis[i][t][0], basis[i][t][1]};
      for (int j = 0; j < 3; ++j) {
        rhs[j] += x[j] * series[i][t];
        for (int k = 0; k < 3; ++k) n[j][k] += x[j] * x[k];
      }
    }
  }
  // Gaussian elimination (the matrix is symmetric positive semi-definite); a small pivot means the
  // hours seen cannot separate the cycle from the level.
  const double count = n[0][0];
  DailyCycle d;
  if (count < 3) return d;
  for (int p = 0; p < 3; ++p) {
    if (n[p][p] < 1e-3 * count) return d;
    for (int r = p + 1; r < 3; ++r) {
      const double f = n[r][p] / n[p][p];
      for (int k = p; k < 3; ++k) n[r][k] -= f * n[p][k];
      rhs[r] -= f * rhs[p];
    }
  }
  double x[3];
  for (int p = 2; p >= 0; --p) {
    double v = rhs[p];
    for (int k = p + 1; k < 3; ++k) v -= n[p][k] * x[k];
    x[p] = v / n[p][p];
  }
  d.a = x[1];
  d.b = x[2];
  d.fitted = true;
  for (size_t i = 0; i < series.size() && i < start_hours.size(); ++i)
    for (size_t t = 0; t < series[i].size(); ++t) series[i][t] -= d.a * basis[i][t][0] + d.b * basis[i][t][1];
  return d;
}

double run_mean_sd(const SeriesStats& s, double total_steps) {
  const double run_s = std::max(total_steps, 1.0) * std::max(s.mean, 1e-12);
  const double days = run_s / 86400;
  const double sinc = std::sin(M_PI * days) / (M_PI * days);
  return std::sqrt(s.between_sd * s.between_sd + s.within_sd * s.within_sd * s.tau_steps / std::max(total_steps, 1.0) +
                   s.slow_sd * s.slow_sd * std::min(1.0, s.slow_tau_s / run_s) + s.diurnal_sd * s.diurnal_sd * sinc * sinc);
}

double mean_step_se(const SeriesStats& s, int64_t seeds) {
  const double r = static_cast<double>(std::max<int64_t>(seeds, 1));
  const double model = s.within_sd * s.within_sd * s.tau_steps / static_cast<double>(std::max<int64_t>(s.steps, 1)) +
                       s.between_sd * s.between_sd / r;
  return std::sqrt(std::max(model, s.window_means_sd * s.window_means_sd / r));
}

std::vector<double> run_level_days(const SeriesStats& s, double total_steps, const std::vector<double>& stretch) {
  const double sd = run_mean_sd(s, total_steps);
  std::vector<double> out;
  constexpr int kQuantiles = 40;
  const std::vector<double> one = {1.0};
  for (double f : stretch.empty() ? one : stretch)
    for (int k = 0; k < kQuantiles; ++k) {
      const double z = normal_quantile((k + 0.5) / kQuantiles);
      out.push_back(std::max(0.0, s.mean + sd * z) * total_steps / 86400.0 * f);
    }
  return out;
}

}  // namespace trainsim::report
