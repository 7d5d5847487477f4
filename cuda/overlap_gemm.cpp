// --overlap: one repeat of the multiply as a pipeline (the schedule is OverlapPlan's, in
// scalebench/gpu/gpu.hpp). Four streams per rank — compute (the cuBLAS handle's), copies in and
// copies out (rank 0's host link, both directions at once) and NCCL — ordered by events only;
// the host enqueues the whole repeat, then waits once.
//
// Every rank enqueues the same NCCL calls in the same order (they follow from the plan alone),
// and every event is recorded before any stream waits on it (a wait on an event not yet
// recorded would not wait at all): A's blocks travel two rounds ahead of the multiply, so the
// single NCCL stream never holds an A block behind a C block that waits for the multiply.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cublas_gemm.hpp"
#include "cuda_check.hpp"
#include "nccl_comm.hpp"
#include "overlap_pieces.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/mpi/timing.hpp"

namespace scalebench::gpu {
namespace {

// How many rounds A's row blocks travel ahead of the multiply.
constexpr int kLookahead = 2;

}  // namespace

void CublasGemm::ensure_overlap_streams() {
  if (in_stream_) return;
  in_stream_.emplace();
  out_stream_.emplace();
  // NCCL's kernels must not queue behind the multiply's blocks for SMs.
  nccl_stream_.emplace(Stream::Priority::high);
}

OverlapRepeat CublasGemm::begin_overlap(GpuTransport* transport) {
  if (precision_ == Precision::bf16) {
    throw UsageError("--overlap supports fp64, fp32 and tf32 (bf16 inputs are converted on the device)");
  }
  ncclComm_t nc = nullptr;
  if (comm_.size() > 1) {
    if (transport == nullptr) throw Error(ExitCode::internal, "--overlap over several ranks needs the NCCL transport");
    nc = nccl_comm_of(*transport);
  }
  ensure_overlap_streams();
  // fp64, fp32 and tf32 keep the host format on the device.
  return OverlapRepeat({stream_.get(), in_stream_->get(), out_stream_->get(), nccl_stream_->get()}, nc,
                       {device_input_bytes(precision_), device_output_bytes(precision_), shape_.n, shape_.k,
                        static_cast<char*>(a_.get()), static_cast<char*>(b_.get()), static_cast<char*>(c_.get())});
}

void CublasGemm::multiply_rows(const OverlapRepeat& r, std::int64_t row, std::int64_t count, std::int64_t col,
                               std::int64_t width, bool accumulate) {
  row_major_gemm(handle_->get(), precision_,
                 {count, r.n, width, r.a_at(row, col), r.k, r.b_at(col), r.n, r.c_at(row), r.n, accumulate});
}

void CublasGemm::multiply_overlapped(const OverlapPlan& plan, const RowPartition& rows, const void* a_full,
                                     const void* b_host, void* c_full, GpuTransport* transport, PhaseRecorder& rec) {
  OverlapRepeat rep = begin_overlap(transport);
  const int ranks = comm_.size(), me = comm_.rank();
  const bool root = me == 0;
  const cudaStream_t cs = rep.cs, in = rep.in, out = rep.out, ns = rep.ns;
  const ncclComm_t nc = rep.nc;
  const std::size_t e = rep.e, eo = rep.eo;
  const std::int64_t n = rep.n, k = rep.k;
  const int panels = plan.panels(), rounds = plan.rounds();
  const auto u = OverlapRepeat::u;
  Ledger& led = rep.led;

  // Rank 0 holds every row of A and C in global order; the others hold their own rows from 0.
  const auto base = [&](int r) { return root ? rows.block(r).offset : std::int64_t{0}; };
  const auto head = [&](int r) { return plan.head[u(r)]; };
  const auto block = [&](int r, int j) {
    const auto& v = plan.blocks[u(r)];
    return j < static_cast<int>(v.size()) ? v[u(j)] : Block{0, 0};
  };
  auto* pack = static_cast<char*>(pack_.get());
  const auto* a_host = static_cast<const char*>(a_full);
  const auto* b_src = static_cast<const char*>(b_host);
  auto* c_host = static_cast<char*>(c_full);
  const auto a_at = [&](std::int64_t row, std::int64_t col) { return rep.a_at(row, col); };
  const auto c_at = [&](std::int64_t row) { return rep.c_at(row); };
  // Panel p of rank r's head in the panel buffer: on rank 0 all other ranks' heads, panel by
  // panel; on rank r its own head, panel by panel.
  std::int64_t others_head = 0;
  for (int r = 1; r < ranks; ++r) others_head += head(r);
  const auto pack_at = [&](int p, int r) {
    const std::int64_t col = plan.panel_first[u(p)], w = plan.panel_first[u(p) + 1] - col;
    std::int64_t at = 0;
    if (root) {
      at = others_head * col;
      for (int q = 1; q < r; ++q) at += head(q) * w;
    } else {
      at = head(me) * col;
    }
    return pack + u(at) * e;
  };
  const auto gemm = [&](std::int64_t row, std::int64_t count, std::int64_t col, std::int64_t width, bool accumulate) {
    multiply_rows(rep, row, count, col, width, accumulate);
  };
  const auto compute = [&](std::string what, auto&& issue) { rep.compute(std::move(what), issue); };

  // Phase 1: B and the heads' A in k-panels; each panel multiplied as it lands.
  for (int p = 0; p < panels; ++p) {
    const std::int64_t col = plan.panel_first[u(p)], w = plan.panel_first[u(p) + 1] - col;
    const Event* landed = nullptr;
    if (root) {
      led.span(in, "in", fmt::format("B+A panel {}", p), phase::h2d, [&] {
        SCALEBENCH_CUDA_CHECK(
            cudaMemcpyAsync(rep.b_at(col), b_src + u(col * n) * e, u(w * n) * e, cudaMemcpyHostToDevice, in));
        if (head(0) > 0) {
          SCALEBENCH_CUDA_CHECK(cudaMemcpy2DAsync(a_at(0, col), u(k) * e, a_host + u(col) * e, u(k) * e, u(w) * e,
                                                  u(head(0)), cudaMemcpyHostToDevice, in));
        }
        for (int r = 1; r < ranks; ++r) {
          const std::int64_t row = rows.block(r).offset;
          SCALEBENCH_CUDA_CHECK(cudaMemcpy2DAsync(pack_at(p, r), u(w) * e, a_host + u(row * k + col) * e, u(k) * e,
                                                  u(w) * e, u(head(r)), cudaMemcpyHostToDevice, in));
        }
      });
      landed = &led.record(in);
    }
    if (ranks > 1) {
      if (root) wait(ns, *landed);
      led.span(ns, "nccl", fmt::format("bcast B panel {}", p), root ? phase::broadcast : "", [&] {
        SCALEBENCH_NCCL_CHECK_COMM(ncclBroadcast(rep.b_at(col), rep.b_at(col), u(w * n) * e, ncclUint8, 0, nc, ns), nc);
      });
      led.span(ns, "nccl", fmt::format("A panel {}", p), root ? phase::scatter : "", [&] {
        nccl_group(nc, [&] {
          if (root) {
            for (int r = 1; r < ranks; ++r) {
              SCALEBENCH_NCCL_CHECK_COMM(ncclSend(pack_at(p, r), u(head(r) * w) * e, ncclUint8, r, nc, ns), nc);
            }
          } else {
            SCALEBENCH_NCCL_CHECK_COMM(ncclRecv(pack_at(p, me), u(head(me) * w) * e, ncclUint8, 0, nc, ns), nc);
          }
        });
      });
      if (!root) {
        // Into place in A (the multiply and the verification read A whole).
        led.span(ns, "nccl", fmt::format("unpack A panel {}", p), "", [&] {
          SCALEBENCH_CUDA_CHECK(cudaMemcpy2DAsync(a_at(0, col), u(k) * e, pack_at(p, me), u(w) * e, u(w) * e,
                                                  u(head(me)), cudaMemcpyDeviceToDevice, ns));
        });
        landed = &led.record(ns);
      }
    }
    wait(cs, *landed);
    compute(fmt::format("head panel {}", p), [&] { gemm(base(me), head(me), col, w, p > 0); });
  }
  const Event& head_done = led.record(cs);

  // Phase 2: the rest in row blocks. Rank 0's link first carries every block in round order.
  std::vector<std::vector<const Event*>> block_in(u(ranks), std::vector<const Event*>(u(rounds), nullptr));
  if (root) {
    for (int j = 0; j < rounds; ++j) {
      for (int r = 0; r < ranks; ++r) {
        const Block b = block(r, j);
        if (b.count == 0) continue;
        const std::int64_t row = rows.block(r).offset + b.offset;
        led.span(in, "in", fmt::format("A block {} of rank {}", j, r), phase::h2d, [&] {
          SCALEBENCH_CUDA_CHECK(
              cudaMemcpyAsync(a_at(row, 0), a_host + u(row * k) * e, u(b.count * k) * e, cudaMemcpyHostToDevice, in));
        });
        block_in[u(r)][u(j)] = &led.record(in);
      }
    }
  }
  std::vector<const Event*> a_arrived(u(rounds), nullptr), c_sent(u(rounds), nullptr), c_done(u(rounds), nullptr);
  const Event* heads_gathered = nullptr;
  const auto send_a = [&](int j) {
    if (ranks == 1 || j >= rounds) return;
    if (root) {
      for (int r = 1; r < ranks; ++r) {
        if (block_in[u(r)][u(j)] != nullptr) wait(ns, *block_in[u(r)][u(j)]);
      }
    }
    led.span(ns, "nccl", fmt::format("A block {}", j), root ? phase::scatter : "", [&] {
      nccl_group(nc, [&] {
        if (root) {
          for (int r = 1; r < ranks; ++r) {
            const Block b = block(r, j);
            if (b.count == 0) continue;
            SCALEBENCH_NCCL_CHECK_COMM(ncclSend(a_at(rows.block(r).offset + b.offset, 0), u(b.count * k) * e, ncclUint8,
                                                r, nc, ns),
                                       nc);
          }
        } else if (const Block b = block(me, j); b.count > 0) {
          SCALEBENCH_NCCL_CHECK_COMM(ncclRecv(a_at(b.offset, 0), u(b.count * k) * e, ncclUint8, 0, nc, ns), nc);
        }
      });
    });
    a_arrived[u(j)] = &led.record(ns);
  };
  const auto gather = [&](std::string what, auto&& rows_of, const Event* ready) {
    // rows_of(r) -> {first local row, count} of what rank r sends now.
    if (!root && ready != nullptr) wait(ns, *ready);
    led.span(ns, "nccl", what, root ? "" : phase::gather, [&] {
      nccl_group(nc, [&] {
        if (root) {
          for (int r = 1; r < ranks; ++r) {
            const Block b = rows_of(r);
            if (b.count == 0) continue;
            SCALEBENCH_NCCL_CHECK_COMM(ncclRecv(c_at(rows.block(r).offset + b.offset), u(b.count * n) * eo, ncclUint8,
                                                r, nc, ns),
                                       nc);
          }
        } else if (const Block b = rows_of(me); b.count > 0) {
          SCALEBENCH_NCCL_CHECK_COMM(ncclSend(c_at(b.offset), u(b.count * n) * eo, ncclUint8, 0, nc, ns), nc);
        }
      });
    });
    return &led.record(ns);
  };

  for (int j = 0; j < kLookahead; ++j) send_a(j);
  if (ranks > 1)
    heads_gathered = gather(
        "C heads",
        [&](int r) {
          return Block{0, head(r)};
        },
        &head_done);
  for (int j = 0; j < rounds; ++j) {
    const Block b = block(me, j);
    if (b.count > 0) {
      wait(cs, root ? *block_in[0][u(j)] : *a_arrived[u(j)]);
      compute(fmt::format("block {}", j), [&] { gemm(base(me) + b.offset, b.count, 0, k, false); });
      c_done[u(j)] = &led.record(cs);
    }
    send_a(j + kLookahead);
    if (ranks > 1)
      c_sent[u(j)] = gather(
          fmt::format("C block {}", j), [&](int r) { return block(r, j); }, c_done[u(j)]);
  }

  // Rank 0's link carries C out as its pieces are ready: its own rows, then what arrived.
  if (root) {
    const auto down = [&](std::int64_t row, std::int64_t count, const Event& ready) {
      if (count == 0) return;
      wait(out, ready);
      led.span(out, "out", fmt::format("C rows {}+{}", row, count), phase::d2h, [&] {
        SCALEBENCH_CUDA_CHECK(
            cudaMemcpyAsync(c_host + u(row * n) * eo, c_at(row), u(count * n) * eo, cudaMemcpyDeviceToHost, out));
      });
    };
    down(0, head(0), head_done);
    for (int r = 1; r < ranks; ++r) down(rows.block(r).offset, head(r), *heads_gathered);
    for (int j = 0; j < rounds; ++j) {
      for (int r = 0; r < ranks; ++r) {
        const Block b = block(r, j);
        if (b.count > 0) down(rows.block(r).offset + b.offset, b.count, r == 0 ? *c_done[u(j)] : *c_sent[u(j)]);
      }
    }
  }

  rep.finish({phase::h2d, phase::broadcast, phase::scatter}, {phase::gather, phase::d2h}, rec, me, overlap_repeats_++);
}

}  // namespace scalebench::gpu
