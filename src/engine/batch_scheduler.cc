#include "engine/batch_scheduler.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <span>

namespace tf::engine {

struct BatchScheduler::Sequence {
  Sequence(SequenceId id, SequenceRequest req, const Tokenizer* tokenizer,
           const ModelConfig& config)
      : id(id),
        request(std::move(req)),
        gen(tokenizer, config, request.prompt, request.options, request.sampling),
        tokens(request.prompt) {}

  SequenceId id;
  SequenceRequest request;
  SequenceGenerator gen;
  std::vector<int32_t> tokens;     // the prompt, then every token generated so far
  int64_t capacity = 0;            // positions it may reach: prompt + max_new_tokens
  std::unique_ptr<KvCache> cache;  // null while waiting
  bool started = false;            // admitted at least once
  // Prefix caching: the blocks of its table published (or adopted) so far, in order, and the
  // serial that names the last of them (0: none yet).
  int64_t published_blocks = 0;
  uint64_t chain_serial = 0;
  double submitted_at = 0, admitted_at = 0, first_token_at = 0;

  // Tokens not yet in the cache: the whole prompt at first, then the last token chosen.
  int64_t pending() const { return static_cast<int64_t>(tokens.size()) - cache->size(); }
};

Result<std::unique_ptr<BatchScheduler>> BatchScheduler::Create(Model& model,
                                                               const Tokenizer* tokenizer,
                                                               BatchSchedulerOptions options) {
  if (options.kv_cache_blocks <= 0 || options.kv_cache_blocks > kMaxKvCacheBlocks) {
    return InvalidArgument("the KV cache must have 1 to " + std::to_string(kMaxKvCacheBlocks) +
                           " blocks, not " + std::to_string(options.kv_cache_blocks));
  }
  if (options.max_batch <= 0) {
    return InvalidArgument("max_batch must be positive, not " + std::to_string(options.max_batch));
  }
  if (options.step_tokens <= 0) {
    return InvalidArgument("step_tokens must be positive, not " +
                           std::to_string(options.step_tokens));
  }
  auto pool = model.NewBlockPool(options.kv_cache_blocks);
  if (!pool->allocated()) {
    return ResourceExhausted("could not allocate a KV cache of " +
                             std::to_string(options.kv_cache_blocks) + " blocks (" +
                             std::to_string(options.kv_cache_blocks * model.KvBlockBytes() >> 20) +
                             " MiB)");
  }
  return std::unique_ptr<BatchScheduler>(
      new BatchScheduler(model, tokenizer, std::move(options), std::move(pool)));
}

BatchScheduler::BatchScheduler(Model& model, const Tokenizer* tokenizer,
                               BatchSchedulerOptions options, std::shared_ptr<KvBlockPool> pool)
    : model_(model), tokenizer_(tokenizer), options_(std::move(options)), pool_(std::move(pool)) {}

BatchScheduler::~BatchScheduler() {
  while (!running_.empty()) End(running_.back().get(), OkStatus(), /*cancel=*/true);
  while (!waiting_.empty()) End(waiting_.back().get(), OkStatus(), /*cancel=*/true);
}

double BatchScheduler::Now() const {
  if (options_.now) return options_.now();
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int64_t BatchScheduler::max_sequence_positions() const {
  return std::min(model_.config().MaxContext(), pool_->num_blocks() * pool_->block_size());
}

Result<BatchScheduler::SequenceId> BatchScheduler::Submit(SequenceRequest request) {
  const ModelConfig& c = model_.config();
  if (request.prompt.empty()) return InvalidArgument("the prompt has no tokens");
  for (int32_t id : request.prompt) {
    if (id < 0 || id >= c.vocab_size) {
      return InvalidArgument("token id " + std::to_string(id) + " is outside the vocabulary (" +
                             std::to_string(c.vocab_size) + ")");
    }
  }
  TF_RETURN_IF_ERROR(request.sampling.Validate());
  const int64_t prompt = static_cast<int64_t>(request.prompt.size());
  const int64_t positions = prompt + std::max<int64_t>(0, request.options.max_new_tokens);
  if (positions > c.MaxContext()) {
    return InvalidArgument("the prompt's " + std::to_string(prompt) + " tokens and " +
                           std::to_string(request.options.max_new_tokens) +
                           " new ones exceed the model's context of " +
                           std::to_string(c.MaxContext()));
  }
  const int64_t bs = pool_->block_size();
  if ((positions + bs - 1) / bs > pool_->num_blocks()) {
    return InvalidArgument("the prompt's " + std::to_string(prompt) + " tokens and " +
                           std::to_string(request.options.max_new_tokens) + " new ones need " +
                           std::to_string(positions) + " positions, but the whole KV cache holds " +
                           std::to_string(pool_->num_blocks() * bs));
  }
  auto seq = std::make_unique<Sequence>(next_id_++, std::move(request), tokenizer_, c);
  seq->capacity = positions;
  seq->submitted_at = Now();
  SequenceId id = seq->id;
  waiting_.push_back(std::move(seq));
  return id;
}

bool BatchScheduler::Cancel(SequenceId id) {
  auto match = [id](const std::unique_ptr<Sequence>& s) { return s->id == id; };
  if (auto it = std::find_if(running_.begin(), running_.end(), match); it != running_.end()) {
    End(it->get(), OkStatus(), /*cancel=*/true);
    return true;
  }
  if (auto it = std::find_if(waiting_.begin(), waiting_.end(), match); it != waiting_.end()) {
    End(it->get(), OkStatus(), /*cancel=*/true);
    return true;
  }
  return false;
}

void BatchScheduler::End(Sequence* seq, const Status& status, bool cancel) {
  GenerateResult result;
  if (cancel) {
    result = std::move(seq->gen.result());
    result.finish = FinishReason::kCancelled;
  } else {
    if (status.ok()) seq->gen.Finish(seq->request.on_step);
    result = std::move(seq->gen.result());
  }
  const double now = Now();
  if (seq->started) {
    GenerateStats& s = result.stats;
    if (result.stats.generated_tokens > 0) {
      s.prefill_seconds = seq->first_token_at - seq->admitted_at;
      s.decode_seconds = now - seq->first_token_at;
    } else {
      s.prefill_seconds = now - seq->admitted_at;
    }
  }
  std::unique_ptr<Sequence> owned;  // the sequence lives until its callback returns
  auto match = [seq](const std::unique_ptr<Sequence>& s) { return s.get() == seq; };
  if (auto it = std::find_if(running_.begin(), running_.end(), match); it != running_.end()) {
    owned = std::move(*it);
    running_.erase(it);
  } else if (auto w = std::find_if(waiting_.begin(), waiting_.end(), match); w != waiting_.end()) {
    owned = std::move(*w);
    waiting_.erase(w);
  }
  if (owned->cache) owned->cache->Release();  // the blocks are free before anyone hears of it
  if (owned->request.on_done) owned->request.on_done(status, std::move(result));
}

PrefixCacheStats BatchScheduler::prefix_cache_stats() const {
  PrefixCacheStats stats = prefix_stats_;
  stats.cached_blocks = pool_->cached_blocks();
  stats.evictions = pool_->evictions();
  return stats;
}

int64_t BatchScheduler::AdoptCachedPrefix(Sequence& seq) {
  const int64_t bs = pool_->block_size();
  // The block with the last token is always computed: its logits choose the next token.
  const int64_t full = (static_cast<int64_t>(seq.tokens.size()) - 1) / bs;
  uint64_t parent = 0;
  int64_t n = 0;
  for (; n < full; ++n) {
    std::span<const int32_t> tokens(seq.tokens.data() + n * bs, static_cast<size_t>(bs));
    std::optional<KvBlockPool::CachedBlock> block = pool_->AcquireCached(parent, tokens);
    if (!block) break;
    seq.cache->AdoptCached(block->index);
    parent = block->serial;
  }
  seq.published_blocks = n;
  seq.chain_serial = parent;
  prefix_stats_.blocks_reused += n;
  return n * bs;
}

void BatchScheduler::PublishFilled(Sequence& seq) {
  const int64_t bs = pool_->block_size();
  const int64_t filled = seq.cache->size() / bs;
  for (; seq.published_blocks < filled; ++seq.published_blocks) {
    const int64_t b = seq.published_blocks;
    std::span<const int32_t> tokens(seq.tokens.data() + b * bs, static_cast<size_t>(bs));
    seq.chain_serial = pool_->Publish(seq.cache->block_table()[b], seq.chain_serial, tokens);
  }
}

void BatchScheduler::Preempt(Sequence* seq) {
  auto it = std::find_if(running_.begin(), running_.end(),
                         [seq](const std::unique_ptr<Sequence>& s) { return s.get() == seq; });
  seq->cache->Release();
  seq->published_blocks = 0;
  seq->chain_serial = 0;
  waiting_.push_front(std::move(*it));
  running_.erase(it);
}

void BatchScheduler::Admit() {
  while (!waiting_.empty() && static_cast<int64_t>(running_.size()) < options_.max_batch) {
    Sequence& seq = *waiting_.front();
    if (!seq.cache) seq.cache = std::make_unique<KvCache>(pool_, seq.capacity);
    // Its tokens' blocks, leaving one spare for each running sequence's next block, so that
    // admitting it does not at once force a preemption (unless nothing runs).
    const int64_t positions = static_cast<int64_t>(seq.tokens.size());
    const int64_t spare = static_cast<int64_t>(running_.size());
    const int64_t adopted = options_.prefix_caching ? AdoptCachedPrefix(seq) : 0;
    if (seq.cache->BlocksToReserve(positions) + spare > pool_->free_blocks() ||
        !seq.cache->Reserve(positions).ok()) {
      // It waits for blocks, and so does the rest; what it adopted stays cached meanwhile.
      seq.cache->Release();
      seq.published_blocks = 0;
      seq.chain_serial = 0;
      prefix_stats_.blocks_reused -= adopted / pool_->block_size();
      break;
    }
    if (!seq.started) {
      seq.started = true;
      seq.admitted_at = Now();
      GenerateStats& stats = seq.gen.result().stats;
      stats.queue_seconds = seq.admitted_at - seq.submitted_at;
      stats.cached_prompt_tokens = adopted;
      ++prefix_stats_.sequences;
      prefix_stats_.hits += adopted > 0 ? 1 : 0;
      prefix_stats_.prompt_tokens += positions;
      prefix_stats_.cached_tokens += adopted;
    }
    running_.push_back(std::move(waiting_.front()));
    waiting_.pop_front();
  }
}

StepReport BatchScheduler::Step() {
  StepReport report;
  Admit();
  if (running_.empty()) return report;

  // Decoding sequences first, oldest first, each taking a block when it starts a new one.
  std::vector<Sequence*> batch;
  for (size_t i = 0; i < running_.size(); ++i) {
    Sequence* seq = running_[i].get();
    if (seq->pending() != 1 || seq->cache->size() == 0) continue;
    const int64_t next = seq->cache->size() + 1;
    bool preempted_self = false;
    while (!seq->cache->Reserve(next).ok()) {
      Sequence* victim = running_.back().get();  // the most recently admitted
      Preempt(victim);
      ++report.preempted;
      if (victim == seq) {
        preempted_self = true;
        break;
      }
    }
    if (!preempted_self) batch.push_back(seq);
  }
  report.decode_tokens = static_cast<int64_t>(batch.size());
  // Then prompts, in chunks, as far as the step's budget goes; at least a quarter of it, so
  // that prompts progress even when as many sequences decode as the budget has tokens.
  int64_t budget =
      std::max(options_.step_tokens - report.decode_tokens, (options_.step_tokens + 3) / 4);
  std::vector<int64_t> chunk(batch.size(), 1);
  for (auto& owned : running_) {
    Sequence* seq = owned.get();
    if (budget <= 0) break;
    if (std::find(batch.begin(), batch.end(), seq) != batch.end()) continue;
    const int64_t n = std::min(seq->pending(), budget);
    batch.push_back(seq);
    chunk.push_back(n);
    budget -= n;
    report.prefill_tokens += n;
  }
  if (batch.empty()) return report;

  std::vector<BatchSequence> items;
  for (size_t i = 0; i < batch.size(); ++i) {
    Sequence* seq = batch[i];
    const int32_t* from = seq->tokens.data() + seq->cache->size();
    items.push_back(
        {seq->cache.get(), {from, static_cast<size_t>(chunk[i])}, chunk[i] == seq->pending()});
  }
  report.sequences = static_cast<int64_t>(items.size());
  Status s = model_.ForwardBatch(items, &logits_);
  if (!s.ok()) {
    for (Sequence* seq : batch) End(seq, s, /*cancel=*/false);
    report.finished = report.sequences;
    return report;
  }
  if (options_.prefix_caching) {
    for (Sequence* seq : batch) PublishFilled(*seq);
  }
  const int64_t vocab = model_.config().vocab_size;
  int64_t row = 0;
  const double now = Now();
  for (size_t i = 0; i < batch.size(); ++i) {
    if (!items[i].want_logits) continue;
    Sequence* seq = batch[i];
    std::span<float> logits(logits_.data() + row * vocab, vocab);
    ++row;
    if (seq->gen.result().stats.generated_tokens == 0) seq->first_token_at = now;
    bool more = seq->gen.Add(logits, seq->request.on_step);
    if (more && seq->cache->size() < seq->cache->capacity()) {
      seq->tokens.push_back(seq->gen.result().tokens.back());
      continue;
    }
    End(seq, OkStatus(), /*cancel=*/false);
    ++report.finished;
  }
  return report;
}

Result<std::vector<GenerateStats>> RunGreedyBatch(Model& model,
                                                  std::span<const GreedyRequest> requests,
                                                  const BatchSchedulerOptions& options) {
  // Declared before the scheduler, whose callbacks write them (also as it goes away).
  std::vector<GenerateStats> stats(requests.size());
  std::vector<Status> errors(requests.size());
  TF_ASSIGN_OR_RETURN(auto scheduler, BatchScheduler::Create(model, nullptr, options));
  for (size_t i = 0; i < requests.size(); ++i) {
    SequenceRequest r;
    r.prompt = requests[i].prompt;
    r.options.max_new_tokens = requests[i].max_new_tokens;
    r.options.stop_at_eos = false;
    r.sampling.temperature = 0;
    r.on_done = [&stats, &errors, i](const Status& s, GenerateResult&& result) {
      errors[i] = s;
      stats[i] = result.stats;
    };
    auto id = scheduler->Submit(std::move(r));
    if (!id.ok()) {
      return Status(id.status().code(),
                    "request " + std::to_string(i) + ": " + std::string(id.status().message()));
    }
  }
  while (!scheduler->idle()) scheduler->Step();
  for (const Status& s : errors) TF_RETURN_IF_ERROR(s);
  return stats;
}

}  // namespace tf::engine
