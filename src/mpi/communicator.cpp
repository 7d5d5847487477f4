#include <array>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "scalebench/base/host.hpp"
#include "scalebench/mpi/mpi.hpp"

namespace scalebench {
namespace {
std::pair<double, double> g_init_ages{-1, -1};
}  // namespace

void check_mpi(int rc, const char* call, const char* file, int line) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw RuntimeLibraryError(fmt::format("MPI call {} failed at {}:{}: {}", call, file, line, std::string(text, len)));
}

MpiEnvironment::MpiEnvironment(int& argc, char**& argv) {
  if (!initialized()) {
    int provided = 0;
    g_init_ages.first = process_age_seconds();
    check_mpi(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread", __FILE__, __LINE__);
    g_init_ages.second = process_age_seconds();
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

MpiEnvironment::~MpiEnvironment() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

std::pair<double, double> MpiEnvironment::init_ages() { return g_init_ages; }

bool MpiEnvironment::initialized() {
  int flag = 0;
  MPI_Initialized(&flag);
  return flag != 0;
}

Communicator::Communicator(MPI_Comm comm, bool owned) : comm_(comm), owned_(owned) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

Communicator Communicator::world() { return Communicator(MPI_COMM_WORLD, false); }

Communicator::Communicator(Communicator&& other) noexcept
    : comm_(other.comm_),
      owned_(other.owned_),
      rank_(other.rank_),
      size_(other.size_),
      node_(std::move(other.node_)),
      node_note_(std::move(other.node_note_)) {
  other.comm_ = MPI_COMM_NULL;
  other.owned_ = false;
}

Communicator& Communicator::operator=(Communicator&& other) noexcept {
  if (this != &other) {
    if (owned_ && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
    comm_ = other.comm_;
    owned_ = other.owned_;
    rank_ = other.rank_;
    size_ = other.size_;
    node_ = std::move(other.node_);
    node_note_ = std::move(other.node_note_);
    other.comm_ = MPI_COMM_NULL;
    other.owned_ = false;
  }
  return *this;
}

Communicator::~Communicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (owned_ && comm_ != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm_);
}

void Communicator::barrier() const { SCALEBENCH_MPI(MPI_Barrier(comm_)); }

Communicator Communicator::split_shared() const {
  MPI_Comm out = MPI_COMM_NULL;
  SCALEBENCH_MPI(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &out));
  return Communicator(out, true);
}

std::string hosts_split_apart(const std::vector<std::pair<std::string, int>>& host_and_group) {
  std::map<std::string, std::set<int>> groups_of_host;
  for (const auto& [host, group] : host_and_group) groups_of_host[host].insert(group);
  std::string apart;
  for (const auto& [host, groups] : groups_of_host) {
    if (groups.size() > 1) apart += fmt::format("{}{} ({} groups)", apart.empty() ? "" : ", ", host, groups.size());
  }
  return apart;
}

const Communicator& Communicator::node() const {
  if (node_) return *node_;
  Communicator shared = split_shared();
  // Each rank's host name and the world rank of its shared-memory group's first rank: a host
  // whose ranks are in more than one group is one MPI split apart.
  struct Entry {
    std::array<char, 256> host{};
    int group = 0;
  };
  Entry mine;
  const std::string host = host_name();
  std::strncpy(mine.host.data(), host.c_str(), mine.host.size() - 1);
  // The group's first rank in this communicator: a local translation, no collective.
  MPI_Group shared_group = MPI_GROUP_NULL, all_group = MPI_GROUP_NULL;
  SCALEBENCH_MPI(MPI_Comm_group(shared.get(), &shared_group));
  SCALEBENCH_MPI(MPI_Comm_group(comm_, &all_group));
  const int zero = 0;
  const int rc = MPI_Group_translate_ranks(shared_group, 1, &zero, all_group, &mine.group);
  MPI_Group_free(&shared_group);
  MPI_Group_free(&all_group);
  SCALEBENCH_MPI(rc);
  std::vector<Entry> all(static_cast<std::size_t>(size_));
  SCALEBENCH_MPI(MPI_Allgather(&mine, sizeof(Entry), MPI_BYTE, all.data(), sizeof(Entry), MPI_BYTE, comm_));
  const auto same_host = [&](const Entry& e) {
    return std::strncmp(e.host.data(), mine.host.data(), e.host.size()) == 0;
  };
  std::vector<std::pair<std::string, int>> host_and_group;
  for (const auto& e : all) host_and_group.emplace_back(std::string(e.host.data()), e.group);
  const std::string apart = hosts_split_apart(host_and_group);
  if (apart.empty()) {
    node_ = std::make_unique<Communicator>(std::move(shared));
    return *node_;
  }
  int first = rank_;
  for (int r = 0; r < size_; ++r) {
    if (same_host(all[static_cast<std::size_t>(r)])) {
      first = r;
      break;
    }
  }
  node_ = std::make_unique<Communicator>(split(first, rank_));
  node_note_ = fmt::format("MPI's shared-memory split puts ranks of one host apart: {}; the run takes the ranks of a "
                           "host name for its node (placement, GPU selection, energy) and shares memory only within "
                           "MPI's groups (with Open MPI 4.1, launch with --bind-to none and let --pin place the ranks)",
                           apart);
  return *node_;
}

Communicator Communicator::split(int color, int key) const {
  MPI_Comm out = MPI_COMM_NULL;
  SCALEBENCH_MPI(MPI_Comm_split(comm_, color, key, &out));
  return Communicator(out, true);
}

double Communicator::max(double v) const {
  double r = 0;
  SCALEBENCH_MPI(MPI_Allreduce(&v, &r, 1, MPI_DOUBLE, MPI_MAX, comm_));
  return r;
}
double Communicator::min(double v) const {
  double r = 0;
  SCALEBENCH_MPI(MPI_Allreduce(&v, &r, 1, MPI_DOUBLE, MPI_MIN, comm_));
  return r;
}
double Communicator::sum(double v) const {
  double r = 0;
  SCALEBENCH_MPI(MPI_Allreduce(&v, &r, 1, MPI_DOUBLE, MPI_SUM, comm_));
  return r;
}
std::int64_t Communicator::max(std::int64_t v) const {
  std::int64_t r = 0;
  SCALEBENCH_MPI(MPI_Allreduce(&v, &r, 1, MPI_INT64_T, MPI_MAX, comm_));
  return r;
}
std::int64_t Communicator::sum(std::int64_t v) const {
  std::int64_t r = 0;
  SCALEBENCH_MPI(MPI_Allreduce(&v, &r, 1, MPI_INT64_T, MPI_SUM, comm_));
  return r;
}
bool Communicator::all(bool v) const {
  int in = v ? 1 : 0, out = 0;
  SCALEBENCH_MPI(MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MIN, comm_));
  return out == 1;
}

std::vector<std::string> Communicator::gather_strings(const std::string& mine) const {
  int len = static_cast<int>(mine.size());
  std::vector<int> lens(rank_ == 0 ? size_ : 0);
  SCALEBENCH_MPI(MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, comm_));
  std::vector<int> displs;
  std::string all;
  if (rank_ == 0) {
    displs.resize(size_);
    int total = 0;
    for (int r = 0; r < size_; ++r) {
      displs[r] = total;
      total += lens[r];
    }
    all.resize(total);
  }
  SCALEBENCH_MPI(MPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, 0, comm_));
  std::vector<std::string> out;
  if (rank_ == 0) {
    for (int r = 0; r < size_; ++r) out.push_back(all.substr(displs[r], lens[r]));
  }
  return out;
}

std::string Communicator::bcast_string(const std::string& s, int root) const {
  std::int64_t len = static_cast<std::int64_t>(s.size());
  SCALEBENCH_MPI(MPI_Bcast(&len, 1, MPI_INT64_T, root, comm_));
  std::string out = rank_ == root ? s : std::string(static_cast<std::size_t>(len), '\0');
  SCALEBENCH_MPI(MPI_Bcast(out.data(), static_cast<int>(len), MPI_CHAR, root, comm_));
  return out;
}

void agree(const Communicator& comm, const std::function<void()>& step) {
  int code = 0;
  std::string message;
  try {
    step();
  } catch (const AgreedError& e) {
    code = static_cast<int>(e.code());
    message = e.what();
  } catch (const Error& e) {
    code = static_cast<int>(e.code());
    message = e.what();
  } catch (const std::bad_alloc&) {
    code = static_cast<int>(ExitCode::resource);
    message = "out of host memory; use a smaller size or more ranks";
  } catch (const std::exception& e) {
    code = static_cast<int>(ExitCode::internal);
    message = fmt::format("internal error: {}", e.what());
  }
  // The lowest failing rank speaks for all.
  const int mine = code != 0 ? comm.rank() : comm.size();
  int first = comm.size();
  SCALEBENCH_MPI(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm.get()));
  if (first == comm.size()) return;
  SCALEBENCH_MPI(MPI_Bcast(&code, 1, MPI_INT, first, comm.get()));
  message = comm.bcast_string(message, first);
  throw AgreedError(static_cast<ExitCode>(code), message, first);
}

int launcher_rank() {
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    if (const char* v = std::getenv(var)) return std::atoi(v);
  }
  return 0;
}

}  // namespace scalebench
