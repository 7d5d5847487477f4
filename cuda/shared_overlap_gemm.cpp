// --overlap with --distribution shared: one repeat as a pipeline in which every rank feeds its
// own GPU over its own link from the node's shared windows (OverlapPlan's cut, in gpu.hpp).
//
// Phase 1, the head rows in k-panels: each panel's rows of B are cut over the ranks; every rank
// copies its piece and its head's panel of A in, NCCL all-gathers the pieces, and the head's
// panel is multiplied as soon as it is whole. Phase 2, the rest of the rows in blocks: each
// rank copies its own blocks of A in (in stream) and of C out (out stream) while it multiplies;
// nothing travels between GPUs. Streams are ordered by events only; the host enqueues the whole
// repeat, then waits once.
#include <cuda_runtime.h>

#include <cstdlib>
#include <vector>

#include <fmt/format.h>

#include "cublas_gemm.hpp"
#include "cuda_check.hpp"
#include "nccl_comm.hpp"
#include "overlap_pieces.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/mpi/mpi.hpp"

namespace scalebench::gpu {

void CublasGemm::multiply_shared_overlapped(const OverlapPlan& plan, const void* a_i, const void* b_host, void* c_i,
                                            GpuTransport* transport, PhaseRecorder& rec) {
  OverlapRepeat rep = begin_overlap(transport);
  const int ranks = comm_.size(), me = comm_.rank();
  const cudaStream_t cs = rep.cs, in = rep.in, out = rep.out, ns = rep.ns;
  const ncclComm_t nc = rep.nc;
  const std::size_t e = rep.e, eo = rep.eo;
  const std::int64_t n = rep.n, k = rep.k;
  const auto u = OverlapRepeat::u;
  Ledger& led = rep.led;
  const std::int64_t head = plan.head[u(me)];
  const std::vector<Block>& blocks = plan.blocks[u(me)];
  const auto* a_host = static_cast<const char*>(a_i);
  const auto* b_src = static_cast<const char*>(b_host);
  auto* c_host = static_cast<char*>(c_i);
  const auto a_at = [&](std::int64_t row, std::int64_t col) { return rep.a_at(row, col); };
  const auto c_at = [&](std::int64_t row) { return rep.c_at(row); };
  const auto gemm = [&](std::int64_t row, std::int64_t count, std::int64_t col, std::int64_t width, bool accumulate) {
    multiply_rows(rep, row, count, col, width, accumulate);
  };
  const auto compute = [&](std::string what, auto&& issue) { rep.compute(std::move(what), issue); };

  // Phase 1: B's panels, each cut over the ranks and all-gathered; the head multiplied per panel.
  for (int p = 0; p < plan.panels(); ++p) {
    const std::int64_t col = plan.panel_first[u(p)], w = plan.panel_first[u(p) + 1] - col;
    const RowPartition pieces(w, ranks);
    const Block mine = pieces.block(me);
    led.span(in, "in", fmt::format("B piece+A panel {}", p), phase::h2d, [&] {
      const std::int64_t first = col + mine.offset;
      if (mine.count > 0) {
        SCALEBENCH_CUDA_CHECK(cudaMemcpyAsync(rep.b_at(first), b_src + u(first * n) * e, u(mine.count * n) * e,
                                              cudaMemcpyHostToDevice, in));
      }
      if (head > 0) {
        SCALEBENCH_CUDA_CHECK(cudaMemcpy2DAsync(a_at(0, col), u(k) * e, a_host + u(col) * e, u(k) * e, u(w) * e,
                                                u(head), cudaMemcpyHostToDevice, in));
      }
    });
    const Event* landed = &led.record(in);
    if (ranks > 1) {
      wait(ns, *landed);
      led.span(ns, "nccl", fmt::format("allgather B panel {}", p), phase::allgather,
               [&] { all_gather_rows(nc, rep.b_at(col), u(n) * e, pieces, ns); });
      landed = &led.record(ns);
    }
    wait(cs, *landed);
    if (head > 0) compute(fmt::format("head panel {}", p), [&] { gemm(0, head, col, w, p > 0); });
  }
  const Event& head_done = led.record(cs);

  // Phase 2: this rank's blocks, in over its link, multiplied, out over its link.
  std::vector<const Event*> a_in(blocks.size(), nullptr);
  for (std::size_t j = 0; j < blocks.size(); ++j) {
    const Block b = blocks[j];
    if (b.count == 0) continue;
    led.span(in, "in", fmt::format("A block {}", j), phase::h2d, [&] {
      SCALEBENCH_CUDA_CHECK(cudaMemcpyAsync(a_at(b.offset, 0), a_host + u(b.offset * k) * e, u(b.count * k) * e,
                                            cudaMemcpyHostToDevice, in));
    });
    a_in[j] = &led.record(in);
  }
  const auto down = [&](std::string what, Block b, const Event& ready) {
    wait(out, ready);
    led.span(out, "out", std::move(what), phase::d2h, [&] {
      SCALEBENCH_CUDA_CHECK(cudaMemcpyAsync(c_host + u(b.offset * n) * eo, c_at(b.offset), u(b.count * n) * eo,
                                            cudaMemcpyDeviceToHost, out));
    });
  };
  if (head > 0) down("C head", Block{0, head}, head_done);
  for (std::size_t j = 0; j < blocks.size(); ++j) {
    const Block b = blocks[j];
    if (b.count == 0) continue;
    wait(cs, *a_in[j]);
    compute(fmt::format("block {}", j), [&] { gemm(b.offset, b.count, 0, k, false); });
    down(fmt::format("C block {}", j), b, led.record(cs));
  }

  rep.finish({phase::h2d, phase::allgather}, {phase::d2h}, rec, me, overlap_repeats_++);
}

}  // namespace scalebench::gpu
