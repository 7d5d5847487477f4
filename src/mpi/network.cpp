#include "scalebench/mpi/network.hpp"
#include "scalebench/base/phases.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace scalebench {

std::vector<std::string> rank_hosts(const nlohmann::json& context) {
  std::vector<std::string> hosts;
  if (!context.contains("rank_info")) return hosts;
  for (const auto& r : context["rank_info"]) hosts.push_back(r.value("host", std::string("unknown")));
  return hosts;
}

void add_node_counts(nlohmann::json& record) {
  std::map<std::string, int> per_host;
  for (const auto& h : rank_hosts(record)) ++per_host[h];
  int most = 0;
  for (const auto& [h, n] : per_host) most = std::max(most, n);
  record["nodes"] = static_cast<int>(per_host.size());
  record["ranks_per_node"] = most;
}

nlohmann::json phase_traffic(const std::vector<std::string>& hosts, const std::vector<std::int64_t>& elements,
                             std::size_t element_size, int root) {
  double inter = 0, intra = 0;
  for (std::size_t r = 0; r < hosts.size() && r < elements.size(); ++r) {
    if (static_cast<int>(r) == root) continue;
    const double bytes = static_cast<double>(elements[r]) * static_cast<double>(element_size);
    (hosts[r] == hosts[static_cast<std::size_t>(root)] ? intra : inter) += bytes;
  }
  return {{"inter_node_bytes", inter}, {"intra_node_bytes", intra}, {"crosses_network", inter > 0}};
}

nlohmann::json chain_traffic(const std::vector<std::string>& hosts, std::int64_t count, std::size_t element_size) {
  double inter = 0, intra = 0;
  const double bytes = static_cast<double>(count) * static_cast<double>(element_size);
  for (std::size_t r = 1; r < hosts.size(); ++r) (hosts[r] == hosts[r - 1] ? intra : inter) += bytes;
  return {{"inter_node_bytes", inter}, {"intra_node_bytes", intra}, {"crosses_network", inter > 0}};
}

nlohmann::json gemm_network(const std::vector<std::string>& hosts, const std::vector<std::int64_t>& a_counts,
                            const std::vector<std::int64_t>& c_counts, std::int64_t b_count, std::size_t element_size,
                            const PhaseList& phases, const PhaseList& bare, bool b_along_chain) {
  auto median = [](const PhaseList& list, const std::string& name) {
    for (const auto& [n, st] : list) {
      if (n == name) return st.median;
    }
    return 0.0;
  };
  nlohmann::json out = {
      {"model", b_along_chain
                    ? "bytes from the root to each rank (scatter) and back (gather); B relayed along the ranks in "
                      "order (a chain of 512 KiB segments): each rank receives it from the rank before it, intra-node "
                      "where that rank is on its host; the root's own share is not moved"
                    : "bytes from the root to each rank (scatter, broadcast) and back (gather); a rank on the root's "
                      "host is intra-node; the root's own share is not moved"},
      {"phases",
       {{phase::scatter, phase_traffic(hosts, a_counts, element_size)},
        {phase::broadcast, b_along_chain
                               ? chain_traffic(hosts, b_count, element_size)
                               : phase_traffic(hosts, std::vector<std::int64_t>(hosts.size(), b_count), element_size)},
        {phase::gather, phase_traffic(hosts, c_counts, element_size)}}}};
  nlohmann::json peers = nlohmann::json::object();
  for (const auto& [phase, call, name] :
       {std::tuple<const char*, const char*, const char*>{phase::scatter, "MPI_Scatterv", phase::bare_scatterv},
        {phase::broadcast, "MPI_Bcast", phase::bare_bcast}}) {
    for (const auto& [n, st] : bare) {
      if (n != name) continue;
      const double phase_s = median(phases, phase);
      peers[phase] = {{"what", call},
                      {"on", "the same bytes between the same ranks, one call, after the repeats"},
                      {"bare", to_json(st)},
                      {"ratio_phase_vs_bare", phase_s > 0 ? st.median / phase_s : 0.0}};
    }
  }
  out["peers"] = peers.empty() ? nlohmann::json(nullptr) : peers;
  return out;
}

}  // namespace scalebench
