// kazeia::Tokenizer / Detokenizer: the public face of text::Tokenizer.
#include "kazeia/tokenizer.h"

#include "text/detokenizer.h"
#include "text/tokenizer.h"

namespace kazeia {

struct Tokenizer::Impl {
  explicit Impl(text::Tokenizer t) : tok(std::move(t)) {}
  text::Tokenizer tok;
};

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

Result<Tokenizer> Tokenizer::load(const std::string& gguf_path) {
  KZ_ASSIGN_OR_RETURN(text::Tokenizer tok, text::Tokenizer::load(gguf_path));
  return Tokenizer(std::make_unique<Impl>(std::move(tok)));
}

std::vector<int32_t> Tokenizer::tokenize(std::string_view text, const TokenizeOptions& options) const {
  return impl_->tok.encode(text, options.parse_special, options.add_special);
}

std::string Tokenizer::detokenize(std::span<const int32_t> ids, const DetokenizeOptions& options) const {
  text::DecodeOptions d;
  d.render_special = options.render_special;
  d.remove_special = options.remove_special;
  return impl_->tok.decode(ids, d);
}

std::string Tokenizer::token_to_piece(int32_t id, bool render_special) const {
  return std::string(impl_->tok.token_to_piece(id, render_special));
}

std::string Tokenizer::token_text(int32_t id) const { return std::string(impl_->tok.token_text(id)); }
int32_t Tokenizer::vocab_size() const { return impl_->tok.vocab_size(); }

SpecialTokens Tokenizer::special_tokens() const {
  const text::Tokenizer& t = impl_->tok;
  SpecialTokens s;
  s.bos = t.bos_id();
  s.eos = t.eos_id();
  s.eot = t.eot_id();
  s.unk = t.unk_id();
  s.pad = t.pad_id();
  return s;
}

bool Tokenizer::is_end_of_generation(int32_t id) const { return impl_->tok.is_eog(id); }
bool Tokenizer::is_control(int32_t id) const { return impl_->tok.is_control(id); }
bool Tokenizer::add_bos() const { return impl_->tok.add_bos(); }
std::string Tokenizer::model() const { return impl_->tok.kind() == text::TokenizerKind::kBpe ? "gpt2" : "llama"; }
std::string Tokenizer::pre() const { return impl_->tok.pre(); }

struct Detokenizer::Impl {
  Impl(const text::Tokenizer& tok, const text::StreamingDetokenizer::Options& o) : stream(tok, o) {}
  text::StreamingDetokenizer stream;
};

Detokenizer::Detokenizer(const Tokenizer& tokenizer) : Detokenizer(tokenizer, Options{}) {}

Detokenizer::Detokenizer(const Tokenizer& tokenizer, const Options& options) {
  text::StreamingDetokenizer::Options o;
  o.render_special = options.render_special;
  o.whole_text = options.whole_text;
  impl_ = std::make_unique<Impl>(tokenizer.impl_->tok, o);
}

Detokenizer::Detokenizer(Detokenizer&&) noexcept = default;
Detokenizer& Detokenizer::operator=(Detokenizer&&) noexcept = default;
Detokenizer::~Detokenizer() = default;

std::string Detokenizer::push(int32_t id) { return impl_->stream.push(id); }
std::string Detokenizer::flush() { return impl_->stream.flush(); }

}  // namespace kazeia
