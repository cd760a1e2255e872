// The public inference API: load a GGUF model once (Engine), run sequences
// against it (Session): evaluate tokens, get logits, generate text.
//
// Everything here is std-only; errors are Status / Result values. The C API
// (kazeia.h) and the CLI are built on this header.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kazeia/status.h"

namespace kazeia {

// The KV cache's element type. f16 is the default, as in llama.cpp: half
// the memory, and half the bytes attention reads per decoded token. f32
// keeps the logits those of an f32 cache (f16 moves them by ~1e-3..1e-2).
enum class KvCacheType { kF16, kF32 };

struct EngineOptions {
  int n_threads = 0;       // <= 0: the physical cores available to the process
  int64_t n_ctx = 4096;    // context of each session (capped by nothing but memory)
  KvCacheType kv_type = KvCacheType::kF16;
  int64_t n_ubatch = 256;  // tokens per forward pass: longer prompts run in micro-batches (bounds activation memory)
  // Read the weights in at load, on 2 MiB pages where the kernel allows: a
  // decoded token streams every weight, and weights in physically
  // contiguous 2 MiB folios decoded 2-9 % faster than in scattered 4 KiB
  // ones. A file the page cache holds in small pages (just written or
  // downloaded) is dropped from the cache and read again once to get there.
  // false: the kernel maps the file as it is touched, in whatever pages it has.
  bool huge_pages = true;
};

struct SamplingOptions {
  float temperature = 0.8f;  // <= 0: greedy
  int32_t top_k = 40;
  float top_p = 0.95f;
  float min_p = 0.05f;
  float repeat_penalty = 1.0f;
  int32_t repeat_last_n = 64;
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
  uint64_t seed = 0xC0FFEE;
};

struct GenerateOptions {
  int32_t max_tokens = 128;        // < 0: until EOS, a stop string or the context is full
  SamplingOptions sampling;
  std::vector<std::string> stop;   // stop strings (not included in the text)
  bool ignore_eos = false;
  // Reasoning budget (< 0: none): after this many generated tokens inside
  // <think> (opened by the prompt or by the model), the tokens of
  // "\n</think>\n\n" are inserted (they appear in the text and the tokens,
  // and do not count against max_tokens) and the model goes on answering.
  int32_t max_think_tokens = -1;
};

struct GenerateResult {
  std::string text;                // generated text, stop string excluded
  std::vector<int32_t> tokens;     // generated ids (including a final EOS)
  std::string stop_reason;         // "eos", "stop", "length", "context", "cancelled"
  int64_t think_tokens = 0;        // generated inside <think> (counted with a reasoning budget only)
  bool think_forced_closed = false;  // the reasoning budget inserted </think>
  int64_t prompt_tokens = 0;       // tokens evaluated for the prompt (after prefix reuse)
  int64_t reused_tokens = 0;       // prompt tokens served from the session's history
  double prompt_seconds = 0.0;
  double generate_seconds = 0.0;
};

// Receives generated text as it becomes valid UTF-8; return false to stop.
using TextCallback = std::function<bool(std::string_view piece)>;

class Session;
struct ApiAccess;  // src/api internals

class Engine {
 public:
  static Result<std::unique_ptr<Engine>> load(const std::string& gguf_path, const EngineOptions& options = {});
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  const std::string& architecture() const;
  const std::string& path() const;
  int64_t n_vocab() const;
  int64_t n_ctx() const;
  int n_threads() const;
  uint64_t file_size() const;
  uint64_t weight_bytes_per_token() const;  // bytes of weights one decode step reads
  // Bytes of the model file mapped on 2 MiB pages right after loading (0
  // with EngineOptions::huge_pages off, or where the system cannot).
  uint64_t weight_huge_page_bytes() const;

  // Text <-> ids with the model's own tokenizer. add_special adds BOS when
  // the vocabulary asks for it.
  Result<std::vector<int32_t>> tokenize(std::string_view text, bool parse_special = true,
                                        bool add_special = true) const;
  std::string detokenize(std::span<const int32_t> ids) const;
  bool is_end_of_generation(int32_t id) const;

  // Renders an OpenAI-style chat request ({"messages": [...], "tools": [...],
  // "add_generation_prompt": true, "chat_template_kwargs": {...}}) with the
  // model's own chat template (a ChatML fallback, with a warning, when the
  // file has none or it cannot be parsed).
  Result<std::string> render_chat(std::string_view request_json) const;
  // "qwen3", "qwen35", "chatml", "llama3" or "unknown".
  std::string chat_template_family() const;
  // Tokenizes a rendered chat prompt: special tokens parsed, BOS added only
  // when the vocabulary wants one and the template did not write it.
  Result<std::vector<int32_t>> tokenize_chat_prompt(std::string_view prompt) const;

  Result<std::unique_ptr<Session>> new_session();

  // While on, the worker threads poll for the next operation between calls
  // instead of going to sleep (waking one costs tens of microseconds, and a
  // forward pass has a hundred parallel operations). Session::eval and
  // generate keep them awake while they run; turn this on around a loop that
  // calls eval token by token with work of its own in between, and off after.
  void set_threads_awake(bool on);

 private:
  Engine();
  struct Impl;
  std::unique_ptr<Impl> impl_;
  friend class Session;
  friend struct ApiAccess;
};

class Session {
 public:
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  int64_t n_past() const;
  int64_t n_ctx() const;
  const std::vector<int32_t>& history() const;  // every token evaluated so far
  uint64_t state_bytes() const;                 // KV cache + recurrent state (allocated)
  uint64_t checkpoint_bytes() const;            // the prefix cache's recurrent-state copies
  void reset();

  // Evaluates tokens after the history. logits (may be null) receives the
  // last position's row (n_vocab floats), or every position's with `all`.
  Status eval(std::span<const int32_t> tokens, float* logits, bool all = false);

  // Generates after `prompt`. The longest prefix of the prompt that the
  // history already holds is reused (a chat's next turn evaluates only its
  // new tokens); the rest of the history is dropped. Models with recurrent
  // state (Qwen3.5) resume from the deepest of the checkpoints taken after
  // earlier prompts' prefills that lies within the common prefix.
  Result<GenerateResult> generate(std::span<const int32_t> prompt, const GenerateOptions& options,
                                  const TextCallback& on_text = nullptr);

 private:
  Session();
  struct Impl;
  std::unique_ptr<Impl> impl_;
  friend class Engine;
  friend struct ApiAccess;
};

}  // namespace kazeia
