// What gemm, montecarlo and topology check before any work, with the real binary and the real
// mpirun: ranks given different configurations (MPMD), sizes beyond what the integer types
// hold, --json targets of every kind (made in a scratch folder, never in /dev), values that were
// once accepted silently, a bad HWLOC_XMLFILE, a GPU asked of a build without CUDA.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "cli_runner.hpp"

namespace {

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}
std::string binary() { return env_or("SCALEBENCH_BINARY", "scalebench"); }

// A scratch folder, removed when the test ends (also when it fails).
class Scratch {
 public:
  Scratch() : path_(make_temp_dir()) {}
  ~Scratch() { run_command("rm -rf '" + path_ + "'"); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

mode_t kind_of(const std::string& path, bool follow = true) {
  struct stat st {};
  if ((follow ? stat(path.c_str(), &st) : lstat(path.c_str(), &st)) != 0) return 0;
  return st.st_mode & S_IFMT;
}

int entries(const std::string& dir) {
  const CliRun r = run_command("ls -A '" + dir + "' | wc -l");
  return std::atoi(r.output.c_str());
}

struct Refusal {
  const char* name;
  std::string args;
  int exit_code;
  std::string message;  // a fragment of the one error line
};

void expect_refused(const CliRun& r, const Refusal& c) {
  EXPECT_EQ(r.exit_code, c.exit_code) << r.output;
  EXPECT_EQ(count_of(r.output, "scalebench: error"), 1) << r.output;
  EXPECT_NE(r.output.find(c.message), std::string::npos) << "expected '" << c.message << "' in:\n" << r.output;
  EXPECT_EQ(r.output.find("verification"), std::string::npos) << "the work ran:\n" << r.output;
}

std::string name_of(const testing::TestParamInfo<Refusal>& p) { return p.param.name; }

}  // namespace

// ---- Ranks must agree: one run per side of an MPMD launch ------------------------------------
struct Disagreement {
  const char* name;
  std::string left, right;
  std::string message;
};

class RanksDisagree : public testing::TestWithParam<Disagreement> {};

TEST_P(RanksDisagree, EveryRankExitsTwoWithOneLineNamingTheField) {
  const auto& c = GetParam();
  // `timeout` turns a hang into exit 124: the test fails instead of waiting for ctest.
  const CliRun r = run_command("timeout 60 " + env_or("SCALEBENCH_MPIEXEC", "mpirun") + " --oversubscribe -np 1 " +
                               binary() + " " + c.left + " : -np 1 " + binary() + " " + c.right);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(count_of(r.output, "scalebench: error"), 1) << r.output;
  EXPECT_NE(r.output.find("were given different configurations"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(c.message), std::string::npos) << "expected '" << c.message << "' in:\n" << r.output;
}

INSTANTIATE_TEST_SUITE_P(
    Mpmd, RanksDisagree,
    testing::Values(Disagreement{"gemm_reps", "gemm --n 256 --reps 2", "gemm --n 256 --reps 3",
                                 "rank 0 has reps=2, rank 1 has reps=3"},
                    Disagreement{"gemm_size", "gemm --n 256", "gemm --n 512", "rank 0 has m=256, rank 1 has m=512"},
                    Disagreement{"montecarlo_samples", "montecarlo --samples 1000 --reps 1",
                                 "montecarlo --samples 2000 --reps 1",
                                 "rank 0 has samples=1000, rank 1 has samples=2000"},
                    Disagreement{"montecarlo_problem", "montecarlo --problem european --samples 1000",
                                 "montecarlo --problem asian --samples 1000", "rank 0 has problem=european"}),
    [](const testing::TestParamInfo<Disagreement>& p) { return std::string(p.param.name); });

TEST(RanksAgree, OnlyPerRankSettingsDifferAndTheRunPasses) {
  const CliRun r = run_command("timeout 60 " + env_or("SCALEBENCH_MPIEXEC", "mpirun") + " --oversubscribe -np 1 " +
                               binary() + " gemm --n 64 --reps 1 --threads 1 --quiet : -np 1 " + binary() +
                               " gemm --n 64 --reps 1 --threads 2 --quiet");
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

// ---- Sizes: checked against the integer types, exact figures in the message -----------------
class SizeRefused : public testing::TestWithParam<Refusal> {};

TEST_P(SizeRefused, BeforeAnyWorkWithExactFigures) { expect_refused(run_scalebench(GetParam().args), GetParam()); }

INSTANTIATE_TEST_SUITE_P(
    Cli, SizeRefused,
    testing::Values(
        // Beyond a 32-bit blasint, or (64-bit blasint) A's bytes beyond 64 bits: 2^31 * 2^31 * 8.
        Refusal{"n_2pow31", "gemm --n 2147483648 --dry-run", 2, "2147483648 exceeds the largest"},
        Refusal{"n_huge", "gemm --n 99999999999 --dry-run", 2, "99999999999 exceeds the largest"},
        Refusal{"bytes_of_a", "gemm --m 2000000000 --k 2000000000 --n 1 --dry-run", 2,
                "2000000000 x 2000000000 x 8 = 32000000000000000000 exceeds the largest 64-bit byte count "
                "(9223372036854775807)"},
        // The true need (A + B + C + the peer's C_i, 8 bytes each), not an overflowed one.
        Refusal{"memory_true_figure", "gemm --n 1000000 --dry-run", 3, "needs 29802.32 GiB of host memory"},
        Refusal{"samples_beyond_chunks", "montecarlo --samples 9223372036854775807 --dry-run", 2,
                "--samples = 9223372036854775807 exceeds"},
        Refusal{"steps_huge", "montecarlo --problem asian --steps 99999999999", 2,
                "--steps must be a whole number in [1, 1048576] (got '99999999999')"}),
    name_of);

// ---- Values once accepted silently ---------------------------------------------------------------
class ValueRefused : public testing::TestWithParam<Refusal> {};

TEST_P(ValueRefused, OneLineUsageError) { expect_refused(run_scalebench(GetParam().args), GetParam()); }

INSTANTIATE_TEST_SUITE_P(
    Cli, ValueRefused,
    testing::Values(
        Refusal{"gemm_seed_negative", "gemm --n 64 --seed -1", 2,
                "--seed must be a whole number in [0, 18446744073709551615] (got '-1')"},
        Refusal{"gemm_seed_too_large", "gemm --n 64 --seed 18446744073709551616", 2, "too large"},
        Refusal{"montecarlo_seed_negative", "montecarlo --seed -7", 2, "--seed must be a whole number"},
        Refusal{"gemm_json_empty", "gemm --n 64 --json ''", 2, "--json is empty"},
        Refusal{"montecarlo_json_empty", "montecarlo --json ''", 2, "--json is empty"},
        Refusal{"n_trailing_garbage", "gemm --n 12abc", 2, "--n must be a whole number > 0 (got '12abc')"},
        Refusal{"n_hex", "gemm --n 0x10", 2, "--n must be a whole number > 0 (got '0x10')"},
        Refusal{"n_1e99", "gemm --n 1e99", 2, "too large"},
        Refusal{"reps_zero", "gemm --n 64 --reps 0", 2, "--reps must be a whole number in [1,"},
        Refusal{"warmup_negative", "gemm --n 64 --warmup -1", 2, "--warmup must be a whole number in [0,"},
        Refusal{"threads_negative", "montecarlo --threads -3", 2, "--threads must be a whole number in [1,"},
        Refusal{"threads_fraction", "gemm --n 64 --threads 1.5", 2, "--threads must be a whole number"},
        Refusal{"spot_nan", "montecarlo --problem european --spot nan", 2, "--spot must be a finite decimal number"},
        Refusal{"sigma_inf", "montecarlo --problem european --sigma inf", 2, "--sigma must be a finite decimal"},
        Refusal{"rate_trailing", "montecarlo --problem european --rate 0.05x", 2, "--rate must be a finite decimal"},
        Refusal{"spot_huge", "montecarlo --problem european --spot 1e200", 2, "--spot must be in [1e-100, 1e100]"},
        Refusal{"steps_garbage", "montecarlo --problem asian --steps 12abc", 2, "--steps must be a whole number"},
        Refusal{"chunk_size_odd", "montecarlo --chunk-size 6", 2, "--chunk-size must be a multiple of 4"},
        Refusal{"topology_nodes_zero", "topology --nodes 0", 2, "--nodes must be a whole number in [1,"},
        Refusal{"topology_nodes_garbage", "topology --nodes 2x", 2, "--nodes must be a whole number"},
        Refusal{"n_leading_plus", "gemm --n +64", 2, "--n must be a whole number > 0 (got '+64')"},
        Refusal{"n_separator_last", "gemm --n 64_", 2, "--n must be a whole number > 0 (got '64_')"},
        Refusal{"reps_separator_doubled", "gemm --n 64 --reps 1__0", 2, "--reps must be a whole number in [1,"},
        Refusal{"samples_separator_first", "montecarlo --samples _1000", 2, "--samples must be a whole number"},
        Refusal{"gemm_share_gpu_on_cpu", "gemm --n 64 --share-gpu", 2,
                "--share-gpu needs --backend cublas (openblas runs on the host's cores)"}),
    name_of);

// ---- --json targets ------------------------------------------------------------------------------
TEST(JsonTarget, SymlinkIsFollowedItsTargetReplacedAndTheLinkKept) {
  const Scratch dir;
  std::ofstream(dir / "target.json") << "old\n";
  ASSERT_EQ(symlink("target.json", (dir / "link.json").c_str()), 0) << std::strerror(errno);
  ASSERT_EQ(symlink("later.json", (dir / "dangling.json").c_str()), 0) << std::strerror(errno);
  for (const char* link : {"link.json", "dangling.json"}) {
    const CliRun r = run_scalebench("gemm --n 32 --reps 1 --quiet --json " + (dir / link));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(kind_of(dir / link, false), static_cast<mode_t>(S_IFLNK)) << link << " is no longer a link";
  }
  EXPECT_NE(read_file(dir / "target.json").find("\"subcommand\": \"gemm\""), std::string::npos);
  EXPECT_NE(read_file(dir / "later.json").find("\"subcommand\": \"gemm\""), std::string::npos);
  EXPECT_EQ(entries(dir.path()), 4) << "a temporary file was left behind";
}

TEST(JsonTarget, FifoIsWrittenInPlace) {
  const Scratch dir;
  ASSERT_EQ(mkfifo((dir / "pipe").c_str(), 0600), 0) << std::strerror(errno);
  const CliRun r = run_command("cat '" + (dir / "pipe") + "' > '" + (dir / "out") + "' & reader=$!; " + binary() +
                               " montecarlo --samples 1000 --reps 1 --quiet --json '" + (dir / "pipe") +
                               "'; rc=$?; wait $reader; exit $rc");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(kind_of(dir / "pipe"), static_cast<mode_t>(S_IFIFO)) << "the pipe was replaced";
  EXPECT_NE(read_file(dir / "out").find("\"subcommand\": \"montecarlo\""), std::string::npos);
  // Standard output through a link (as /dev/stdout is one): a pipe here, written in place.
  ASSERT_EQ(symlink("/proc/self/fd/1", (dir / "stdout").c_str()), 0) << std::strerror(errno);
  const CliRun piped = run_command(binary() + " montecarlo --samples 1000 --reps 1 --quiet --json '" +
                                   (dir / "stdout") + "' | cat");
  EXPECT_EQ(piped.exit_code, 0) << piped.output;
  EXPECT_NE(piped.output.find("\"subcommand\": \"montecarlo\""), std::string::npos) << piped.output;
  EXPECT_EQ(kind_of(dir / "stdout", false), static_cast<mode_t>(S_IFLNK));
}

TEST(JsonTarget, DeviceNodeIsWrittenInPlaceNotReplaced) {
  if (geteuid() != 0) GTEST_SKIP() << "making a device node (mknod) needs root";
  const Scratch dir;
  // The null device's numbers (1, 3), as a node of its own in the scratch folder.
  if (mknod((dir / "null").c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) {
    GTEST_SKIP() << "mknod of a character device is not permitted here: " << std::strerror(errno);
  }
  ASSERT_EQ(symlink("null", (dir / "to-null").c_str()), 0) << std::strerror(errno);
  for (const char* target : {"null", "to-null"}) {
    const CliRun r = run_scalebench("gemm --n 32 --reps 1 --quiet --json " + (dir / target));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(kind_of(dir / "null", false), static_cast<mode_t>(S_IFCHR)) << "the device node was replaced";
  }
  EXPECT_EQ(entries(dir.path()), 2) << "a temporary file was left behind";
}

// A record that no longer fits on the disk when the run ends (the folder was writable when it
// started): every rank leaves at once with rank 0's one line and no file, never a hang. The
// shared windows of a 2-rank gemm are freed collectively, so a rank 0 that failed alone would wait
// in that while the others waited for its verdict.
class JsonDiskFull : public testing::TestWithParam<std::string> {};

TEST_P(JsonDiskFull, EveryRankLeavesWithOneLineAndNoFile) {
  if (run_command("unshare -m sh -c 'mount -t tmpfs -o size=64k tmpfs /mnt'").exit_code != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs in a private mount namespace here (needs root and unshare -m)";
  }
  const Scratch dir;
  const std::string mpi = env_or("SCALEBENCH_MPIEXEC", "mpirun") + " -np 2 --oversubscribe " + binary() + " " +
                          GetParam() + " --reps 1 --quiet --json ";
  ASSERT_EQ(run_command(mpi + (dir / "full.json")).exit_code, 0);
  const auto pages = static_cast<long>(read_file(dir / "full.json").size() / 4096);  // one page short
  ASSERT_GT(pages, 0) << "the record fits in one page: no room to fill the disk short of it";
  const std::string mnt = dir / "mnt";
  ASSERT_EQ(mkdir(mnt.c_str(), 0755), 0);
  const std::string script = "mount -t tmpfs -o size=1m tmpfs " + mnt + " && (dd if=/dev/zero of=" + mnt +
                             "/fill bs=4096 2>/dev/null; truncate -s -" + std::to_string(pages * 4096) + " " + mnt +
                             "/fill) && timeout 30 " + mpi + mnt + "/r.json; rc=$?; echo left: $(ls -A " + mnt +
                             "); exit $rc";
  const CliRun r = run_command("unshare -m --propagation private sh -c '" + script + "'");
  EXPECT_NE(r.exit_code, 124) << "the run hung on a full disk:\n" << r.output;
  EXPECT_TRUE(is_refusal(r, 3, "No space left on device")) << r.output;
  EXPECT_NE(r.output.find("left: fill\n"), std::string::npos) << "a record or its temporary file was left:\n"
                                                              << r.output;
}

INSTANTIATE_TEST_SUITE_P(Cli, JsonDiskFull,
                         testing::Values("gemm --n 192 --distribution shared", "montecarlo --samples 100000"),
                         [](const testing::TestParamInfo<std::string>& p) {
                           return p.param.substr(0, p.param.find(' '));
                         });

class JsonRefused : public testing::TestWithParam<std::string> {};

TEST_P(JsonRefused, FolderLongNameAndUnwritableFolderBeforeTheWork) {
  const std::string run = GetParam() + " --quiet --reps 1 --json ";
  const Scratch dir;
  const std::string long_name = dir / (std::string(300, 'r') + ".json");
  const CliRun folder = run_scalebench(run + dir.path());
  expect_refused(folder, {"folder", "", 3, "--json " + dir.path() + ": it is a folder"});
  EXPECT_EQ(folder.output.find(".scalebench-"), std::string::npos) << "a temporary name shows:\n" << folder.output;
  expect_refused(run_scalebench(run + long_name), {"long", "", 3, "its file name is 305 characters"});
  // Root writes anywhere: run as nobody then (setpriv, util-linux), from a folder nobody can reach
  // with a copy of the binary there (the checkout may sit in root's own home, which is 0700).
  std::string ro_dir = dir / "ro", bin = binary(), as_user, nobody_dir;
  if (geteuid() == 0) {
    nobody_dir = "/tmp/scalebench-nobody-XXXXXX";
    ASSERT_NE(mkdtemp(nobody_dir.data()), nullptr);
    ASSERT_EQ(chmod(nobody_dir.c_str(), 0755), 0);
    ro_dir = nobody_dir + "/ro";
    bin = nobody_dir + "/scalebench";
    ASSERT_EQ(run_command("cp '" + binary() + "' '" + bin + "'").exit_code, 0);
    as_user = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
  }
  ASSERT_EQ(mkdir(ro_dir.c_str(), 0555), 0);
  const CliRun ro = run_command(as_user + bin + " " + run + ro_dir + "/r.json");
  const int left = entries(ro_dir);
  if (!nobody_dir.empty()) run_command("rm -rf '" + nobody_dir + "'");
  expect_refused(ro, {"ro", "", 3, "folder " + ro_dir + " is not writable"});
  EXPECT_EQ(left, 0) << "an output file was left behind";
}

INSTANTIATE_TEST_SUITE_P(Cli, JsonRefused, testing::Values("gemm --n 64", "montecarlo --samples 1000"),
                         [](const testing::TestParamInfo<std::string>& p) {
                           return p.param.substr(0, p.param.find(' '));
                         });

// ---- Misleading messages ---------------------------------------------------------------------------
TEST(Topology, BadHwlocXmlFileIsAnErrorNotThisMachineUnderItsName) {
  const Scratch dir;
  std::ofstream(dir / "bad.xml") << "not an hwloc export\n";
  const CliRun r = run_command("HWLOC_XMLFILE='" + (dir / "bad.xml") + "' " + binary() + " topology");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(count_of(r.output, "scalebench: error: HWLOC_XMLFILE: "), 1) << r.output;
  EXPECT_EQ(r.output.find("placement plans"), std::string::npos) << r.output;
}

TEST(GpuRequest, NamesTheBackendAndSaysBuiltWithoutCudaWhereThatIsWhy) {
  if (run_scalebench("--version").output.find("CUDA on") != std::string::npos) {
    GTEST_SKIP() << "this scalebench is built with CUDA (tests/cuda check what it says without a GPU)";
  }
  for (const std::string args : {"gemm --n 64 --backend cublas", "gemm --n 64 --backend cublas --dry-run",
                                 "montecarlo --backend cuda", "montecarlo --backend cuda --dry-run"}) {
    const std::string option = args.find("cublas") != std::string::npos ? "--backend cublas" : "--backend cuda";
    expect_refused(run_scalebench(args),
                   {"gpu", "", 6, option + " needs CUDA, but this scalebench was built without CUDA"});
  }
}
