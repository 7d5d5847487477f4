// prefault_writable (shared_window.hpp), which the node-shared distribution runs on its windows'
// pages before it writes them: pages that a store could not get (past the end of the file they
// map: the kernel's SIGBUS case, as for a full tmpfs) are an error returned, not a SIGBUS; pages
// that exist are faulted in; ranges are widened to whole pages.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "scalebench/mpi/shared_window.hpp"

using scalebench::prefault_writable;

TEST(Prefault, PagesPastTheBackingFileAreAnErrorNotASigbus) {
  const long page = sysconf(_SC_PAGESIZE);
  ASSERT_GT(page, 0);
  std::string path = testing::TempDir() + "scalebench-prefault-XXXXXX";
  const int fd = mkstemp(path.data());
  ASSERT_GE(fd, 0) << path;
  unlink(path.c_str());
  ASSERT_EQ(ftruncate(fd, page), 0);  // one page of file under two pages of mapping
  void* map = mmap(nullptr, static_cast<std::size_t>(2 * page), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  ASSERT_NE(map, MAP_FAILED);
  auto* bytes = static_cast<char*>(map);
  if (madvise(map, static_cast<std::size_t>(page), MADV_POPULATE_WRITE) != 0 && errno == EINVAL) {
    munmap(map, static_cast<std::size_t>(2 * page));
    GTEST_SKIP() << "this kernel has no MADV_POPULATE_WRITE (Linux 5.14): prefault_writable checks nothing here";
  }
  EXPECT_EQ(prefault_writable(bytes, page), 0);
  EXPECT_EQ(prefault_writable(bytes + 1, page - 2), 0);
  bytes[page - 1] = 1;  // faulted in: a store works
  EXPECT_EQ(prefault_writable(bytes, 2 * page), EFAULT);
  EXPECT_EQ(prefault_writable(bytes + page + 1, 1), EFAULT);  // widened to its page
  EXPECT_EQ(prefault_writable(bytes + page - 1, 2), EFAULT);  // straddles into the missing page
  EXPECT_EQ(prefault_writable(nullptr, page), 0);
  EXPECT_EQ(prefault_writable(bytes, 0), 0);
  munmap(map, static_cast<std::size_t>(2 * page));
}
