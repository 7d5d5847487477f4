#pragma once
// Where a run's wall time goes, on rank 0: from the process's start (exec) to its record, in the
// parts the harness runs one after another (docs/output.md, "wall"). The timed repeats are one
// part; what surrounds them (start-up, set-up, warm-up, peers) is what a user waits for besides.
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace scalebench {

class RunWall {
 public:
  // At the harness's entry: the parts before it (start-up to MPI_Init, MPI_Init, the command's
  // own start) from the process's age. A system that does not give the age leaves them out.
  RunWall();
  // The part that ends now (it began where the last one ended).
  void mark(const std::string& part);
  // `seconds` of the last part marked were `what` (shown within it: "timed 4.1 (checks 0.02)").
  void note_within(const std::string& what, double seconds);
  // {"parts": [{"part", "s", "within": {...}}...], "to_record_s", "covers"}; null without the age.
  nlohmann::json section() const;
  // One line for the table: "wall: 9.8 s from the process's start to the record: ...", or "".
  static std::string line(const nlohmann::json& wall);

 private:
  struct Part {
    std::string name;
    double seconds = 0;
    std::vector<std::pair<std::string, double>> within;
  };
  std::vector<Part> parts_;
  double last_age_ = -1;
};

}  // namespace scalebench
