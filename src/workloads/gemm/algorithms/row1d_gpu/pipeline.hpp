#pragma once
// One repeat of an --overlap schedule as a pipeline over the device's primitives: four streams
// (compute, copies in, copies out, the transport's), ordered by events only; the host enqueues
// the whole repeat, then waits once (finish). Every piece is enqueued between two events: its
// device time counts towards its phase, and SCALEBENCH_OVERLAP_TRACE prints every piece.
//
// Every event is recorded before any stream waits on it: a wait on an event never recorded
// would not wait at all.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "scalebench/gpu/gpu.hpp"
#include "scalebench/mpi/timing.hpp"

namespace scalebench::row1d_gpu {

class Pipeline {
 public:
  struct Streams {
    DeviceStream compute, in, out, net;
  };
  // The GPU's device matrices (row-major: A rows held × k and B k × n in the input format, C in
  // the output format) and its block multiply, on its own stream (`streams.compute`).
  Pipeline(GpuGemm& gpu, Streams streams);

  static std::size_t u(std::int64_t v) { return static_cast<std::size_t>(v); }
  char* a_at(std::int64_t row, std::int64_t col) const { return a_ + u(row * k_ + col) * e_; }
  char* b_at(std::int64_t row) const { return b_ + u(row * n_) * e_; }
  char* c_at(std::int64_t row) const { return c_ + u(row * n_) * eo_; }
  std::size_t in_bytes() const noexcept { return e_; }
  std::size_t out_bytes() const noexcept { return eo_; }
  std::int64_t n() const noexcept { return n_; }
  std::int64_t k() const noexcept { return k_; }
  const Streams& streams() const noexcept { return s_; }
  // Views of the device matrices from a row on (for the transport).
  BufferView a_view(std::int64_t row, std::int64_t elements) const;
  BufferView b_view(std::int64_t row, std::int64_t elements) const;
  BufferView c_view(std::int64_t row, std::int64_t elements) const;

  // An event at the point `s` has reached, alive until the repeat is done.
  const DeviceEvent& record(DeviceStream s);
  // Enqueues `issue` on `s` between two events; `phase` empty: traced, not counted.
  template <class F>
  void span(DeviceStream s, const char* stream, std::string what, std::string phase, F&& issue) {
    const DeviceEvent& b = record(s);
    issue();
    const DeviceEvent& e = record(s);
    spans_.push_back({stream, std::move(what), std::move(phase), &b, &e});
  }
  // Enqueues C rows [row, +count) (+)= A's rows, columns [col, +width) · B's rows [col, +width)
  // on the compute stream as one piece of "compute".
  void multiply(std::string what, std::int64_t row, std::int64_t count, std::int64_t col, std::int64_t width,
                bool accumulate);
  // Waits for the repeat's end on every stream and records its phases: the summed device time of
  // the pieces of each phase in `before`, "compute" (the multiplies), those in `after`, then
  // "fill" (start to the first multiply) and "drain" (last multiply to the end). With
  // SCALEBENCH_OVERLAP_TRACE set, prints every piece (rank and repeat name it).
  void finish(std::initializer_list<const char*> before, std::initializer_list<const char*> after, PhaseRecorder& rec,
              int rank, int repeat);

 private:
  struct Span {
    const char* stream;
    std::string what;
    std::string phase;
    const DeviceEvent* begin;
    const DeviceEvent* end;
  };
  void trace(int rank, int repeat) const;

  GpuGemm& gpu_;
  Streams s_;
  ElementType in_type_, out_type_;
  std::size_t e_, eo_;
  std::int64_t n_, k_;
  char *a_, *b_, *c_;
  std::deque<DeviceEvent> events_;
  std::vector<Span> spans_;
  std::vector<std::pair<const DeviceEvent*, const DeviceEvent*>> gemms_;
  const DeviceEvent* start_;
};

}  // namespace scalebench::row1d_gpu
