/* Kazeia's C API: load a GGUF model, tokenize, render chat prompts, run
 * sessions (evaluate tokens, get logits, generate text). Plain C99, for JNI,
 * Swift, Dart FFI and other bindings; implemented over the C++ API
 * (kazeia/engine.h) in src/api/c_api.cpp.
 *
 * Errors
 *   Functions that can fail return a kz_status (KZ_OK = 0). On failure,
 *   kz_last_error() returns a message naming what failed ("kz_engine_load:
 *   cannot open 'm.gguf': No such file or directory"). The message is
 *   thread-local, stays valid until the next failing call on the same thread,
 *   and is not cleared by successful calls. Getters that cannot fail but for
 *   a NULL handle return a documented sentinel (and set the message).
 *   NULL pointers and unusable sizes are reported, never dereferenced; no C++
 *   exception leaves the library (one that would is KZ_ERR_INTERNAL, or
 *   KZ_ERR_OUT_OF_MEMORY for a failed allocation), and bad input never aborts
 *   the process.
 *
 * Text
 *   Input text is (pointer, length in bytes): it may hold NUL bytes; a NULL
 *   pointer is accepted with length 0. Output text is raw bytes (a byte-level
 *   token can produce invalid UTF-8), always followed by a NUL that the
 *   returned lengths do not count.
 *
 * Caller buffers (kz_tokenize, kz_tokenize_chat_prompt, kz_detokenize)
 *   The count out-parameter always receives the size of the full result. If
 *   the buffer holds it, it is written and KZ_OK returned; otherwise nothing
 *   is written and KZ_ERR_BUFFER_TOO_SMALL is returned: call again with a
 *   buffer of that size (plus 1 for kz_detokenize's NUL). A NULL buffer with
 *   capacity 0 is the way to ask for the size.
 *
 * Lifetimes
 *   kz_engine_free may be called while sessions of the engine still exist:
 *   the engine's memory is released when the last of them is freed (a
 *   binding may free handles in any order). Every other use of a freed
 *   handle is undefined. Strings returned by getters live as long as the
 *   handle; kz_generate_result's pointers as documented there.
 *
 * Threads
 *   - An engine's const functions (getters, kz_tokenize, kz_detokenize,
 *     kz_is_end_of_generation, kz_render_chat, kz_tokenize_chat_prompt) may be
 *     called from any number of threads at once. So may kz_session_new.
 *   - A session is used by one thread at a time. A call on a session that is
 *     already inside kz_session_eval / kz_session_generate (another thread,
 *     or the generate callback calling back into its own session) is refused
 *     with KZ_ERR_INVALID_ARGUMENT; do not rely on this to synchronise.
 *   - Sessions of one engine may run on different threads at the same time.
 *     They share the engine's worker threads, which run one parallel
 *     operation at a time: concurrent sessions take turns (same results as
 *     one after the other), they do not run faster. For parallel throughput,
 *     load an engine per thread (the weights are a shared file mapping).
 */
#ifndef KAZEIA_KAZEIA_H
#define KAZEIA_KAZEIA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Status ---------------------------------------------------------- */

/* Values 0..9 are those of kazeia::ErrorCode (include/kazeia/status.h). */
typedef enum kz_status {
  KZ_OK = 0,
  KZ_ERR_INVALID_ARGUMENT = 1, /* NULL pointer, bad size or option */
  KZ_ERR_INVALID_FILE = 2,     /* the model file is malformed or inconsistent */
  KZ_ERR_UNSUPPORTED = 3,      /* well-formed, but not implemented (architecture, type) */
  KZ_ERR_NOT_FOUND = 4,        /* the model file does not exist; the model has no tokenizer */
  KZ_ERR_IO = 5,               /* the system refused (open, mmap, read) */
  KZ_ERR_OUT_OF_RANGE = 6,     /* a token id past the vocabulary, the context is full */
  KZ_ERR_INTERNAL = 7,         /* a bug in Kazeia (please report kz_last_error()) */
  KZ_ERR_TIMEOUT = 8,
  KZ_ERR_CANCELLED = 9,
  KZ_ERR_BUFFER_TOO_SMALL = 10, /* see "Caller buffers" above */
  KZ_ERR_OUT_OF_MEMORY = 11
} kz_status;

/* "0.1.0". */
const char* kz_version(void);
/* "ok", "invalid argument", ...; "unknown error" for other values. */
const char* kz_status_name(int status);
/* The message of this thread's last failure; "" if none yet. Never NULL. */
const char* kz_last_error(void);

/* ---- Engine: one loaded model ------------------------------------------ */

typedef struct kz_engine kz_engine;
typedef struct kz_session kz_session;

typedef enum kz_kv_type { KZ_KV_F16 = 0, KZ_KV_F32 = 1 } kz_kv_type;

typedef struct kz_engine_options {
  int32_t n_threads;  /* <= 0: the physical cores available; at most 1024 */
  int64_t n_ctx;      /* context of each session, 1 .. 2^24 (default 4096) */
  int32_t kv_type;    /* kz_kv_type (default KZ_KV_F16) */
  int64_t n_ubatch;   /* tokens per forward pass, > 0 (default 256) */
  int32_t huge_pages; /* nonzero (default): read the weights in at load, on 2 MiB pages */
} kz_engine_options;

kz_engine_options kz_engine_options_default(void);

/* Loads a GGUF file. options NULL: defaults. On success *out is a new engine
 * (free it with kz_engine_free); on failure *out is NULL. */
kz_status kz_engine_load(const char* path, const kz_engine_options* options, kz_engine** out);
/* NULL is ignored. See "Lifetimes". */
void kz_engine_free(kz_engine* engine);

/* NULL engine: "" / -1 / 0. */
const char* kz_engine_architecture(const kz_engine* engine); /* "qwen3", "llama", ... */
const char* kz_engine_chat_template_family(const kz_engine* engine); /* "qwen3", "chatml", ..., "unknown" */
int64_t kz_engine_n_vocab(const kz_engine* engine);
int64_t kz_engine_n_ctx(const kz_engine* engine);
int32_t kz_engine_n_threads(const kz_engine* engine);
uint64_t kz_engine_file_size(const kz_engine* engine);

/* ---- Tokens ---------------------------------------------------------- */

/* Text -> token ids with the model's tokenizer (KZ_ERR_NOT_FOUND if it has
 * none). add_special: add BOS when the vocabulary asks for it; parse_special:
 * "<|im_start|>" and the like become their special tokens. */
kz_status kz_tokenize(const kz_engine* engine, const char* text, size_t text_len, int add_special,
                      int parse_special, int32_t* tokens, size_t capacity, size_t* n_tokens);
/* Token ids -> text (ids outside the vocabulary render as nothing). *text_len
 * receives the byte count; the buffer needs text_len + 1 bytes. */
kz_status kz_detokenize(const kz_engine* engine, const int32_t* tokens, size_t n_tokens, char* text,
                        size_t capacity, size_t* text_len);
/* 1 if the id ends generation (EOS, EOT, <|im_end|>, ...), else 0 (also
 * for a NULL engine or an id outside the vocabulary). */
int kz_is_end_of_generation(const kz_engine* engine, int32_t token);

/* ---- Chat ------------------------------------------------------------ */

/* Renders an OpenAI-style chat request (NUL-terminated JSON: {"messages":
 * [...], "tools": [...], "add_generation_prompt": true,
 * "chat_template_kwargs": {"enable_thinking": false}}) with the model's chat
 * template. *prompt receives a new NUL-terminated string, freed with
 * kz_string_free; *prompt_len (may be NULL) its length. */
kz_status kz_render_chat(const kz_engine* engine, const char* request_json, char** prompt, size_t* prompt_len);
/* Frees a string returned by kz_render_chat. NULL is ignored. */
void kz_string_free(char* s);
/* Tokenizes a rendered chat prompt: special tokens parsed, BOS added only when
 * the vocabulary wants one and the template did not write it. */
kz_status kz_tokenize_chat_prompt(const kz_engine* engine, const char* prompt, size_t prompt_len,
                                  int32_t* tokens, size_t capacity, size_t* n_tokens);

/* ---- Sessions: one sequence (KV cache, history) over an engine ----------- */

/* On success *out is a new, empty session; on failure NULL. */
kz_status kz_session_new(kz_engine* engine, kz_session** out);
/* NULL is ignored. Must not be called while the session is in a call. */
void kz_session_free(kz_session* session);
/* Forgets the history (and the prefix cache). */
kz_status kz_session_reset(kz_session* session);
/* Tokens evaluated so far / the context size; -1 for a NULL session. */
int64_t kz_session_n_past(const kz_session* session);
int64_t kz_session_n_ctx(const kz_session* session);

/* Evaluates tokens after the history. logits (may be NULL) receives the last
 * token's row: kz_engine_n_vocab() floats. n_tokens must be > 0. Invalid ids
 * (KZ_ERR_OUT_OF_RANGE) or too little room left in the context
 * (KZ_ERR_OUT_OF_RANGE) are reported before anything is evaluated. */
kz_status kz_session_eval(kz_session* session, const int32_t* tokens, size_t n_tokens, float* logits);

typedef struct kz_sampling_options {
  float temperature;       /* <= 0: greedy (default 0.8) */
  int32_t top_k;           /* default 40 */
  float top_p;             /* default 0.95 */
  float min_p;             /* default 0.05 */
  float repeat_penalty;    /* default 1.0 (off) */
  int32_t repeat_last_n;   /* default 64 */
  float presence_penalty;  /* default 0 */
  float frequency_penalty; /* default 0 */
  uint64_t seed;
} kz_sampling_options;

typedef struct kz_generate_options {
  int32_t max_tokens;        /* < 0: until EOS, a stop string or a full context (default 128) */
  kz_sampling_options sampling;
  const char* const* stop;   /* n_stop non-empty NUL-terminated stop strings (not part of the text); */
  size_t n_stop;             /* copied during the call; default none */
  int32_t ignore_eos;        /* nonzero: keep generating past end-of-generation tokens */
  int32_t max_think_tokens;  /* >= 0: after this many tokens inside <think>, insert "\n</think>\n\n"
                                (these do not count against max_tokens); default -1 (no budget) */
} kz_generate_options;

kz_generate_options kz_generate_options_default(void);

typedef enum kz_stop_reason {
  KZ_STOP_LENGTH = 0,    /* max_tokens reached */
  KZ_STOP_EOS = 1,       /* an end-of-generation token */
  KZ_STOP_STOP = 2,      /* a stop string */
  KZ_STOP_CONTEXT = 3,   /* the context is full */
  KZ_STOP_CANCELLED = 4  /* the callback returned 0 */
} kz_stop_reason;

/* "length", "eos", "stop", "context", "cancelled"; "unknown" otherwise. */
const char* kz_stop_reason_name(int reason);

/* text and tokens belong to the session: valid until its next
 * kz_session_generate, kz_session_reset or kz_session_free. */
typedef struct kz_generate_result {
  const char* text;          /* generated text, stop string excluded; NUL-terminated */
  size_t text_len;
  const int32_t* tokens;     /* generated ids, including a final end-of-generation token */
  size_t n_tokens;
  int32_t stop_reason;       /* kz_stop_reason */
  int32_t think_forced_closed; /* 1: the reasoning budget inserted </think> */
  int64_t think_tokens;      /* generated inside <think> (counted with a budget only) */
  int64_t prompt_tokens;     /* prompt tokens evaluated (after prefix reuse) */
  int64_t reused_tokens;     /* prompt tokens served from the session's history */
  double prompt_seconds;
  double generate_seconds;
} kz_generate_result;

/* Receives generated text as it becomes valid UTF-8: len bytes at piece
 * (NUL-terminated; valid only during the call). Return nonzero to go on, 0
 * to stop (the result's stop_reason is then KZ_STOP_CANCELLED). It runs on
 * the calling thread and must not call functions on the same session. */
typedef int (*kz_text_callback)(const char* piece, size_t len, void* user);

/* Generates after the prompt. The longest prefix of the prompt that the
 * history already holds is reused (a chat's next turn evaluates only its new
 * tokens); the rest of the history is dropped. options NULL: defaults;
 * callback and out may be NULL. Cancelling through the callback is KZ_OK. On
 * failure *out (if given) is zeroed, with text "". */
kz_status kz_session_generate(kz_session* session, const int32_t* prompt, size_t n_prompt,
                              const kz_generate_options* options, kz_text_callback callback, void* user,
                              kz_generate_result* out);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* KAZEIA_KAZEIA_H */
