// Continuous batching: many sequences share one Model and one paged KV cache and advance
// together, one forward step at a time (Model::ForwardBatch).
//
// Policy, per Step():
//  1. Admission, first come first served: the oldest waiting sequence is admitted while fewer
//     than max_batch run and the pool has the blocks for every token it has so far (its prompt;
//     after a preemption, its prompt and what it generated). A sequence that does not fit
//     waits, and so does everything behind it; nothing is ever truncated.
//  2. Every running sequence that is decoding gets its one token in the step, oldest first. A
//     token that starts a new block takes one from the pool; when the pool is empty, the most
//     recently admitted running sequence is preempted: its blocks are freed and it goes back to
//     the front of the queue, to be recomputed from its tokens when it is admitted again
//     (which gives the same tokens: see Model::ForwardBatch).
//  3. The rest of the step's token budget (step_tokens), and at least a quarter of it, goes to
//     prompts still being prefilled, in admission order, in chunks; a long prompt takes several
//     steps while the decoding sequences keep getting a token in each.
//  4. After the forward pass each sequence that reached its last token samples with its own
//     Sampler and streams text (SequenceGenerator, as Generate does). A sequence that ends
//     (end-of-sequence token, stop string, max tokens, cancel) frees its blocks at once.
//  5. Prefix caching (on unless options.prefix_caching is false): each block a sequence fills
//     is published in the pool (kv_cache.h), and a sequence being admitted adopts the published
//     blocks that hold the same tokens as its own first ones (every full block of them but the
//     one with its last token, whose logits it needs), starting its prefill after them. Since a
//     token's keys and values are bit-identical however the steps were batched (Model::
//     ForwardBatch), a sequence gets the same tokens and logits with the cache as without it.
//     Blocks no sequence holds stay cached until the pool needs them (least recently let go of
//     first), so they count as free for admission.
//
// Thread safety: none. One thread (the engine's) calls everything, and the callbacks run on it
// inside Step() or Cancel(); callbacks must not call back into the scheduler.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "base/status.h"
#include "engine/generate.h"
#include "engine/kv_cache.h"
#include "engine/model.h"
#include "engine/tokenizers/tokenizer.h"

namespace tf::engine {

// The most blocks a pool may have (2^24 blocks of 16 positions: far more than any batch needs).
inline constexpr int64_t kMaxKvCacheBlocks = int64_t{1} << 24;

struct BatchSchedulerOptions {
  int64_t kv_cache_blocks =
      0;                   // blocks of kKvBlockSize positions in the pool; 1 to kMaxKvCacheBlocks
  int64_t max_batch = 16;  // sequences running at once; > 0
  int64_t step_tokens = 256;   // tokens per step: decode tokens first, then prefill chunks; > 0
  bool prefix_caching = true;  // reuse the blocks of earlier sequences' identical prefixes
  // Seconds on a monotonic clock, for the timings in GenerateStats; null: std::steady_clock.
  std::function<double()> now;
};

struct SequenceRequest {
  std::vector<int32_t> prompt;
  GenerateOptions options;
  SamplingParams sampling;
  // Each token with the text it releases, then one last call with the rest, as Generate's
  // on_step; returning false cancels the sequence. May be null.
  std::function<bool(const GenerateStep&)> on_step;
  // Called once at the end with the result: finished (kStop, kLength), cancelled (kCancelled,
  // OK status), or failed (the error). May be null.
  std::function<void(const Status&, GenerateResult&&)> on_done;
};

// The prefix cache's work so far (counted when a sequence is first admitted).
struct PrefixCacheStats {
  int64_t sequences = 0;      // sequences admitted
  int64_t hits = 0;           // of them, those that adopted at least one cached block
  int64_t prompt_tokens = 0;  // their prompts' tokens
  int64_t cached_tokens = 0;  // of those, the tokens whose keys and values were adopted
  int64_t blocks_reused = 0;  // blocks adopted, re-admissions after a preemption included
  int64_t cached_blocks = 0;  // blocks published in the pool now
  int64_t evictions = 0;      // idle cached blocks taken for other use
};

// What one Step() did.
struct StepReport {
  int64_t sequences = 0;       // sequences in the forward pass
  int64_t decode_tokens = 0;   // sequences that got their next token's position computed
  int64_t prefill_tokens = 0;  // prompt (or recomputed) tokens run
  int64_t preempted = 0;       // sequences sent back to the queue to free blocks
  int64_t finished = 0;        // sequences that ended in this step
};

class BatchScheduler {
 public:
  using SequenceId = int64_t;

  // `model` (and `tokenizer`, which may be null: token ids only, no text and no stop strings)
  // must outlive the scheduler. InvalidArgument for options out of range; ResourceExhausted
  // when the KV cache's memory cannot be allocated.
  static Result<std::unique_ptr<BatchScheduler>> Create(Model& model, const Tokenizer* tokenizer,
                                                        BatchSchedulerOptions options);
  ~BatchScheduler();  // ends every sequence as cancelled

  // Queues a sequence; it joins the running batch at a coming Step(). InvalidArgument (and no
  // callback) for an empty prompt, an id outside the vocabulary, bad sampling parameters, a
  // prompt plus max_new_tokens beyond the model's context, or a sequence that needs more
  // blocks than the whole pool holds: such a request could never run.
  Result<SequenceId> Submit(SequenceRequest request);
  // Ends sequence `id` now (waiting or running), freeing its blocks; on_done sees kCancelled.
  // False when there is no such sequence (it has already ended).
  bool Cancel(SequenceId id);

  // Admits, runs one forward pass over the batch, samples. A step with nothing to run returns
  // a zero report. A failed forward pass (not expected: inputs are checked at Submit) ends the
  // sequences of that batch with the error.
  StepReport Step();

  int64_t running() const { return static_cast<int64_t>(running_.size()); }
  int64_t waiting() const { return static_cast<int64_t>(waiting_.size()); }
  bool idle() const { return running_.empty() && waiting_.empty(); }
  int64_t used_blocks() const { return pool_->used_blocks(); }
  PrefixCacheStats prefix_cache_stats() const;
  int64_t total_blocks() const { return pool_->num_blocks(); }
  // The longest sequence (prompt and generated tokens) this scheduler can run: the model's
  // context or the whole pool, whichever is smaller.
  int64_t max_sequence_positions() const;

 private:
  struct Sequence;
  BatchScheduler(Model& model, const Tokenizer* tokenizer, BatchSchedulerOptions options,
                 std::shared_ptr<KvBlockPool> pool);
  double Now() const;
  void Admit();
  // Adopts the cached blocks that hold `seq`'s first tokens; returns the positions they fill.
  int64_t AdoptCachedPrefix(Sequence& seq);
  // Publishes the blocks `seq` has filled since it last did.
  void PublishFilled(Sequence& seq);
  void Preempt(Sequence* seq);
  // Ends `seq` (running or waiting): frees its blocks, then reports to on_done: cancelled
  // (kCancelled, OK), failed (`status`), or finished (the held-back text released first).
  void End(Sequence* seq, const Status& status, bool cancel);

  Model& model_;
  const Tokenizer* tokenizer_;
  BatchSchedulerOptions options_;
  std::shared_ptr<KvBlockPool> pool_;
  SequenceId next_id_ = 1;
  std::deque<std::unique_ptr<Sequence>> waiting_;   // oldest (or preempted) first
  std::vector<std::unique_ptr<Sequence>> running_;  // in admission order
  std::vector<float> logits_;                       // [sequences with logits, vocab]
  PrefixCacheStats prefix_stats_;                   // cached_blocks, evictions: from the pool
};

// For benchmarks: one greedy sequence (end-of-sequence tokens do not stop it).
struct GreedyRequest {
  std::vector<int32_t> prompt;
  int64_t max_new_tokens = 16;
};

// Runs `requests` together through a BatchScheduler over `model` until every one has ended,
// and returns each one's stats, in request order: prompt and generated token counts,
// queue_seconds (waiting for blocks or a batch slot), prefill_seconds (from admission to the
// first token) and decode_seconds (from the first token to the last), all on options.now.
// Errors: Submit's, for the first request refused (nothing is run then).
//
//   BatchSchedulerOptions options;
//   options.kv_cache_blocks = (512 << 20) / model->KvBlockBytes();  // a 512 MiB cache
//   options.max_batch = 16;
//   std::vector<GreedyRequest> requests(16, GreedyRequest{prompt_ids, 128});
//   auto stats = RunGreedyBatch(*model, requests, options);
//   // total decode tokens/s: sum of (generated_tokens - 1) over the longest decode_seconds
Result<std::vector<GenerateStats>> RunGreedyBatch(Model& model,
                                                  std::span<const GreedyRequest> requests,
                                                  const BatchSchedulerOptions& options);

}  // namespace tf::engine
