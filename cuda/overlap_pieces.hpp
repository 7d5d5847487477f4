#pragma once
// The pieces both --overlap pipelines (overlap_gemm.cpp, shared_overlap_gemm.cpp) are built from:
// stream waits on events, the ledger of one repeat's timed pieces, and NCCL groups.
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "cuda_check.hpp"
#include "nccl_comm.hpp"
#include "scalebench/base/phases.hpp"
#include "scalebench/mpi/timing.hpp"
#include "stream.hpp"

namespace scalebench::gpu {

inline void wait(cudaStream_t s, const Event& e) { SCALEBENCH_CUDA_CHECK(cudaStreamWaitEvent(s, e.get(), 0)); }

// The events of one repeat (alive until it is done) and its pieces: the device time of each
// counts towards its phase (when it has one), and SCALEBENCH_OVERLAP_TRACE prints them all.
class Ledger {
 public:
  const Event& record(cudaStream_t s) {
    events_.emplace_back();
    events_.back().record(s);
    return events_.back();
  }
  // Enqueues `issue` on `s` between two events. `phase` empty: traced, not counted.
  template <class F>
  std::pair<const Event*, const Event*> span(cudaStream_t s, const char* stream, std::string what, std::string phase,
                                             F&& issue) {
    const Event& b = record(s);
    issue();
    const Event& e = record(s);
    spans_.push_back({stream, std::move(what), std::move(phase), &b, &e});
    return {&b, &e};
  }
  std::map<std::string, double> sums() const {
    std::map<std::string, double> out;
    for (const auto& s : spans_) {
      if (!s.phase.empty()) out[s.phase] += s.end->seconds_since(*s.begin);
    }
    return out;
  }
  // Waits for the repeat's end on every stream and records its phases: the summed device time of
  // the pieces of each phase in `before`, "compute" (the multiplies `gemms`), those in `after`,
  // then "fill" (start to the first multiply) and "drain" (last multiply to the end).
  void finish(const Event& start, std::initializer_list<cudaStream_t> streams,
              const std::vector<std::pair<const Event*, const Event*>>& gemms,
              std::initializer_list<const char*> before, std::initializer_list<const char*> after, PhaseRecorder& rec) {
    std::vector<const Event*> ends;
    for (cudaStream_t s : streams) ends.push_back(&record(s));
    for (const Event* x : ends) x->synchronize();
    auto totals = sums();
    double compute_s = 0;
    for (const auto& [b, e] : gemms) compute_s += e->seconds_since(*b);
    double end = 0;
    for (const Event* x : ends) end = std::max(end, x->seconds_since(start));
    for (const char* phase : before) rec.add(phase, totals[phase]);
    rec.add(phase::compute, compute_s);
    for (const char* phase : after) rec.add(phase, totals[phase]);
    rec.add(phase::fill, gemms.empty() ? 0.0 : gemms.front().first->seconds_since(start));
    rec.add(phase::drain, gemms.empty() ? 0.0 : end - gemms.back().second->seconds_since(start));
  }
  void trace(int rank, int repeat, const Event& start) const {
    std::string out;
    for (const auto& s : spans_) {
      out += fmt::format("overlap trace: repeat {} rank {} {:<7} {:<22} {:9.3f} {:9.3f} ms\n", repeat, rank, s.stream,
                         s.what, 1e3 * s.begin->seconds_since(start), 1e3 * s.end->seconds_since(start));
    }
    std::fputs(out.c_str(), stderr);
  }

 private:
  struct Span {
    const char* stream;
    std::string what;
    std::string phase;
    const Event* begin;
    const Event* end;
  };
  std::deque<Event> events_;
  std::vector<Span> spans_;
};

// What one repeat of either pipeline works with: its four streams, the NCCL communicator (null on
// one rank), the device matrices (row-major; A m×k and B k×n in the input format of e bytes an
// element, C m×n in the output format of eo bytes), the ledger, the start event every stream
// waits on, and the multiplies' own spans — their summed time is "compute", the first and last
// bound the pipeline's fill and drain.
class OverlapRepeat {
 public:
  struct Streams {
    cudaStream_t compute, in, out, nccl;
  };
  struct Matrices {
    std::size_t e, eo;
    std::int64_t n, k;
    char *a, *b, *c;
  };
  OverlapRepeat(Streams s, ncclComm_t comm, Matrices mat)
      : cs(s.compute),
        in(s.in),
        out(s.out),
        ns(s.nccl),
        nc(comm),
        e(mat.e),
        eo(mat.eo),
        n(mat.n),
        k(mat.k),
        start_(&led.record(cs)),
        mat_(mat) {
    for (cudaStream_t x : {in, out, ns}) wait(x, *start_);
  }
  static std::size_t u(std::int64_t v) { return static_cast<std::size_t>(v); }
  char* a_at(std::int64_t row, std::int64_t col) const { return mat_.a + u(row * k + col) * e; }
  char* b_at(std::int64_t row) const { return mat_.b + u(row * n) * e; }
  char* c_at(std::int64_t row) const { return mat_.c + u(row * n) * eo; }
  // Enqueues a multiply on the compute stream as one timed piece of "compute".
  template <class F>
  void compute(std::string what, F&& issue) {
    gemms_.push_back(led.span(cs, "compute", std::move(what), "", issue));
  }
  // Waits for the repeat, records its phases (Ledger::finish) and, with SCALEBENCH_OVERLAP_TRACE,
  // prints its pieces.
  void finish(std::initializer_list<const char*> before, std::initializer_list<const char*> after, PhaseRecorder& rec,
              int rank, int repeat) {
    led.finish(*start_, {cs, in, out, ns}, gemms_, before, after, rec);
    if (std::getenv("SCALEBENCH_OVERLAP_TRACE") != nullptr) led.trace(rank, repeat, *start_);
  }

  const cudaStream_t cs, in, out, ns;
  const ncclComm_t nc;
  const std::size_t e, eo;
  const std::int64_t n, k;
  Ledger led;

 private:
  const Event* start_;
  Matrices mat_;
  std::vector<std::pair<const Event*, const Event*>> gemms_;
};

// NCCL calls of one step, as one group.
template <class F>
inline void nccl_group(ncclComm_t nc, F&& calls) {
  SCALEBENCH_NCCL_CHECK_COMM(ncclGroupStart(), nc);
  calls();
  SCALEBENCH_NCCL_CHECK_COMM(ncclGroupEnd(), nc);
}

}  // namespace scalebench::gpu
