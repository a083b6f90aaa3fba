// The recycled memory of batches handed to Python (src/datasets/buffer_pool.h): which kept
// buffer a request gets, the bound on what is kept, and a forked child's use of the pool.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "datasets/buffer_pool.h"

namespace tf::datasets {
namespace {

constexpr uint64_t kKiB = 1024;

PooledBuffer Take(BufferPool& pool, uint64_t bytes) {
  auto buffer = pool.Get(bytes);
  EXPECT_TRUE(buffer.ok()) << buffer.status().ToString();
  return buffer.ok() ? std::move(buffer).value() : PooledBuffer();
}

TEST(BufferPoolTest, ABufferGivenBackIsTheNextOfAboutItsSize) {
  BufferPool pool(uint64_t{1} << 20);
  char* first = nullptr;
  {
    PooledBuffer b = Take(pool, 100 * kKiB);
    ASSERT_NE(b.data(), nullptr);
    EXPECT_EQ(b.capacity(), 128 * kKiB);       // rounded up to 64 KiB
    std::memset(b.data(), 'a', b.capacity());  // all of it writable
    first = b.data();
  }
  EXPECT_EQ(pool.kept_bytes(), 128 * kKiB);
  PooledBuffer again = Take(pool, 90 * kKiB);
  EXPECT_EQ(again.data(), first);  // the same memory, its pages still there
  EXPECT_EQ(again.data()[127 * kKiB], 'a');
  EXPECT_EQ(pool.kept_bytes(), 0u);
  EXPECT_EQ(pool.mapped(), 1);
}

TEST(BufferPoolTest, ASmallRequestDoesNotTakeABigBuffer) {
  BufferPool pool(uint64_t{4} << 20);
  { PooledBuffer big = Take(pool, 1024 * kKiB); }
  PooledBuffer small = Take(pool, 64 * kKiB);  // 1 MiB is more than twice 64 KiB
  EXPECT_EQ(small.capacity(), 64 * kKiB);
  EXPECT_EQ(pool.mapped(), 2);
  EXPECT_EQ(pool.kept_bytes(), 1024 * kKiB);
  PooledBuffer half = Take(pool, 512 * kKiB);  // exactly half: the big one fits
  EXPECT_EQ(half.capacity(), 1024 * kKiB);
  EXPECT_EQ(pool.mapped(), 2);
}

TEST(BufferPoolTest, TheSmallestKeptBufferThatHoldsTheRequestIsTaken) {
  BufferPool pool(uint64_t{4} << 20);
  {
    PooledBuffer a = Take(pool, 256 * kKiB), b = Take(pool, 192 * kKiB), c = Take(pool, 320 * kKiB);
  }
  PooledBuffer got = Take(pool, 180 * kKiB);
  EXPECT_EQ(got.capacity(), 192 * kKiB);
  EXPECT_EQ(pool.kept_bytes(), (256 + 320) * kKiB);
}

TEST(BufferPoolTest, KeepsNoMoreThanItsBound) {
  BufferPool pool(256 * kKiB);
  {
    PooledBuffer a = Take(pool, 128 * kKiB), b = Take(pool, 128 * kKiB), c = Take(pool, 128 * kKiB);
  }
  EXPECT_EQ(pool.kept_bytes(), 256 * kKiB);  // the third was unmapped
  { PooledBuffer too_big = Take(pool, 512 * kKiB); }
  EXPECT_EQ(pool.kept_bytes(), 256 * kKiB);
}

TEST(BufferPoolTest, EmptyAndMovedBuffersHoldNothing) {
  BufferPool pool(uint64_t{1} << 20);
  PooledBuffer empty = Take(pool, 0);
  EXPECT_EQ(empty.data(), nullptr);
  EXPECT_EQ(empty.capacity(), 0u);
  EXPECT_EQ(pool.mapped(), 0);

  PooledBuffer a = Take(pool, 64 * kKiB);
  char* data = a.data();
  PooledBuffer b = std::move(a);
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move): what a move leaves
  EXPECT_EQ(b.data(), data);
  PooledBuffer c = Take(pool, 64 * kKiB);
  c = std::move(b);  // c's own buffer goes back, b's moves in
  EXPECT_EQ(c.data(), data);
  EXPECT_EQ(pool.kept_bytes(), 64 * kKiB);
  { PooledBuffer gone = std::move(c); }
  EXPECT_EQ(pool.kept_bytes(), 128 * kKiB);  // each given back once
}

TEST(BufferPoolTest, AForkedChildUsesTheBatchPool) {
  BufferPool& pool = BufferPool::ForBatches();
  { PooledBuffer kept = Take(pool, 64 * kKiB); }
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::alarm(10);  // a lock left taken would hang here
    auto a = pool.Get(64 * kKiB), b = pool.Get(64 * kKiB);
    const bool ok = a.ok() && b.ok() && a->data() != b->data();
    if (ok) std::memset(a->data(), 'c', a->capacity());
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  PooledBuffer after = Take(pool, 64 * kKiB);  // the parent's pool is as it was
  EXPECT_NE(after.data(), nullptr);
}

}  // namespace
}  // namespace tf::datasets
