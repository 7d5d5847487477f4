// Transport nccl: A's row blocks, B and C's row blocks move between the ranks' GPUs with NCCL,
// device to device, on each rank's compute stream.
#include <cstdlib>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "cublas_gemm.hpp"
#include "cuda_check.hpp"
#include "nccl_comm.hpp"
#include "scalebench/error.hpp"
#include "scalebench/gpu.hpp"
#include "scalebench/mpi.hpp"
#include "scalebench/partition.hpp"
#include "scalebench/record.hpp"
#include "scalebench/timing.hpp"

namespace scalebench::gpu {
namespace {

CublasGemm& as_cublas(GpuGemm& g) {
  auto* c = dynamic_cast<CublasGemm*>(&g);
  if (c == nullptr) throw Error(ExitCode::internal, "the NCCL transport needs the cuBLAS backend");
  return *c;
}

class NcclTransport final : public GpuTransport {
 public:
  NcclTransport(const Communicator& comm, int max_ctas) : comm_(comm), max_ctas_(max_ctas) {
    const double t0 = wall_seconds();
    nccl_.emplace(comm, max_ctas);
    setup_s_ = wall_seconds() - t0;
  }

  // Rank 0 sends every other rank its rows; one NCCL group so that the sends run concurrently.
  void scatter_a(GpuGemm& g, const RowPartition& rows, PhaseRecorder& rec) override {
    auto& c = as_cublas(g);
    const auto row_bytes = static_cast<std::size_t>(c.shape().k) * device_input_bytes(c.precision());
    move_blocks(c, static_cast<char*>(c.a_device()), row_bytes, rows, Direction::from_root, rec, "scatter");
  }

  void broadcast_b(GpuGemm& g, PhaseRecorder& rec) override {
    auto& c = as_cublas(g);
    const auto bytes = static_cast<std::size_t>(c.shape().k * c.shape().n) * device_input_bytes(c.precision());
    DeviceTimer t(c.stream());
    t.start();
    SCALEBENCH_NCCL_CHECK_COMM(ncclBroadcast(c.b_device(), c.b_device(), bytes, ncclUint8, 0, nccl_->get(), c.stream()),
                               nccl_->get());
    t.stop_into(rec, "broadcast");
  }

  void gather_c(GpuGemm& g, const RowPartition& rows, PhaseRecorder& rec) override {
    auto& c = as_cublas(g);
    const auto row_bytes = static_cast<std::size_t>(c.shape().n) * device_output_bytes(c.precision());
    move_blocks(c, static_cast<char*>(c.c_device()), row_bytes, rows, Direction::to_root, rec, "gather");
  }

  double setup_seconds() const override { return setup_s_; }
  ncclComm_t comm() const noexcept { return nccl_->get(); }

  nlohmann::json describe() const override {
    return {{"library", "NCCL"},
            {"version", nccl_version_string()},
            {"ranks", comm_.size()},
            {"scatter", "ncclSend/ncclRecv from rank 0, one group"},
            {"broadcast", "ncclBroadcast"},
            {"gather", "ncclSend/ncclRecv to rank 0, one group"},
            {"max_ctas", std::getenv("NCCL_MAX_CTAS") != nullptr ? nlohmann::json(std::getenv("NCCL_MAX_CTAS"))
                         : max_ctas_ > 0                          ? nlohmann::json(max_ctas_)
                                                                  : nlohmann::json("NCCL's choice")}};
  }

 private:
  enum class Direction { from_root, to_root };

  // Rank 0's buffer holds every row; rank r's holds its own rows from offset 0.
  void move_blocks(CublasGemm& c, char* base, std::size_t row_bytes, const RowPartition& rows, Direction dir,
                   PhaseRecorder& rec, const char* phase) {
    DeviceTimer t(c.stream());
    t.start();
    ncclComm_t nc = nccl_->get();
    SCALEBENCH_NCCL_CHECK_COMM(ncclGroupStart(), nc);
    if (comm_.is_root()) {
      for (int r = 1; r < comm_.size(); ++r) {
        const Block blk = rows.block(r);
        if (blk.count == 0) continue;
        char* at = base + static_cast<std::size_t>(blk.offset) * row_bytes;
        const std::size_t bytes = static_cast<std::size_t>(blk.count) * row_bytes;
        if (dir == Direction::from_root) {
          SCALEBENCH_NCCL_CHECK_COMM(ncclSend(at, bytes, ncclUint8, r, nc, c.stream()), nc);
        } else {
          SCALEBENCH_NCCL_CHECK_COMM(ncclRecv(at, bytes, ncclUint8, r, nc, c.stream()), nc);
        }
      }
    } else {
      const Block blk = rows.block(comm_.rank());
      const std::size_t bytes = static_cast<std::size_t>(blk.count) * row_bytes;
      if (blk.count > 0) {
        if (dir == Direction::from_root) {
          SCALEBENCH_NCCL_CHECK_COMM(ncclRecv(base, bytes, ncclUint8, 0, nc, c.stream()), nc);
        } else {
          SCALEBENCH_NCCL_CHECK_COMM(ncclSend(base, bytes, ncclUint8, 0, nc, c.stream()), nc);
        }
      }
    }
    SCALEBENCH_NCCL_CHECK_COMM(ncclGroupEnd(), nc);
    t.stop_into(rec, phase);
  }

  const Communicator& comm_;
  std::optional<NcclComm> nccl_;
  int max_ctas_ = 0;
  double setup_s_ = 0;
};

}  // namespace

ncclComm_t nccl_comm_of(GpuTransport& t) {
  auto* n = dynamic_cast<NcclTransport*>(&t);
  if (n == nullptr) throw Error(ExitCode::internal, "not an NCCL transport");
  return n->comm();
}

}  // namespace scalebench::gpu

namespace scalebench {

std::unique_ptr<GpuTransport> make_nccl_transport(const Communicator& comm, int max_ctas) {
  // NCCL refuses two ranks on one GPU (it would deadlock or fail deep inside its set-up):
  // say so before trying.
  std::string mine;
  agree(comm, [&] {
    int device = -1;
    SCALEBENCH_CUDA_CHECK(cudaGetDevice(&device));
    mine = gpu_info(device)["uuid"].get<std::string>();
  });
  const auto all = comm.gather_strings(fmt::format("{} {}", host_name(), mine));
  std::string clash;
  if (comm.is_root()) {
    for (std::size_t i = 0; i < all.size() && clash.empty(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        if (all[i] == all[j]) {
          clash = fmt::format("ranks {} and {} share GPU {}", j, i, all[i]);
          break;
        }
      }
    }
  }
  clash = comm.bcast_string(clash, 0);
  agree(comm, [&] {
    if (!clash.empty()) {
      throw ResourceError(fmt::format("--transport nccl needs one GPU per rank, but {}; NCCL cannot run two ranks on "
                                      "one GPU: use --transport mpi with --share-gpu, or one rank per GPU",
                                      clash));
    }
  });
  std::unique_ptr<GpuTransport> t;
  agree(comm, [&] { t = std::make_unique<gpu::NcclTransport>(comm, max_ctas); });
  return t;
}

}  // namespace scalebench
