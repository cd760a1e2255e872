// Template: parse once, render many times; see jinja.h.
#include "text/jinja.h"

namespace kazeia::jinja {

Result<Template> Template::parse(std::string_view source, const TemplateOptions& options) {
  KZ_ASSIGN_OR_RETURN(std::vector<Token> tokens, tokenize(source, options.lex));
  KZ_ASSIGN_OR_RETURN(StmtList program, jinja::parse(tokens, options.parse));
  Template t;
  t.program_ = std::make_shared<const StmtList>(std::move(program));
  return t;
}

Result<std::string> Template::render(const nlohmann::ordered_json& context, const RenderLimits& limits) const {
  if (!context.is_object()) return InvalidArgument("template context must be a JSON object");
  KZ_ASSIGN_OR_RETURN(Value ctx, from_json(context, limits.max_value_depth));
  return render(ctx, limits);
}

Result<std::string> Template::render(const Value& context, const RenderLimits& limits) const {
  if (!program_) return InvalidArgument("render() on a template that was not parsed");
  if (!context.is_dict()) return InvalidArgument("template context must be a dict");
  Interpreter interpreter(limits);
  return interpreter.render(*program_, context);
}

}  // namespace kazeia::jinja
