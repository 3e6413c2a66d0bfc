// nn/transformer.cpp — see transformer.h. Every line of forward is an op with its own
// hand-written backward; the modules only wire them together, so they need no backward.
#include "nn/transformer.h"

#include <nlohmann/json.hpp>

namespace tg::nn {

// ---------------------------------------------------------------- config
int64_t TransformerConfig::num_parameters() const {
  // tok_emb (V x C) and head (C x V); per block two RMSNorm weights (C each), qkv (C x 3C),
  // proj (C x C) and the SwiGLU's w1, w3 (C x F) and w2 (F x C); the final norm (C).
  int64_t total = 0;
  auto add = [&](std::initializer_list<int64_t> factors, int64_t times = 1) {
    int64_t p = times;
    for (int64_t f : factors) {
      if (__builtin_mul_overflow(p, f, &p)) p = INT64_MAX;
    }
    if (__builtin_add_overflow(total, p, &total)) total = INT64_MAX;
  };
  add({vocab_size, d_model}, 2);
  add({n_layers, d_model}, 2);
  // qkv makes q (C) and Hkv key and value heads of D = C / H: C + 2 Hkv D outputs; proj C.
  const int64_t kv_width = n_heads > 0 ? kv_heads() * (d_model / n_heads) : d_model;
  add({n_layers, d_model, d_model}, 2);
  add({n_layers, d_model, kv_width}, 2);
  add({n_layers, d_model, d_ff}, 3);
  add({d_model});
  return total;
}

void TransformerConfig::validate() const {
  auto positive = [](const char* name, int64_t v) {
    TG_CHECK(v > 0, ValueError, "TransformerConfig: {} must be > 0, got {}", name, v);
  };
  positive("vocab_size", vocab_size);
  positive("context_length", context_length);
  positive("d_model", d_model);
  positive("n_layers", n_layers);
  positive("n_heads", n_heads);
  positive("d_ff", d_ff);
  TG_CHECK(d_model % n_heads == 0, ValueError,
           "TransformerConfig: d_model {} is not divisible by n_heads {}", d_model, n_heads);
  TG_CHECK(n_kv_heads >= 0 && n_heads % kv_heads() == 0, ValueError,
           "TransformerConfig: n_kv_heads {} must divide n_heads {} (0: as many as n_heads)",
           n_kv_heads, n_heads);
  TG_CHECK(!rope || (d_model / n_heads) % 2 == 0, ValueError,
           "TransformerConfig: rope needs an even head dim, got d_model / n_heads = {}",
           d_model / n_heads);
  TG_CHECK(norm_eps > 0, ValueError, "TransformerConfig: norm_eps must be > 0, got {}", norm_eps);
  TG_CHECK(rope_theta > 0, ValueError, "TransformerConfig: rope_theta must be > 0, got {}",
           rope_theta);
  // Each size below 2^24 first, so that the products of num_parameters cannot overflow.
  constexpr int64_t kMaxSize = int64_t{1} << 24;
  for (const auto& [name, v] : {std::pair{"vocab_size", vocab_size},
                                {"context_length", context_length},
                                {"d_model", d_model},
                                {"n_layers", n_layers},
                                {"d_ff", d_ff}}) {
    TG_CHECK(v <= kMaxSize, ValueError, "TransformerConfig: {} {} is more than 2^24", name, v);
  }
  const int64_t n = num_parameters();
  TG_CHECK(n <= kMaxParameters, ValueError,
           "TransformerConfig: vocab_size {}, d_model {}, n_layers {} and d_ff {} make a model of "
           "{:.3g} parameters ({:.3g} GiB of float32); the limit is 2^28",
           vocab_size, d_model, n_layers, d_ff, static_cast<double>(n),
           static_cast<double>(n) * 4 / (1 << 30));
}

std::string TransformerConfig::to_json() const {
  return nlohmann::json{{"vocab_size", vocab_size}, {"context_length", context_length},
                        {"d_model", d_model},       {"n_layers", n_layers},
                        {"n_heads", n_heads},       {"d_ff", d_ff},
                        {"norm_eps", norm_eps},     {"rope", rope},
                        {"rope_theta", rope_theta}, {"n_kv_heads", n_kv_heads}}
      .dump();
}

TransformerConfig TransformerConfig::from_json(const std::string& text) {
  TransformerConfig c;
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    c.vocab_size = j.at("vocab_size").get<int64_t>();
    c.context_length = j.at("context_length").get<int64_t>();
    c.d_model = j.at("d_model").get<int64_t>();
    c.n_layers = j.at("n_layers").get<int64_t>();
    c.n_heads = j.at("n_heads").get<int64_t>();
    c.d_ff = j.at("d_ff").get<int64_t>();
    c.norm_eps = j.at("norm_eps").get<double>();
    c.rope = j.at("rope").get<bool>();
    c.rope_theta = j.at("rope_theta").get<double>();
    // Checkpoints from before grouped-query attention have no n_kv_heads: as many as n_heads.
    c.n_kv_heads = j.contains("n_kv_heads") ? j.at("n_kv_heads").get<int64_t>() : 0;
  } catch (const nlohmann::json::exception& e) {
    TG_CHECK(false, ValueError, "TransformerConfig::from_json: {} in '{}'", e.what(), text);
  }
  c.validate();
  return c;
}

// ---------------------------------------------------------------- attention
CausalSelfAttention::CausalSelfAttention(int64_t d_model, int64_t n_heads_, bool rope, double theta,
                                         Generator& gen, int64_t n_kv_heads_)
    : UnaryModule("CausalSelfAttention"),
      n_heads(n_heads_),
      n_kv_heads(n_kv_heads_ == 0 ? n_heads_ : n_kv_heads_),
      use_rope(rope),
      rope_theta(theta),
      qkv(d_model,
          d_model + 2 * std::max<int64_t>(n_kv_heads, 1) *
                        (n_heads > 0 && d_model % n_heads == 0 ? d_model / n_heads : 1),
          {.bias = false}, gen),
      proj(d_model, d_model, {.bias = false}, gen) {
  TG_CHECK(n_heads > 0 && d_model % n_heads == 0, ValueError,
           "CausalSelfAttention: d_model {} is not divisible by n_heads {}", d_model, n_heads);
  TG_CHECK(n_kv_heads > 0 && n_heads % n_kv_heads == 0, ValueError,
           "CausalSelfAttention: n_kv_heads {} does not divide n_heads {}", n_kv_heads, n_heads);
  register_module("qkv", qkv);
  register_module("proj", proj);
}

CausalSelfAttention::Heads CausalSelfAttention::project(const Tensor& x, int64_t start) {
  TG_CHECK(x.dim() == 3 && x.size(2) == qkv.in_features, ShapeError,
           "CausalSelfAttention: expected x (B, T, {}), got {}", qkv.in_features, x.shape());
  const int64_t B = x.size(0), T = x.size(1), C = x.size(2), D = C / n_heads;
  // One matmul gives q, k and v side by side: (B, T, 3C). Each C-wide third splits into
  // H heads of D channels, and the heads move in front of time: (B, T, H, D) -> (B, H, T, D),
  // so that attention runs on every (batch, head) pair independently.
  // split (ops/join.h) rather than three narrows: the pieces are the same views, but split's
  // backward writes dq, dk and dv side by side into one (B, T, 3C) gradient, where three
  // narrows would each pad theirs with zeros to (B, T, 3C) and the engine would add the three.
  // Under grouped-query attention k and v are narrower: n_kv_heads heads of D channels each.
  const std::vector<Tensor> parts = split(qkv(x), {C, n_kv_heads * D, n_kv_heads * D}, 2);
  auto heads = [&](const Tensor& part, int64_t h) {
    return part.reshape({B, T, h, D}).transpose(1, 2);
  };
  Heads out{heads(parts[0], n_heads), heads(parts[1], n_kv_heads), heads(parts[2], n_kv_heads)};
  if (use_rope) {  // the true positions: rotations depend on them, not on the slot in x
    const Tensor positions =
        arange(static_cast<double>(start), static_cast<double>(start + T), 1.0, kInt64);
    out.q = rope(out.q, positions, rope_theta);
    out.k = rope(out.k, positions, rope_theta);
  }
  return out;
}

Tensor CausalSelfAttention::forward(const Tensor& x) {
  const auto [q, k, v] = project(x, 0);
  const int64_t B = x.size(0), T = x.size(1), C = x.size(2);
  const Tensor out = scaled_dot_product_attention(q, k, v, Tensor(), /*causal=*/true, std::nullopt,
                                                  /*enable_gqa=*/true);
  // Back to (B, T, H, D) and the heads side by side again: (B, T, C).
  return proj(out.transpose(1, 2).reshape({B, T, C}));
}

Tensor CausalSelfAttention::forward(const Tensor& x, KVCache::Layer& cache, int64_t start) {
  const auto [q, k, v] = project(x, start);
  const int64_t B = x.size(0), T = x.size(1), C = x.size(2);
  // The new keys and values join the cache; the queries see every cached position up to
  // their own. One new position sees all of them (no mask); a prompt on an empty cache is
  // plain causal; a chunk after cached positions needs query i to see keys j <= start + i,
  // the causal rule shifted by `start` (the op's causal rule is aligned top-left).
  // exercise kv_cache.attend: begin
  cache.k.narrow(2, start, T).copy_(k);
  cache.v.narrow(2, start, T).copy_(v);
  const int64_t L = start + T;
  const Tensor keys = cache.k.narrow(2, 0, L), values = cache.v.narrow(2, 0, L);
  Tensor mask;
  if (T > 1 && start > 0) {
    mask = empty({T, L}, kBool);
    bool* keep = mask.data<bool>();
    for (int64_t i = 0; i < T; ++i)
      for (int64_t j = 0; j < L; ++j) keep[i * L + j] = j <= start + i;
  }
  const Tensor out =
      scaled_dot_product_attention(q, keys, values, mask, T > 1 && start == 0, std::nullopt, true);
  const Tensor merged = out.transpose(1, 2).reshape({B, T, C});  // (B, T, H, D) -> (B, T, C)
  return proj(merged);
  // exercise kv_cache.attend: end
}

std::string CausalSelfAttention::extra_repr() const {
  if (n_kv_heads != n_heads) {
    return fmt::format("n_heads={}, n_kv_heads={}, rope={}", n_heads, n_kv_heads,
                       use_rope ? "True" : "False");
  }
  return fmt::format("n_heads={}, rope={}", n_heads, use_rope ? "True" : "False");
}

// ---------------------------------------------------------------- feed-forward
SwiGLUFeedForward::SwiGLUFeedForward(int64_t d_model, int64_t d_ff, Generator& gen)
    : UnaryModule("SwiGLUFeedForward"),
      w1(d_model, d_ff, {.bias = false}, gen),
      w3(d_model, d_ff, {.bias = false}, gen),
      w2(d_ff, d_model, {.bias = false}, gen) {
  register_module("w1", w1);
  register_module("w3", w3);
  register_module("w2", w2);
}

Tensor SwiGLUFeedForward::forward(const Tensor& x) {
  // exercise transformer.forward: begin
  return w2(swiglu(w1(x), w3(x)));  // w2(silu(w1 x) * w3 x)
  // exercise transformer.forward: end
}

// ---------------------------------------------------------------- block
TransformerBlock::TransformerBlock(const TransformerConfig& c, Generator& gen)
    : UnaryModule("TransformerBlock"),
      attn_norm(c.d_model, {.eps = c.norm_eps}),
      attn(c.d_model, c.n_heads, c.rope, c.rope_theta, gen, c.kv_heads()),
      ffn_norm(c.d_model, {.eps = c.norm_eps}),
      ffn(c.d_model, c.d_ff, gen) {
  register_module("attn_norm", attn_norm);
  register_module("attn", attn);
  register_module("ffn_norm", ffn_norm);
  register_module("ffn", ffn);
}

Tensor TransformerBlock::forward(const Tensor& x) {
  // h = x + attn(attn_norm(x)) and ffn_norm(h) in one fused op: it returns both the new
  // residual stream h and its normalised copy.
  // exercise transformer.forward: begin
  const AddRmsNormOutput h = ffn_norm.add_forward(/*residual=*/x, /*branch=*/attn(attn_norm(x)));
  return h.residual + ffn(h.out);
  // exercise transformer.forward: end
}

Tensor TransformerBlock::forward(const Tensor& x, KVCache::Layer& cache, int64_t start) {
  // exercise kv_cache.attend: begin
  const Tensor branch = attn.forward(attn_norm(x), cache, start);
  const AddRmsNormOutput sums = ffn_norm.add_forward(x, branch);
  return sums.residual + ffn(sums.out);
  // exercise kv_cache.attend: end
}

// ---------------------------------------------------------------- KV cache
KVCache::KVCache(const TransformerConfig& config, int64_t batch, int64_t capacity, DType dtype)
    : batch_(batch), capacity_(capacity == 0 ? config.context_length : capacity) {
  config.validate();
  TG_CHECK(batch >= 1 && capacity_ >= 1 && capacity_ <= config.context_length, ValueError,
           "KVCache: batch {} and capacity {} must be >= 1, and the capacity at most the "
           "context length {}",
           batch, capacity_, config.context_length);
  TG_CHECK(is_floating_point(dtype), DTypeError, "KVCache: dtype must be floating, got {}", dtype);
  const int64_t D = config.d_model / config.n_heads;
  for (int64_t i = 0; i < config.n_layers; ++i) {
    layers.push_back({zeros({batch, config.kv_heads(), capacity_, D}, dtype),
                      zeros({batch, config.kv_heads(), capacity_, D}, dtype)});
  }
}

size_t KVCache::bytes() const {
  size_t total = 0;
  for (const Layer& l : layers) {
    total += static_cast<size_t>(l.k.numel() + l.v.numel()) * l.k.element_size();
  }
  return total;
}

// ---------------------------------------------------------------- the model
TransformerLM::TransformerLM(const TransformerConfig& c, Generator& gen)
    : Module("TransformerLM"),
      config((c.validate(), c)),
      tok_emb(c.vocab_size, c.d_model, {}, gen),
      norm(c.d_model, {.eps = c.norm_eps}),
      head(c.d_model, c.vocab_size, {.bias = false}, gen) {
  register_module("tok_emb", tok_emb);
  register_module("blocks", blocks);
  for (int64_t i = 0; i < c.n_layers; ++i) blocks.emplace_back(c, gen);
  register_module("norm", norm);
  register_module("head", head);
}

Tensor TransformerLM::forward(const Tensor& ids) {
  TG_CHECK(ids.dim() == 1 || ids.dim() == 2, ShapeError,
           "TransformerLM: ids must be (B, T) or (T), got shape {}", ids.shape());
  TG_CHECK(ids.size(-1) <= config.context_length, ShapeError,
           "TransformerLM: {} tokens exceed the context length {}", ids.size(-1),
           config.context_length);
  // exercise transformer.forward: begin
  const bool batched = ids.dim() == 2;
  Tensor x = tok_emb(batched ? ids : ids.unsqueeze(0));
  for (const auto& block : blocks) x = (*block)(x);
  const Tensor logits = head(norm(x));
  return batched ? logits : logits.squeeze(0);
  // exercise transformer.forward: end
}

Tensor TransformerLM::forward(const Tensor& ids, KVCache& cache) {
  TG_CHECK(!grad_mode_enabled(), MisuseError,
           "TransformerLM: a KV cache is for generation: run it under tg::NoGradGuard (the "
           "cache is written in place, off the tape)");
  TG_CHECK(ids.dim() == 1 || ids.dim() == 2, ShapeError,
           "TransformerLM: ids must be (B, T) or (T), got shape {}", ids.shape());
  TG_CHECK(cache.layers.size() == blocks.size(), ValueError,
           "TransformerLM: the KV cache has {} layers, the model {}", cache.layers.size(),
           blocks.size());
  const int64_t B = ids.dim() == 2 ? ids.size(0) : 1, T = ids.size(-1), start = cache.length();
  TG_CHECK(B == cache.batch(), ValueError, "TransformerLM: ids {} has batch {}, the KV cache {}",
           ids.shape(), B, cache.batch());
  TG_CHECK(T >= 1 && start + T <= cache.capacity(), ValueError,
           "TransformerLM: {} new tokens do not fit the KV cache ({} of {} positions used)", T,
           start, cache.capacity());
  // exercise kv_cache.attend: begin
  Tensor h = tok_emb(ids.dim() == 2 ? ids : ids.unsqueeze(0));
  for (size_t i = 0; i < blocks.size(); ++i) h = blocks[i].forward(h, cache.layers[i], start);
  cache.length_ += T;  // only now: every layer wrote its keys at start .. start + T - 1
  const Tensor out = head(norm(h));
  return ids.dim() == 2 ? out : out.squeeze(0);
  // exercise kv_cache.attend: end
}

}  // namespace tg::nn
