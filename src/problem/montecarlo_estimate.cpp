// Closed forms and the estimates drawn from reduced sums.
#include <algorithm>
#include <cmath>
#include <numbers>

#include <fmt/format.h>

#include "scalebench/problem/montecarlo.hpp"

namespace scalebench {
namespace {

double discount(const MarketParams& m) { return std::exp(-m.rate * m.maturity); }

// Black's formula on a log-normal underlying with forward F and total deviation s (undiscounted).
double black(double forward, double strike, double s, OptionKind o) {
  const double d1 = (std::log(forward / strike) + 0.5 * s * s) / s;
  const double d2 = d1 - s;
  if (o == OptionKind::call) return forward * normal_cdf(d1) - strike * normal_cdf(d2);
  return strike * normal_cdf(-d2) - forward * normal_cdf(-d1);
}

// Mean and standard error of the mean from a sum and a sum of squares over n samples.
McEstimate mean_and_error(double sum, double sum_sq, std::int64_t n) {
  const auto nd = static_cast<double>(n);
  const double mean = sum / nd;
  const double centred = std::max(sum_sq - sum * mean, 0.0);  // sum of (y - mean)^2
  McEstimate e;
  e.estimate = mean;
  e.std_error = std::sqrt(centred / (nd - 1.0) / nd);
  return e;
}

McEstimate scaled(McEstimate e, double factor) {
  e.estimate *= factor;
  e.std_error *= factor;
  return e;
}

void set_z(McEstimate& e, double closed_form) {
  e.closed_form = closed_form;
  const double diff = e.estimate - closed_form;
  e.z = e.std_error > 0 ? diff / e.std_error : (diff == 0 ? 0.0 : std::copysign(INFINITY, diff));
}

void judge(McOutcome& out) {
  if (!(std::fabs(out.checked.z) <= kZLimit)) {
    out.failures.push_back(fmt::format("{} estimate {:.10g} is {:.2f} standard errors from its closed form {:.10g} "
                                       "(limit {}; a correct run exceeds it with probability 6.3e-5)",
                                       out.checked_quantity, out.checked.estimate, out.checked.z,
                                       out.checked.closed_form, kZLimit));
  }
  out.ok = out.failures.empty();
}

}  // namespace

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::numbers::sqrt2); }

double black_scholes(const MarketParams& m, OptionKind o) {
  const double forward = m.spot * std::exp(m.rate * m.maturity);
  return discount(m) * black(forward, m.strike, m.sigma * std::sqrt(m.maturity), o);
}

GeometricAverageLaw geometric_average_law(const MarketParams& m, int steps) {
  // ln G = ln S + (r - σ²/2)·mean(t_k) + σ·mean(W_{t_k}), with mean(t_k) = T(n+1)/(2n) and
  // Var(mean W) = T(n+1)(2n+1)/(6n²).
  const double n = steps;
  const double mean_t = m.maturity * (n + 1) / (2 * n);
  const double var = m.sigma * m.sigma * m.maturity * (n + 1) * (2 * n + 1) / (6 * n * n);
  const double mu = std::log(m.spot) + (m.rate - 0.5 * m.sigma * m.sigma) * mean_t;
  return {std::exp(mu + 0.5 * var), var};  // E[G], Var(ln G)
}

double geometric_asian(const MarketParams& m, OptionKind o, int steps) {
  const GeometricAverageLaw g = geometric_average_law(m, steps);
  return discount(m) * black(g.forward, m.strike, std::sqrt(g.log_variance), o);
}

McOutcome estimate_pi(std::int64_t hits, std::int64_t samples) {
  McOutcome out;
  out.samples = samples;
  const double p = static_cast<double>(hits) / static_cast<double>(samples);
  out.main.estimate = 4.0 * p;
  out.main.std_error = 4.0 * std::sqrt(p * (1.0 - p) / static_cast<double>(samples));
  set_z(out.main, std::numbers::pi);
  out.checked_quantity = "pi";
  out.checked = out.main;
  judge(out);
  return out;
}

McOutcome estimate_option(const MonteCarloConfig& cfg, const McSums& s, std::int64_t n) {
  McOutcome out;
  out.samples = n;
  const double disc = discount(cfg.market);
  const auto& v = s.v;
  if (cfg.problem == McProblem::european) {
    out.main = scaled(mean_and_error(v[kSumY], v[kSumYY], n), disc);
    set_z(out.main, black_scholes(cfg.market, cfg.option));
    out.checked_quantity = fmt::format("European {} (Black-Scholes)", to_string(cfg.option));
    out.checked = out.main;
    judge(out);
    return out;
  }

  // Asian: the arithmetic payoff y, and the geometric payoff x of the same path, whose price has
  // a closed form: it checks the generator, the paths and the sums; it is also the control.
  const double geo_closed = geometric_asian(cfg.market, cfg.option, cfg.steps);
  out.checked = scaled(mean_and_error(v[kSumX], v[kSumXX], n), disc);
  set_z(out.checked, geo_closed);
  out.checked_quantity = fmt::format("geometric-average Asian {} (same paths)", to_string(cfg.option));
  const McEstimate plain = scaled(mean_and_error(v[kSumY], v[kSumYY], n), disc);
  if (cfg.control_variate == ControlVariate::geometric) {
    const auto nd = static_cast<double>(n);
    const double ybar = v[kSumY] / nd, xbar = v[kSumX] / nd;
    const double sxx = std::max(v[kSumXX] - v[kSumX] * xbar, 0.0);
    const double syy = std::max(v[kSumYY] - v[kSumY] * ybar, 0.0);
    const double sxy = v[kSumXY] - v[kSumX] * ybar;
    const double beta = sxx > 0 ? sxy / sxx : 0.0;
    const double residual = std::max(syy - beta * sxy, 0.0);  // sum of (y - ȳ - β(x - x̄))^2
    out.main.estimate = disc * (ybar - beta * (xbar - geo_closed / disc));
    out.main.std_error = disc * std::sqrt(residual / std::max(nd - 2.0, 1.0) / nd);
    out.cv_beta = beta;
    out.plain = plain;
  } else {
    out.main = plain;
  }
  // The arithmetic price has no closed form; z and closed_form of `main` refer to the geometric
  // price it is bounded by (pathwise A >= G: call_A >= call_G, put_A <= put_G).
  out.main.closed_form = geo_closed;
  out.main.z = out.checked.z;
  judge(out);
  const double slack = kZLimit * out.main.std_error + 1e-9 * std::fabs(geo_closed) + 1e-12;
  const bool bound_ok = cfg.option == OptionKind::call ? out.main.estimate + slack >= geo_closed
                                                       : out.main.estimate - slack <= geo_closed;
  if (!bound_ok) {
    out.failures.push_back(fmt::format("arithmetic-average Asian {} {:.10g} is on the wrong side of the geometric "
                                       "price {:.10g} (AM-GM bound) by more than {} standard errors",
                                       to_string(cfg.option), out.main.estimate, geo_closed, kZLimit));
    out.ok = false;
  }
  return out;
}

}  // namespace scalebench
