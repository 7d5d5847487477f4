#pragma once
// The pieces both --overlap pipelines (overlap_gemm.cpp, shared_overlap_gemm.cpp) are built from:
// stream waits on events, the ledger of one repeat's timed pieces, and NCCL groups.
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <deque>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "cuda_check.hpp"
#include "nccl_comm.hpp"
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
    rec.add("compute", compute_s);
    for (const char* phase : after) rec.add(phase, totals[phase]);
    rec.add("fill", gemms.empty() ? 0.0 : gemms.front().first->seconds_since(start));
    rec.add("drain", gemms.empty() ? 0.0 : end - gemms.back().second->seconds_since(start));
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

// NCCL calls of one step, as one group.
template <class F>
inline void nccl_group(ncclComm_t nc, F&& calls) {
  SCALEBENCH_NCCL_CHECK_COMM(ncclGroupStart(), nc);
  calls();
  SCALEBENCH_NCCL_CHECK_COMM(ncclGroupEnd(), nc);
}

}  // namespace scalebench::gpu
