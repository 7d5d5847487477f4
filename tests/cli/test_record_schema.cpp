// The record `scalebench gemm --json` writes conforms to docs/gemm-record.schema.json. The
// validator below covers the JSON Schema keywords that schema uses (type, const, enum,
// required, properties, additionalProperties, items); an unknown keyword fails the test so the
// schema cannot silently outgrow it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <set>

#include "cli_runner.hpp"

using nlohmann::json;

namespace {

bool has_type(const json& v, const std::string& t) {
  if (t == "object") return v.is_object();
  if (t == "array") return v.is_array();
  if (t == "string") return v.is_string();
  if (t == "integer") return v.is_number_integer();
  if (t == "number") return v.is_number();
  if (t == "boolean") return v.is_boolean();
  if (t == "null") return v.is_null();
  return false;
}

void validate(const json& v, const json& schema, const std::string& where, std::vector<std::string>& errors) {
  static const std::set<std::string> known = {"$schema",  "title",      "description",
                                              "type",     "const",      "enum",
                                              "required", "properties", "additionalProperties",
                                              "items",    "minimum",    "minItems"};
  for (auto it = schema.begin(); it != schema.end(); ++it) {
    if (!known.count(it.key())) errors.push_back(where + ": schema keyword not supported by the test: " + it.key());
  }
  if (schema.contains("type")) {
    const auto& t = schema["type"];
    bool ok = false;
    if (t.is_array()) {
      for (const auto& one : t) ok = ok || has_type(v, one.get<std::string>());
    } else {
      ok = has_type(v, t.get<std::string>());
    }
    if (!ok) {
      errors.push_back(where + ": expected type " + t.dump() + ", got " + v.dump().substr(0, 80));
      return;
    }
  }
  if (schema.contains("const") && v != schema["const"])
    errors.push_back(where + ": expected " + schema["const"].dump());
  if (schema.contains("minimum") && v.is_number() && v.get<double>() < schema["minimum"].get<double>()) {
    errors.push_back(where + ": " + v.dump() + " is below the minimum " + schema["minimum"].dump());
  }
  if (schema.contains("enum")) {
    bool found = false;
    for (const auto& e : schema["enum"]) found = found || e == v;
    if (!found) errors.push_back(where + ": " + v.dump() + " not in " + schema["enum"].dump());
  }
  if (v.is_object()) {
    if (schema.contains("required")) {
      for (const auto& r : schema["required"]) {
        if (!v.contains(r.get<std::string>())) errors.push_back(where + ": missing " + r.get<std::string>());
      }
    }
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (schema.contains("properties") && schema["properties"].contains(it.key())) {
        validate(it.value(), schema["properties"][it.key()], where + "." + it.key(), errors);
      } else if (schema.contains("additionalProperties") && schema["additionalProperties"].is_object()) {
        validate(it.value(), schema["additionalProperties"], where + "." + it.key(), errors);
      }
    }
  }
  if (v.is_array() && schema.contains("minItems") && v.size() < schema["minItems"].get<std::size_t>()) {
    errors.push_back(where + ": " + std::to_string(v.size()) + " items, fewer than " + schema["minItems"].dump());
  }
  if (v.is_array() && schema.contains("items")) {
    for (std::size_t i = 0; i < v.size(); ++i)
      validate(v[i], schema["items"], where + "[" + std::to_string(i) + "]", errors);
  }
}

json load(const std::string& path) { return json::parse(read_file(path)); }

std::string schema_path() {
  const char* src = std::getenv("SCALEBENCH_SOURCE_DIR");
  return std::string(src ? src : ".") + "/docs/gemm-record.schema.json";
}

}  // namespace

TEST(RecordSchema, GemmRecordConformsForPassingAndFailingRuns) {
  const json schema = load(schema_path());
  const std::string dir = make_temp_dir();
  for (const std::string extra : {"", " --inject-error-rank 0", " --algorithm summa2d --grid 1x2",
                                  " --algorithm summa2d --inject-error-rank 1"}) {
    const CliRun r = run_scalebench_mpi(2,
                                        "gemm --n 50 --m 31 --reps 2 --verify full --json " + dir + "/r.json" + extra);
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 4) << r.output;
    const json rec = load(dir + "/r.json");
    std::vector<std::string> errors;
    validate(rec, schema, "$", errors);
    for (const auto& e : errors) ADD_FAILURE() << e;
    EXPECT_EQ(rec["ok"].get<bool>(), r.exit_code == 0);
    EXPECT_EQ(rec["exit_code"].get<int>(), r.exit_code);
    EXPECT_EQ(rec["rank_info"].size(), 2u);
  }
}

TEST(RecordSchema, ValidatorRejectsARecordMissingAField) {
  const json schema = load(schema_path());
  const std::string dir = make_temp_dir();
  const CliRun r = run_scalebench_mpi(1, "gemm --n 16 --reps 1 --json " + dir + "/r.json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json rec = load(dir + "/r.json");
  rec.erase("phases");
  rec["ok"] = "yes";
  std::vector<std::string> errors;
  validate(rec, schema, "$", errors);
  EXPECT_EQ(errors.size(), 2u);
}

// --peer scalapack adds peers.scalapack; the record still conforms (skips where the binary has no
// ScaLAPACK: it refuses the peer with exit 3).
TEST(RecordSchema, GemmRecordWithTheScalapackPeerConforms) {
  const json schema = load(schema_path());
  const std::string dir = make_temp_dir();
  const CliRun r = run_scalebench_mpi(
      2, "gemm --n 48 --m 40 --k 36 --reps 2 --algorithm summa2d --panel-width 8 --peer scalapack --json " + dir +
             "/r.json");
  if (r.exit_code == 3 && r.output.find("built without it") != std::string::npos) {
    GTEST_SKIP() << "this scalebench has no ScaLAPACK: " << r.output;
  }
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json rec = load(dir + "/r.json");
  std::vector<std::string> errors;
  validate(rec, schema, "$", errors);
  for (const auto& e : errors) ADD_FAILURE() << e;
  const json& p = rec["peers"]["scalapack"];
  EXPECT_EQ(p["grid"], rec["distribution"]["grid"]);
  EXPECT_EQ(p["block_width"].get<int>(), 8);
  EXPECT_EQ(p["variants"]["tuned"]["k_step"].get<int>(), 8);
  // The schema itself knows the section: one missing field of a variant is found.
  json broken = rec;
  broken["peers"]["scalapack"]["variants"]["tuned"].erase("ratio_run_vs_peer");
  std::vector<std::string> broken_errors;
  validate(broken, schema, "$", broken_errors);
  EXPECT_EQ(broken_errors.size(), 1u);
}
