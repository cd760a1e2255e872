// Jinja lexer; see jinja_lexer.h. The whitespace rules follow Jinja2's
// lexer (3.x): `-` strips all whitespace on its side, `+` disables
// lstrip/trim for its tag, lstrip_blocks only removes spaces and tabs after
// the last newline (or at the start of a line reached through a previous
// tag that consumed a newline).
#include "text/jinja_lexer.h"

#include <cctype>
#include <cstdlib>
#include <cstring>

#include "text/jinja_pystr.h"

namespace kazeia::jinja {
namespace {

bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string normalize_newlines(std::string_view in, bool keep_trailing_newline) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '\r') {
      out += '\n';
      if (i + 1 < in.size() && in[i + 1] == '\n') ++i;
    } else {
      out += in[i];
    }
  }
  if (!keep_trailing_newline && !out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class Lexer {
 public:
  Lexer(std::string_view source, const LexOptions& options)
      : src_(normalize_newlines(source, options.keep_trailing_newline)), opt_(options) {}

  Result<std::vector<Token>> run() {
    while (pos_ < src_.size()) {
      const size_t tag = find_tag(pos_);
      if (tag == std::string::npos) {
        emit_text(src_.substr(pos_));
        break;
      }
      std::string data = src_.substr(pos_, tag - pos_);
      const char kind = src_[tag + 1];
      size_t p = tag + 2;
      char sign = 0;
      if (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) sign = src_[p++];
      strip_before_tag(data, kind, sign);
      emit_text(std::move(data));
      pos_ = p;
      Status st;
      size_t raw_body = 0;
      if (kind == '#') st = lex_comment(tag);
      else if (kind == '%' && is_raw_begin(p, &raw_body)) st = lex_raw(tag, raw_body);
      else st = lex_tag(tag, kind);
      KZ_RETURN_IF_ERROR(st);
    }
    Token eof;
    eof.type = TokenType::kEof;
    eof.line = line_at(src_.size());
    out_.push_back(std::move(eof));
    return std::move(out_);
  }

 private:
  std::string src_;
  LexOptions opt_;
  size_t pos_ = 0;
  bool line_starting_ = true;
  std::vector<Token> out_;
  size_t line_pos_ = 0;  // line_at() cache: position and line counted so far
  int line_ = 1;

  int line_at(size_t pos) {
    if (pos < line_pos_) {
      line_pos_ = 0;
      line_ = 1;
    }
    for (; line_pos_ < pos && line_pos_ < src_.size(); ++line_pos_) {
      if (src_[line_pos_] == '\n') ++line_;
    }
    return line_;
  }

  Status error(size_t pos, const std::string& msg) {
    return InvalidFile("template line " + std::to_string(line_at(pos)) + ": " + msg);
  }

  size_t find_tag(size_t from) const {
    size_t p = from;
    while ((p = src_.find('{', p)) != std::string::npos) {
      if (p + 1 < src_.size() && (src_[p + 1] == '{' || src_[p + 1] == '%' || src_[p + 1] == '#')) return p;
      ++p;
    }
    return std::string::npos;
  }

  void emit_text(std::string text) {
    if (text.empty()) return;
    Token t;
    t.type = TokenType::kText;
    t.line = line_at(pos_);
    t.text = std::move(text);
    out_.push_back(std::move(t));
  }

  void push(TokenType type, std::string text, size_t at) {
    Token t;
    t.type = type;
    t.text = std::move(text);
    t.line = line_at(at);
    out_.push_back(std::move(t));
  }

  // Whitespace control for the text in front of a tag.
  void strip_before_tag(std::string& data, char kind, char sign) const {
    if (sign == '-') {
      data = py::strip(data, std::nullopt, false, true);
      return;
    }
    if (sign == '+' || !opt_.lstrip_blocks || kind == '{') return;
    const size_t nl = data.rfind('\n');
    const size_t l_pos = nl == std::string::npos ? 0 : nl + 1;
    if (l_pos == 0 && !line_starting_) return;
    for (size_t i = l_pos; i < data.size(); ++i) {
      if (data[i] != ' ' && data[i] != '\t') return;
    }
    data.resize(l_pos);
  }

  // Skips Python whitespace from pos_; returns whether the last skipped
  // character was a newline.
  bool skip_whitespace() {
    bool last_newline = false;
    while (pos_ < src_.size()) {
      size_t i = pos_;
      const uint32_t cp = py::next_code_point(src_, i);
      if (!py::is_space(cp)) break;
      last_newline = cp == '\n';
      pos_ = i;
    }
    return last_newline;
  }

  // After a block or comment end: '-' strips, '+' keeps, else trim_blocks.
  void after_block_end(char sign) {
    if (sign == '-') {
      line_starting_ = skip_whitespace();
    } else if (sign != '+' && opt_.trim_blocks && pos_ < src_.size() && src_[pos_] == '\n') {
      ++pos_;
      line_starting_ = true;
    } else {
      line_starting_ = false;
    }
  }

  Status lex_comment(size_t tag) {
    const size_t body = pos_;
    const size_t end = src_.find("#}", body);
    if (end == std::string::npos) return error(tag, "unclosed comment (missing '#}')");
    const char sign = end > body && (src_[end - 1] == '-' || src_[end - 1] == '+') ? src_[end - 1] : 0;
    pos_ = end + 2;
    after_block_end(sign);
    return OkStatus();
  }

  // `{% raw %}`: p is just after `{%` and its sign.
  bool is_raw_begin(size_t p, size_t* body) {
    size_t q = p;
    while (q < src_.size() && py::is_space(static_cast<unsigned char>(src_[q]))) ++q;
    if (src_.compare(q, 3, "raw") != 0) return false;
    q += 3;
    if (q < src_.size() && is_ident_char(src_[q])) return false;
    while (q < src_.size() && py::is_space(static_cast<unsigned char>(src_[q]))) ++q;
    if (src_.compare(q, 3, "-%}") == 0) {
      pos_ = q + 3;
      skip_whitespace();
    } else if (src_.compare(q, 2, "%}") == 0) {
      pos_ = q + 2;
    } else {
      return false;
    }
    *body = pos_;
    return true;
  }

  Status lex_raw(size_t tag, size_t body) {
    size_t p = body;
    while ((p = src_.find("{%", p)) != std::string::npos) {
      size_t q = p + 2;
      char sign = 0;
      if (q < src_.size() && (src_[q] == '-' || src_[q] == '+')) sign = src_[q++];
      while (q < src_.size() && py::is_space(static_cast<unsigned char>(src_[q]))) ++q;
      if (src_.compare(q, 6, "endraw") != 0) {
        p += 2;
        continue;
      }
      q += 6;
      while (q < src_.size() && py::is_space(static_cast<unsigned char>(src_[q]))) ++q;
      char end_sign = 0;
      if (q < src_.size() && (src_[q] == '-' || src_[q] == '+')) end_sign = src_[q++];
      if (src_.compare(q, 2, "%}") != 0) {
        p += 2;
        continue;
      }
      line_starting_ = false;
      std::string data = src_.substr(body, p - body);
      strip_before_tag(data, '%', sign);
      emit_text(std::move(data));
      pos_ = q + 2;
      after_block_end(end_sign);
      return OkStatus();
    }
    return error(tag, "unclosed raw block (missing '{% endraw %}')");
  }

  Status lex_tag(size_t tag, char kind) {
    const bool is_var = kind == '{';
    push(is_var ? TokenType::kVarBegin : TokenType::kBlockBegin, is_var ? "{{" : "{%", tag);
    std::vector<char> brackets;
    while (true) {
      skip_whitespace();
      if (pos_ >= src_.size()) {
        return error(tag, is_var ? "unclosed '{{' (missing '}}')" : "unclosed '{%' (missing '%}')");
      }
      if (brackets.empty() && try_tag_end(is_var)) return OkStatus();
      KZ_RETURN_IF_ERROR(lex_expression_token(brackets));
    }
  }

  bool try_tag_end(bool is_var) {
    const char* close = is_var ? "}}" : "%}";
    char sign = 0;
    size_t p = pos_;
    if (src_[p] == '-' || (src_[p] == '+' && !is_var)) sign = src_[p++];
    if (src_.compare(p, 2, close) != 0) return false;
    push(is_var ? TokenType::kVarEnd : TokenType::kBlockEnd, close, pos_);
    pos_ = p + 2;
    if (is_var) {
      line_starting_ = sign == '-' ? skip_whitespace() : false;
    } else {
      after_block_end(sign);
    }
    return true;
  }

  Status lex_expression_token(std::vector<char>& brackets) {
    const size_t start = pos_;
    const char c = src_[pos_];
    if (is_ident_start(c)) {
      while (pos_ < src_.size() && is_ident_char(src_[pos_])) ++pos_;
      push(TokenType::kName, src_.substr(start, pos_ - start), start);
      return OkStatus();
    }
    if (std::isdigit(static_cast<unsigned char>(c))) return lex_number();
    if (c == '\'' || c == '"') return lex_string();
    static const char* kTwoChar[] = {"//", "**", "==", "!=", "<=", ">="};
    for (const char* op : kTwoChar) {
      if (src_.compare(pos_, 2, op) == 0) {
        pos_ += 2;
        push(TokenType::kOperator, op, start);
        return OkStatus();
      }
    }
    static const std::string kOneChar = "+-*/%~<>=.,:|()[]{}";
    if (kOneChar.find(c) == std::string::npos) {
      return error(start, std::string("unexpected character '") + c + "' in tag");
    }
    if (c == '(' || c == '[' || c == '{') {
      brackets.push_back(c);
    } else if (c == ')' || c == ']' || c == '}') {
      const char open = c == ')' ? '(' : (c == ']' ? '[' : '{');
      if (brackets.empty() || brackets.back() != open) return error(start, std::string("unexpected '") + c + "'");
      brackets.pop_back();
    }
    ++pos_;
    push(TokenType::kOperator, std::string(1, c), start);
    return OkStatus();
  }

  // Digits with optional '_' separators; returns them without the '_'.
  std::string read_digits(bool (*ok)(char)) {
    std::string digits;
    while (pos_ < src_.size()) {
      const char ch = src_[pos_];
      if (ok(ch)) {
        digits += ch;
      } else if (ch == '_' && !digits.empty() && pos_ + 1 < src_.size() && ok(src_[pos_ + 1])) {
        // separator
      } else {
        break;
      }
      ++pos_;
    }
    return digits;
  }

  Status lex_number() {
    const size_t start = pos_;
    auto is_dec = [](char ch) { return ch >= '0' && ch <= '9'; };
    // `foo.0.1` is attribute access, never a float.
    const bool after_dot = !out_.empty() && out_.back().type == TokenType::kOperator && out_.back().text == ".";
    if (src_[pos_] == '0' && pos_ + 1 < src_.size() && std::strchr("xXoObB", src_[pos_ + 1]) != nullptr &&
        src_[pos_ + 1] != '\0') {
      const char base_char = static_cast<char>(std::tolower(static_cast<unsigned char>(src_[pos_ + 1])));
      const int base = base_char == 'x' ? 16 : (base_char == 'o' ? 8 : 2);
      pos_ += 2;
      std::string digits;
      while (pos_ < src_.size() && (src_[pos_] == '_' || (hex_value(src_[pos_]) >= 0 && hex_value(src_[pos_]) < base))) {
        if (src_[pos_] != '_') digits += src_[pos_];
        ++pos_;
      }
      if (digits.empty()) return error(start, "malformed integer literal");
      uint64_t value = 0;
      for (char d : digits) {
        if (value > (static_cast<uint64_t>(INT64_MAX) - static_cast<uint64_t>(hex_value(d))) / static_cast<uint64_t>(base)) {
          return error(start, "integer literal too large");
        }
        value = value * static_cast<uint64_t>(base) + static_cast<uint64_t>(hex_value(d));
      }
      Token t;
      t.type = TokenType::kInteger;
      t.int_value = static_cast<int64_t>(value);
      t.text = src_.substr(start, pos_ - start);
      t.line = line_at(start);
      out_.push_back(std::move(t));
      return OkStatus();
    }
    std::string text = read_digits(+is_dec);
    bool is_float = false;
    if (!after_dot) {
      if (pos_ + 1 < src_.size() && src_[pos_] == '.' && is_dec(src_[pos_ + 1])) {
        ++pos_;
        text += '.';
        text += read_digits(+is_dec);
        is_float = true;
      }
      if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
        size_t q = pos_ + 1;
        if (q < src_.size() && (src_[q] == '+' || src_[q] == '-')) ++q;
        if (q < src_.size() && is_dec(src_[q])) {
          std::string exp = "e";
          if (src_[pos_ + 1] == '-' || src_[pos_ + 1] == '+') exp += src_[pos_ + 1];
          pos_ = q;
          text += exp + read_digits(+is_dec);
          is_float = true;
        }
      }
    }
    Token t;
    t.line = line_at(start);
    t.text = text;
    if (is_float) {
      t.type = TokenType::kFloat;
      t.float_value = std::strtod(text.c_str(), nullptr);
    } else {
      t.type = TokenType::kInteger;
      uint64_t value = 0;
      for (char d : text) {
        if (value > (static_cast<uint64_t>(INT64_MAX) - static_cast<uint64_t>(d - '0')) / 10) {
          return error(start, "integer literal too large");
        }
        value = value * 10 + static_cast<uint64_t>(d - '0');
      }
      t.int_value = static_cast<int64_t>(value);
    }
    out_.push_back(std::move(t));
    return OkStatus();
  }

  // A quoted literal with Python escapes (\n \t \xhh \uhhhh \Uhhhhhhhh, octal, ...).
  Status lex_string() {
    const size_t start = pos_;
    const char quote = src_[pos_++];
    std::string value;
    while (true) {
      if (pos_ >= src_.size()) return error(start, "unterminated string literal");
      const char ch = src_[pos_];
      if (ch == quote) {
        ++pos_;
        break;
      }
      if (ch != '\\') {
        value += ch;
        ++pos_;
        continue;
      }
      if (pos_ + 1 >= src_.size()) return error(start, "unterminated string literal");
      const char e = src_[pos_ + 1];
      pos_ += 2;
      switch (e) {
        case '\n': break;  // line continuation
        case '\\': value += '\\'; break;
        case '\'': value += '\''; break;
        case '"': value += '"'; break;
        case 'a': value += '\a'; break;
        case 'b': value += '\b'; break;
        case 'f': value += '\f'; break;
        case 'n': value += '\n'; break;
        case 'r': value += '\r'; break;
        case 't': value += '\t'; break;
        case 'v': value += '\v'; break;
        case 'x':
        case 'u':
        case 'U': {
          const size_t n = e == 'x' ? 2 : (e == 'u' ? 4 : 8);
          uint32_t cp = 0;
          for (size_t k = 0; k < n; ++k) {
            if (pos_ + k >= src_.size() || hex_value(src_[pos_ + k]) < 0) {
              return error(start, std::string("truncated \\") + e + " escape in string literal");
            }
            cp = cp * 16 + static_cast<uint32_t>(hex_value(src_[pos_ + k]));
          }
          pos_ += n;
          if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
            return error(start, "invalid code point escape in string literal");
          }
          py::append_utf8(value, cp);
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            uint32_t cp = static_cast<uint32_t>(e - '0');
            for (int k = 0; k < 2 && pos_ < src_.size() && src_[pos_] >= '0' && src_[pos_] <= '7'; ++k) {
              cp = cp * 8 + static_cast<uint32_t>(src_[pos_++] - '0');
            }
            py::append_utf8(value, cp);
          } else {
            value += '\\';
            value += e;
          }
      }
    }
    push(TokenType::kString, std::move(value), start);
    return OkStatus();
  }
};

}  // namespace

Result<std::vector<Token>> tokenize(std::string_view source, const LexOptions& options) {
  if (!py::is_valid_utf8(source)) return InvalidFile("template is not valid UTF-8");
  Lexer lexer(source, options);
  return lexer.run();
}

}  // namespace kazeia::jinja
