#include "gemm/algorithms/row1d_gpu/pipeline.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>

#include <fmt/format.h>

#include "scalebench/base/phases.hpp"

namespace scalebench::row1d_gpu {

Pipeline::Pipeline(GpuGemm& gpu, Streams streams) : gpu_(gpu), s_(streams) {
  const GpuGemm::DeviceViews v = gpu.device_views();
  in_type_ = v.a.type;
  out_type_ = v.c.type;
  e_ = element_bytes(in_type_);
  eo_ = element_bytes(out_type_);
  n_ = v.shape.n;
  k_ = v.shape.k;
  a_ = static_cast<char*>(v.a.data);
  b_ = static_cast<char*>(v.b.data);
  c_ = static_cast<char*>(v.c.data);
  start_ = &record(s_.compute);
  for (DeviceStream x : {s_.in, s_.out, s_.net}) start_->make_wait(x);
}

BufferView Pipeline::a_view(std::int64_t row, std::int64_t elements) const {
  return {a_at(row, 0), elements, in_type_, MemorySpace::device};
}
BufferView Pipeline::b_view(std::int64_t row, std::int64_t elements) const {
  return {b_at(row), elements, in_type_, MemorySpace::device};
}
BufferView Pipeline::c_view(std::int64_t row, std::int64_t elements) const {
  return {c_at(row), elements, out_type_, MemorySpace::device};
}

const DeviceEvent& Pipeline::record(DeviceStream s) {
  events_.emplace_back();
  events_.back().record(s);
  return events_.back();
}

void Pipeline::multiply(std::string what, std::int64_t row, std::int64_t count, std::int64_t col, std::int64_t width,
                        bool accumulate) {
  const DeviceEvent& b = record(s_.compute);
  gpu_.multiply_block({count, n_, width, a_at(row, col), k_, b_at(col), n_, c_at(row), n_, accumulate}, nullptr);
  const DeviceEvent& e = record(s_.compute);
  spans_.push_back({"compute", std::move(what), "", &b, &e});
  gemms_.emplace_back(&b, &e);
}

void Pipeline::finish(std::initializer_list<const char*> before, std::initializer_list<const char*> after,
                      PhaseRecorder& rec, int rank, int repeat) {
  std::vector<const DeviceEvent*> ends;
  for (DeviceStream s : {s_.compute, s_.in, s_.out, s_.net}) ends.push_back(&record(s));
  for (const DeviceEvent* x : ends) x->synchronize();
  std::map<std::string, double> totals;
  for (const auto& s : spans_) {
    if (!s.phase.empty()) totals[s.phase] += s.end->seconds_since(*s.begin);
  }
  double compute_s = 0;
  for (const auto& [b, e] : gemms_) compute_s += e->seconds_since(*b);
  double end = 0;
  for (const DeviceEvent* x : ends) end = std::max(end, x->seconds_since(*start_));
  // The spans on the host's clock for the energy counters: the last event ended as the
  // synchronization above returned.
  const double host_end = wall_seconds();
  auto host = [&](const DeviceEvent* x) { return host_end - (end - x->seconds_since(*start_)); };
  for (const auto& s : spans_) {
    if (!s.phase.empty()) rec.span(s.phase, host(s.begin), host(s.end));
  }
  for (const auto& [b, e] : gemms_) rec.span(phase::compute, host(b), host(e));
  for (const char* phase : before) rec.add(phase, totals[phase]);
  rec.add(phase::compute, compute_s);
  for (const char* phase : after) rec.add(phase, totals[phase]);
  rec.add(phase::fill, gemms_.empty() ? 0.0 : gemms_.front().first->seconds_since(*start_));
  rec.add(phase::drain, gemms_.empty() ? 0.0 : end - gemms_.back().second->seconds_since(*start_));
  if (std::getenv("SCALEBENCH_OVERLAP_TRACE") != nullptr) trace(rank, repeat);
}

void Pipeline::trace(int rank, int repeat) const {
  std::string out;
  for (const auto& s : spans_) {
    out += fmt::format("overlap trace: repeat {} rank {} {:<7} {:<22} {:9.3f} {:9.3f} ms\n", repeat, rank, s.stream,
                       s.what, 1e3 * s.begin->seconds_since(*start_), 1e3 * s.end->seconds_since(*start_));
  }
  std::fputs(out.c_str(), stderr);
}

}  // namespace scalebench::row1d_gpu
