// Small UTF-8 helpers shared by the agent layer (messages, limits, search
// normalisation). Byte-oriented and allocation-free where possible; invalid
// sequences are treated as single bytes, never as errors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kazeia::agent {

// Number of Unicode code points (counts lead bytes; a stray continuation byte
// is not counted, so invalid input never inflates the length).
uint64_t utf8_length(std::string_view text);

// The longest prefix of `text` of at most `max_bytes` bytes that does not end
// inside a multi-byte sequence.
std::string_view utf8_prefix(std::string_view text, size_t max_bytes);

// Copy with every invalid UTF-8 sequence replaced by U+FFFD.
std::string utf8_sanitize(std::string_view text);

// ASCII-only lowercase; other bytes are kept as they are.
std::string ascii_lower(std::string_view text);

// Strips ASCII whitespace at both ends.
std::string_view trim(std::string_view text);

}  // namespace kazeia::agent
