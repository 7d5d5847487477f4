#pragma once
// One calibration a profile at a time (docs/model.md, "The profile").
#include <string>

namespace scalebench {

class Communicator;

// An flock(2) on `profile`.lock beside the
// profile, taken by rank 0 before calibrate decides whether the profile is current and held until
// the profile is written, so that two calibrations (two contrasts started together on an empty
// cache) never time the machine at once and the second finds the first's profile. The kernel drops
// the lock when its holder ends, even by SIGKILL. Waits at most kProfileLockWaitS seconds, saying
// once on stderr whom it waits for (unless `quiet`); past that ResourceError (exit 3) naming the
// holder. The other ranks wait without spinning. Collective over `comm`.
inline constexpr double kProfileLockWaitS = 900;
class ProfileLock {
 public:
  ProfileLock(const Communicator& comm, const std::string& profile, bool quiet);
  ProfileLock(const ProfileLock&) = delete;
  ProfileLock& operator=(const ProfileLock&) = delete;
  ~ProfileLock();

 private:
  int fd_ = -1;
};

}  // namespace scalebench
