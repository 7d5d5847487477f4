#include "study/contrast_sizing.hpp"

#include <algorithm>

namespace scalebench::study {

double single_core_repeat_s(int cores) { return std::clamp(kFastestRowS * cores, 6.0, 15.0); }

}  // namespace scalebench::study
