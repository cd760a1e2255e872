// Python `str` semantics on UTF-8; see jinja_pystr.h.
#include "text/jinja_pystr.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace kazeia::jinja::py {

uint32_t next_code_point(std::string_view s, size_t& i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  size_t len = 0;
  uint32_t cp = 0;
  uint32_t min_cp = 0;
  if (b0 < 0x80) {
    ++i;
    return b0;
  } else if ((b0 & 0xE0) == 0xC0) {
    len = 2, cp = b0 & 0x1F, min_cp = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, cp = b0 & 0x0F, min_cp = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, cp = b0 & 0x07, min_cp = 0x10000;
  } else {
    ++i;
    return b0;
  }
  if (i + len > s.size()) {
    ++i;
    return b0;
  }
  for (size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) {
      ++i;
      return b0;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min_cp || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    ++i;
    return b0;
  }
  i += len;
  return cp;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

bool is_valid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const size_t start = i;
    const uint32_t cp = next_code_point(s, i);
    // A single-byte advance over a byte >= 0x80 means the sequence was bad.
    if (i == start + 1 && static_cast<unsigned char>(s[start]) >= 0x80) return false;
    (void)cp;
  }
  return true;
}

std::vector<size_t> code_point_offsets(std::string_view s) {
  std::vector<size_t> offsets;
  offsets.reserve(s.size() + 1);
  size_t i = 0;
  while (i < s.size()) {
    offsets.push_back(i);
    next_code_point(s, i);
  }
  offsets.push_back(s.size());
  return offsets;
}

size_t code_point_count(std::string_view s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size(); ++n) next_code_point(s, i);
  return n;
}

bool is_space(uint32_t cp) {
  if (cp >= 0x09 && cp <= 0x0D) return true;
  if (cp >= 0x1C && cp <= 0x20) return true;
  switch (cp) {
    case 0x85: case 0xA0: case 0x1680: case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

namespace {

bool in_chars(uint32_t cp, const std::optional<std::string>& chars) {
  if (!chars) return is_space(cp);
  size_t i = 0;
  while (i < chars->size()) {
    if (next_code_point(*chars, i) == cp) return true;
  }
  return false;
}

// Start offset of the code point that ends at byte `end` (exclusive).
size_t previous_start(std::string_view s, size_t end) {
  size_t cand = end - 1;
  for (int back = 1; cand > 0 && back < 4 && (static_cast<unsigned char>(s[cand]) & 0xC0) == 0x80; ++back) --cand;
  size_t i = cand;
  next_code_point(s, i);
  return i == end ? cand : end - 1;
}

}  // namespace

std::string strip(std::string_view s, const std::optional<std::string>& chars, bool left, bool right) {
  size_t begin = 0;
  size_t end = s.size();
  if (left) {
    while (begin < end) {
      size_t i = begin;
      const uint32_t cp = next_code_point(s, i);
      if (!in_chars(cp, chars)) break;
      begin = i;
    }
  }
  if (right) {
    while (end > begin) {
      const size_t start = previous_start(s, end);
      size_t i = start;
      const uint32_t cp = next_code_point(s, i);
      if (!in_chars(cp, chars)) break;
      end = start;
    }
  }
  return std::string(s.substr(begin, end - begin));
}

std::optional<std::vector<std::string>> split(std::string_view s, const std::optional<std::string>& sep,
                                              int64_t maxsplit) {
  std::vector<std::string> out;
  if (sep) {
    if (sep->empty()) return std::nullopt;
    size_t pos = 0;
    while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
      const size_t hit = s.find(*sep, pos);
      if (hit == std::string_view::npos) break;
      out.emplace_back(s.substr(pos, hit - pos));
      pos = hit + sep->size();
    }
    out.emplace_back(s.substr(pos));
    return out;
  }
  size_t i = 0;
  auto skip_space = [&] {
    while (i < s.size()) {
      size_t j = i;
      if (!is_space(next_code_point(s, j))) break;
      i = j;
    }
  };
  skip_space();
  while (i < s.size()) {
    if (maxsplit >= 0 && static_cast<int64_t>(out.size()) >= maxsplit) {
      out.emplace_back(s.substr(i));
      return out;
    }
    const size_t start = i;
    while (i < s.size()) {
      size_t j = i;
      if (is_space(next_code_point(s, j))) break;
      i = j;
    }
    out.emplace_back(s.substr(start, i - start));
    skip_space();
  }
  return out;
}

std::optional<std::vector<std::string>> rsplit(std::string_view s, const std::optional<std::string>& sep,
                                               int64_t maxsplit) {
  if (maxsplit < 0) return split(s, sep, maxsplit);
  std::vector<std::string> out;
  if (sep) {
    if (sep->empty()) return std::nullopt;
    size_t end = s.size();
    while (static_cast<int64_t>(out.size()) < maxsplit) {
      if (end < sep->size()) break;
      const size_t hit = s.rfind(*sep, end - sep->size());
      if (hit == std::string_view::npos) break;
      out.emplace_back(s.substr(hit + sep->size(), end - hit - sep->size()));
      end = hit;
    }
    out.emplace_back(s.substr(0, end));
  } else {
    size_t end = s.size();
    auto skip_space_back = [&] {
      while (end > 0) {
        const size_t start = previous_start(s, end);
        size_t j = start;
        if (!is_space(next_code_point(s, j))) break;
        end = start;
      }
    };
    skip_space_back();
    while (end > 0) {
      if (static_cast<int64_t>(out.size()) >= maxsplit) {
        out.emplace_back(s.substr(0, end));
        break;
      }
      size_t start = end;
      while (start > 0) {
        const size_t prev = previous_start(s, start);
        size_t j = prev;
        if (is_space(next_code_point(s, j))) break;
        start = prev;
      }
      out.emplace_back(s.substr(start, end - start));
      end = start;
      skip_space_back();
    }
  }
  return std::vector<std::string>(out.rbegin(), out.rend());
}

std::vector<std::string> splitlines(std::string_view s, bool keepends) {
  std::vector<std::string> out;
  size_t start = 0;
  size_t i = 0;
  while (i < s.size()) {
    const size_t at = i;
    const uint32_t cp = next_code_point(s, i);
    const bool brk = cp == '\n' || cp == '\r' || cp == 0x0B || cp == 0x0C || cp == 0x1C || cp == 0x1D ||
                     cp == 0x1E || cp == 0x85 || cp == 0x2028 || cp == 0x2029;
    if (!brk) continue;
    if (cp == '\r' && i < s.size() && s[i] == '\n') ++i;
    out.emplace_back(s.substr(start, (keepends ? i : at) - start));
    start = i;
  }
  if (start < s.size()) out.emplace_back(s.substr(start));
  return out;
}

std::optional<std::string> replace(std::string_view s, std::string_view old_s, std::string_view new_s,
                                   int64_t count, size_t max_bytes) {
  std::string out;
  int64_t done = 0;
  auto room = [&](size_t extra) { return out.size() + extra <= max_bytes; };
  if (old_s.empty()) {
    size_t i = 0;
    while (i < s.size()) {
      const size_t start = i;
      next_code_point(s, i);
      if (count < 0 || done < count) {
        if (!room(new_s.size())) return std::nullopt;
        out += new_s;
        ++done;
      }
      if (!room(i - start)) return std::nullopt;
      out.append(s.substr(start, i - start));
    }
    if (count < 0 || done < count) {
      if (!room(new_s.size())) return std::nullopt;
      out += new_s;
    }
    return out;
  }
  size_t pos = 0;
  while (count < 0 || done < count) {
    const size_t hit = s.find(old_s, pos);
    if (hit == std::string_view::npos) break;
    if (!room(hit - pos + new_s.size())) return std::nullopt;
    out.append(s.substr(pos, hit - pos));
    out += new_s;
    pos = hit + old_s.size();
    ++done;
  }
  if (!room(s.size() - pos)) return std::nullopt;
  out.append(s.substr(pos));
  return out;
}

namespace {

// Simple case mapping for Latin-1, Latin Extended-A, Greek and Cyrillic;
// other scripts have no case here (CJK has none anyway).
uint32_t to_upper_cp(uint32_t c) {
  if (c >= 'a' && c <= 'z') return c - 32;
  if (c < 0xB5) return c;
  if (c == 0xB5) return 0x39C;
  if (c >= 0xE0 && c <= 0xFE && c != 0xF7) return c - 0x20;
  if (c == 0xFF) return 0x178;
  if (c == 0x131) return 'I';
  if (c == 0x17F) return 'S';
  if (((c >= 0x100 && c <= 0x12F) || (c >= 0x132 && c <= 0x137) || (c >= 0x14A && c <= 0x177)) && (c & 1)) return c - 1;
  if (((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E)) && !(c & 1)) return c - 1;
  if ((c >= 0x3B1 && c <= 0x3C1) || (c >= 0x3C3 && c <= 0x3CB)) return c - 0x20;
  if (c == 0x3C2) return 0x3A3;
  if (c == 0x3AC) return 0x386;
  if (c >= 0x3AD && c <= 0x3AF) return c - 0x25;
  if (c == 0x3CC) return 0x38C;
  if (c == 0x3CD || c == 0x3CE) return c - 0x3F;
  if (c >= 0x430 && c <= 0x44F) return c - 0x20;
  if (c >= 0x450 && c <= 0x45F) return c - 0x50;
  return c;
}

uint32_t to_lower_cp(uint32_t c) {
  if (c >= 'A' && c <= 'Z') return c + 32;
  if (c < 0xC0) return c;
  if (c <= 0xDE && c != 0xD7) return c + 0x20;
  if (c == 0x178) return 0xFF;
  if (((c >= 0x100 && c <= 0x12F) || (c >= 0x132 && c <= 0x137) || (c >= 0x14A && c <= 0x177)) && !(c & 1)) return c + 1;
  if (((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E)) && (c & 1)) return c + 1;
  if ((c >= 0x391 && c <= 0x3A1) || (c >= 0x3A3 && c <= 0x3AB)) return c + 0x20;
  if (c == 0x386) return 0x3AC;
  if (c >= 0x388 && c <= 0x38A) return c + 0x25;
  if (c == 0x38C) return 0x3CC;
  if (c == 0x38E || c == 0x38F) return c + 0x3F;
  if (c >= 0x410 && c <= 0x42F) return c + 0x20;
  if (c >= 0x400 && c <= 0x40F) return c + 0x50;
  return c;
}

bool is_cased(uint32_t c) { return to_upper_cp(c) != c || to_lower_cp(c) != c || c == 0xDF || c == 0x130; }

// Appends the mapped code point; special cases expand as Python does.
void append_upper(std::string& out, uint32_t c) {
  if (c == 0xDF) {
    out += "SS";
    return;
  }
  append_utf8(out, to_upper_cp(c));
}

void append_lower(std::string& out, uint32_t c) {
  if (c == 0x130) {
    out += "i\xCC\x87";  // i + COMBINING DOT ABOVE
    return;
  }
  append_utf8(out, to_lower_cp(c));
}

// Walks code points; bytes of invalid sequences are copied unchanged.
template <typename Fn>
std::string map_code_points(std::string_view s, Fn fn) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const size_t start = i;
    const uint32_t cp = next_code_point(s, i);
    if (i == start + 1 && cp >= 0x80) {
      out += s[start];
      continue;
    }
    fn(out, cp);
  }
  return out;
}

}  // namespace

std::string upper(std::string_view s) {
  return map_code_points(s, [](std::string& out, uint32_t c) { append_upper(out, c); });
}

std::string lower(std::string_view s) {
  return map_code_points(s, [](std::string& out, uint32_t c) { append_lower(out, c); });
}

// str.title(): a cased letter following a cased letter is lowered, any
// other cased letter raised.
std::string title(std::string_view s) {
  bool previous_cased = false;
  return map_code_points(s, [&](std::string& out, uint32_t c) {
    if (previous_cased) append_lower(out, c);
    else append_upper(out, c);
    previous_cased = is_cased(c);
  });
}

// str.capitalize(): the first character raised, the rest lowered.
std::string capitalize(std::string_view s) {
  bool first = true;
  return map_code_points(s, [&](std::string& out, uint32_t c) {
    if (first) append_upper(out, c);
    else append_lower(out, c);
    first = false;
  });
}

namespace {

// Approximates Python's str.isprintable(): control, format, separator (other
// than ' '), surrogate and private-use code points are not printable.
bool is_printable(uint32_t cp) {
  if (cp < 0x20 || (cp >= 0x7F && cp <= 0xA0) || cp == 0xAD) return false;
  if (cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202F)) return false;
  if ((cp >= 0x205F && cp <= 0x206F) || cp == 0x3000 || cp == 0xFEFF) return false;
  if (cp >= 0xFFF9 && cp <= 0xFFFB) return false;
  if ((cp >= 0xD800 && cp <= 0xF8FF) || cp >= 0xF0000) return false;
  if (cp >= 0xE0000 && cp <= 0xE0FFF) return false;
  return true;
}

}  // namespace

std::string repr_string(std::string_view s) {
  const bool has_single = s.find('\'') != std::string_view::npos;
  const bool has_double = s.find('"') != std::string_view::npos;
  const char quote = (has_single && !has_double) ? '"' : '\'';
  std::string out(1, quote);
  size_t i = 0;
  while (i < s.size()) {
    const size_t start = i;
    const uint32_t cp = next_code_point(s, i);
    char buf[16];
    if (cp == static_cast<uint32_t>(quote) || cp == '\\') {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (i == start + 1 && cp >= 0x80) {
      // A stray byte (invalid UTF-8): Python would have refused the text;
      // show it escaped rather than copying a broken sequence.
      std::snprintf(buf, sizeof buf, "\\x%02x", cp);
      out += buf;
    } else if (!is_printable(cp)) {
      if (cp < 0x100) std::snprintf(buf, sizeof buf, "\\x%02x", cp);
      else if (cp < 0x10000) std::snprintf(buf, sizeof buf, "\\u%04x", cp);
      else std::snprintf(buf, sizeof buf, "\\U%08x", cp);
      out += buf;
    } else {
      out.append(s.substr(start, i - start));
    }
  }
  out += quote;
  return out;
}

std::string format_float(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  // sci looks like "-d.ddde+XX": split into sign, digits and exponent.
  std::string sign;
  size_t p = 0;
  if (sci[0] == '-') {
    sign = "-";
    p = 1;
  }
  const size_t e_pos = sci.find('e');
  std::string digits;
  for (size_t k = p; k < e_pos; ++k) {
    if (sci[k] != '.') digits += sci[k];
  }
  const int exponent = std::atoi(sci.c_str() + e_pos + 1);
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string out = sign;
  if (exponent >= -5 + 1 && exponent < 16) {
    if (exponent >= 0) {
      const size_t int_len = static_cast<size_t>(exponent) + 1;
      if (digits.size() <= int_len) {
        out += digits + std::string(int_len - digits.size(), '0') + ".0";
      } else {
        out += digits.substr(0, int_len) + "." + digits.substr(int_len);
      }
    } else {
      out += "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  std::snprintf(buf, sizeof buf, "e%c%02d", exponent < 0 ? '-' : '+', exponent < 0 ? -exponent : exponent);
  out += buf;
  return out;
}

}  // namespace kazeia::jinja::py
