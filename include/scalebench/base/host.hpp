#pragma once
// Facts about the machine and the process as the OS reports them.
#include <string>
#include <vector>

namespace scalebench {

std::string host_name();
std::string cpu_model();
std::vector<int> allowed_cpus();  // sched_getaffinity of this process
// CPUs this process may run on, at least 1: the threads of a rank's host-side work (generation,
// checks, digests; base/parallel.hpp).
int host_threads();
std::string format_cpu_list(const std::vector<int>& cpus);  // "0-3,8"
std::string utc_now_iso8601();

}  // namespace scalebench
