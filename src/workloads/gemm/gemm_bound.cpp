// The gemm record's `comm_bound` section (gemm_bound.hpp).
#include "gemm/gemm_bound.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "scalebench/mpi/network.hpp"
#include "scalebench/problem/comm_bound.hpp"

namespace scalebench {
namespace {

std::vector<std::int64_t> int_list(const nlohmann::json& j) {
  std::vector<std::int64_t> out;
  for (const auto& v : j) out.push_back(v.get<std::int64_t>());
  return out;
}

// Words of memory a rank of rank 0's host has: the host's memory over its ranks.
double memory_words_per_rank(const nlohmann::json& record, std::size_t element_bytes) {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return 0;
  const auto hosts = rank_hosts(record);
  const auto here = hosts.empty() ? 1 : std::count(hosts.begin(), hosts.end(), hosts.front());
  return static_cast<double>(pages) * static_cast<double>(page) / static_cast<double>(std::max<long>(1, here)) /
         static_cast<double>(element_bytes);
}

// The element size the transport moved the inputs in: the device format over NCCL (bf16: 2 bytes).
std::size_t moved_element_bytes(const GemmConfig& cfg) {
  return cfg.transport == Transport::nccl && cfg.precision == Precision::bf16 ? 2 : host_element_bytes(cfg.precision);
}

struct MovedBytes {
  std::vector<std::int64_t> bytes;  // per rank: handed to and got from the transport in a repeat
  std::string source;
};

// A GPU run whose ranks copy their own rows from the node's windows (row1d --distribution shared
// on GPUs): no transport and no layout count carries the blocks, each GPU's copies do. The busiest
// GPU's words in a repeat: its host-to-device copies (A's rows and its part of B) and C's rows back,
// and over NCCL the rest of B all-gathered from the other GPUs. Null where the record has no such
// copies (a host run, or a GPU run whose blocks a transport or the layout counts).
std::optional<double> gpu_copy_words(const GemmConfig& cfg, int ranks, const nlohmann::json& record) {
  if (!record.contains("gpu") || !record["gpu"].is_object() || !record["gpu"].contains("transfers")) return {};
  const auto& d = record["distribution"];
  if (!d.is_object() || !d.contains("scheme") || d["scheme"] != "shared") return {};
  const auto& t = record["gpu"]["transfers"];
  if (!t.is_object() || !t.contains("h2d") || !t.contains("d2h")) return {};
  const double he = static_cast<double>(host_element_bytes(cfg.precision));
  double words = t["h2d"]["bytes"].get<double>() / he + t["d2h"]["bytes"].get<double>() / he;
  // All-gathered among a node's ranks (`ranks` of the entry; the run's ranks in older records).
  const int group = t.contains("allgather") && t["allgather"].contains("ranks") ? t["allgather"]["ranks"].get<int>()
                                                                                : ranks;
  if (t.contains("allgather") && group > 1) {
    words += t["allgather"]["bytes"].get<double>() * (group - 1) / group /
             static_cast<double>(moved_element_bytes(cfg));
  }
  return words;
}

// What each rank moved in a repeat: the transport's own counts where a host transport carried the
// blocks, else (the device schedules over NCCL, --distribution shared) the layout's
// `bytes_per_rank` — what each rank received (scatter, broadcast) or sent (gather) — with rank 0
// sending every other rank's scatter, B once and receiving every gather, as the transport counts.
MovedBytes moved_bytes_per_rank(const nlohmann::json& d) {
  MovedBytes out;
  const auto& c = d.contains("communication") ? d["communication"] : nlohmann::json();
  if (c.is_object() && c.contains("bytes_sent_per_rank")) {
    for (std::size_t r = 0; r < c["bytes_sent_per_rank"].size(); ++r) {
      out.bytes.push_back(c["bytes_sent_per_rank"][r].get<std::int64_t>() +
                          c["bytes_received_per_rank"][r].get<std::int64_t>());
    }
    out.source = "transport";
    return out;
  }
  const auto& per = d.contains("bytes_per_rank") ? d["bytes_per_rank"] : nlohmann::json();
  if (!per.is_object() || !per.contains("scatter") || !per.contains("broadcast") || !per.contains("gather")) return out;
  const auto scatter = int_list(per["scatter"]), bcast = int_list(per["broadcast"]), gather = int_list(per["gather"]);
  if (scatter.empty() || bcast.size() != scatter.size() || gather.size() != scatter.size()) return out;
  out.bytes.assign(scatter.size(), 0);
  for (std::size_t r = 1; r < scatter.size(); ++r) {
    out.bytes[r] = scatter[r] + bcast[r] + gather[r];
    out.bytes[0] += scatter[r] + gather[r];
  }
  out.bytes[0] += *std::max_element(bcast.begin(), bcast.end());
  out.source = "layout";
  return out;
}

}  // namespace

nlohmann::json comm_bound_section(const GemmConfig& cfg, int ranks, const nlohmann::json& record) {
  const auto& s = cfg.shape;
  const auto& d = record["distribution"];
  // The blocks of C per grid row and column (summa2d), or the rows per rank and all of n (row1d).
  const auto rows = d.contains("rows_per_grid_row") ? int_list(d["rows_per_grid_row"])
                                                    : int_list(record["partition"]["rows_per_rank"]);
  const auto cols = d.contains("cols_per_grid_col") ? int_list(d["cols_per_grid_col"]) : std::vector<std::int64_t>{s.n};
  const std::size_t e = moved_element_bytes(cfg);
  const double memory = memory_words_per_rank(record, host_element_bytes(cfg.precision));
  const double spread = spread_bound_words(s, ranks), schedule = schedule_spread_words(s, rows, cols);
  const double from_nothing = from_nothing_bound_words(s, ranks, memory);
  nlohmann::json out = {
      {"what", "words (elements) a rank moves against the least any algorithm must move for this m, n, k and rank "
               "count: the run as it ran (inputs from rank 0, C back to it), and its grid's schedule were A, B and C "
               "spread evenly (Al Daas et al. 2022, Theorem 3; Kwasniewski et al. 2019, Theorem 2 with the "
               "rank's memory)"},
      {"element_bytes", e},
      {"memory_words_per_rank", memory},
      {"bound_words", from_nothing},
      {"spread",
       {{"bound_words", spread},
        {"schedule_words", schedule},
        {"schedule_to_bound", spread > 0 ? schedule / spread : 0.0}}},
      {"moved_words", nullptr},
      {"moved_rank", nullptr},
      {"moved_source", nullptr},
      {"moved_to_bound", nullptr}};
  const auto moved = moved_bytes_per_rank(d);
  const bool layout_silent = moved.source == "layout" &&
                             std::all_of(moved.bytes.begin(), moved.bytes.end(), [](auto b) { return b == 0; });
  if (const auto copies = gpu_copy_words(cfg, ranks, record); copies && layout_silent && ranks > 1) {
    out["moved_words"] = *copies;
    out["moved_to_bound"] = from_nothing > 0 ? *copies / from_nothing : 0.0;
    out["moved_source"] = "gpu copies";
  } else if (!moved.bytes.empty()) {
    const auto most = std::max_element(moved.bytes.begin(), moved.bytes.end());
    const double words = static_cast<double>(*most) / static_cast<double>(e);
    out["moved_words"] = words;
    out["moved_rank"] = static_cast<int>(most - moved.bytes.begin());
    out["moved_to_bound"] = from_nothing > 0 ? words / from_nothing : 0.0;
    out["moved_source"] = moved.source;
  }
  return out;
}

std::string comm_bound_lines(const nlohmann::json& b) {
  if (b.is_null() || b["spread"]["bound_words"].get<double>() <= 0) return {};  // one rank moves nothing
  std::string out;
  const bool gpu_copies = b["moved_source"].is_string() && b["moved_source"] == "gpu copies";
  const bool windows_only = b["moved_source"].is_string() && b["moved_source"] == "layout" &&
                            !b["moved_words"].is_null() && b["moved_words"].get<double>() == 0.0;
  if (windows_only) {
    out += fmt::format("communication bound: no rank moved a word to another (the node's shared windows hold A, B and "
                       "C once); a rank that starts with none of them must move at least {:.4g}\n",
                       b["bound_words"].get<double>());
  } else if (gpu_copies) {
    out += fmt::format("communication bound: the busiest GPU copied {:.4g} words per repeat ({}), {:.2f}x the least a "
                       "rank must move ({:.4g})\n",
                       b["moved_words"].get<double>(), b["moved_source"].get<std::string>(),
                       b["moved_to_bound"].get<double>(), b["bound_words"].get<double>());
  } else if (!b["moved_words"].is_null()) {
    out += fmt::format("communication bound: rank {} moved {:.4g} words per repeat, {:.2f}x the least a rank must move "
                       "({:.4g})\n",
                       b["moved_rank"].get<int>(), b["moved_words"].get<double>(), b["moved_to_bound"].get<double>(),
                       b["bound_words"].get<double>());
  }
  const auto& s = b["spread"];
  return out + fmt::format("communication bound: with A, B and C spread evenly this grid moves {:.4g} words a rank, "
                           "{:.2f}x the least ({:.4g})\n",
                           s["schedule_words"].get<double>(), s["schedule_to_bound"].get<double>(),
                           s["bound_words"].get<double>());
}

}  // namespace scalebench
