#pragma once
// A driver's results folder (docs/studies.md, "One driver a folder"): which driver's results it
// holds, one driver at a time in it, and every path in it checked by kind before the first run.
#include <string>

namespace scalebench::results {

enum class DriverKind { study, contrast };

// The hidden file in a results folder that a running driver holds locked (flock): its first line
// names the driver, its pid, host and start. The kernel drops the lock when the driver ends, even
// by SIGKILL; the file stays (a later driver reads whose folder it was).
inline constexpr const char* kLockFileName = ".scalebench.lock";

// Refuses a folder (ResourceError naming `option`, the folder and what is in it) that holds the
// other driver's results, or anything else when it holds no results of `kind`: a study's folder
// has runs.jsonl or summary.{json,csv,md}; a contrast's has contrast.json, contrast.csv or
// contrast-plan.json (and, once a row finished, runs.jsonl: the contrast's files decide); either
// may have the lock file naming its driver. A missing or empty folder is accepted.
void check_folder_is_ours(const std::string& dir, DriverKind kind, const std::string& option);

// Refuses (ResourceError) an output file named by an option (`--json`, `--csv`) whose folder is
// another driver's results folder (of either kind), unless that folder is `own_dir`: such a file
// would replace another study's or contrast's results.
void check_not_in_results_folder(const std::string& path, const std::string& option, const std::string& own_dir);

// Holds the folder's lock for the driver's life: the second driver on one folder is refused with
// ResourceError naming the holder's pid, host and the folder (exit 3). Checks the folder again
// under the lock (check_folder_is_ours) before writing its own name into the lock file. The lock
// file is opened close-on-exec, so the runs a driver launches never hold it.
class FolderLock {
 public:
  FolderLock(const std::string& dir, DriverKind kind, const std::string& option);
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;
  ~FolderLock();

 private:
  int fd_ = -1;
};

// A file the driver writes (and may read back) in its own folder: missing, or a regular file
// whose folder takes new files. A symbolic link (never written through: check_results_file), a
// folder, FIFO, device or socket there is refused (ResourceError naming `what` and the kind),
// before any run: a FIFO would block the run that writes it, a folder would be found only after
// the runs were spent.
void check_own_file(const std::string& path, const std::string& what);
// A folder the driver fills: missing or a folder (not a symbolic link to one).
void check_own_folder(const std::string& path, const std::string& what);

// A run's record or log read back: the whole file when it is a regular file within the input
// limit; "" when it is missing, not a regular file or too large (never blocks).
std::string read_run_output(const std::string& path, const std::string& what);

}  // namespace scalebench::results
