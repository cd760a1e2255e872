// Syntax tree of a parsed Jinja template.
//
// Two node families: Expr (values) and Stmt (output and control flow). Each
// Expr records its depth so the parser can refuse trees whose evaluation or
// destruction would recurse too deeply (a chain like `1+1+1+...` is built
// without parser recursion, so the parser's own guard would not see it).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "text/jinja_value.h"

namespace kazeia::jinja {

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;
using StmtList = std::vector<StmtPtr>;

struct Expr {
  enum class Kind : uint8_t {
    kLiteral,   // value
    kName,      // name
    kList,      // children
    kTuple,     // children
    kDict,      // children: key0, value0, key1, value1, ...
    kGetAttr,   // children[0].name
    kGetItem,   // children[0][children[1]]
    kSlice,     // children[0][a:b:c]; children[1..3] may be null
    kCall,      // children[0](args, kwargs)
    kFilter,    // children[0] | name(args, kwargs)
    kTest,      // children[0] is name(args, kwargs); negated
    kUnary,     // op children[0]: "-", "+", "not"
    kBinary,    // children[0] op children[1]: + - * / // % ** ~
    kAnd,
    kOr,
    kCompare,   // children[0] ops[0] children[1] ops[1] children[2] ...
    kCondExpr,  // children[1] if children[0] else children[2] (may be null)
  };
  Kind kind = Kind::kLiteral;
  int line = 0;
  uint32_t depth = 1;
  bool negated = false;            // kTest: `is not`
  Value value;                     // kLiteral
  std::string name;                // kName, kGetAttr, kFilter, kTest, kUnary/kBinary operator
  std::vector<std::string> ops;    // kCompare operators: == != < <= > >= in notin
  std::vector<ExprPtr> children;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;  // kCall, kFilter, kTest
};

// An assignment target: a name, `ns.attr`, or a tuple of names.
struct Target {
  std::vector<std::string> names;  // one name, or several for unpacking
  std::string attr;                // non-empty for `ns.attr`
  bool is_tuple = false;
};

struct MacroParam {
  std::string name;
  ExprPtr default_value;  // may be null
};

struct IfBranch {
  ExprPtr condition;  // null for the else branch
  StmtList body;
};

struct Stmt {
  enum class Kind : uint8_t {
    kText,       // text
    kOutput,     // {{ expr }}
    kIf,         // branches
    kFor,        // target in expr [if filter]: body [else else_body]
    kSet,        // target = expr
    kSetBlock,   // {% set target | filters %}body{% endset %}
    kMacro,      // name(params): body
    kFilterBlock,// {% filter f | g %}body{% endfilter %}
    kBreak,
    kContinue,
    kScope,      // a body with no own semantics ({% generation %})
  };
  Kind kind = Kind::kText;
  int line = 0;
  std::string text;                 // kText; macro name
  ExprPtr expr;                     // kOutput, kFor iterable, kSet value, filters
  ExprPtr filter;                   // kFor `if` filter
  Target target;                    // kFor, kSet, kSetBlock
  std::vector<IfBranch> branches;   // kIf
  StmtList body;
  StmtList else_body;               // kFor
  std::vector<MacroParam> params;   // kMacro
  std::vector<ExprPtr> filters;     // kSetBlock, kFilterBlock: kFilter nodes without input
};

}  // namespace kazeia::jinja
