#include "text/unicode_utf8.h"

#include <array>
#include <cstring>

namespace kazeia::text {

namespace {

// Allowed range of the second byte for a lead byte, and the number of
// continuation bytes (0 = the byte cannot start a sequence).
struct LeadInfo {
  uint8_t need;
  uint8_t lo;
  uint8_t hi;
};

constexpr LeadInfo lead_info(uint8_t c) {
  if (c >= 0xC2 && c <= 0xDF) return {1, 0x80, 0xBF};
  if (c == 0xE0) return {2, 0xA0, 0xBF};  // no overlongs
  if (c == 0xED) return {2, 0x80, 0x9F};  // no surrogates
  if (c >= 0xE1 && c <= 0xEF) return {2, 0x80, 0xBF};
  if (c == 0xF0) return {3, 0x90, 0xBF};  // no overlongs
  if (c >= 0xF1 && c <= 0xF3) return {3, 0x80, 0xBF};
  if (c == 0xF4) return {3, 0x80, 0x8F};  // nothing above U+10FFFF
  return {0, 0, 0};
}

// Length of the valid sequence at s[i], or 0 when there is none.
size_t valid_sequence_length(const unsigned char* s, size_t n, size_t i) {
  const unsigned char c = s[i];
  if (c < 0x80) return 1;
  const LeadInfo info = lead_info(c);
  if (info.need == 0 || i + info.need >= n) return 0;  // bad lead or truncated
  if (s[i + 1] < info.lo || s[i + 1] > info.hi) return 0;
  for (size_t k = 2; k <= info.need; ++k) {
    if ((s[i + k] & 0xC0) != 0x80) return 0;
  }
  return info.need + 1;
}

struct Gpt2Tables {
  std::array<uint32_t, 256> byte_to_cp{};
  std::array<int16_t, 512> cp_to_byte{};  // every alphabet code point is < 324
  Gpt2Tables() {
    cp_to_byte.fill(-1);
    auto is_printable = [](int b) {
      return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    };
    uint32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const uint32_t cp = is_printable(b) ? static_cast<uint32_t>(b) : next++;
      byte_to_cp[b] = cp;
      cp_to_byte[cp] = static_cast<int16_t>(b);
    }
  }
};

const Gpt2Tables& gpt2_tables() {
  static const Gpt2Tables tables;
  return tables;
}

}  // namespace

bool is_valid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    // ASCII fast path, 8 bytes at a time.
    if (i + 8 <= n) {
      uint64_t word;
      std::memcpy(&word, p + i, 8);
      if ((word & 0x8080808080808080ull) == 0) {
        i += 8;
        continue;
      }
    }
    const size_t len = valid_sequence_length(p, n, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

void append_utf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

uint32_t decode_utf8(std::string_view s, size_t& pos) {
  const auto c = static_cast<unsigned char>(s[pos]);
  const size_t len = utf8_lead_length(c);
  if (len == 1 || pos + len > s.size()) {
    pos += 1;
    return c;
  }
  uint32_t cp = c & (0xFF >> (len + 1));
  for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[pos + k]) & 0x3F);
  pos += len;
  return cp;
}

void Utf8Sanitizer::start(uint8_t c, uint8_t need, uint8_t lo, uint8_t hi) {
  pending_[0] = static_cast<char>(c);
  n_pending_ = 1;
  need_ = need;
  lo_ = lo;
  hi_ = hi;
}

void Utf8Sanitizer::push_byte(uint8_t c, std::string& out) {
  if (need_ > 0) {
    if (c >= lo_ && c <= hi_) {
      pending_[n_pending_++] = static_cast<char>(c);
      lo_ = 0x80;
      hi_ = 0xBF;
      if (--need_ == 0) {
        out.append(pending_, n_pending_);
        n_pending_ = 0;
      }
      return;
    }
    // The held bytes can never complete: one U+FFFD for all of them, then
    // this byte starts afresh.
    out.append(kReplacementChar);
    n_pending_ = 0;
    need_ = 0;
  }
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
    return;
  }
  const LeadInfo info = lead_info(c);
  if (info.need == 0) {
    out.append(kReplacementChar);
    return;
  }
  start(c, info.need, info.lo, info.hi);
}

void Utf8Sanitizer::push(std::string_view bytes, std::string& out) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t n = bytes.size();
  size_t i = 0;
  while (i < n) {
    if (need_ == 0) {
      // Copy runs of complete valid sequences directly.
      size_t j = i;
      while (j < n) {
        const size_t len = valid_sequence_length(p, n, j);
        if (len == 0) break;
        j += len;
      }
      out.append(bytes.data() + i, j - i);
      i = j;
      if (i == n) break;
    }
    push_byte(p[i], out);
    ++i;
  }
}

void Utf8Sanitizer::flush(std::string& out) {
  if (n_pending_ > 0) out.append(kReplacementChar);
  n_pending_ = 0;
  need_ = 0;
}

std::string sanitize_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  Utf8Sanitizer sanitizer;
  sanitizer.push(s, out);
  sanitizer.flush(out);
  return out;
}

uint32_t gpt2_byte_to_codepoint(uint8_t b) { return gpt2_tables().byte_to_cp[b]; }

int gpt2_codepoint_to_byte(uint32_t cp) {
  const auto& t = gpt2_tables();
  return cp < t.cp_to_byte.size() ? t.cp_to_byte[cp] : -1;
}

std::string gpt2_encode(std::string_view raw) {
  std::string out;
  out.reserve(raw.size() * 2);
  for (unsigned char b : raw) append_utf8(gpt2_byte_to_codepoint(b), out);
  return out;
}

bool is_gpt2_text(std::string_view mapped) {
  if (!is_valid_utf8(mapped)) return false;
  size_t pos = 0;
  while (pos < mapped.size()) {
    if (gpt2_codepoint_to_byte(decode_utf8(mapped, pos)) < 0) return false;
  }
  return true;
}

std::optional<std::string> gpt2_decode(std::string_view mapped) {
  if (!is_valid_utf8(mapped)) return std::nullopt;
  std::string out;
  out.reserve(mapped.size());
  size_t pos = 0;
  while (pos < mapped.size()) {
    const int b = gpt2_codepoint_to_byte(decode_utf8(mapped, pos));
    if (b < 0) return std::nullopt;
    out.push_back(static_cast<char>(b));
  }
  return out;
}

std::string gpt2_decode_lenient(std::string_view mapped) {
  std::string out;
  out.reserve(mapped.size());
  size_t pos = 0;
  while (pos < mapped.size()) {
    const size_t begin = pos;
    const int b = gpt2_codepoint_to_byte(decode_utf8(mapped, pos));
    if (b >= 0) {
      out.push_back(static_cast<char>(b));
    } else {
      out.append(mapped.substr(begin, pos - begin));
    }
  }
  return out;
}

}  // namespace kazeia::text
