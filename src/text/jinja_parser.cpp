// Jinja parser; see jinja_parser.h.
#include "text/jinja_parser.h"

#include <algorithm>
#include <initializer_list>
#include <string_view>

namespace kazeia::jinja {
namespace {

using EK = Expr::Kind;
using SK = Stmt::Kind;

class Parser {
 public:
  Parser(const std::vector<Token>& tokens, const ParseLimits& limits) : toks_(tokens), lim_(limits) {}

  Result<StmtList> parse_template() {
    std::string end;
    KZ_ASSIGN_OR_RETURN(StmtList body, parse_body({}, &end));
    return body;
  }

 private:
  const std::vector<Token>& toks_;
  ParseLimits lim_;
  size_t i_ = 0;
  uint32_t nesting_ = 0;
  int loop_depth_ = 0;

  // Counts parser recursion; every recursive production holds one.
  class Guard {
   public:
    explicit Guard(Parser& p) : p_(p) { ++p_.nesting_; }
    ~Guard() { --p_.nesting_; }
    bool exceeded() const { return p_.nesting_ > p_.lim_.max_nesting; }

   private:
    Parser& p_;
  };

  const Token& cur() const { return toks_[std::min(i_, toks_.size() - 1)]; }
  const Token& peek(size_t k) const { return toks_[std::min(i_ + k, toks_.size() - 1)]; }
  void advance() {
    if (i_ < toks_.size() - 1) ++i_;
  }
  bool is_op(std::string_view op, size_t k = 0) const {
    const Token& t = peek(k);
    return t.type == TokenType::kOperator && t.text == op;
  }
  bool is_name(std::string_view name, size_t k = 0) const {
    const Token& t = peek(k);
    return t.type == TokenType::kName && t.text == name;
  }
  bool skip_op(std::string_view op) {
    if (!is_op(op)) return false;
    advance();
    return true;
  }
  bool skip_name(std::string_view name) {
    if (!is_name(name)) return false;
    advance();
    return true;
  }

  Status error(const std::string& msg) const {
    return InvalidFile("template line " + std::to_string(cur().line) + ": " + msg);
  }
  static std::string describe(const Token& t) {
    switch (t.type) {
      case TokenType::kEof: return "end of template";
      case TokenType::kVarEnd: return "'}}'";
      case TokenType::kBlockEnd: return "'%}'";
      case TokenType::kString: return "string literal";
      default: return "'" + t.text + "'";
    }
  }
  Status unexpected(const std::string& expected) const {
    return error("expected " + expected + ", found " + describe(cur()));
  }
  Status expect_op(std::string_view op) {
    if (skip_op(op)) return OkStatus();
    return unexpected("'" + std::string(op) + "'");
  }
  Status expect_block_end() {
    if (cur().type == TokenType::kBlockEnd) {
      advance();
      return OkStatus();
    }
    return unexpected("'%}'");
  }
  Result<std::string> expect_name() {
    if (cur().type != TokenType::kName) return unexpected("a name");
    std::string n = cur().text;
    advance();
    return n;
  }

  // Builds a node and checks the tree depth.
  Result<ExprPtr> make(EK kind, int line, std::vector<ExprPtr> children, std::string name = {}) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->line = line;
    e->name = std::move(name);
    e->children = std::move(children);
    KZ_RETURN_IF_ERROR(finish(*e));
    return e;
  }
  Status finish(Expr& e) {
    uint32_t deepest = 0;
    for (const auto& c : e.children) {
      if (c) deepest = std::max(deepest, c->depth);
    }
    for (const auto& [k, c] : e.kwargs) deepest = std::max(deepest, c->depth);
    e.depth = deepest + 1;
    if (e.depth > lim_.max_expr_depth) return error("expression nested too deeply");
    return OkStatus();
  }

  // ---- statements ----------------------------------------------------------

  // Parses until one of `ends` opens a block tag ({% end... %}); consumes
  // `{%` and the end name, stores the name in *found. With no ends, parses
  // to the end of the template.
  Result<StmtList> parse_body(std::initializer_list<std::string_view> ends, std::string* found) {
    Guard guard(*this);
    if (guard.exceeded()) return error("blocks nested too deeply");
    StmtList body;
    while (true) {
      const Token& t = cur();
      if (t.type == TokenType::kEof) {
        if (ends.size() == 0) return body;
        return error("unexpected end of template: missing '{% " + std::string(*ends.begin()) + " %}'");
      }
      if (t.type == TokenType::kText) {
        auto s = std::make_unique<Stmt>();
        s->kind = SK::kText;
        s->line = t.line;
        s->text = t.text;
        body.push_back(std::move(s));
        advance();
      } else if (t.type == TokenType::kVarBegin) {
        const int line = t.line;
        advance();
        KZ_ASSIGN_OR_RETURN(ExprPtr e, parse_tuple(true));
        if (cur().type != TokenType::kVarEnd) return unexpected("'}}'");
        advance();
        auto s = std::make_unique<Stmt>();
        s->kind = SK::kOutput;
        s->line = line;
        s->expr = std::move(e);
        body.push_back(std::move(s));
      } else if (t.type == TokenType::kBlockBegin) {
        advance();
        if (cur().type != TokenType::kName) return unexpected("a tag name");
        const std::string name = cur().text;
        if (std::find(ends.begin(), ends.end(), name) != ends.end()) {
          advance();
          *found = name;
          return body;
        }
        KZ_ASSIGN_OR_RETURN(StmtPtr s, parse_statement());
        body.push_back(std::move(s));
      } else {
        return unexpected("text or a tag");
      }
    }
  }

  Result<StmtPtr> parse_statement() {
    const std::string name = cur().text;
    const int line = cur().line;
    advance();
    Result<StmtPtr> r = Internal("unreachable");
    if (name == "if") r = parse_if();
    else if (name == "for") r = parse_for();
    else if (name == "set") r = parse_set();
    else if (name == "macro") r = parse_macro();
    else if (name == "filter") r = parse_filter_block();
    else if (name == "break" || name == "continue") r = parse_loop_control(name);
    else if (name == "generation") r = parse_scope("endgeneration");
    else return error("unknown or unsupported tag '" + name + "'");
    if (r.ok()) (*r)->line = line;
    return r;
  }

  Result<StmtPtr> parse_if() {
    auto s = std::make_unique<Stmt>();
    s->kind = SK::kIf;
    KZ_ASSIGN_OR_RETURN(ExprPtr cond, parse_tuple(true));
    KZ_RETURN_IF_ERROR(expect_block_end());
    while (true) {
      std::string end;
      KZ_ASSIGN_OR_RETURN(StmtList body, parse_body({"endif", "elif", "else"}, &end));
      s->branches.push_back({std::move(cond), std::move(body)});
      if (end == "endif") break;
      if (end == "else") {
        KZ_RETURN_IF_ERROR(expect_block_end());
        KZ_ASSIGN_OR_RETURN(StmtList else_body, parse_body({"endif"}, &end));
        s->branches.push_back({nullptr, std::move(else_body)});
        break;
      }
      KZ_ASSIGN_OR_RETURN(cond, parse_tuple(true));
      KZ_RETURN_IF_ERROR(expect_block_end());
    }
    KZ_RETURN_IF_ERROR(expect_block_end());
    return s;
  }

  // `a`, `a, b` or `(a, b)` as loop variables.
  Result<Target> parse_name_target() {
    Target t;
    const bool parens = skip_op("(");
    do {
      KZ_ASSIGN_OR_RETURN(std::string n, expect_name());
      t.names.push_back(std::move(n));
      if (!is_op(",")) break;
      advance();
      t.is_tuple = true;
    } while (cur().type == TokenType::kName);
    if (parens) KZ_RETURN_IF_ERROR(expect_op(")"));
    return t;
  }

  Result<StmtPtr> parse_for() {
    auto s = std::make_unique<Stmt>();
    s->kind = SK::kFor;
    KZ_ASSIGN_OR_RETURN(s->target, parse_name_target());
    if (!skip_name("in")) return unexpected("'in'");
    KZ_ASSIGN_OR_RETURN(s->expr, parse_tuple(false));
    if (skip_name("if")) {
      KZ_ASSIGN_OR_RETURN(s->filter, parse_expression(true));
    }
    if (is_name("recursive")) return error("recursive for loops are not supported");
    KZ_RETURN_IF_ERROR(expect_block_end());
    std::string end;
    ++loop_depth_;
    auto body = parse_body({"endfor", "else"}, &end);
    --loop_depth_;
    if (!body.ok()) return body.status();
    s->body = std::move(body).value();
    if (end == "else") {
      KZ_RETURN_IF_ERROR(expect_block_end());
      KZ_ASSIGN_OR_RETURN(s->else_body, parse_body({"endfor"}, &end));
    }
    KZ_RETURN_IF_ERROR(expect_block_end());
    return s;
  }

  Result<StmtPtr> parse_set() {
    auto s = std::make_unique<Stmt>();
    KZ_ASSIGN_OR_RETURN(std::string first, expect_name());
    s->target.names.push_back(first);
    if (is_op(".")) {
      advance();
      KZ_ASSIGN_OR_RETURN(s->target.attr, expect_name());
    } else if (is_op(",")) {
      s->target.is_tuple = true;
      while (skip_op(",")) {
        if (cur().type != TokenType::kName) break;
        KZ_ASSIGN_OR_RETURN(std::string n, expect_name());
        s->target.names.push_back(std::move(n));
      }
    }
    if (skip_op("=")) {
      s->kind = SK::kSet;
      KZ_ASSIGN_OR_RETURN(s->expr, parse_tuple(true));
      KZ_RETURN_IF_ERROR(expect_block_end());
      return s;
    }
    if (s->target.is_tuple) return unexpected("'='");
    s->kind = SK::kSetBlock;
    while (skip_op("|")) {
      KZ_ASSIGN_OR_RETURN(ExprPtr f, parse_filter(nullptr));
      s->filters.push_back(std::move(f));
    }
    KZ_RETURN_IF_ERROR(expect_block_end());
    std::string end;
    KZ_ASSIGN_OR_RETURN(s->body, parse_body({"endset"}, &end));
    KZ_RETURN_IF_ERROR(expect_block_end());
    return s;
  }

  Result<StmtPtr> parse_macro() {
    auto s = std::make_unique<Stmt>();
    s->kind = SK::kMacro;
    KZ_ASSIGN_OR_RETURN(s->text, expect_name());
    KZ_RETURN_IF_ERROR(expect_op("("));
    while (!is_op(")")) {
      if (!s->params.empty()) KZ_RETURN_IF_ERROR(expect_op(","));
      if (is_op(")")) break;
      MacroParam p;
      KZ_ASSIGN_OR_RETURN(p.name, expect_name());
      if (skip_op("=")) {
        KZ_ASSIGN_OR_RETURN(p.default_value, parse_expression(true));
      } else if (!s->params.empty() && s->params.back().default_value) {
        return error("non-default argument follows default argument");
      }
      s->params.push_back(std::move(p));
    }
    advance();
    KZ_RETURN_IF_ERROR(expect_block_end());
    const int saved_loops = loop_depth_;
    loop_depth_ = 0;  // break/continue do not cross a macro
    std::string end;
    auto body = parse_body({"endmacro"}, &end);
    loop_depth_ = saved_loops;
    if (!body.ok()) return body.status();
    s->body = std::move(body).value();
    KZ_RETURN_IF_ERROR(expect_block_end());
    return s;
  }

  Result<StmtPtr> parse_filter_block() {
    auto s = std::make_unique<Stmt>();
    s->kind = SK::kFilterBlock;
    do {
      KZ_ASSIGN_OR_RETURN(ExprPtr f, parse_filter(nullptr));
      s->filters.push_back(std::move(f));
    } while (skip_op("|"));
    KZ_RETURN_IF_ERROR(expect_block_end());
    std::string end;
    KZ_ASSIGN_OR_RETURN(s->body, parse_body({"endfilter"}, &end));
    KZ_RETURN_IF_ERROR(expect_block_end());
    return s;
  }

  Result<StmtPtr> parse_loop_control(const std::string& name) {
    if (loop_depth_ == 0) return error("'" + name + "' outside of a loop");
    auto s = std::make_unique<Stmt>();
    s->kind = name == "break" ? SK::kBreak : SK::kContinue;
    KZ_RETURN_IF_ERROR(expect_block_end());
    return s;
  }

  Result<StmtPtr> parse_scope(std::string_view end_name) {
    auto s = std::make_unique<Stmt>();
    s->kind = SK::kScope;
    KZ_RETURN_IF_ERROR(expect_block_end());
    std::string end;
    KZ_ASSIGN_OR_RETURN(s->body, parse_body({end_name}, &end));
    KZ_RETURN_IF_ERROR(expect_block_end());
    return s;
  }

  // ---- expressions ---------------------------------------------------------

  // Expressions separated by commas form a tuple (`{{ a, b }}`, `set x = 1, 2`).
  Result<ExprPtr> parse_tuple(bool with_condexpr) {
    const int line = cur().line;
    KZ_ASSIGN_OR_RETURN(ExprPtr first, parse_expression(with_condexpr));
    if (!is_op(",")) return first;
    std::vector<ExprPtr> items;
    items.push_back(std::move(first));
    while (skip_op(",")) {
      if (!starts_expression()) break;
      KZ_ASSIGN_OR_RETURN(ExprPtr e, parse_expression(with_condexpr));
      items.push_back(std::move(e));
    }
    return make(EK::kTuple, line, std::move(items));
  }

  bool starts_expression() const {
    const Token& t = cur();
    switch (t.type) {
      case TokenType::kName:
      case TokenType::kString:
      case TokenType::kInteger:
      case TokenType::kFloat: return true;
      case TokenType::kOperator: return t.text == "(" || t.text == "[" || t.text == "{" || t.text == "-" || t.text == "+";
      default: return false;
    }
  }

  Result<ExprPtr> parse_expression(bool with_condexpr) {
    Guard guard(*this);
    if (guard.exceeded()) return error("expression nested too deeply");
    if (!with_condexpr) return parse_or();
    KZ_ASSIGN_OR_RETURN(ExprPtr expr, parse_or());
    while (is_name("if")) {
      const int line = cur().line;
      advance();
      KZ_ASSIGN_OR_RETURN(ExprPtr cond, parse_or());
      ExprPtr otherwise;
      if (skip_name("else")) {
        KZ_ASSIGN_OR_RETURN(otherwise, parse_expression(true));
      }
      std::vector<ExprPtr> children;
      children.push_back(std::move(cond));
      children.push_back(std::move(expr));
      children.push_back(std::move(otherwise));
      KZ_ASSIGN_OR_RETURN(expr, make(EK::kCondExpr, line, std::move(children)));
    }
    return expr;
  }

  Result<ExprPtr> parse_or() {
    KZ_ASSIGN_OR_RETURN(ExprPtr left, parse_and());
    while (is_name("or")) {
      const int line = cur().line;
      advance();
      KZ_ASSIGN_OR_RETURN(ExprPtr right, parse_and());
      std::vector<ExprPtr> c;
      c.push_back(std::move(left));
      c.push_back(std::move(right));
      KZ_ASSIGN_OR_RETURN(left, make(EK::kOr, line, std::move(c)));
    }
    return left;
  }

  Result<ExprPtr> parse_and() {
    KZ_ASSIGN_OR_RETURN(ExprPtr left, parse_not());
    while (is_name("and")) {
      const int line = cur().line;
      advance();
      KZ_ASSIGN_OR_RETURN(ExprPtr right, parse_not());
      std::vector<ExprPtr> c;
      c.push_back(std::move(left));
      c.push_back(std::move(right));
      KZ_ASSIGN_OR_RETURN(left, make(EK::kAnd, line, std::move(c)));
    }
    return left;
  }

  Result<ExprPtr> parse_not() {
    if (is_name("not")) {
      Guard guard(*this);
      if (guard.exceeded()) return error("expression nested too deeply");
      const int line = cur().line;
      advance();
      KZ_ASSIGN_OR_RETURN(ExprPtr operand, parse_not());
      std::vector<ExprPtr> c;
      c.push_back(std::move(operand));
      return make(EK::kUnary, line, std::move(c), "not");
    }
    return parse_compare();
  }

  Result<ExprPtr> parse_compare() {
    const int line = cur().line;
    KZ_ASSIGN_OR_RETURN(ExprPtr first, parse_binary(0));
    std::vector<ExprPtr> operands;
    std::vector<std::string> ops;
    operands.push_back(std::move(first));
    while (true) {
      std::string op;
      const Token& t = cur();
      if (t.type == TokenType::kOperator &&
          (t.text == "==" || t.text == "!=" || t.text == "<" || t.text == "<=" || t.text == ">" || t.text == ">=")) {
        op = t.text;
        advance();
      } else if (is_name("in")) {
        op = "in";
        advance();
      } else if (is_name("not") && is_name("in", 1)) {
        op = "notin";
        advance();
        advance();
      } else {
        break;
      }
      KZ_ASSIGN_OR_RETURN(ExprPtr operand, parse_binary(0));
      operands.push_back(std::move(operand));
      ops.push_back(std::move(op));
    }
    if (ops.empty()) return std::move(operands[0]);
    KZ_ASSIGN_OR_RETURN(ExprPtr e, make(EK::kCompare, line, std::move(operands)));
    e->ops = std::move(ops);
    return e;
  }

  // Binary levels, loosest first: + -, ~, * / // %, ** (all left-assoc, as
  // in Jinja2, `**` included).
  Result<ExprPtr> parse_binary(int level) {
    static const std::vector<std::vector<std::string_view>> kLevels = {
        {"+", "-"}, {"~"}, {"*", "/", "//", "%"}, {"**"}};
    if (level == static_cast<int>(kLevels.size())) return parse_unary(true);
    KZ_ASSIGN_OR_RETURN(ExprPtr left, parse_binary(level + 1));
    while (true) {
      const Token& t = cur();
      if (t.type != TokenType::kOperator) break;
      const auto& ops = kLevels[static_cast<size_t>(level)];
      if (std::find(ops.begin(), ops.end(), t.text) == ops.end()) break;
      const std::string op = t.text;
      const int line = t.line;
      advance();
      KZ_ASSIGN_OR_RETURN(ExprPtr right, parse_binary(level + 1));
      std::vector<ExprPtr> c;
      c.push_back(std::move(left));
      c.push_back(std::move(right));
      KZ_ASSIGN_OR_RETURN(left, make(EK::kBinary, line, std::move(c), op));
    }
    return left;
  }

  Result<ExprPtr> parse_unary(bool with_filter) {
    Guard guard(*this);
    if (guard.exceeded()) return error("expression nested too deeply");
    ExprPtr node;
    if (is_op("-") || is_op("+")) {
      const std::string op = cur().text;
      const int line = cur().line;
      advance();
      KZ_ASSIGN_OR_RETURN(ExprPtr operand, parse_unary(false));
      std::vector<ExprPtr> c;
      c.push_back(std::move(operand));
      KZ_ASSIGN_OR_RETURN(node, make(EK::kUnary, line, std::move(c), op));
    } else {
      KZ_ASSIGN_OR_RETURN(node, parse_primary());
    }
    KZ_ASSIGN_OR_RETURN(node, parse_postfix(std::move(node)));
    if (with_filter) {
      KZ_ASSIGN_OR_RETURN(node, parse_filter_expr(std::move(node)));
    }
    return node;
  }

  Result<ExprPtr> literal(Value v, int line) {
    auto e = std::make_unique<Expr>();
    e->kind = EK::kLiteral;
    e->line = line;
    e->value = std::move(v);
    return e;
  }

  Result<ExprPtr> parse_primary() {
    const Token& t = cur();
    const int line = t.line;
    switch (t.type) {
      case TokenType::kName: {
        const std::string n = t.text;
        advance();
        if (n == "true" || n == "True") return literal(Value::boolean(true), line);
        if (n == "false" || n == "False") return literal(Value::boolean(false), line);
        if (n == "none" || n == "None") return literal(Value::none(), line);
        return make(EK::kName, line, {}, n);
      }
      case TokenType::kString: {
        std::string s = t.text;
        advance();
        while (cur().type == TokenType::kString) {  // "a" "b" concatenates
          s += cur().text;
          advance();
        }
        return literal(Value::string(std::move(s)), line);
      }
      case TokenType::kInteger: {
        const int64_t v = t.int_value;
        advance();
        return literal(Value::integer(v), line);
      }
      case TokenType::kFloat: {
        const double v = t.float_value;
        advance();
        return literal(Value::number(v), line);
      }
      case TokenType::kOperator:
        if (t.text == "(") return parse_parenthesized();
        if (t.text == "[") return parse_list();
        if (t.text == "{") return parse_dict();
        break;
      default: break;
    }
    return unexpected("an expression");
  }

  Result<ExprPtr> parse_parenthesized() {
    const int line = cur().line;
    advance();
    if (skip_op(")")) return make(EK::kTuple, line, {});
    KZ_ASSIGN_OR_RETURN(ExprPtr first, parse_expression(true));
    if (skip_op(")")) return first;
    std::vector<ExprPtr> items;
    items.push_back(std::move(first));
    while (skip_op(",")) {
      if (is_op(")")) break;
      KZ_ASSIGN_OR_RETURN(ExprPtr e, parse_expression(true));
      items.push_back(std::move(e));
    }
    KZ_RETURN_IF_ERROR(expect_op(")"));
    return make(EK::kTuple, line, std::move(items));
  }

  Result<ExprPtr> parse_list() {
    const int line = cur().line;
    advance();
    std::vector<ExprPtr> items;
    while (!is_op("]")) {
      if (!items.empty()) KZ_RETURN_IF_ERROR(expect_op(","));
      if (is_op("]")) break;
      KZ_ASSIGN_OR_RETURN(ExprPtr e, parse_expression(true));
      items.push_back(std::move(e));
    }
    advance();
    return make(EK::kList, line, std::move(items));
  }

  Result<ExprPtr> parse_dict() {
    const int line = cur().line;
    advance();
    std::vector<ExprPtr> items;
    while (!is_op("}")) {
      if (!items.empty()) KZ_RETURN_IF_ERROR(expect_op(","));
      if (is_op("}")) break;
      KZ_ASSIGN_OR_RETURN(ExprPtr key, parse_expression(true));
      KZ_RETURN_IF_ERROR(expect_op(":"));
      KZ_ASSIGN_OR_RETURN(ExprPtr value, parse_expression(true));
      items.push_back(std::move(key));
      items.push_back(std::move(value));
    }
    advance();
    return make(EK::kDict, line, std::move(items));
  }

  Result<ExprPtr> parse_postfix(ExprPtr node) {
    while (true) {
      const int line = cur().line;
      if (is_op(".")) {
        advance();
        std::vector<ExprPtr> c;
        c.push_back(std::move(node));
        if (cur().type == TokenType::kName) {
          std::string attr = cur().text;
          advance();
          KZ_ASSIGN_OR_RETURN(node, make(EK::kGetAttr, line, std::move(c), std::move(attr)));
        } else if (cur().type == TokenType::kInteger) {
          KZ_ASSIGN_OR_RETURN(ExprPtr index, literal(Value::integer(cur().int_value), line));
          advance();
          c.push_back(std::move(index));
          KZ_ASSIGN_OR_RETURN(node, make(EK::kGetItem, line, std::move(c)));
        } else {
          return unexpected("an attribute name");
        }
      } else if (is_op("[")) {
        KZ_ASSIGN_OR_RETURN(node, parse_subscript(std::move(node)));
      } else if (is_op("(")) {
        KZ_ASSIGN_OR_RETURN(node, parse_call(std::move(node)));
      } else {
        return node;
      }
    }
  }

  Result<ExprPtr> parse_subscript(ExprPtr node) {
    Guard guard(*this);
    if (guard.exceeded()) return error("expression nested too deeply");
    const int line = cur().line;
    advance();  // [
    ExprPtr parts[3];
    bool is_slice = false;
    if (!is_op(":")) {
      KZ_ASSIGN_OR_RETURN(parts[0], parse_expression(true));
    }
    if (skip_op(":")) {
      is_slice = true;
      if (!is_op(":") && !is_op("]")) {
        KZ_ASSIGN_OR_RETURN(parts[1], parse_expression(true));
      }
      if (skip_op(":") && !is_op("]")) {
        KZ_ASSIGN_OR_RETURN(parts[2], parse_expression(true));
      }
    }
    KZ_RETURN_IF_ERROR(expect_op("]"));
    std::vector<ExprPtr> c;
    c.push_back(std::move(node));
    if (!is_slice) {
      if (!parts[0]) return error("empty subscript");
      c.push_back(std::move(parts[0]));
      return make(EK::kGetItem, line, std::move(c));
    }
    for (auto& p : parts) c.push_back(std::move(p));
    return make(EK::kSlice, line, std::move(c));
  }

  // Arguments `(a, b, key=value)` into e->children (after any existing
  // ones) and e->kwargs.
  Status parse_call_args(Expr& e) {
    Guard guard(*this);
    if (guard.exceeded()) return error("expression nested too deeply");
    KZ_RETURN_IF_ERROR(expect_op("("));
    bool first = true;
    while (!is_op(")")) {
      if (!first) KZ_RETURN_IF_ERROR(expect_op(","));
      first = false;
      if (is_op(")")) break;
      if (is_op("*") || is_op("**")) return error("*args and **kwargs in calls are not supported");
      if (cur().type == TokenType::kName && is_op("=", 1)) {
        std::string key = cur().text;
        advance();
        advance();
        KZ_ASSIGN_OR_RETURN(ExprPtr v, parse_expression(true));
        e.kwargs.emplace_back(std::move(key), std::move(v));
      } else {
        if (!e.kwargs.empty()) return error("positional argument follows keyword argument");
        KZ_ASSIGN_OR_RETURN(ExprPtr v, parse_expression(true));
        e.children.push_back(std::move(v));
      }
    }
    advance();
    return OkStatus();
  }

  Result<ExprPtr> parse_call(ExprPtr callee) {
    auto e = std::make_unique<Expr>();
    e->kind = EK::kCall;
    e->line = cur().line;
    e->children.push_back(std::move(callee));
    KZ_RETURN_IF_ERROR(parse_call_args(*e));
    KZ_RETURN_IF_ERROR(finish(*e));
    return e;
  }

  Result<ExprPtr> parse_filter_expr(ExprPtr node) {
    while (true) {
      if (skip_op("|")) {
        KZ_ASSIGN_OR_RETURN(node, parse_filter(std::move(node)));
      } else if (is_name("is")) {
        KZ_ASSIGN_OR_RETURN(node, parse_test(std::move(node)));
      } else if (is_op("(")) {
        KZ_ASSIGN_OR_RETURN(node, parse_call(std::move(node)));
      } else {
        return node;
      }
    }
  }

  // `name` or `name(args)` after a `|`; input may be null (filter blocks).
  Result<ExprPtr> parse_filter(ExprPtr input) {
    auto e = std::make_unique<Expr>();
    e->kind = EK::kFilter;
    e->line = cur().line;
    KZ_ASSIGN_OR_RETURN(e->name, expect_name());
    e->children.push_back(std::move(input));
    if (is_op("(")) KZ_RETURN_IF_ERROR(parse_call_args(*e));
    KZ_RETURN_IF_ERROR(finish(*e));
    return e;
  }

  Result<ExprPtr> parse_test(ExprPtr input) {
    auto e = std::make_unique<Expr>();
    e->kind = EK::kTest;
    e->line = cur().line;
    advance();  // is
    e->negated = skip_name("not");
    KZ_ASSIGN_OR_RETURN(e->name, expect_name());
    e->children.push_back(std::move(input));
    const Token& t = cur();
    if (is_op("(")) {
      KZ_RETURN_IF_ERROR(parse_call_args(*e));
    } else if ((t.type == TokenType::kName && t.text != "else" && t.text != "or" && t.text != "and") ||
               t.type == TokenType::kString || t.type == TokenType::kInteger || t.type == TokenType::kFloat ||
               is_op("[") || is_op("{")) {
      // One argument without parentheses: `x is divisibleby 3`, `x is sameas none`.
      if (is_name("is")) return error("tests cannot be chained with 'is'");
      Guard guard(*this);
      if (guard.exceeded()) return error("expression nested too deeply");
      KZ_ASSIGN_OR_RETURN(ExprPtr arg, parse_primary());
      KZ_ASSIGN_OR_RETURN(arg, parse_postfix(std::move(arg)));
      e->children.push_back(std::move(arg));
    }
    KZ_RETURN_IF_ERROR(finish(*e));
    return e;
  }
};

}  // namespace

Result<StmtList> parse(const std::vector<Token>& tokens, const ParseLimits& limits) {
  if (tokens.empty() || tokens.back().type != TokenType::kEof) return Internal("token stream without end marker");
  Parser parser(tokens, limits);
  return parser.parse_template();
}

}  // namespace kazeia::jinja
