#pragma once
// Conversions between hwloc bitmaps and sorted lists of OS indices (src/topology only).
#include <hwloc.h>

#include <memory>
#include <vector>

namespace scalebench::detail {

// Owns an hwloc bitmap.
struct BitmapDeleter {
  void operator()(hwloc_bitmap_s* b) const noexcept { hwloc_bitmap_free(b); }
};
using Bitmap = std::unique_ptr<hwloc_bitmap_s, BitmapDeleter>;

inline Bitmap make_bitmap() { return Bitmap(hwloc_bitmap_alloc()); }

// The set bits of a finite bitmap, ascending.
inline std::vector<int> cpus_of(hwloc_const_bitmap_t set) {
  std::vector<int> out;
  if (set == nullptr || hwloc_bitmap_weight(set) < 0) return out;  // empty, or infinite
  unsigned id = 0;
  hwloc_bitmap_foreach_begin(id, set) { out.push_back(static_cast<int>(id)); }
  hwloc_bitmap_foreach_end();
  return out;
}

inline Bitmap bitmap_of(const std::vector<int>& ids) {
  Bitmap b = make_bitmap();
  for (int id : ids) hwloc_bitmap_set(b.get(), static_cast<unsigned>(id));
  return b;
}

}  // namespace scalebench::detail
