#include "study/yaml_keys.hpp"

#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include "scalebench/base/error.hpp"

namespace scalebench::study {
namespace {

class KeyChecker : public YAML::EventHandler {
 public:
  KeyChecker(const std::string& file, const std::set<std::string>& top) : file_(file), top_(top) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t) override { node(m, nullptr); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { node(m, nullptr); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t, const std::string& value) override {
    node(m, &value);
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    node(m, nullptr);
    frames_.push_back({false, true, {}});
  }
  void OnSequenceEnd() override { frames_.pop_back(); }
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    node(m, nullptr);
    frames_.push_back({true, true, {}});
  }
  void OnMapEnd() override { frames_.pop_back(); }

 private:
  struct Frame {
    bool map;
    bool next_is_key;
    std::set<std::string> keys;
  };

  [[noreturn]] void bad(const YAML::Mark& m, const std::string& what) const {
    throw UsageError(fmt::format("{}:{}: {}", file_, m.line + 1, what));
  }

  // Every node passes here before its children: a key when its map expects one.
  void node(const YAML::Mark& m, const std::string* scalar) {
    if (frames_.empty() || !frames_.back().map) return;
    Frame& f = frames_.back();
    const bool is_key = f.next_is_key;
    f.next_is_key = !is_key;
    if (!is_key) return;
    if (scalar == nullptr) bad(m, "keys must be plain names");
    if (frames_.size() == 1 && top_.count(*scalar) == 0) {
      std::string known;
      for (const auto& k : top_) known += (known.empty() ? "" : ", ") + k;
      bad(m, fmt::format("unknown key '{}'; a study has {}", *scalar, known));
    }
    if (!f.keys.insert(*scalar).second)
      bad(m, fmt::format("key '{}' is given twice in the same map; keep one", *scalar));
  }

  const std::string& file_;
  const std::set<std::string>& top_;
  std::vector<Frame> frames_;
};

}  // namespace

void check_yaml_keys(const std::string& file, std::istream& in, const std::set<std::string>& top_level_keys) {
  KeyChecker checker(file, top_level_keys);
  YAML::Parser parser(in);
  parser.HandleNextDocument(checker);
}

}  // namespace scalebench::study
