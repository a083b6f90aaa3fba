// The paged KV cache (blocks, block tables, exhaustion) and Model::ForwardBatch: sequences run
// together, in chunks, joining at different steps, give the logits they give alone, bit for bit.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "engine/kv_cache.h"
#include "engine/model.h"
#include "engine_test_util.h"

namespace tf::testing {
namespace {

using engine::BatchSequence;
using engine::KvBlockPool;
using engine::KvCache;
using engine::Model;

TEST(EnginePagedCache, GrowsBlockByBlockAcrossBoundaries) {
  auto pool = std::make_shared<KvBlockPool>(/*num_layers=*/2, /*kv_dim=*/8, /*block_size=*/4,
                                            /*num_blocks=*/5);
  EXPECT_EQ(pool->free_blocks(), 5);
  KvCache cache(pool, /*max_positions=*/20);
  EXPECT_EQ(cache.reserved(), 0);
  EXPECT_EQ(cache.BlocksToReserve(1), 1);
  EXPECT_EQ(cache.BlocksToReserve(4), 1);
  EXPECT_EQ(cache.BlocksToReserve(5), 2);
  ASSERT_TRUE(cache.Reserve(3).ok());
  EXPECT_EQ(cache.reserved(), 4);
  EXPECT_EQ(pool->used_blocks(), 1);
  ASSERT_TRUE(cache.Reserve(4).ok());  // still the first block
  EXPECT_EQ(pool->used_blocks(), 1);
  ASSERT_TRUE(cache.Reserve(5).ok());  // the fifth position starts the second block
  EXPECT_EQ(pool->used_blocks(), 2);
  ASSERT_TRUE(cache.Reserve(13).ok());
  EXPECT_EQ(cache.block_table().size(), 4u);
  EXPECT_EQ(std::vector<int32_t>(cache.block_table().begin(), cache.block_table().end()),
            (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(pool->free_blocks(), 1);
}

TEST(EnginePagedCache, ExhaustionTakesNothingAndReleaseFreesAtOnce) {
  auto pool = std::make_shared<KvBlockPool>(1, 8, 4, 3);
  KvCache a(pool, 100), b(pool, 100);
  ASSERT_TRUE(a.Reserve(8).ok());  // 2 blocks
  Status s = b.Reserve(8);         // needs 2, 1 is free
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find("1 free blocks"), std::string::npos) << s.message();
  EXPECT_EQ(b.reserved(), 0);  // all or nothing
  EXPECT_EQ(pool->free_blocks(), 1);
  a.set_size(8);
  a.Release();
  EXPECT_EQ(a.size(), 0);
  EXPECT_EQ(pool->free_blocks(), 3);
  ASSERT_TRUE(b.Reserve(8).ok());
  {
    KvCache c(pool, 100);
    ASSERT_TRUE(c.Reserve(1).ok());
    EXPECT_EQ(pool->free_blocks(), 0);
  }  // destroyed: its block comes back
  EXPECT_EQ(pool->free_blocks(), 1);
}

// Prefix caching at the pool: a published block is found only by its parent and its very
// tokens, is held by every sequence that adopts it, stays cached (and counts as free) once no
// one holds it, and is evicted, oldest let go of first, only when nothing free is left.
TEST(EnginePagedCache, PublishedBlocksAreSharedThenCachedThenEvicted) {
  auto pool = std::make_shared<KvBlockPool>(1, 8, /*block_size=*/2, /*num_blocks=*/4);
  const std::vector<int32_t> ab = {1, 2}, cd = {3, 4}, ce = {3, 5};
  KvCache first(pool, 100);
  ASSERT_TRUE(first.Reserve(4).ok());  // blocks 0 and 1
  first.set_size(4);
  const uint64_t s_ab = pool->Publish(first.block_table()[0], 0, ab);
  const uint64_t s_cd = pool->Publish(first.block_table()[1], s_ab, cd);
  EXPECT_NE(s_ab, 0u);
  EXPECT_NE(s_ab, s_cd);
  EXPECT_EQ(pool->cached_blocks(), 2);
  EXPECT_FALSE(pool->AcquireCached(s_ab, ce)) << "other tokens";
  EXPECT_FALSE(pool->AcquireCached(0, cd)) << "the same tokens after another parent";
  EXPECT_FALSE(pool->AcquireCached(s_cd, ab)) << "the same tokens after another parent";

  // A second sequence adopts both while the first still holds them.
  KvCache second(pool, 100);
  auto b0 = pool->AcquireCached(0, ab);
  ASSERT_TRUE(b0);
  EXPECT_EQ(b0->index, first.block_table()[0]);
  EXPECT_EQ(b0->serial, s_ab);
  second.AdoptCached(b0->index);
  auto b1 = pool->AcquireCached(b0->serial, cd);
  ASSERT_TRUE(b1);
  second.AdoptCached(b1->index);
  EXPECT_EQ(second.size(), 4);
  EXPECT_EQ(pool->used_blocks(), 2) << "shared, not copied";
  // Publishing the same content from another block names the one already cached.
  KvCache third(pool, 100);
  ASSERT_TRUE(third.Reserve(2).ok());
  EXPECT_EQ(pool->Publish(third.block_table()[0], 0, ab), s_ab);
  third.Release();
  EXPECT_EQ(pool->cached_blocks(), 2) << "a duplicate stays private and is freed";

  first.Release();
  EXPECT_EQ(pool->used_blocks(), 2) << "still held by the second";
  second.Release();
  EXPECT_EQ(pool->used_blocks(), 0) << "cached blocks no one holds count as free";
  EXPECT_EQ(pool->cached_blocks(), 2);

  // Two free blocks are taken first; then the cached block let go of longest ago (the second
  // sequence freed cd before ab: last first), which is then no longer found.
  KvCache big(pool, 100);
  ASSERT_TRUE(big.Reserve(6).ok());
  EXPECT_EQ(pool->evictions(), 1);
  EXPECT_FALSE(pool->AcquireCached(s_ab, cd));
  auto still = pool->AcquireCached(0, ab);
  ASSERT_TRUE(still);
  EXPECT_EQ(pool->free_blocks(), 0);
  EXPECT_EQ(big.Reserve(8).code(), StatusCode::kResourceExhausted) << "a held block is not taken";
  pool->Free(still->index);
  ASSERT_TRUE(big.Reserve(8).ok());
  EXPECT_EQ(pool->evictions(), 2);
  EXPECT_EQ(pool->cached_blocks(), 0);
}

TEST(EnginePagedCache, CapacityIsTheSequencesLimit) {
  auto pool = std::make_shared<KvBlockPool>(1, 8, 4, 10);
  KvCache cache(pool, 6);
  EXPECT_TRUE(cache.Reserve(6).ok());
  Status s = cache.Reserve(7);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find("exceeds the sequence's 6"), std::string::npos) << s.message();
}

std::unique_ptr<Model> LoadFixture(int threads) {
  engine::ModelOptions options;
  options.num_threads = threads;
  auto model = Model::Load(EngineData("llama-gqa"), options);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  return model.ok() ? std::move(model).value() : nullptr;
}

// Prompts of different lengths from the fixture's vocabulary (1024 ids).
std::vector<int32_t> Prompt(int64_t n, int32_t seed) {
  std::vector<int32_t> p;
  for (int64_t i = 0; i < n; ++i)
    p.push_back(static_cast<int32_t>((int64_t{seed} * 131 + i * 37) % 1000));
  return p;
}

// Each sequence alone, one Forward per token after the prompt: the logits of every position it
// is asked for. tokens: the prompt, then the tokens fed one at a time.
std::vector<std::vector<float>> Alone(Model& model, const std::vector<int32_t>& prompt,
                                      const std::vector<int32_t>& fed) {
  auto cache = model.NewCache(static_cast<int64_t>(prompt.size() + fed.size()));
  std::vector<std::vector<float>> out(1);
  EXPECT_TRUE(model.Forward(prompt, cache.get(), false, &out.back()).ok());
  for (int32_t id : fed) {
    out.emplace_back();
    int32_t one[1] = {id};
    EXPECT_TRUE(model.Forward(one, cache.get(), false, &out.back()).ok());
  }
  return out;
}

// Three sequences (prompts of 5, 23 and 40 tokens) on one shared pool: the first starts alone,
// the second joins at step 2 with its prompt in chunks of 8, the third joins at step 4 in one
// chunk; decode tokens and prefill chunks share steps. Every logit row equals the one the
// sequence gives alone, bit for bit, with 1 and 3 threads.
TEST(EngineForwardBatch, SequencesTogetherGiveTheirLogitsAlone) {
  for (int threads : {1, 3}) {
    auto model = LoadFixture(threads);
    ASSERT_NE(model, nullptr);
    const int64_t vocab = model->config().vocab_size;
    auto pool = model->NewBlockPool(32);
    struct Seq {
      std::vector<int32_t> prompt, fed;
      int64_t join, chunk;
      std::unique_ptr<KvCache> cache;
      std::vector<std::vector<float>> logits;
    };
    std::vector<Seq> seqs;
    seqs.push_back({Prompt(5, 1), {}, 0, 5, nullptr, {}});
    seqs.push_back({Prompt(23, 2), {}, 2, 8, nullptr, {}});
    seqs.push_back({Prompt(40, 3), {}, 4, 40, nullptr, {}});
    for (auto& s : seqs) s.cache = std::make_unique<KvCache>(pool, 200);
    for (int64_t step = 0; step < 12; ++step) {
      std::vector<BatchSequence> batch;
      std::vector<std::vector<int32_t>> tokens(seqs.size());
      std::vector<Seq*> asked;
      for (size_t i = 0; i < seqs.size(); ++i) {
        Seq& s = seqs[i];
        if (step < s.join) continue;
        const int64_t done = s.cache->size();
        const int64_t prompt = static_cast<int64_t>(s.prompt.size());
        if (done < prompt) {  // a prefill chunk
          int64_t n = std::min(s.chunk, prompt - done);
          tokens[i].assign(s.prompt.begin() + done, s.prompt.begin() + done + n);
        } else {  // a decode token, made up
          int32_t next = static_cast<int32_t>((step * 97 + i * 13) % 1000);
          s.fed.push_back(next);
          tokens[i] = {next};
        }
        bool last = done + static_cast<int64_t>(tokens[i].size()) >= prompt;
        batch.push_back({s.cache.get(), tokens[i], last});
        if (last) asked.push_back(&s);
      }
      std::vector<float> logits;
      ASSERT_TRUE(model->ForwardBatch(batch, &logits).ok());
      ASSERT_EQ(logits.size(), asked.size() * vocab);
      for (size_t k = 0; k < asked.size(); ++k) {
        asked[k]->logits.emplace_back(logits.begin() + k * vocab, logits.begin() + (k + 1) * vocab);
      }
    }
    for (size_t i = 0; i < seqs.size(); ++i) {
      auto want = Alone(*model, seqs[i].prompt, seqs[i].fed);
      ASSERT_EQ(seqs[i].logits.size(), want.size()) << "sequence " << i;
      for (size_t t = 0; t < want.size(); ++t) {
        EXPECT_EQ(seqs[i].logits[t], want[t])
            << "sequence " << i << ", logits row " << t << ", " << threads << " threads";
      }
    }
  }
}

TEST(EngineForwardBatch, RefusesBadBatchesWithoutChangingAnyCache) {
  auto model = LoadFixture(1);
  ASSERT_NE(model, nullptr);
  auto pool = model->NewBlockPool(2);  // 32 positions
  KvCache a(pool, 100), b(pool, 100);
  std::vector<int32_t> p20 = Prompt(20, 1), p10 = Prompt(10, 2), bad = {5, 4000};
  std::vector<float> logits;
  // Together they need 3 blocks.
  std::vector<BatchSequence> batch = {{&a, p20, true}, {&b, p10, true}};
  Status s = model->ForwardBatch(batch, &logits);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.ToString();
  EXPECT_EQ(pool->free_blocks(), 2);
  EXPECT_EQ(a.size(), 0);
  batch = {{&a, p10, true}, {&b, bad, true}};
  s = model->ForwardBatch(batch, &logits);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("token id 4000"), std::string::npos) << s.message();
  batch = {{&a, p10, true}, {&a, p10, true}};
  EXPECT_EQ(model->ForwardBatch(batch, &logits).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(pool->free_blocks(), 2);
  batch = {{&a, p10, false}, {&b, p10, true}};
  ASSERT_TRUE(model->ForwardBatch(batch, &logits).ok());
  EXPECT_EQ(logits.size(), static_cast<size_t>(model->config().vocab_size));  // b's only
  EXPECT_EQ(pool->free_blocks(), 0);
}

}  // namespace
}  // namespace tf::testing
