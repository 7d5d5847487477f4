#pragma once
// Facts about the machine and the process as the OS reports them.
#include <cstdint>
#include <string>
#include <vector>

namespace scalebench {

std::string host_name();
std::string cpu_model();
std::vector<int> allowed_cpus();  // sched_getaffinity of this process
// CPUs this process may run on, at least 1: the threads of a rank's host-side work (generation,
// checks, digests; base/parallel.hpp).
int host_threads();
// The memory the kernel says this host can give without swapping (MemAvailable), in bytes; -1
// where it does not say.
std::int64_t memory_available_bytes();
std::string format_cpu_list(const std::vector<int>& cpus);  // "0-3,8"
std::string utc_now_iso8601();
// Seconds since this process was started (exec), from /proc/self/stat against the boot clock; a
// negative value where the system does not say. Its resolution is the kernel's clock tick.
double process_age_seconds();

}  // namespace scalebench
