// A Llama-family model from a GGUF file: its architecture from the metadata, its weights from
// the tensors (llama.cpp's names), each checked against the other.
//
// Architectures: "llama" (Llama 2 and 3, Mistral, whose GGUF files say llama) and "qwen2". The
// llama.cpp converter stores the q and k projections of "llama" files with the rows of each head
// reordered for its interleaved rotary layout; they are put back in the Hugging Face order here,
// so the forward pass is the same for both formats. Weight matrices stay in their type (F32, F16,
// BF16, Q8_0, Q4_0) and are used in place from the mapping (the reordered q and k as copies);
// norms and biases become float32.
#pragma once

#include <memory>

#include "base/status.h"
#include "engine/config.h"
#include "engine/formats/gguf.h"
#include "engine/weights.h"

namespace tf::engine {

// The ModelConfig that the metadata describes: general.architecture, <arch>.context_length,
// embedding_length, block_count, feed_forward_length, attention.head_count(_kv),
// attention.key_length, attention.layer_norm_rms_epsilon, rope.freq_base, rope.scaling.*; the
// vocabulary size from the embedding tensor; tied embeddings when output.weight is absent;
// biases when the tensors are there (always for qwen2); Llama 3 rope scaling from the
// rope_freqs tensor; BOS and EOS (and EOT) ids from tokenizer.ggml.*. Errors are InvalidArgument
// naming the file and the key.
Result<ModelConfig> GgufModelConfig(const GgufFile& file);

// Every tensor `config` implies, by its GGUF name, with its shape checked ("...: tensor
// 'blk.0.attn_k.weight' has shape [32, 64] but the metadata implies [64, 64]").
Result<ModelWeights> LoadGgufWeights(const std::shared_ptr<const GgufFile>& file,
                                     const ModelConfig& config);

// Undoes the converter's rotary reordering of a "llama" q or k projection: within each of the
// n_heads heads of head_dim rows, GGUF row 2i + j holds Hugging Face row j * head_dim / 2 + i.
// Rows are row_bytes each (any encoding, quantised included); src and dst do not overlap.
void UnpermuteRotaryRows(const uint8_t* src, size_t row_bytes, int64_t n_heads, int64_t head_dim,
                         uint8_t* dst);

}  // namespace tf::engine
