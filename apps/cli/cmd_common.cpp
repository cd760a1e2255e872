#include "cmd_common.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>

namespace kazeia::cli {

Result<std::vector<int32_t>> parse_token_list(const std::string& text) {
  std::vector<int32_t> ids;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == ',' || c == '[' || c == ']' || c == ' ' || c == '\n' || c == '\t') {
      ++i;
      continue;
    }
    int32_t v = 0;
    auto [end, ec] = std::from_chars(text.data() + i, text.data() + text.size(), v);
    if (ec != std::errc() || v < 0)
      return InvalidArgument("token list: expected a non-negative integer at offset " + std::to_string(i) + " of '" +
                             text + "'");
    ids.push_back(v);
    i = static_cast<size_t>(end - text.data());
  }
  if (ids.empty()) return InvalidArgument("token list is empty");
  return ids;
}

Result<std::string> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return IoError("cannot open '" + path + "': " + std::strerror(errno));
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace kazeia::cli
