#include "scalebench/workloads/run_record.hpp"

#include <fmt/format.h>

#include "scalebench/base/error.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/base/phases.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/mpi/network.hpp"
#include "scalebench/topology/placement.hpp"
#include "scalebench/workloads/model.hpp"
#include "scalebench/workloads/run_context.hpp"

namespace scalebench {

std::vector<std::string> rank_warnings(const Communicator& comm, int threads, std::string_view threads_what,
                                       const PlacementReport& placement) {
  std::vector<std::string> out;
  const auto cpus = allowed_cpus();
  if (threads > 0 && static_cast<std::size_t>(threads) > cpus.size()) {
    out.push_back(fmt::format("{} {} on {} allowed core{} (rank {} on {})", threads, threads_what, cpus.size(),
                              cpus.size() == 1 ? "" : "s", comm.rank(), host_name()));
  }
  for (const auto& w : placement.warnings) out.push_back(fmt::format("rank {}: {}", comm.rank(), w));
  return out;
}

RunRecord::RunRecord(std::string_view subcommand, const Communicator& comm, const nlohmann::json& rank_info,
                     const std::vector<std::string>& my_warnings)
    : root_(comm.is_root()) {
  // One string per rank, a warning per line: gathered in rank order.
  std::string mine;
  for (const auto& w : my_warnings) mine += w + '\n';
  const auto all = comm.gather_strings(mine);
  nlohmann::json context = run_context(comm, rank_info);
  if (!root_) return;
  for (const auto& text : all) {
    for (std::size_t start = 0; start < text.size();) {
      const std::size_t end = std::min(text.find('\n', start), text.size());
      if (end > start) warnings_.push_back(text.substr(start, end - start));
      start = end + 1;
    }
  }
  if (!comm.node_split_note().empty()) warnings_.push_back(comm.node_split_note());
  record_ = std::move(context);
  record_["subcommand"] = std::string(subcommand);
}

void RunRecord::warn(std::string text) {
  if (root_) warnings_.push_back(std::move(text));
}

int RunRecord::exit_code(bool ok) noexcept { return ok ? 0 : static_cast<int>(ExitCode::verification_failed); }

void RunRecord::finish(const PhaseList& setup, const PhaseList& timed, RunSections s) {
  if (!root_) return;
  record_["config"] = std::move(s.config);
  record_["backend"] = std::move(s.backend);
  record_["phases"] = phases_json(setup, timed);
  record_["rates"] = std::move(s.rates);
  add_node_counts(record_);
  s.verification["ok"] = s.ok;
  record_["verification"] = std::move(s.verification);
  record_["ok"] = s.ok;
  record_["status"] = s.ok ? "ok" : "verification_failed";
  record_["exit_code"] = exit_code(s.ok);
  attach_prediction(record_, warnings_, s.predict);  // predicted against measured (model.hpp)
  record_["warnings"] = warnings_;
  record_["finished_at"] = utc_now_iso8601();
}

std::string phase_table(const PhaseList& setup, const PhaseList& timed) {
  std::string out = fmt::format("{:<20}{:>12}{:>12}{:>12}{:>12}\n", "phase", "median s", "min s", "max s", "imbalance");
  for (const auto& [name, st] : setup) {
    out += fmt::format("{:<20}{:>12.6f}{:>12}{:>12}{:>11.1f}%\n", std::string(phase::setup_prefix) + name, st.median,
                       "", "", 100.0 * st.imbalance);
  }
  for (const auto& [name, st] : timed) {
    out += fmt::format("{:<20}{:>12.6f}{:>12.6f}{:>12.6f}{:>11.1f}%\n", name, st.median, st.min, st.max,
                       100.0 * st.imbalance);
  }
  return out;
}

std::string warning_lines(const nlohmann::json& warnings) {
  std::string out;
  for (const auto& w : warnings) out += fmt::format("warning: {}\n", w.get<std::string>());
  return out;
}

}  // namespace scalebench
