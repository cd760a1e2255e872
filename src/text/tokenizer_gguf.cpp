// Vocabulary from a GGUF file's tokenizer.ggml.* keys, with llama.cpp's
// defaults for absent keys (llama_vocab::impl::load).
#include <string>

#include "base/log.h"
#include "format/gguf.h"
#include "text/tokenizer.h"
#include "text/tokenizer_vocab.h"

namespace kazeia::text {

namespace {

Result<const gguf::Array*> get_array_of(const gguf::File& file, std::string_view key, bool required) {
  const gguf::Value* value = file.find(key);
  if (!value) {
    if (required) return NotFound("missing key " + std::string(key));
    return static_cast<const gguf::Array*>(nullptr);
  }
  const gguf::Array* array = value->as_array();
  if (!array) {
    return InvalidFile("key " + std::string(key) + ": expected an array, got " +
                       std::string(gguf::value_type_name(value->type())));
  }
  return array;
}

Result<std::vector<std::string>> get_strings(const gguf::File& file, std::string_view key) {
  KZ_ASSIGN_OR_RETURN(const gguf::Array* array, get_array_of(file, key, true));
  if (array->element_type != gguf::ValueType::kString) {
    return InvalidFile("key " + std::string(key) + ": expected an array of strings, got an array of " +
                       std::string(gguf::value_type_name(array->element_type)));
  }
  std::vector<std::string> out;
  out.reserve(array->items.size());
  for (const gguf::Value& v : array->items) {
    const std::string* s = v.as_string();
    if (!s) return InvalidFile("key " + std::string(key) + ": non-string element");
    out.push_back(*s);
  }
  return out;
}

// A special-token id key: absent keeps the default; an id outside the
// vocabulary (e.g. 4294967295 for "none") keeps it too, as llama.cpp does.
Status read_id(const gguf::File& file, std::string_view key, size_t n_tokens, int32_t& id) {
  const gguf::Value* value = file.find(key);
  if (!value) return OkStatus();
  const std::optional<uint64_t> v = value->as_uint();
  if (!value->is_integer()) {
    return InvalidFile("key " + std::string(key) + ": expected an integer token id, got " +
                       std::string(gguf::value_type_name(value->type())));
  }
  if (!v || *v >= n_tokens) {
    KZ_LOG_INFO("%.*s = %s is not a token id (vocabulary of %zu); using %d", static_cast<int>(key.size()),
                key.data(), value->summary().c_str(), n_tokens, id);
    return OkStatus();
  }
  id = static_cast<int32_t>(*v);
  return OkStatus();
}

Status read_flag(const gguf::File& file, std::string_view key, std::optional<bool>& flag) {
  const gguf::Value* value = file.find(key);
  if (!value) return OkStatus();
  if (value->type() != gguf::ValueType::kBool) {
    return InvalidFile("key " + std::string(key) + ": expected a bool, got " +
                       std::string(gguf::value_type_name(value->type())));
  }
  flag = std::get<bool>(value->v);
  return OkStatus();
}

}  // namespace

Result<Vocab> load_vocab_from_gguf(const gguf::File& file) {
  Vocab vocab;
  const gguf::Value* model = file.find("tokenizer.ggml.model");
  if (!model) return NotFound("missing key tokenizer.ggml.model (the file has no tokenizer)");
  const std::string* model_name = model->as_string();
  if (!model_name) return InvalidFile("key tokenizer.ggml.model: expected a string");
  if (*model_name == "gpt2") {
    vocab.kind = TokenizerKind::kBpe;
  } else if (*model_name == "llama") {
    vocab.kind = TokenizerKind::kSpm;
  } else {
    return Unsupported("tokenizer.ggml.model = '" + *model_name +
                       "' is not supported (supported: gpt2 = byte-level BPE, llama = SentencePiece)");
  }
  if (const gguf::Value* pre = file.find("tokenizer.ggml.pre")) {
    const std::string* s = pre->as_string();
    if (!s) return InvalidFile("key tokenizer.ggml.pre: expected a string");
    vocab.pre = *s;
  }

  KZ_ASSIGN_OR_RETURN(vocab.tokens, get_strings(file, "tokenizer.ggml.tokens"));
  const size_t n = vocab.tokens.size();

  KZ_ASSIGN_OR_RETURN(const gguf::Array* types, get_array_of(file, "tokenizer.ggml.token_type", false));
  if (types) {
    if (types->items.size() < n) {
      return InvalidFile("key tokenizer.ggml.token_type: " + std::to_string(types->items.size()) +
                         " entries for " + std::to_string(n) + " tokens");
    }
    vocab.types.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      const std::optional<int64_t> t = types->items[i].as_int();
      if (!t) return InvalidFile("key tokenizer.ggml.token_type: element " + std::to_string(i) + " is not an integer");
      vocab.types.push_back(*t >= 0 && *t <= 6 ? static_cast<TokenType>(*t) : TokenType::kUndefined);
    }
  }

  KZ_ASSIGN_OR_RETURN(const gguf::Array* scores, get_array_of(file, "tokenizer.ggml.scores", false));
  if (scores) {
    if (scores->items.size() < n) {
      return InvalidFile("key tokenizer.ggml.scores: " + std::to_string(scores->items.size()) +
                         " entries for " + std::to_string(n) + " tokens");
    }
    vocab.scores.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      const std::optional<double> s = scores->items[i].as_float();
      if (!s) return InvalidFile("key tokenizer.ggml.scores: element " + std::to_string(i) + " is not a number");
      vocab.scores.push_back(static_cast<float>(*s));
    }
  }

  if (vocab.kind == TokenizerKind::kBpe) {
    if (!file.find("tokenizer.ggml.merges")) return NotFound("missing key tokenizer.ggml.merges (needed by gpt2 tokenizers)");
    KZ_ASSIGN_OR_RETURN(vocab.merges, get_strings(file, "tokenizer.ggml.merges"));
  } else {
    // llama.cpp's SentencePiece defaults.
    vocab.unk_id = n > 0 ? 0 : kNoToken;
    vocab.bos_id = n > 1 ? 1 : kNoToken;
    vocab.eos_id = n > 2 ? 2 : kNoToken;
  }

  KZ_RETURN_IF_ERROR(read_id(file, "tokenizer.ggml.bos_token_id", n, vocab.bos_id));
  KZ_RETURN_IF_ERROR(read_id(file, "tokenizer.ggml.eos_token_id", n, vocab.eos_id));
  KZ_RETURN_IF_ERROR(read_id(file, "tokenizer.ggml.unknown_token_id", n, vocab.unk_id));
  KZ_RETURN_IF_ERROR(read_id(file, "tokenizer.ggml.padding_token_id", n, vocab.pad_id));
  KZ_RETURN_IF_ERROR(read_id(file, "tokenizer.ggml.seperator_token_id", n, vocab.sep_id));  // sic
  KZ_RETURN_IF_ERROR(read_id(file, "tokenizer.ggml.eot_token_id", n, vocab.eot_id));
  KZ_RETURN_IF_ERROR(read_id(file, "tokenizer.ggml.eom_token_id", n, vocab.eom_id));
  KZ_RETURN_IF_ERROR(read_flag(file, "tokenizer.ggml.add_bos_token", vocab.add_bos));
  KZ_RETURN_IF_ERROR(read_flag(file, "tokenizer.ggml.add_eos_token", vocab.add_eos));
  KZ_RETURN_IF_ERROR(read_flag(file, "tokenizer.ggml.add_space_prefix", vocab.add_space_prefix));
  return vocab;
}

Result<Tokenizer> Tokenizer::from_gguf(const gguf::File& file) {
  Result<Vocab> vocab = load_vocab_from_gguf(file);
  if (!vocab.ok()) return vocab.status().with_context(file.source_name());
  Result<Tokenizer> tokenizer = Tokenizer::create(std::move(vocab).value());
  if (!tokenizer.ok()) return tokenizer.status().with_context(file.source_name());
  return tokenizer;
}

Result<Tokenizer> Tokenizer::load(const std::string& gguf_path) {
  KZ_ASSIGN_OR_RETURN(gguf::File file, gguf::File::open(gguf_path));
  return from_gguf(file);
}

}  // namespace kazeia::text
