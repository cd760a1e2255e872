#include "kazeia/engine.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include "agent/agent_loop.h"
#include "agent/reasoning_budget.h"
#include "engine_impl.h"
#include "text/detokenizer.h"

namespace kazeia {


Engine::Engine() : impl_(std::make_unique<Impl>()) {}
Engine::~Engine() = default;

Result<std::unique_ptr<Engine>> Engine::load(const std::string& gguf_path, const EngineOptions& options) {
  if (options.n_ctx <= 0) return InvalidArgument("context size must be positive, got " + std::to_string(options.n_ctx));
  if (options.n_ubatch <= 0)
    return InvalidArgument("micro-batch size must be positive, got " + std::to_string(options.n_ubatch));
  std::unique_ptr<Engine> engine(new Engine());
  Impl& e = *engine->impl_;
  e.options = options;
  e.path = gguf_path;
  KZ_ASSIGN_OR_RETURN(gguf::File file, gguf::File::open(gguf_path));
  e.file.emplace(std::move(file));
  KZ_ASSIGN_OR_RETURN(e.model, load_model(*e.file));
  e.arch = e.model->config().arch;
  if (e.file->find("tokenizer.ggml.model") != nullptr) {
    KZ_ASSIGN_OR_RETURN(text::Tokenizer tok, text::Tokenizer::from_gguf(*e.file));
    if (tok.vocab_size() != e.model->config().n_vocab)
      return InvalidFile("tokenizer has " + std::to_string(tok.vocab_size()) + " tokens but token_embd.weight has " +
                         std::to_string(e.model->config().n_vocab) + " rows");
    e.tokenizer.emplace(std::move(tok));
  }
  e.chat_template.emplace(text::ChatTemplate::from_gguf(*e.file));
  // The tokenizer holds its own copy of these arrays.
  for (std::string_view key : text::kVocabArrayKeys) e.file->erase(key);
  e.pool = std::make_unique<ThreadPool>(options.n_threads);
  if (options.huge_pages) e.huge_page_bytes = e.file->populate_mapping(/*recache_small_pages=*/true).huge_bytes;
  return engine;
}

const std::string& Engine::architecture() const { return impl_->arch; }
const std::string& Engine::path() const { return impl_->path; }
int64_t Engine::n_vocab() const { return impl_->model->config().n_vocab; }
int64_t Engine::n_ctx() const { return impl_->options.n_ctx; }
int Engine::n_threads() const { return impl_->pool->size(); }
void Engine::set_threads_awake(bool on) { impl_->pool->set_spinning(on); }
uint64_t Engine::file_size() const { return impl_->file->file_size(); }
uint64_t Engine::weight_bytes_per_token() const { return impl_->model->weight_bytes_per_token(); }
uint64_t Engine::weight_huge_page_bytes() const { return impl_->huge_page_bytes; }

Result<std::vector<int32_t>> Engine::tokenize(std::string_view text, bool parse_special, bool add_special) const {
  if (!impl_->tokenizer) return NotFound("model '" + impl_->path + "' has no tokenizer (tokenizer.ggml.model)");
  return impl_->tokenizer->encode(text, parse_special, add_special);
}

std::string Engine::detokenize(std::span<const int32_t> ids) const {
  if (!impl_->tokenizer) return {};
  return impl_->tokenizer->decode(ids);
}

bool Engine::is_end_of_generation(int32_t id) const { return impl_->tokenizer && impl_->tokenizer->is_eog(id); }

Result<std::string> Engine::render_chat(std::string_view request_json) const {
  return impl_->chat_template->render_json(request_json);
}

std::string Engine::chat_template_family() const {
  return text::chat_template_family_name(impl_->chat_template->family());
}

Result<std::vector<int32_t>> Engine::tokenize_chat_prompt(std::string_view prompt) const {
  if (!impl_->tokenizer) return NotFound("model '" + impl_->path + "' has no tokenizer (tokenizer.ggml.model)");
  return agent::tokenize_chat_prompt(*impl_->tokenizer, prompt);
}


Session::Session() : impl_(std::make_unique<Impl>()) {}
Session::~Session() = default;

Result<std::unique_ptr<Session>> Engine::new_session() {
  std::unique_ptr<Session> s(new Session());
  s->impl_->engine = impl_.get();
  StateOptions so;
  so.n_ctx = impl_->options.n_ctx;
  so.kv_type = impl_->options.kv_type == KvCacheType::kF16 ? KvType::kF16 : KvType::kF32;
  KZ_ASSIGN_OR_RETURN(s->impl_->state, impl_->model->new_state(so));
  s->impl_->logits.resize(static_cast<size_t>(n_vocab()));
  return s;
}

int64_t Session::n_past() const { return impl_->state->n_past(); }
int64_t Session::n_ctx() const { return impl_->state->n_ctx(); }
const std::vector<int32_t>& Session::history() const { return impl_->history; }
uint64_t Session::state_bytes() const { return impl_->state->memory_bytes(); }

void Session::reset() {
  impl_->state->reset();
  impl_->history.clear();
  impl_->checkpoints.clear();
}

uint64_t Session::checkpoint_bytes() const { return impl_->checkpoint_bytes(); }

Status Session::eval(std::span<const int32_t> tokens, float* logits, bool all) {
  ThreadPool::SpinScope spin(*impl_->engine->pool);
  return impl_->eval(tokens, logits, all);
}

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Length of the longest suffix of `text` that is a proper prefix of a stop
// string: that much must be held back, since the next token may complete it.
size_t stop_prefix_hold(const std::string& text, const std::vector<std::string>& stops) {
  size_t hold = 0;
  for (const auto& s : stops)
    for (size_t len = std::min(s.size() - 1, text.size()); len > hold; --len)
      if (text.compare(text.size() - len, len, s, 0, len) == 0) {
        hold = len;
        break;
      }
  return hold;
}

}  // namespace

Result<SamplerParams> sampler_params(const SamplingOptions& options) {
  SamplerParams sp;
  sp.temperature = options.temperature;
  sp.top_k = options.top_k;
  sp.top_p = options.top_p;
  sp.min_p = options.min_p;
  sp.repeat_penalty = options.repeat_penalty;
  sp.repeat_last_n = options.repeat_last_n;
  sp.presence_penalty = options.presence_penalty;
  sp.frequency_penalty = options.frequency_penalty;
  sp.seed = options.seed;
  KZ_RETURN_IF_ERROR(sp.validate());
  return sp;
}

Result<GenerateResult> Session::generate(std::span<const int32_t> prompt, const GenerateOptions& options,
                                         const TextCallback& on_text) {
  Impl& s = *impl_;
  Engine::Impl& e = *s.engine;
  if (prompt.empty()) return InvalidArgument("the prompt is empty");
  if (!e.tokenizer) return NotFound("model '" + e.path + "' has no tokenizer; generation needs one");
  KZ_ASSIGN_OR_RETURN(SamplerParams sp, sampler_params(options.sampling));
  for (const auto& stop : options.stop)
    if (stop.empty()) return InvalidArgument("stop strings must not be empty");

  ThreadPool::SpinScope spin(*e.pool);
  GenerateResult result;
  const auto t_prompt = std::chrono::steady_clock::now();
  const int64_t reused = s.reuse_prefix(prompt);
  result.reused_tokens = reused;
  result.prompt_tokens = static_cast<int64_t>(prompt.size()) - reused;
  KZ_RETURN_IF_ERROR(s.eval(prompt.subspan(static_cast<size_t>(reused)), s.logits.data(), false));
  s.checkpoint_here();
  result.prompt_seconds = seconds_since(t_prompt);

  const auto t_gen = std::chrono::steady_clock::now();
  Sampler sampler(sp);
  text::StreamingDetokenizer detok(*e.tokenizer);
  std::string text;   // everything decoded so far
  size_t emitted = 0; // bytes of `text` handed to on_text
  bool cancelled = false;
  auto emit_up_to = [&](size_t end) {
    if (end > emitted && on_text && !cancelled) {
      if (!on_text(std::string_view(text).substr(emitted, end - emitted))) cancelled = true;
    }
    emitted = std::max(emitted, end);
  };
  // The reasoning budget tracks the think state with the agent's stream
  // parser (only when a budget is set).
  std::optional<text::StreamParser> think_parser;
  agent::ReasoningBudget budget(options.max_think_tokens);
  std::vector<text::StreamEvent> ignored;
  if (options.max_think_tokens >= 0) {
    const size_t tail = std::min<size_t>(prompt.size(), 4);
    text::StreamParserOptions po;
    po.starts_in_think = agent::prompt_opens_think(e.tokenizer->decode(prompt.subspan(prompt.size() - tail)));
    think_parser.emplace(text::ToolCallFormat::kHermes, po);
  }
  result.stop_reason = "length";
  for (int32_t i = 0; options.max_tokens < 0 || i < options.max_tokens; ++i) {
    if (think_parser && budget.due(*think_parser)) {
      const auto close = e.tokenizer->encode(agent::kThinkClose, /*parse_special=*/true, /*add_special=*/false);
      if (s.state->n_past() + static_cast<int64_t>(close.size()) > s.state->n_ctx()) {
        result.stop_reason = "context";
        break;
      }
      KZ_RETURN_IF_ERROR(s.eval(close, s.logits.data(), false));
      const size_t before = text.size();
      for (int32_t id : close) {
        result.tokens.push_back(id);
        text += detok.push(id);
      }
      think_parser->feed(std::string_view(text).substr(before), ignored);
      ignored.clear();
      budget.spend();
      result.think_forced_closed = true;
      emit_up_to(text.size() - stop_prefix_hold(text, options.stop));
    }
    const int32_t token = sampler.sample(s.logits, s.history);
    result.tokens.push_back(token);
    if (!options.ignore_eos && e.tokenizer->is_eog(token)) {
      result.stop_reason = "eos";
      break;
    }
    const size_t before = text.size();
    text += detok.push(token);
    if (think_parser) {
      budget.count(*think_parser);
      think_parser->feed(std::string_view(text).substr(before), ignored);
      ignored.clear();
    }
    bool stopped = false;
    for (const auto& stop : options.stop) {
      const size_t from = emitted >= stop.size() ? emitted - stop.size() : 0;
      const size_t at = text.find(stop, from);
      if (at != std::string::npos) {
        text.resize(at);
        stopped = true;
      }
    }
    if (stopped) {
      result.stop_reason = "stop";
      break;
    }
    emit_up_to(text.size() - stop_prefix_hold(text, options.stop));
    if (cancelled) {
      result.stop_reason = "cancelled";
      break;
    }
    if (s.state->n_past() >= s.state->n_ctx()) {
      result.stop_reason = "context";
      break;
    }
    if (options.max_tokens >= 0 && i + 1 >= options.max_tokens) break;  // no need to evaluate the last token
    const int32_t one[1] = {token};
    KZ_RETURN_IF_ERROR(s.eval(one, s.logits.data(), false));
  }
  if (result.stop_reason != "stop") text += detok.flush();
  emit_up_to(text.size());
  result.text = std::move(text);
  result.think_tokens = budget.used();
  result.generate_seconds = seconds_since(t_gen);
  return result;
}

}  // namespace kazeia
