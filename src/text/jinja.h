// A small Jinja2 engine for chat templates.
//
//   auto tmpl = jinja::Template::parse(source);          // Result<Template>
//   auto text = tmpl->render(context_json);              // Result<std::string>
//
// It implements what real chat templates use (see docs in jinja_*.h):
// {{ }}, {% %}, {# #}, whitespace control with HF's trim_blocks and
// lstrip_blocks, if/elif/else, for (loop.*, else, filters, unpacking), set
// (namespace attributes, block set), macro, filter blocks, break/continue,
// the common filters and tests, Python str/dict/list methods, slicing,
// arithmetic, `~`, `in`, and raise_exception(). Output is byte-exact with
// Python Jinja2 configured as HF transformers configures it, except for the
// documented differences:
//   - attribute or item access on an undefined value yields undefined
//     (Jinja2 raises); other uses of undefined values raise as in Jinja2;
//   - unknown filters/tests fail when reached, not when parsing;
//   - integers are 64-bit (overflow is an error); upper/lower/title/
//     capitalize change ASCII letters only;
//   - no {% include %}, {% import %}, {% extends %}, {% call %}, recursive
//     loops, *args/**kwargs, or mutating list/dict methods.
// A template is hostile input: parsing and rendering are bounded (see
// ParseLimits and RenderLimits) and report errors as Status values.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "kazeia/status.h"
#include "text/jinja_eval.h"
#include "text/jinja_lexer.h"
#include "text/jinja_parser.h"

namespace kazeia::jinja {

struct TemplateOptions {
  LexOptions lex;
  ParseLimits parse;
};

class Template {
 public:
  // Fails with InvalidFile naming the line on any syntax error.
  static Result<Template> parse(std::string_view source, const TemplateOptions& options = {});

  // context: a JSON object whose keys become the template's variables.
  Result<std::string> render(const nlohmann::ordered_json& context, const RenderLimits& limits = {}) const;
  // context: a dict Value.
  Result<std::string> render(const Value& context, const RenderLimits& limits = {}) const;

 private:
  std::shared_ptr<const StmtList> program_;
};

}  // namespace kazeia::jinja
