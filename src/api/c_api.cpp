// The C API (include/kazeia/kazeia.h) over the C++ API. A handle owns its
// C++ object; statuses map one to one onto kazeia::ErrorCode; every entry
// point checks its pointers first and catches every exception, since
// nothing may unwind into C.
#include "kazeia/kazeia.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "engine_impl.h"
#include "kazeia/engine.h"
#include "kazeia/version.h"

struct kz_engine {
  std::unique_ptr<kazeia::Engine> engine;
  std::string chat_family;
  // The handle holds one reference and each live session one: the engine
  // goes when the last is released, whatever order a binding frees them in.
  std::atomic<int> refs{1};
};

struct kz_session {
  kz_engine* owner = nullptr;
  std::unique_ptr<kazeia::Session> session;
  std::atomic<bool> busy{false};   // inside eval / generate / reset
  kazeia::GenerateResult result;   // what the last kz_generate_result points into
  std::string piece;               // the callback's NUL-terminated copy of a piece
};

namespace kazeia::c_api {
namespace {

static_assert(KZ_OK == static_cast<int>(ErrorCode::kOk));
static_assert(KZ_ERR_INVALID_ARGUMENT == static_cast<int>(ErrorCode::kInvalidArgument));
static_assert(KZ_ERR_INVALID_FILE == static_cast<int>(ErrorCode::kInvalidFile));
static_assert(KZ_ERR_UNSUPPORTED == static_cast<int>(ErrorCode::kUnsupported));
static_assert(KZ_ERR_NOT_FOUND == static_cast<int>(ErrorCode::kNotFound));
static_assert(KZ_ERR_IO == static_cast<int>(ErrorCode::kIo));
static_assert(KZ_ERR_OUT_OF_RANGE == static_cast<int>(ErrorCode::kOutOfRange));
static_assert(KZ_ERR_INTERNAL == static_cast<int>(ErrorCode::kInternal));
static_assert(KZ_ERR_TIMEOUT == static_cast<int>(ErrorCode::kTimeout));
static_assert(KZ_ERR_CANCELLED == static_cast<int>(ErrorCode::kCancelled));

// Limits the C++ API leaves to the caller's good sense: a thread pool that
// fails to start its 100,000th thread cannot be unwound, and the KV cache's
// size arithmetic is not meant for contexts near 2^63.
constexpr int32_t kMaxThreads = 1024;
constexpr int64_t kMaxContext = int64_t{1} << 24;

thread_local std::string t_last_error;

// Records "fn: a b" as this thread's last error. Never throws: without
// memory for the message it is left empty.
kz_status fail(kz_status code, const char* fn, std::string_view a, std::string_view b = {}) noexcept {
  try {
    t_last_error.assign(fn).append(": ").append(a).append(b);
  } catch (...) {
    t_last_error.clear();
  }
  return code;
}

kz_status fail_status(const char* fn, const Status& s) noexcept {
  return fail(static_cast<kz_status>(s.code()), fn, s.message());
}

kz_status null_arg(const char* fn, const char* name) noexcept { return fail(KZ_ERR_INVALID_ARGUMENT, fn, name, " is NULL"); }

// Runs an entry point's body; an exception becomes a status.
template <class F>
kz_status guarded(const char* fn, F&& body) noexcept {
  try {
    return body(fn);
  } catch (const std::bad_alloc&) {
    return fail(KZ_ERR_OUT_OF_MEMORY, fn, "out of memory");
  } catch (const std::exception& e) {
    return fail(KZ_ERR_INTERNAL, fn, "unexpected exception: ", e.what());
  } catch (...) {
    return fail(KZ_ERR_INTERNAL, fn, "unexpected exception");
  }
}

// (pointer, length) input text; NULL only with length 0.
bool text_arg(const char* fn, const char* name, const char* p, size_t n, std::string_view* out, kz_status* st) {
  if (p == nullptr && n > 0) {
    *st = fail(KZ_ERR_INVALID_ARGUMENT, fn, name, " is NULL with a nonzero length");
    return false;
  }
  *out = p == nullptr ? std::string_view() : std::string_view(p, n);
  return true;
}

kz_status copy_tokens(const char* fn, const std::vector<int32_t>& ids, int32_t* out, size_t capacity, size_t* n) {
  *n = ids.size();
  if (ids.size() > capacity)
    return fail(KZ_ERR_BUFFER_TOO_SMALL, fn,
                "the buffer holds " + std::to_string(capacity) + " tokens, the result has ",
                std::to_string(ids.size()));
  if (!ids.empty()) std::memcpy(out, ids.data(), ids.size() * sizeof(int32_t));
  return KZ_OK;
}

bool has_tokenizer(const kz_engine& e) { return ApiAccess::engine(*e.engine).tokenizer.has_value(); }

void release(kz_engine* e) {
  if (e != nullptr && e->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete e;
}

// Marks a session busy for one call; a second, overlapping call is refused.
class BusyScope {
 public:
  explicit BusyScope(kz_session& s) : s_(s), acquired_(!s.busy.exchange(true, std::memory_order_acquire)) {}
  ~BusyScope() {
    if (acquired_) s_.busy.store(false, std::memory_order_release);
  }
  BusyScope(const BusyScope&) = delete;
  BusyScope& operator=(const BusyScope&) = delete;
  bool acquired() const { return acquired_; }

 private:
  kz_session& s_;
  bool acquired_;
};

kz_status busy_error(const char* fn) {
  return fail(KZ_ERR_INVALID_ARGUMENT, fn,
              "the session is in another call (from another thread, or from its own generate callback)");
}

// A getter's body: `get(*handle)`, or `fallback` (and the message) for a
// NULL handle.
template <class H, class T, class Get>
T get_or(const H* handle, const char* fn, const char* name, T fallback, Get get) {
  if (handle == nullptr) {
    null_arg(fn, name);
    return fallback;
  }
  return get(*handle);
}

int32_t stop_reason_code(const std::string& reason) {
  if (reason == "eos") return KZ_STOP_EOS;
  if (reason == "stop") return KZ_STOP_STOP;
  if (reason == "context") return KZ_STOP_CONTEXT;
  if (reason == "cancelled") return KZ_STOP_CANCELLED;
  return KZ_STOP_LENGTH;
}

}  // namespace

// The C functions are defined in this namespace so that they see the
// helpers above (a C-linkage function is the same function in any
// namespace); a using-directive would leak them into the rest of the unity
// batch.
extern "C" {

const char* kz_version(void) { return kazeia::version_string(); }

const char* kz_status_name(int status) {
  if (status >= KZ_OK && status <= KZ_ERR_CANCELLED)
    return kazeia::error_code_name(static_cast<kazeia::ErrorCode>(status));
  if (status == KZ_ERR_BUFFER_TOO_SMALL) return "buffer too small";
  if (status == KZ_ERR_OUT_OF_MEMORY) return "out of memory";
  return "unknown error";
}

const char* kz_last_error(void) { return t_last_error.c_str(); }

kz_engine_options kz_engine_options_default(void) {
  const kazeia::EngineOptions d;
  kz_engine_options o;
  o.n_threads = d.n_threads;
  o.n_ctx = d.n_ctx;
  o.kv_type = d.kv_type == kazeia::KvCacheType::kF32 ? KZ_KV_F32 : KZ_KV_F16;
  o.n_ubatch = d.n_ubatch;
  o.huge_pages = d.huge_pages ? 1 : 0;
  return o;
}

kz_status kz_engine_load(const char* path, const kz_engine_options* options, kz_engine** out) {
  return guarded(__func__, [&](const char* fn) -> kz_status {
    if (out == nullptr) return null_arg(fn, "out");
    *out = nullptr;
    if (path == nullptr) return null_arg(fn, "path");
    if (*path == '\0') return fail(KZ_ERR_INVALID_ARGUMENT, fn, "path is empty");
    const kz_engine_options o = options != nullptr ? *options : kz_engine_options_default();
    if (o.n_threads > kMaxThreads)
      return fail(KZ_ERR_INVALID_ARGUMENT, fn, "n_threads must be at most 1024, got ", std::to_string(o.n_threads));
    if (o.n_ctx <= 0 || o.n_ctx > kMaxContext)
      return fail(KZ_ERR_INVALID_ARGUMENT, fn, "n_ctx must be in 1..2^24, got ", std::to_string(o.n_ctx));
    if (o.kv_type != KZ_KV_F16 && o.kv_type != KZ_KV_F32)
      return fail(KZ_ERR_INVALID_ARGUMENT, fn, "kv_type must be KZ_KV_F16 or KZ_KV_F32, got ",
                  std::to_string(o.kv_type));
    kazeia::EngineOptions eo;
    eo.n_threads = o.n_threads;
    eo.n_ctx = o.n_ctx;
    eo.kv_type = o.kv_type == KZ_KV_F32 ? kazeia::KvCacheType::kF32 : kazeia::KvCacheType::kF16;
    eo.n_ubatch = o.n_ubatch;  // <= 0: Engine::load says so
    eo.huge_pages = o.huge_pages != 0;
    auto engine = kazeia::Engine::load(path, eo);
    if (!engine.ok()) {
      // The C++ API calls any failed open an I/O error; an app wants to
      // tell "not downloaded yet" from "cannot read".
      std::error_code ec;
      if (engine.status().code() == kazeia::ErrorCode::kIo && !std::filesystem::exists(path, ec) && !ec)
        return fail(KZ_ERR_NOT_FOUND, fn, engine.status().message());
      return fail_status(fn, engine.status());
    }
    auto handle = std::make_unique<kz_engine>();
    handle->engine = std::move(engine.value());
    handle->chat_family = handle->engine->chat_template_family();
    *out = handle.release();
    return KZ_OK;
  });
}

void kz_engine_free(kz_engine* engine) { release(engine); }

const char* kz_engine_architecture(const kz_engine* engine) {
  return get_or(engine, __func__, "engine", static_cast<const char*>(""),
                [&](const kz_engine& x) -> const char* { return x.engine->architecture().c_str(); });
}

const char* kz_engine_chat_template_family(const kz_engine* engine) {
  return get_or(engine, __func__, "engine", static_cast<const char*>(""),
                [&](const kz_engine& x) -> const char* { return x.chat_family.c_str(); });
}

int64_t kz_engine_n_vocab(const kz_engine* engine) {
  return get_or(engine, __func__, "engine", int64_t{-1},
                [&](const kz_engine& x) -> int64_t { return x.engine->n_vocab(); });
}

int64_t kz_engine_n_ctx(const kz_engine* engine) {
  return get_or(engine, __func__, "engine", int64_t{-1},
                [&](const kz_engine& x) -> int64_t { return x.engine->n_ctx(); });
}

int32_t kz_engine_n_threads(const kz_engine* engine) {
  return get_or(engine, __func__, "engine", int32_t{-1},
                [&](const kz_engine& x) -> int32_t { return static_cast<int32_t>(x.engine->n_threads()); });
}

uint64_t kz_engine_file_size(const kz_engine* engine) {
  return get_or(engine, __func__, "engine", uint64_t{0},
                [&](const kz_engine& x) -> uint64_t { return x.engine->file_size(); });
}

kz_status kz_tokenize(const kz_engine* engine, const char* text, size_t text_len, int add_special,
                      int parse_special, int32_t* tokens, size_t capacity, size_t* n_tokens) {
  return guarded(__func__, [&](const char* fn) -> kz_status {
    if (n_tokens == nullptr) return null_arg(fn, "n_tokens");
    *n_tokens = 0;
    if (engine == nullptr) return null_arg(fn, "engine");
    if (tokens == nullptr && capacity > 0) return fail(KZ_ERR_INVALID_ARGUMENT, fn, "tokens is NULL with a nonzero capacity");
    std::string_view s;
    kz_status st = KZ_OK;
    if (!text_arg(fn, "text", text, text_len, &s, &st)) return st;
    auto ids = engine->engine->tokenize(s, parse_special != 0, add_special != 0);
    if (!ids.ok()) return fail_status(fn, ids.status());
    return copy_tokens(fn, *ids, tokens, capacity, n_tokens);
  });
}

kz_status kz_detokenize(const kz_engine* engine, const int32_t* tokens, size_t n_tokens, char* text,
                        size_t capacity, size_t* text_len) {
  return guarded(__func__, [&](const char* fn) -> kz_status {
    if (text_len == nullptr) return null_arg(fn, "text_len");
    *text_len = 0;
    if (engine == nullptr) return null_arg(fn, "engine");
    if (tokens == nullptr && n_tokens > 0) return fail(KZ_ERR_INVALID_ARGUMENT, fn, "tokens is NULL with a nonzero count");
    if (text == nullptr && capacity > 0) return fail(KZ_ERR_INVALID_ARGUMENT, fn, "text is NULL with a nonzero capacity");
    if (!has_tokenizer(*engine))
      return fail(KZ_ERR_NOT_FOUND, fn, "model '" + engine->engine->path() + "' has no tokenizer");
    const std::string s =
        engine->engine->detokenize(n_tokens == 0 ? std::span<const int32_t>() : std::span(tokens, n_tokens));
    *text_len = s.size();
    if (capacity < s.size() + 1)
      return fail(KZ_ERR_BUFFER_TOO_SMALL, fn,
                  "the buffer holds " + std::to_string(capacity) + " bytes, the text needs ",
                  std::to_string(s.size() + 1) + " (with its NUL)");
    std::memcpy(text, s.data(), s.size());
    text[s.size()] = '\0';
    return KZ_OK;
  });
}

int kz_is_end_of_generation(const kz_engine* engine, int32_t token) {
  return get_or(engine, __func__, "engine", 0,
                [&](const kz_engine& x) -> int { return x.engine->is_end_of_generation(token) ? 1 : 0; });
}

kz_status kz_render_chat(const kz_engine* engine, const char* request_json, char** prompt, size_t* prompt_len) {
  return guarded(__func__, [&](const char* fn) -> kz_status {
    if (prompt == nullptr) return null_arg(fn, "prompt");
    *prompt = nullptr;
    if (prompt_len != nullptr) *prompt_len = 0;
    if (engine == nullptr) return null_arg(fn, "engine");
    if (request_json == nullptr) return null_arg(fn, "request_json");
    auto rendered = engine->engine->render_chat(request_json);
    if (!rendered.ok()) return fail_status(fn, rendered.status());
    char* p = static_cast<char*>(std::malloc(rendered->size() + 1));
    if (p == nullptr) return fail(KZ_ERR_OUT_OF_MEMORY, fn, "out of memory");
    std::memcpy(p, rendered->data(), rendered->size());
    p[rendered->size()] = '\0';
    *prompt = p;
    if (prompt_len != nullptr) *prompt_len = rendered->size();
    return KZ_OK;
  });
}

void kz_string_free(char* s) { std::free(s); }

kz_status kz_tokenize_chat_prompt(const kz_engine* engine, const char* prompt, size_t prompt_len,
                                  int32_t* tokens, size_t capacity, size_t* n_tokens) {
  return guarded(__func__, [&](const char* fn) -> kz_status {
    if (n_tokens == nullptr) return null_arg(fn, "n_tokens");
    *n_tokens = 0;
    if (engine == nullptr) return null_arg(fn, "engine");
    if (tokens == nullptr && capacity > 0) return fail(KZ_ERR_INVALID_ARGUMENT, fn, "tokens is NULL with a nonzero capacity");
    std::string_view s;
    kz_status st = KZ_OK;
    if (!text_arg(fn, "prompt", prompt, prompt_len, &s, &st)) return st;
    auto ids = engine->engine->tokenize_chat_prompt(s);
    if (!ids.ok()) return fail_status(fn, ids.status());
    return copy_tokens(fn, *ids, tokens, capacity, n_tokens);
  });
}

kz_status kz_session_new(kz_engine* engine, kz_session** out) {
  return guarded(__func__, [&](const char* fn) -> kz_status {
    if (out == nullptr) return null_arg(fn, "out");
    *out = nullptr;
    if (engine == nullptr) return null_arg(fn, "engine");
    auto session = engine->engine->new_session();
    if (!session.ok()) return fail_status(fn, session.status());
    auto handle = std::make_unique<kz_session>();
    handle->session = std::move(session.value());
    handle->owner = engine;
    engine->refs.fetch_add(1, std::memory_order_relaxed);
    *out = handle.release();
    return KZ_OK;
  });
}

void kz_session_free(kz_session* session) {
  if (session == nullptr) return;
  kz_engine* owner = session->owner;
  delete session;  // the Session first: it points into its engine
  release(owner);
}

kz_status kz_session_reset(kz_session* session) {
  return guarded(__func__, [&](const char* fn) -> kz_status {
    if (session == nullptr) return null_arg(fn, "session");
    BusyScope busy(*session);
    if (!busy.acquired()) return busy_error(fn);
    session->session->reset();
    session->result = kazeia::GenerateResult();
    return KZ_OK;
  });
}

int64_t kz_session_n_past(const kz_session* session) {
  return get_or(session, __func__, "session", int64_t{-1},
                [&](const kz_session& x) -> int64_t { return x.session->n_past(); });
}

int64_t kz_session_n_ctx(const kz_session* session) {
  return get_or(session, __func__, "session", int64_t{-1},
                [&](const kz_session& x) -> int64_t { return x.session->n_ctx(); });
}

kz_status kz_session_eval(kz_session* session, const int32_t* tokens, size_t n_tokens, float* logits) {
  return guarded(__func__, [&](const char* fn) -> kz_status {
    if (session == nullptr) return null_arg(fn, "session");
    if (tokens == nullptr) return null_arg(fn, "tokens");
    if (n_tokens == 0) return fail(KZ_ERR_INVALID_ARGUMENT, fn, "no tokens to evaluate");
    BusyScope busy(*session);
    if (!busy.acquired()) return busy_error(fn);
    // Session::eval checks ids and room before evaluating anything.
    const kazeia::Status st = session->session->eval(std::span(tokens, n_tokens), logits, false);
    return st.ok() ? KZ_OK : fail_status(fn, st);
  });
}

kz_generate_options kz_generate_options_default(void) {
  const kazeia::GenerateOptions d;
  kz_generate_options o;
  o.max_tokens = d.max_tokens;
  o.sampling.temperature = d.sampling.temperature;
  o.sampling.top_k = d.sampling.top_k;
  o.sampling.top_p = d.sampling.top_p;
  o.sampling.min_p = d.sampling.min_p;
  o.sampling.repeat_penalty = d.sampling.repeat_penalty;
  o.sampling.repeat_last_n = d.sampling.repeat_last_n;
  o.sampling.presence_penalty = d.sampling.presence_penalty;
  o.sampling.frequency_penalty = d.sampling.frequency_penalty;
  o.sampling.seed = d.sampling.seed;
  o.stop = nullptr;
  o.n_stop = 0;
  o.ignore_eos = d.ignore_eos ? 1 : 0;
  o.max_think_tokens = d.max_think_tokens;
  return o;
}

const char* kz_stop_reason_name(int reason) {
  switch (reason) {
    case KZ_STOP_LENGTH: return "length";
    case KZ_STOP_EOS: return "eos";
    case KZ_STOP_STOP: return "stop";
    case KZ_STOP_CONTEXT: return "context";
    case KZ_STOP_CANCELLED: return "cancelled";
    default: return "unknown";
  }
}

kz_status kz_session_generate(kz_session* session, const int32_t* prompt, size_t n_prompt,
                              const kz_generate_options* options, kz_text_callback callback, void* user,
                              kz_generate_result* out) {
  return guarded(__func__, [&](const char* fn) -> kz_status {
    if (out != nullptr) {
      *out = kz_generate_result{};
      out->text = "";
    }
    if (session == nullptr) return null_arg(fn, "session");
    if (prompt == nullptr) return null_arg(fn, "prompt");
    if (n_prompt == 0) return fail(KZ_ERR_INVALID_ARGUMENT, fn, "the prompt is empty");
    const kz_generate_options o = options != nullptr ? *options : kz_generate_options_default();
    if (o.stop == nullptr && o.n_stop > 0) return fail(KZ_ERR_INVALID_ARGUMENT, fn, "stop is NULL with n_stop > 0");
    kazeia::GenerateOptions go;
    go.max_tokens = o.max_tokens;
    go.sampling.temperature = o.sampling.temperature;
    go.sampling.top_k = o.sampling.top_k;
    go.sampling.top_p = o.sampling.top_p;
    go.sampling.min_p = o.sampling.min_p;
    go.sampling.repeat_penalty = o.sampling.repeat_penalty;
    go.sampling.repeat_last_n = o.sampling.repeat_last_n;
    go.sampling.presence_penalty = o.sampling.presence_penalty;
    go.sampling.frequency_penalty = o.sampling.frequency_penalty;
    go.sampling.seed = o.sampling.seed;
    go.ignore_eos = o.ignore_eos != 0;
    go.max_think_tokens = o.max_think_tokens;
    for (size_t i = 0; i < o.n_stop; ++i) {
      if (o.stop[i] == nullptr) return fail(KZ_ERR_INVALID_ARGUMENT, fn, "stop[" + std::to_string(i) + "] is NULL");
      go.stop.emplace_back(o.stop[i]);
    }
    BusyScope busy(*session);
    if (!busy.acquired()) return busy_error(fn);
    session->result = kazeia::GenerateResult();
    kazeia::TextCallback on_text;
    if (callback != nullptr) {
      on_text = [&](std::string_view piece) {
        session->piece.assign(piece);
        return callback(session->piece.c_str(), piece.size(), user) != 0;
      };
    }
    auto r = session->session->generate(std::span(prompt, n_prompt), go, on_text);
    if (!r.ok()) return fail_status(fn, r.status());
    session->result = std::move(r.value());
    if (out != nullptr) {
      const kazeia::GenerateResult& g = session->result;
      out->text = g.text.c_str();
      out->text_len = g.text.size();
      out->tokens = g.tokens.data();
      out->n_tokens = g.tokens.size();
      out->stop_reason = stop_reason_code(g.stop_reason);
      out->think_forced_closed = g.think_forced_closed ? 1 : 0;
      out->think_tokens = g.think_tokens;
      out->prompt_tokens = g.prompt_tokens;
      out->reused_tokens = g.reused_tokens;
      out->prompt_seconds = g.prompt_seconds;
      out->generate_seconds = g.generate_seconds;
    }
    return KZ_OK;
  });
}

}  // extern "C"

}  // namespace kazeia::c_api
