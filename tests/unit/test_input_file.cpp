// The input-file rule: kind checked before reading, bounded size, the origin named.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "scalebench/base/error.hpp"
#include "scalebench/base/input_file.hpp"

using namespace scalebench;
namespace fs = std::filesystem;

namespace {

class InputFile : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "scalebench-input-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const char* name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

// The message of the ResourceError `f` throws (fails the test if it throws none).
template <class F>
std::string refusal(F&& f) {
  try {
    f();
  } catch (const ResourceError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ResourceError";
  return "";
}

}  // namespace

TEST_F(InputFile, ReadsARegularFileAndALinkToOne) {
  std::ofstream(path("p.json")) << "{\"a\": 1}\n";
  fs::create_symlink(path("p.json"), path("link"));
  EXPECT_EQ(read_input_file(path("p.json"), "--profile"), "{\"a\": 1}\n");
  EXPECT_EQ(read_input_file(path("link"), "--profile"), "{\"a\": 1}\n");
  EXPECT_TRUE(check_input_file(path("link"), "--profile"));
  EXPECT_FALSE(check_input_file(path("absent"), "--profile"));
}

TEST_F(InputFile, AFifoIsRefusedAtOnceWithoutAWriter) {
  ASSERT_EQ(mkfifo(path("fifo").c_str(), 0600), 0);
  const auto t0 = std::chrono::steady_clock::now();
  const std::string m = refusal([&] { read_input_file(path("fifo"), "SCALEBENCH_PROFILE"); });
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  EXPECT_NE(m.find("SCALEBENCH_PROFILE"), std::string::npos) << m;
  EXPECT_NE(m.find("a FIFO"), std::string::npos) << m;
  EXPECT_NE(m.find(path("fifo")), std::string::npos) << m;
}

TEST_F(InputFile, DevicesFoldersAndSocketsAreRefusedByKind) {
  fs::create_symlink("/dev/zero", path("zero"));
  EXPECT_NE(refusal([&] { read_input_file(path("zero"), "--profile"); }).find("a character device"), std::string::npos);
  EXPECT_NE(refusal([&] { read_input_file(dir_.string(), "--hostfile"); }).find("a folder"), std::string::npos);
  const int s = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(s, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string sp = path("sock");
  ASSERT_LT(sp.size(), sizeof addr.sun_path);
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", sp.c_str());
  ASSERT_EQ(bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  // A socket cannot be opened at all; the refusal still names the file and the option.
  const std::string m = refusal([&] { read_input_file(sp, "--records"); });
  EXPECT_NE(m.find("--records"), std::string::npos) << m;
  close(s);
  EXPECT_EQ(path_kind(sp), "a socket");
  EXPECT_EQ(path_kind(dir_.string()), "a folder");
  EXPECT_EQ(path_kind(path("zero")), "a character device");
  EXPECT_EQ(path_kind(path("absent")), "");
}

TEST_F(InputFile, AFileOverTheLimitIsRefusedBeforeItIsRead) {
  std::ofstream(path("big")) << std::string(1000, 'x');
  const std::string m = refusal([&] { read_input_file(path("big"), "--profile", 999); });
  EXPECT_NE(m.find("1000 bytes"), std::string::npos) << m;
  EXPECT_EQ(read_input_file(path("big"), "--profile", 1000).size(), 1000U);
}

TEST_F(InputFile, MissingAndEmptyPathsSaySo) {
  EXPECT_NE(refusal([&] { read_input_file(path("absent"), "--profile"); }).find("no such file"), std::string::npos);
  EXPECT_THROW(read_input_file("", "--profile"), UsageError);
}
