#include "text/detokenizer.h"

namespace kazeia::text {

StreamingDetokenizer::StreamingDetokenizer(const Tokenizer& tokenizer, const Options& options)
    : tokenizer_(&tokenizer),
      render_special_(options.render_special),
      strip_first_(options.whole_text && tokenizer.add_space_prefix()) {}

void StreamingDetokenizer::push(int32_t id, std::string& out) {
  std::string_view piece = tokenizer_->token_to_piece(id, render_special_);
  if (at_start_ && strip_first_ && !piece.empty() && piece.front() == ' ') piece.remove_prefix(1);
  at_start_ = false;  // as decode(): only the very first token, rendered or not
  utf8_.push(piece, out);
}

std::string StreamingDetokenizer::push(int32_t id) {
  std::string out;
  push(id, out);
  return out;
}

std::string StreamingDetokenizer::flush() {
  std::string out;
  utf8_.flush(out);
  return out;
}

void StreamingDetokenizer::reset() {
  utf8_.reset();
  at_start_ = true;
}

}  // namespace kazeia::text
