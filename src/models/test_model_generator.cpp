// Plan, weights and writing of generated models (see the header).
#include "models/test_model_generator.h"

#include <chrono>
#include <cmath>
#include <filesystem>

#include "base/thread_pool.h"
#include "format/gguf.h"
#include "models/test_model_generator_tokenizer.h"
#include "tensor/quant.h"

namespace kazeia::gen {
namespace {

// ---- PRNG --------------------------------------------------------------------
// splitmix64 seeds xoshiro256**; both are fixed, published algorithms, so the
// stream is the same on every platform (unlike std::normal_distribution).

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

class Xoshiro256 {
 public:
  explicit Xoshiro256(uint64_t seed) {
    for (uint64_t& w : s_) w = splitmix64(seed);
  }
  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

uint64_t fnv1a64(std::string_view s) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001B3ull;
  }
  return h;
}

// Each tensor has its own stream (seed mixed with its name) and each row its
// own generator, so rows can be produced in any order on any thread.
uint64_t row_seed(uint64_t model_seed, std::string_view tensor_name, uint64_t row) {
  uint64_t s = model_seed ^ fnv1a64(tensor_name);
  const uint64_t tensor_seed = splitmix64(s);
  uint64_t r = tensor_seed + row * 0xD1B54A32D192ED03ull;
  return splitmix64(r);
}

// An approximately normal integer: the sum of four uniform 24-bit integers,
// centred (Irwin-Hall, |z| <= 2^25, variance 2^48 / 3). Integer math only, so
// it is exact everywhere; callers scale it with one float multiplication.
int64_t irwin_hall(Xoshiro256& rng) {
  const uint64_t a = rng.next(), b = rng.next();
  const int64_t sum = static_cast<int64_t>((a >> 40) + ((a >> 8) & 0xFFFFFF) + (b >> 40) + ((b >> 8) & 0xFFFFFF));
  return sum - (int64_t{1} << 25);
}

// The factor that turns irwin_hall() into N(0, sigma^2).
float normal_factor(double sigma) { return static_cast<float>(sigma * std::sqrt(3.0) / 16777216.0); }

// ---- Plan helpers ------------------------------------------------------------

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

uint32_t n_blocks(const GenModelConfig& c) { return c.n_layer + c.nextn_predict_layers; }

// llama-quantize's rule for the layers that get more bits in Q4_K_M / Q5_K_M
// (llama.cpp src/llama-quant.cpp, use_more_bits): the first and last eighth,
// and every third layer in between.
bool use_more_bits(int i_layer, int n_layers) {
  return i_layer < n_layers / 8 || i_layer >= 7 * n_layers / 8 || (i_layer - n_layers / 8) % 3 == 2;
}

// llama-quantize's fallback when ne0 is not a multiple of the chosen type's
// block size (tensor_type_fallback). llama.cpp aborts for the legacy types
// and for Q8_0; we use F16 there instead so any shape can be generated.
TensorType fallback_type(TensorType type, uint64_t ne0) {
  if (ne0 % tensor_type_traits(type).block_size == 0) return type;
  TensorType next = TensorType::F16;
  switch (type) {
    case TensorType::Q4_K: next = TensorType::Q5_0; break;
    case TensorType::Q5_K: next = TensorType::Q5_1; break;
    case TensorType::Q6_K: next = TensorType::Q8_0; break;
    default: break;
  }
  return ne0 % tensor_type_traits(next).block_size == 0 ? next : TensorType::F16;
}

class Planner {
 public:
  explicit Planner(const GenModelConfig& c) : c_(c) {}

  std::vector<TensorPlan> run() {
    add("token_embd.weight", {c_.n_embd, c_.n_vocab}, WeightInit::kMatrix);
    add("output_norm.weight", {c_.n_embd}, WeightInit::kNorm);
    if (!c_.tied_output) add("output.weight", {c_.n_embd, c_.n_vocab}, WeightInit::kMatrix);
    for (uint32_t i = 0; i < n_blocks(c_); ++i) {
      block_ = static_cast<int>(i);
      switch (c_.arch) {
        case GenArch::kLlama: llama_block(); break;
        case GenArch::kQwen3: qwen3_block(); break;
        case GenArch::kQwen35: qwen35_block(i); break;
      }
    }
    for (TensorPlan& t : out_) t.type = choose_tensor_type(c_, t);
    return std::move(out_);
  }

 private:
  void add(std::string name, std::vector<uint64_t> dims, WeightInit init) {
    TensorPlan t;
    t.name = block_ >= 0 ? "blk." + std::to_string(block_) + "." + name : std::move(name);
    t.dims = std::move(dims);
    t.init = init;
    t.block = block_;
    out_.push_back(std::move(t));
  }

  uint64_t q_dim() const { return uint64_t{c_.n_head} * c_.head_dim; }
  uint64_t kv_dim() const { return uint64_t{c_.n_head_kv} * c_.head_dim; }

  void ffn() {
    add("ffn_gate.weight", {c_.n_embd, c_.n_ff}, WeightInit::kMatrix);
    add("ffn_up.weight", {c_.n_embd, c_.n_ff}, WeightInit::kMatrix);
    add("ffn_down.weight", {c_.n_ff, c_.n_embd}, WeightInit::kMatrix);
  }

  void llama_block() {
    add("attn_norm.weight", {c_.n_embd}, WeightInit::kNorm);
    add("attn_q.weight", {c_.n_embd, q_dim()}, WeightInit::kMatrix);
    add("attn_k.weight", {c_.n_embd, kv_dim()}, WeightInit::kMatrix);
    add("attn_v.weight", {c_.n_embd, kv_dim()}, WeightInit::kMatrix);
    add("attn_output.weight", {q_dim(), c_.n_embd}, WeightInit::kMatrix);
    add("ffn_norm.weight", {c_.n_embd}, WeightInit::kNorm);
    ffn();
  }

  void qwen3_block() {
    add("attn_norm.weight", {c_.n_embd}, WeightInit::kNorm);
    add("attn_q.weight", {c_.n_embd, q_dim()}, WeightInit::kMatrix);
    add("attn_k.weight", {c_.n_embd, kv_dim()}, WeightInit::kMatrix);
    add("attn_v.weight", {c_.n_embd, kv_dim()}, WeightInit::kMatrix);
    add("attn_output.weight", {q_dim(), c_.n_embd}, WeightInit::kMatrix);
    add("attn_q_norm.weight", {c_.head_dim}, WeightInit::kNorm);
    add("attn_k_norm.weight", {c_.head_dim}, WeightInit::kNorm);
    add("ffn_norm.weight", {c_.n_embd}, WeightInit::kNorm);
    ffn();
  }

  // Tensor order as in the shared qwen35 files (llama.cpp's converter order).
  void qwen35_block(uint32_t i) {
    add("attn_norm.weight", {c_.n_embd}, WeightInit::kNorm);
    add("post_attention_norm.weight", {c_.n_embd}, WeightInit::kNorm);
    const bool mtp = i >= c_.n_layer;
    if (!mtp && c_.recurrent_layers[i]) {
      const uint64_t key_dim = uint64_t{c_.ssm_group_count} * c_.ssm_state_size;
      const uint64_t value_dim = uint64_t{c_.ssm_time_step_rank} * c_.ssm_state_size;
      const uint64_t conv_channels = 2 * key_dim + value_dim;  // q | k | v
      add("attn_qkv.weight", {c_.n_embd, conv_channels}, WeightInit::kMatrix);
      add("attn_gate.weight", {c_.n_embd, value_dim}, WeightInit::kMatrix);
      add("ssm_conv1d.weight", {c_.ssm_conv_kernel, conv_channels}, WeightInit::kConv);
      add("ssm_dt.bias", {c_.ssm_time_step_rank}, WeightInit::kDtBias);
      add("ssm_a", {c_.ssm_time_step_rank}, WeightInit::kSsmA);
      add("ssm_beta.weight", {c_.n_embd, c_.ssm_time_step_rank}, WeightInit::kMatrix);
      add("ssm_alpha.weight", {c_.n_embd, c_.ssm_time_step_rank}, WeightInit::kMatrix);
      add("ssm_norm.weight", {c_.ssm_state_size}, WeightInit::kNorm);
      add("ssm_out.weight", {value_dim, c_.n_embd}, WeightInit::kMatrix);
    } else {
      // Gated attention: per head, head_dim query rows then head_dim gate rows.
      add("attn_q.weight", {c_.n_embd, 2 * q_dim()}, WeightInit::kMatrix);
      add("attn_k.weight", {c_.n_embd, kv_dim()}, WeightInit::kMatrix);
      add("attn_v.weight", {c_.n_embd, kv_dim()}, WeightInit::kMatrix);
      add("attn_output.weight", {q_dim(), c_.n_embd}, WeightInit::kMatrix);
      add("attn_q_norm.weight", {c_.head_dim}, WeightInit::kNorm);
      add("attn_k_norm.weight", {c_.head_dim}, WeightInit::kNorm);
    }
    ffn();
    if (mtp) {
      // The MTP block as llama.cpp's converter writes it (qwen35-mtp-f32.gguf):
      // eh_proj mixes [normed embedding | normed hidden state].
      add("nextn.eh_proj.weight", {2 * uint64_t{c_.n_embd}, c_.n_embd}, WeightInit::kMatrix);
      add("nextn.enorm.weight", {c_.n_embd}, WeightInit::kNorm);
      add("nextn.hnorm.weight", {c_.n_embd}, WeightInit::kNorm);
      add("nextn.shared_head_norm.weight", {c_.n_embd}, WeightInit::kNorm);
    }
  }

  const GenModelConfig& c_;
  int block_ = -1;
  std::vector<TensorPlan> out_;
};

std::string field_error(std::string_view field, std::string_view expected, uint64_t actual) {
  return std::string(field) + ": expected " + std::string(expected) + ", got " + std::to_string(actual);
}

// ---- Metadata ------------------------------------------------------------------

gguf::Value bool_array(const std::vector<bool>& values) {
  gguf::Array a;
  a.element_type = gguf::ValueType::kBool;
  for (bool b : values) a.items.emplace_back(b);
  return gguf::Value(std::move(a));
}

gguf::Value int32_array(const std::array<int32_t, 4>& values) {
  gguf::Array a;
  a.element_type = gguf::ValueType::kInt32;
  for (int32_t v : values) a.items.emplace_back(v);
  return gguf::Value(std::move(a));
}

// Key order and value types as in the shared reference files; llama.cpp
// reads integers as uint32, floats as float32.
void set_arch_keys(gguf::Writer& w, const GenModelConfig& c) {
  const std::string a(gen_arch_name(c.arch));
  const auto key = [&](std::string_view suffix) { return a + "." + std::string(suffix); };
  if (c.arch == GenArch::kLlama) {  // the llama2.c converter's order (stories260K.gguf)
    w.set(key("context_length"), c.context_length);
    w.set(key("embedding_length"), c.n_embd);
    w.set(key("feed_forward_length"), c.n_ff);
    w.set(key("attention.head_count"), c.n_head);
    w.set(key("attention.head_count_kv"), c.n_head_kv);
    w.set(key("block_count"), c.n_layer);
    w.set(key("rope.dimension_count"), c.rope_dims);
    w.set(key("attention.layer_norm_rms_epsilon"), c.rms_eps);
    w.set(key("rope.freq_base"), c.rope_freq_base);
    if (uint64_t{c.head_dim} * c.n_head != c.n_embd) {  // llama.cpp assumes n_embd / n_head otherwise
      w.set(key("attention.key_length"), c.head_dim);
      w.set(key("attention.value_length"), c.head_dim);
    }
    return;
  }
  w.set(key("context_length"), c.context_length);
  w.set(key("embedding_length"), c.n_embd);
  w.set(key("block_count"), n_blocks(c));
  if (c.nextn_predict_layers > 0) w.set(key("nextn_predict_layers"), c.nextn_predict_layers);
  w.set(key("feed_forward_length"), c.n_ff);
  w.set(key("attention.head_count"), c.n_head);
  w.set(key("attention.head_count_kv"), c.n_head_kv);
  w.set(key("rope.freq_base"), c.rope_freq_base);
  w.set(key("attention.layer_norm_rms_epsilon"), c.rms_eps);
  w.set(key("attention.key_length"), c.head_dim);
  w.set(key("attention.value_length"), c.head_dim);
  if (c.arch == GenArch::kQwen3) {
    if (c.rope_dims != c.head_dim) w.set(key("rope.dimension_count"), c.rope_dims);
    return;
  }
  w.set(key("rope.dimension_count"), c.rope_dims);
  w.set(key("rope.dimension_sections"), int32_array(c.rope_sections));
  w.set(key("ssm.conv_kernel"), c.ssm_conv_kernel);
  w.set(key("ssm.state_size"), c.ssm_state_size);
  w.set(key("ssm.group_count"), c.ssm_group_count);
  w.set(key("ssm.time_step_rank"), c.ssm_time_step_rank);
  w.set(key("ssm.inner_size"), c.ssm_inner_size);
  std::vector<bool> recurrent = c.recurrent_layers;
  recurrent.resize(n_blocks(c), false);  // one entry per block; MTP blocks are not recurrent
  w.set(key("attention.recurrent_layers"), bool_array(recurrent));
  w.set(key("full_attention_interval"), c.full_attention_interval);
}

Result<TokenizerKeys> make_tokenizer(const GenModelConfig& c) {
  if (!c.tokenizer_from.empty()) return copy_tokenizer(c.tokenizer_from);
  GenTokenizer kind = c.tokenizer;
  if (kind == GenTokenizer::kAuto) kind = c.arch == GenArch::kLlama ? GenTokenizer::kSentencePiece : GenTokenizer::kByteBpe;
  if (kind == GenTokenizer::kSentencePiece) return make_sentencepiece_tokenizer(c.n_vocab);
  return make_byte_bpe_tokenizer(c.n_vocab, c.arch == GenArch::kQwen35 ? "qwen35" : "qwen2");
}

// Bytes of a metadata value's payload as GGUF encodes it (strings and arrays
// carry a uint64 length; array items carry no type tag).
uint64_t encoded_size(const gguf::Value& v) {
  if (const std::string* s = v.as_string()) return 8 + s->size();
  if (const gguf::Array* a = v.as_array()) {
    uint64_t n = 4 + 8;
    for (const gguf::Value& item : a->items) n += encoded_size(item);
    return n;
  }
  switch (v.type()) {
    case gguf::ValueType::kUint8: case gguf::ValueType::kInt8: case gguf::ValueType::kBool: return 1;
    case gguf::ValueType::kUint16: case gguf::ValueType::kInt16: return 2;
    case gguf::ValueType::kUint64: case gguf::ValueType::kInt64: case gguf::ValueType::kFloat64: return 8;
    default: return 4;
  }
}

uint64_t align_up(uint64_t n) { return (n + gguf::kDefaultAlignment - 1) / gguf::kDefaultAlignment * gguf::kDefaultAlignment; }

uint64_t n_rows_of(const TensorPlan& t) {
  uint64_t r = 1;
  for (size_t k = 1; k < t.dims.size(); ++k) r *= t.dims[k];
  return r;
}

// Everything but the tensor data: resolved config, metadata, tensor plan.
struct Prepared {
  GenModelConfig config;
  gguf::Writer writer;
  std::vector<TensorPlan> plan;
};

Result<Prepared> prepare(const GenModelConfig& config) {
  Prepared p;
  KZ_ASSIGN_OR_RETURN(p.config, resolve_gen_config(config));
  const GenModelConfig& c = p.config;
  KZ_ASSIGN_OR_RETURN(TokenizerKeys tokenizer, make_tokenizer(c));
  if (tokenizer.n_vocab != c.n_vocab)
    return Internal("tokenizer has " + std::to_string(tokenizer.n_vocab) + " tokens, config " + std::to_string(c.n_vocab));
  gguf::Writer& w = p.writer;
  w.set("general.architecture", std::string(gen_arch_name(c.arch)));
  w.set("general.name", c.name);
  w.set("general.file_type", gen_file_type_info(c.file_type).ftype);
  // llama-quantize stamps the quantization format version on what it writes.
  if (c.file_type != GenFileType::kF32) w.set("general.quantization_version", uint32_t{2});
  set_arch_keys(w, c);
  for (gguf::KeyValue& kv : tokenizer.keys) w.set(std::move(kv.key), std::move(kv.value));
  p.plan = plan_tensors(c);
  return p;
}

// The GGUF layout (header, metadata, tensor infos, aligned data) summed up.
GenModelSummary summarize(const Prepared& p) {
  GenModelSummary s;
  s.n_vocab = p.config.n_vocab;
  s.n_tensors = p.plan.size();
  uint64_t header = 4 + 4 + 8 + 8;
  for (const gguf::KeyValue& kv : p.writer.metadata()) header += 8 + kv.key.size() + 4 + encoded_size(kv.value);
  uint64_t data = 0;
  for (const TensorPlan& t : p.plan) {
    header += 8 + t.name.size() + 4 + 8 * t.dims.size() + 4 + 8;
    const uint64_t rows = n_rows_of(t);
    s.n_parameters += t.dims[0] * rows;
    data += align_up(type_row_bytes(t.type, static_cast<int64_t>(t.dims[0])) * rows);
  }
  s.file_bytes = align_up(header) + data;
  return s;
}

}  // namespace

// ---- Config ------------------------------------------------------------------

Result<GenModelConfig> resolve_gen_config(const GenModelConfig& config) {
  GenModelConfig c = config;
  if (!c.tokenizer_from.empty()) {
    auto file = gguf::File::open(c.tokenizer_from);
    if (!file.ok()) return file.status().with_context("--tokenizer-from");
    const gguf::Value* tokens = file->find("tokenizer.ggml.tokens");
    const gguf::Array* array = tokens ? tokens->as_array() : nullptr;
    if (array == nullptr || array->items.empty() || array->items.size() > UINT32_MAX)
      return InvalidFile("--tokenizer-from '" + c.tokenizer_from + "': no usable tokenizer.ggml.tokens array");
    c.n_vocab = static_cast<uint32_t>(array->items.size());
  }
  if (c.rope_dims == 0) c.rope_dims = c.head_dim;
  if (c.arch == GenArch::kQwen35) {
    if (c.ssm_inner_size == 0) c.ssm_inner_size = c.ssm_time_step_rank * c.ssm_state_size;
    if (c.rope_sections == std::array<int32_t, 4>{}) {
      // Split the rotary pairs like Qwen3.5's [11, 11, 10] of 32: thirds, the
      // larger parts first.
      const int32_t pairs = static_cast<int32_t>(c.rope_dims / 2);
      const int32_t first = (pairs + 2) / 3;
      const int32_t second = (pairs - first + 1) / 2;
      c.rope_sections = {first, second, pairs - first - second, 0};
    }
    if (c.recurrent_layers.empty() && c.full_attention_interval > 0) {
      for (uint32_t i = 0; i < c.n_layer; ++i) c.recurrent_layers.push_back((i + 1) % c.full_attention_interval != 0);
    }
  }
  if (c.name.empty())
    c.name = (c.preset.empty() ? std::string(gen_arch_name(c.arch)) : c.preset) + "-random-seed" + std::to_string(c.seed);
  KZ_RETURN_IF_ERROR(validate_gen_config(c));
  return c;
}

Status validate_gen_config(const GenModelConfig& c) {
  const std::pair<std::string_view, uint32_t> positive[] = {
      {"n_embd", c.n_embd}, {"n_layer", c.n_layer}, {"n_ff", c.n_ff}, {"n_head", c.n_head},
      {"n_head_kv", c.n_head_kv}, {"head_dim", c.head_dim}, {"n_vocab", c.n_vocab},
      {"context_length", c.context_length},
  };
  // The upper bound keeps every tensor's element count far from overflow
  // (2-D tensors of at most 2^48 elements).
  constexpr uint32_t kMaxDim = 1u << 24;
  for (const auto& [field, value] : positive) {
    if (value == 0) return InvalidArgument(field_error(field, "> 0", value));
    if (value > kMaxDim) return InvalidArgument(field_error(field, "<= 2^24", value));
  }
  for (uint32_t v : {c.ssm_conv_kernel, c.ssm_state_size, c.ssm_group_count, c.ssm_time_step_rank})
    if (v > kMaxDim) return InvalidArgument(field_error("ssm sizes", "<= 2^24", v));
  if (uint64_t{c.n_head} * c.head_dim > kMaxDim || n_blocks(c) > kMaxDim)
    return InvalidArgument("n_head * head_dim and the block count must be <= 2^24");
  if (c.n_head % c.n_head_kv != 0)
    return InvalidArgument(field_error("n_head", "a multiple of n_head_kv = " + std::to_string(c.n_head_kv), c.n_head));
  if (c.rope_dims > c.head_dim || c.rope_dims % 2 != 0)
    return InvalidArgument(field_error("rope_dims", "even and <= head_dim = " + std::to_string(c.head_dim), c.rope_dims));
  if (!(c.weight_scale > 0.0f) || !std::isfinite(c.weight_scale))
    return InvalidArgument("weight_scale: expected a finite value > 0, got " + std::to_string(c.weight_scale));
  if (!(c.rms_eps > 0.0f) || !(c.rope_freq_base > 0.0f))
    return InvalidArgument("rms_eps and rope_freq_base must be > 0");
  if (c.arch != GenArch::kQwen35) {
    if (c.nextn_predict_layers != 0)
      return InvalidArgument(field_error("nextn_predict_layers (MTP blocks exist only for qwen35)", "0", c.nextn_predict_layers));
    return OkStatus();
  }
  if (c.ssm_conv_kernel == 0 || c.ssm_state_size == 0 || c.ssm_group_count == 0 || c.ssm_time_step_rank == 0)
    return InvalidArgument("qwen35: ssm conv_kernel, state_size, group_count and time_step_rank must be > 0");
  if (c.ssm_time_step_rank % c.ssm_group_count != 0)
    return InvalidArgument(field_error("ssm_time_step_rank (value heads)",
                                       "a multiple of ssm_group_count = " + std::to_string(c.ssm_group_count),
                                       c.ssm_time_step_rank));
  const uint64_t inner = uint64_t{c.ssm_time_step_rank} * c.ssm_state_size;
  if (c.ssm_inner_size != inner)
    return InvalidArgument(field_error("ssm_inner_size", "time_step_rank * state_size = " + std::to_string(inner),
                                       c.ssm_inner_size));
  if (c.recurrent_layers.size() != c.n_layer)
    return InvalidArgument(field_error("recurrent_layers (entries)", "n_layer = " + std::to_string(c.n_layer),
                                       c.recurrent_layers.size()));
  int64_t pairs = 0;
  for (int k = 0; k < 3; ++k) {
    if (c.rope_sections[k] < 0) return InvalidArgument("rope_sections: negative entry");
    pairs += c.rope_sections[k];
  }
  if (pairs * 2 != c.rope_dims || c.rope_sections[3] != 0)
    return InvalidArgument("rope_sections: the first three must sum to rope_dims / 2 = " +
                           std::to_string(c.rope_dims / 2) + " and the fourth be 0, got sum " + std::to_string(pairs));
  return OkStatus();
}

// ---- Types -------------------------------------------------------------------

// Mirrors llama-quantize (llama.cpp src/llama-quant.cpp: tensor_allows_quantization,
// llama_tensor_get_type_impl, tensor_type_fallback) for the mixes we write,
// without an importance matrix. Its tensor counters follow the block number
// (its tensors are sorted by block), so the i-th attn_v / attn_qkv / ffn_down
// is the one of block i.
TensorType choose_tensor_type(const GenModelConfig& c, const TensorPlan& t) {
  const std::string_view name = t.name;
  // Only 2-D "*weight" tensors are quantized; norms and the conv kernel stay F32.
  if (t.dims.size() < 2 || !ends_with(name, "weight") || contains(name, "_norm.weight") ||
      contains(name, "ssm_conv1d"))
    return TensorType::F32;
  const GenFileTypeInfo& info = gen_file_type_info(c.file_type);
  const TensorType base = info.base;
  if (!tensor_type_traits(base).quantized) return base;  // F32 / F16 / BF16: every 2-D weight
  const uint64_t ne0 = t.dims[0];
  const bool k_mix = c.file_type == GenFileType::kQ4_K_M || c.file_type == GenFileType::kQ5_K_M;
  const int n_layers = static_cast<int>(n_blocks(c));
  TensorType type = base;
  if (name == "output.weight" || (c.tied_output && name == "token_embd.weight")) {
    // The output projection (or the tied embedding that serves as it).
    if (ne0 % tensor_type_traits(base).block_size != 0) type = TensorType::Q8_0;
    else if (type != TensorType::Q8_0) type = TensorType::Q6_K;
  } else if (name == "token_embd.weight") {
    // untied embeddings keep the base type
  } else if (contains(name, "attn_v.weight") || contains(name, "attn_qkv.weight")) {
    if (k_mix && use_more_bits(t.block, n_layers)) type = TensorType::Q6_K;
  } else if (contains(name, "ffn_down")) {
    if (k_mix && use_more_bits(t.block, n_layers)) type = TensorType::Q6_K;
  }
  return fallback_type(type, ne0);
}

std::vector<TensorPlan> plan_tensors(const GenModelConfig& resolved) { return Planner(resolved).run(); }

// ---- Values ------------------------------------------------------------------

void generate_tensor_rows(const GenModelConfig& c, const TensorPlan& t, uint64_t row_begin, uint64_t row_end,
                          float* out) {
  const uint64_t ne0 = t.dims[0];
  float factor = 0.0f;
  switch (t.init) {
    case WeightInit::kMatrix: factor = normal_factor(c.weight_scale / std::sqrt(static_cast<double>(ne0))); break;
    case WeightInit::kNorm: factor = normal_factor(0.05); break;
    case WeightInit::kDtBias: factor = normal_factor(0.1); break;
    case WeightInit::kConv: factor = normal_factor(1.0 / std::sqrt(static_cast<double>(ne0))); break;
    case WeightInit::kSsmA: factor = static_cast<float>((16.0 - 1.0 / 16.0) / 16777216.0); break;
  }
  // One statement per float operation: a compiler may fuse a*b+c within an
  // expression (clang's default), which would change the last bit.
  for (uint64_t row = row_begin; row < row_end; ++row) {
    Xoshiro256 rng(row_seed(c.seed, t.name, row));
    float* dst = out + (row - row_begin) * ne0;
    for (uint64_t i = 0; i < ne0; ++i) {
      if (t.init == WeightInit::kSsmA) {
        const float scaled = static_cast<float>(rng.next() >> 40) * factor;  // [0, 16 - 1/16)
        const float a = scaled + 0.0625f;
        dst[i] = -a;
        continue;
      }
      const float z = static_cast<float>(irwin_hall(rng)) * factor;
      if (t.init == WeightInit::kNorm) {
        dst[i] = 1.0f + z;
      } else {
        dst[i] = z;
      }
    }
  }
}

std::vector<float> generate_tensor_values(const GenModelConfig& c, const TensorPlan& t) {
  uint64_t n = 1;
  for (uint64_t d : t.dims) n *= d;
  std::vector<float> values(n);
  generate_tensor_rows(c, t, 0, n / t.dims[0], values.data());
  return values;
}

// ---- Writing -----------------------------------------------------------------

Result<GenModelSummary> describe_test_model(const GenModelConfig& config) {
  KZ_ASSIGN_OR_RETURN(Prepared p, prepare(config));
  return summarize(p);
}

Result<GenModelSummary> write_test_model(const GenModelConfig& config, const std::string& path) {
  const auto start = std::chrono::steady_clock::now();
  KZ_ASSIGN_OR_RETURN(Prepared p, prepare(config));
  const GenModelConfig& c = p.config;
  gguf::Writer& w = p.writer;
  // Generation and quantization are throughput-bound: every logical CPU
  // helps (the pool's default counts physical cores only).
  ThreadPool pool(c.n_threads > 0 ? static_cast<int>(c.n_threads) : available_cpu_count());
  std::vector<std::vector<float>> scratch(static_cast<size_t>(pool.size()));
  for (const TensorPlan& t : p.plan) {
    const uint64_t ne0 = t.dims[0];
    const uint64_t n_rows = n_rows_of(t);
    const size_t row_bytes = type_row_bytes(t.type, static_cast<int64_t>(ne0));
    std::vector<uint8_t> data(row_bytes * n_rows);
    // Rows are independent (each has its own PRNG), so the split across
    // threads cannot change a byte of the output.
    KZ_RETURN_IF_ERROR(parallel_for_status(&pool, 0, static_cast<int64_t>(n_rows), [&](int64_t begin, int64_t end, int thread) {
      std::vector<float>& row = scratch[static_cast<size_t>(thread)];
      row.resize(ne0);
      for (int64_t r = begin; r < end; ++r) {
        generate_tensor_rows(c, t, static_cast<uint64_t>(r), static_cast<uint64_t>(r) + 1, row.data());
        Status s = quantize_row(t.type, row.data(), data.data() + static_cast<size_t>(r) * row_bytes,
                                static_cast<int64_t>(ne0));
        if (!s.ok()) return s.with_context("tensor '" + t.name + "'");
      }
      return OkStatus();
    }, /*grain=*/16));
    KZ_RETURN_IF_ERROR(w.add_tensor(t.name, t.type, t.dims, std::move(data)));
  }
  GenModelSummary summary = summarize(p);
  KZ_RETURN_IF_ERROR(w.write(path));
  std::error_code ec;
  summary.file_bytes = std::filesystem::file_size(path, ec);  // (a test checks it equals the layout's sum)
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

}  // namespace kazeia::gen
