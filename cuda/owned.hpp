#pragma once
// The one owner family of the CUDA layer: every handle this layer makes (streams, events, device
// and pinned memory, cuBLAS handles, cuRAND generators, NCCL communicators) is held by an
// Owned<H, Release>, so moving and releasing are written once. Release never throws: a failure to
// free is ignored there (the process is ending or the context is gone).
#include <utility>

namespace scalebench::gpu {

// Owns one handle H (a pointer-like handle, or a small aggregate with ==; H{} is "none") and
// releases it with Release when destroyed, reset or assigned over. Move-only.
template <class H, void (*Release)(H) noexcept>
class Owned {
 public:
  Owned() = default;
  explicit Owned(H h) noexcept : h_(h) {}
  ~Owned() { reset(); }
  Owned(Owned&& o) noexcept : h_(std::exchange(o.h_, H{})) {}
  Owned& operator=(Owned&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, H{});
    }
    return *this;
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;

  const H& get() const noexcept { return h_; }
  explicit operator bool() const noexcept { return !(h_ == H{}); }
  void reset() noexcept {
    if (!(h_ == H{})) Release(std::exchange(h_, H{}));
  }

 private:
  H h_{};
};

}  // namespace scalebench::gpu
