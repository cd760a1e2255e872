// Python `str` semantics on UTF-8 bytes, for the Jinja interpreter.
//
// Chat templates are written against Python: `len`, indexing and slicing
// count code points, `strip()` knows Unicode whitespace, `repr` picks its
// quote the way CPython does and floats print as `repr(float)`. These helpers
// reproduce that on std::string (UTF-8). Invalid UTF-8 never crashes them:
// a byte that does not start a valid sequence counts as one code point.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kazeia::jinja::py {

// Decodes the code point at s[i] and advances i past it (by 1 on a bad byte).
uint32_t next_code_point(std::string_view s, size_t& i);
void append_utf8(std::string& out, uint32_t cp);
bool is_valid_utf8(std::string_view s);

// Byte offset of every code point, plus s.size() at the end.
std::vector<size_t> code_point_offsets(std::string_view s);
size_t code_point_count(std::string_view s);

// Python str.isspace() for one code point.
bool is_space(uint32_t cp);

// str.strip/lstrip/rstrip; chars == nullopt strips whitespace, otherwise any
// code point contained in *chars.
std::string strip(std::string_view s, const std::optional<std::string>& chars, bool left, bool right);

// str.split(sep, maxsplit): sep == nullopt splits on whitespace runs.
// Returns nullopt for an empty separator (Python raises ValueError).
std::optional<std::vector<std::string>> split(std::string_view s, const std::optional<std::string>& sep,
                                              int64_t maxsplit);
std::optional<std::vector<std::string>> rsplit(std::string_view s, const std::optional<std::string>& sep,
                                               int64_t maxsplit);
std::vector<std::string> splitlines(std::string_view s, bool keepends);

// str.replace(old, new, count); count < 0 replaces all. An empty `old`
// inserts `new` before every code point and at the end, as Python does.
// Returns nullopt when the result would exceed max_bytes.
std::optional<std::string> replace(std::string_view s, std::string_view old_s, std::string_view new_s,
                                   int64_t count, size_t max_bytes);

// Case mapping (simple mappings of Latin-1, Latin Extended-A, Greek and
// Cyrillic, plus ß -> SS; other scripts are copied unchanged, and the Greek
// final-sigma rule of str.lower() is not applied).
std::string upper(std::string_view s);
std::string lower(std::string_view s);
std::string title(std::string_view s);
std::string capitalize(std::string_view s);

// repr(str): quotes and escapes as CPython does.
std::string repr_string(std::string_view s);

// repr(float): shortest round-trip digits, exponent form outside
// [1e-4, 1e16), "inf", "nan", "-0.0".
std::string format_float(double d);

}  // namespace kazeia::jinja::py
