// nn/transformer.h — the pieces of a pre-norm decoder-only Transformer language model.
//
// B = batch, T = time (tokens), C = d_model, H = heads, D = C / H (head dim), V = vocab.
//
//   ids (B, T) int64
//    -> tok_emb                                  x (B, T, C)
//    -> blocks[0 .. n_layers):   x = x + attn(attn_norm(x))        (pre-norm: normalise the
//                                x = x + ffn(ffn_norm(x))           input of each branch,
//    -> norm -> head                             logits (B, T, V)   never the residual)
//
// x is the "residual stream": every block reads it through a norm and ADDS its result
// back, so the gradient of the loss reaches every block directly through the additions.
// In each block, the first add (x + attn(...)) and the ffn_norm after it are one fused op:
// ffn_norm.add_forward(x, attn(...)) (nn/norm.h, on add_rms_norm of ops/rms_norm.h).
//
// State dict names (PyTorch-style, so weights pass to and from a PyTorch twin):
//   tok_emb.weight (V, C)
//   blocks.<i>.attn_norm.weight (C)   blocks.<i>.attn.qkv.weight (3C, C)
//   blocks.<i>.attn.proj.weight (C, C)
//   blocks.<i>.ffn_norm.weight (C)    blocks.<i>.ffn.w1.weight (F, C)   ...w3.weight (F, C)
//   blocks.<i>.ffn.w2.weight (C, F)
//   norm.weight (C)                   head.weight (V, C)
// No biases anywhere, untied embedding and head, as in ../shared/bench's tiny LM.
#pragma once

#include <string>
#include <vector>

#include "nn/embedding.h"
#include "nn/linear.h"
#include "nn/norm.h"

namespace tg::nn {

/// The shape of a TransformerLM. Stored in checkpoints (to_json / from_json).
struct TransformerConfig {
  int64_t vocab_size = 128;
  int64_t context_length = 128;  ///< the longest sequence forward accepts
  int64_t d_model = 128;
  int64_t n_layers = 4;
  int64_t n_heads = 4;
  int64_t d_ff = 384;  ///< hidden width of the SwiGLU feed-forward
  double norm_eps = 1e-5;
  bool rope = false;  ///< rotary position embedding on q and k (else: no positions at all)
  double rope_theta = 10000.0;
  /// Key/value heads (grouped-query attention): each serves n_heads / n_kv_heads query heads.
  /// 0 means n_heads (plain multi-head attention); 1 is multi-query attention.
  int64_t n_kv_heads = 0;
  int64_t kv_heads() const { return n_kv_heads == 0 ? n_heads : n_kv_heads; }

  /// The largest model a config may describe: 2^28 parameters, 1 GiB of float32 (4 GiB
  /// with gradients and AdamW's two moments). A checkpoint's config is checked against it
  /// before anything is allocated.
  static constexpr int64_t kMaxParameters = int64_t{1} << 28;
  /// The parameters TransformerLM(*this) has, computed without building it (INT64_MAX
  /// when the count overflows).
  int64_t num_parameters() const;
  /// ValueError naming the first field that makes no sense (e.g. d_model % n_heads != 0),
  /// or the sizes when the model would exceed kMaxParameters.
  void validate() const;
  /// One JSON object with every field, for checkpoint metadata.
  std::string to_json() const;
  /// The inverse of to_json; ValueError for malformed text or a missing field.
  static TransformerConfig from_json(const std::string& text);
};

/// What generation keeps from one step to the next: each layer's keys and values for every
/// position seen so far (a KV cache). With it, a new position computes only its own q, k and
/// v and attends to the cached rest: a step costs O(T) instead of re-running the whole
/// context (O(T^2) for the attention, O(T) for everything else, every step).
///
/// Per layer, k and v are (B, Hkv, capacity, D) tensors of `dtype`, filled up to length(),
/// with Hkv the model's kv heads (n_heads, or fewer under grouped-query attention);
/// bytes() = 2 * n_layers * B * Hkv * capacity * D * sizeof(dtype). Used only without
/// gradients (tg::NoGradGuard): the cache is written in place, off the tape.
class KVCache {
 public:
  /// A cache for `batch` sequences of up to `capacity` positions (0: the context length;
  /// more is a ValueError, as forward refuses more tokens than the context).
  KVCache(const TransformerConfig& config, int64_t batch, int64_t capacity = 0,
          DType dtype = kFloat32);
  int64_t length() const { return length_; }  ///< positions stored
  int64_t capacity() const { return capacity_; }
  int64_t batch() const { return batch_; }
  size_t bytes() const;
  /// Forgets every position (the memory stays).
  void clear() { length_ = 0; }

  struct Layer {
    Tensor k, v;  ///< (B, Hkv, capacity, D)
  };
  std::vector<Layer> layers;  ///< one per block

 private:
  friend class TransformerLM;
  int64_t batch_, capacity_, length_ = 0;
};

/// Multi-head causal self-attention with a fused q/k/v projection and optional RoPE.
/// x (B, T, C) -> (B, T, C). PyTorch twin: the attention half of the reference Block.
/// With n_kv_heads < n_heads (grouped-query attention) the projection makes n_kv_heads key
/// and value heads of D = C / n_heads each: qkv is C -> C + 2 n_kv_heads D.
class CausalSelfAttention : public UnaryModule {
 public:
  CausalSelfAttention(int64_t d_model, int64_t n_heads, bool rope = false,
                      double rope_theta = 10000.0, Generator& gen = default_generator(),
                      int64_t n_kv_heads = 0);
  Tensor forward(const Tensor& x) override;
  /// x (B, T, C) holds positions start .. start + T - 1: their k and v are written into the
  /// cache layer at those positions, and each query attends to the cached keys 0 .. its own
  /// position. RoPE rotates by the true positions.
  Tensor forward(const Tensor& x, KVCache::Layer& cache, int64_t start);
  std::string extra_repr() const override;

  const int64_t n_heads;
  const int64_t n_kv_heads;  ///< n_heads unless grouped-query attention
  const bool use_rope;
  const double rope_theta;
  Linear qkv;   ///< C -> 3C (C + 2 n_kv_heads D): q, k and v for every head in one matmul
  Linear proj;  ///< C -> C: mixes the heads' outputs back into the residual stream

 private:
  struct Heads {
    Tensor q, k, v;  ///< (B, H, T, D), (B, Hkv, T, D), (B, Hkv, T, D)
  };
  /// q, k and v of x (B, T, C), whose tokens sit at positions start .. start + T - 1 (the
  /// positions RoPE rotates by), split into heads: what both forwards start from.
  Heads project(const Tensor& x, int64_t start);
};

/// The SwiGLU feed-forward: w2(silu(w1 x) * w3 x), with w1, w3: C -> F and w2: F -> C.
class SwiGLUFeedForward : public UnaryModule {
 public:
  SwiGLUFeedForward(int64_t d_model, int64_t d_ff, Generator& gen = default_generator());
  Tensor forward(const Tensor& x) override;

  Linear w1;  ///< the gate (through silu)
  Linear w3;  ///< the value it multiplies
  Linear w2;  ///< back down to d_model
};

/// One pre-norm block: x + attn(attn_norm(x)), then + ffn(ffn_norm(.)).
class TransformerBlock : public UnaryModule {
 public:
  explicit TransformerBlock(const TransformerConfig& config, Generator& gen = default_generator());
  Tensor forward(const Tensor& x) override;
  /// The same with the attention reading and extending a KV cache (CausalSelfAttention).
  Tensor forward(const Tensor& x, KVCache::Layer& cache, int64_t start);

  RMSNorm attn_norm;
  CausalSelfAttention attn;
  RMSNorm ffn_norm;
  SwiGLUFeedForward ffn;
};

/// The whole language model: ids (B, T) int64 -> logits (B, T, V) for the next token.
class TransformerLM : public Module {
 public:
  explicit TransformerLM(const TransformerConfig& config, Generator& gen = default_generator());
  /// ids (B, T) or (T) int64 with T <= context_length -> logits (..., T, V).
  Tensor forward(const Tensor& ids);
  Tensor operator()(const Tensor& ids) { return forward(ids); }
  /// Generation with a KV cache: ids (B, T) or (T) are the next T tokens after the
  /// cache.length() it holds; returns their logits (..., T, V), equal to what forward gives
  /// for those positions on the whole sequence, and extends the cache by T. MisuseError
  /// with gradients on; ValueError if the tokens do not fit the cache or its batch differs.
  Tensor forward(const Tensor& ids, KVCache& cache);
  Tensor operator()(const Tensor& ids, KVCache& cache) { return forward(ids, cache); }

  /// Activation checkpointing of every block (nn/recompute.h): a block keeps only its input
  /// for the backward and runs again to get the rest.
  void set_recompute_blocks(bool on) {
    for (const auto& block : blocks) block->set_recompute(on);
  }

  const TransformerConfig config;
  Embedding tok_emb;
  ModuleList<TransformerBlock> blocks;
  RMSNorm norm;
  Linear head;
};

}  // namespace tg::nn
