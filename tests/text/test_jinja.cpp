// Unit tests of the Jinja interpreter, independent of any model file.
//
// Each construct chat templates use has a case with a hand-written expected
// string (cross-checked once against Python Jinja2 3.1 configured as HF
// transformers configures it). Then the error paths and resource limits.
#include <gtest/gtest.h>

#include <string>

#include "text/jinja.h"
#include "text/jinja_pystr.h"

namespace kazeia::jinja {
namespace {

// Renders template text with a JSON context; errors come back as text so a
// failing expectation shows them.
std::string render(const std::string& source, const std::string& context_json = "{}",
                   const RenderLimits& limits = {}) {
  auto tmpl = Template::parse(source);
  if (!tmpl.ok()) return "PARSE ERROR: " + tmpl.status().to_string();
  auto out = tmpl->render(nlohmann::ordered_json::parse(context_json), limits);
  if (!out.ok()) return "RENDER ERROR: " + out.status().to_string();
  return *out;
}

// The status of parsing + rendering (ok when both succeed).
Status render_status(const std::string& source, const std::string& context_json = "{}",
                     const RenderLimits& limits = {}) {
  auto tmpl = Template::parse(source);
  if (!tmpl.ok()) return tmpl.status();
  auto out = tmpl->render(nlohmann::ordered_json::parse(context_json), limits);
  return out.ok() ? OkStatus() : out.status();
}

struct Case {
  const char* name;
  const char* source;
  const char* context;
  const char* expected;
};

const Case kCases[] = {
    {"text_and_variable",
     "Hello {{ name }}!",
     "{\"name\": \"World\"}",
     "Hello World!"},
    {"comment_removed",
     "a{# note #}b",
     "{}",
     "ab"},
    {"dash_strips_both_sides",
     "a  \n {{- 'x' -}} \n  b",
     "{}",
     "axb"},
    {"block_dash_strips",
     "a\n  {%- if true -%}\n  x\n  {%- endif -%}\n  b",
     "{}",
     "axb"},
    {"trim_blocks_drops_newline",
     "{% if true %}\nyes\n{% endif %}\nend",
     "{}",
     "yes\nend"},
    {"lstrip_blocks_drops_indent",
     "  {% if true %}\n  x\n  {% endif %}\ny",
     "{}",
     "  x\ny"},
    {"plus_disables_lstrip",
     "  {%+ if true %}x{% endif %}",
     "{}",
     "  x"},
    {"variable_tags_not_lstripped",
     "  {{ 'x' }}\n",
     "{}",
     "  x"},
    {"single_trailing_newline_removed",
     "x\n\n",
     "{}",
     "x\n"},
    {"comment_trims_newline",
     "a\n{# c #}\nb",
     "{}",
     "a\nb"},
    {"crlf_normalized",
     "a\r\nb",
     "{}",
     "a\nb"},
    {"raw_block",
     "{% raw %}{{ x }}{% endraw %}",
     "{}",
     "{{ x }}"},
    {"if_elif_else",
     "{% for v in [1, 2, 3] %}{% if v == 1 %}one{% elif v == 2 %}two{% else %}many{% endif %} {% endfor %}",
     "{}",
     "one two many "},
    {"for_loop_variables",
     "{% for x in 'abc' %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}|{% endfor %}",
     "{}",
     "1032TrueFalse3|2121FalseFalse3|3210FalseTrue3|"},
    {"for_else",
     "{% for x in [] %}x{% else %}empty{% endfor %}",
     "{}",
     "empty"},
    {"for_dict_items",
     "{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}{% for k, v in d|items %}{{ k }}{% endfor %}{% for k in d %}{{ k }}{% endfor %}",
     "{\"d\": {\"b\": 1, \"a\": 2}}",
     "b=1;a=2;baba"},
    {"for_with_filter",
     "{% for x in range(6) if x is odd %}{{ x }}{{ loop.length }} {% endfor %}",
     "{}",
     "13 33 53 "},
    {"loop_previtem_nextitem_cycle",
     "{% for x in [1, 2, 3] %}{{ loop.previtem is defined }}{{ loop.nextitem }}{{ loop.cycle('a', 'b') }} {% endfor %}",
     "{}",
     "False2a True3b Truea "},
    {"break_continue",
     "{% for x in range(10) %}{% if x == 1 %}{% continue %}{% endif %}{% if x == 4 %}{% break %}{% endif %}{{ x }}{% endfor %}",
     "{}",
     "023"},
    {"set_does_not_leak_from_loop",
     "{% set x = 1 %}{% for i in [1] %}{% set x = 2 %}{{ x }}{% endfor %}{{ x }}",
     "{}",
     "21"},
    {"loop_scope_is_fresh_each_iteration",
     "{% set x = 'top' %}{% for i in [1, 2] %}{{ x }}{% set x = i %}{{ x }}{% endfor %}{{ x }}",
     "{}",
     "top1top2top"},
    {"namespace_attribute",
     "{% set ns = namespace(total=0, seen=false) %}{% for i in [1, 2, 3] %}{% set ns.total = ns.total + i %}{% set ns.seen = true %}{% endfor %}{{ ns.total }} {{ ns.seen }}",
     "{}",
     "6 True"},
    {"set_tuple_unpack",
     "{% set a, b = [1, 2] %}{{ b }}{{ a }}",
     "{}",
     "21"},
    {"block_set_with_filter",
     "{% set x %}a{{ 1 }}b{% endset %}[{{ x }}]{% set y | upper %}ab{% endset %}{{ y }}",
     "{}",
     "[a1b]AB"},
    {"macro_defaults_and_kwargs",
     "{% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{% endmacro %}{{ greet('Bob') }} {{ greet('Al', punct='?') }}",
     "{}",
     "Hi Bob! Hi Al?"},
    {"macro_sees_template_globals",
     "{% set g = 'G' %}{% macro m() %}{{ g }}{% endmacro %}{{ m() }}",
     "{}",
     "G"},
    {"macro_result_filtered",
     "{% macro m() %}  x  {% endmacro %}[{{ m()|trim }}]",
     "{}",
     "[x]"},
    {"filter_block",
     "{% filter upper %}abc{% endfilter %}",
     "{}",
     "ABC"},
    {"tojson_separators_and_order",
     "{{ d|tojson }}",
     "{\"d\": {\"b\": [1, 2.5, true, null], \"a\": \"x\\\"y\\n<&>\xc3\xa9""\"}}",
     "{\"b\": [1, 2.5, true, null], \"a\": \"x\\\"y\\n<&>\xc3\xa9""\"}"},
    {"tojson_indent",
     "{{ d|tojson(indent=2) }}",
     "{\"d\": {\"a\": [1, {}], \"b\": []}}",
     "{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b\": []\n}"},
    {"tojson_sort_and_ascii",
     "{{ d|tojson(sort_keys=true, ensure_ascii=true) }}",
     "{\"d\": {\"b\": \"\xc3\xa9""\xf0\x9f\x98\x80""\", \"a\": 1}}",
     "{\"a\": 1, \"b\": \"\\u00e9\\ud83d\\ude00\"}"},
    {"string_of_python_values",
     "{{ true|string }} {{ none|string }} {{ 2.5|string }} {{ 42|string }} {{ [1, 'a', none, false]|string }} {{ {'k': 'v'}|string }}",
     "{}",
     "True None 2.5 42 [1, 'a', None, False] {'k': 'v'}"},
    {"float_repr",
     "{{ 1.0 }} {{ 0.1 }} {{ 1e16 }} {{ 1e-5 }} {{ 123456789.25 }} {{ 1/3 }}",
     "{}",
     "1.0 0.1 1e+16 1e-05 123456789.25 0.3333333333333333"},
    {"repr_quotes",
     "{{ [\"it's\", 'say \"hi\"', 'a\\nb'] }}",
     "{}",
     "[\"it's\", 'say \"hi\"', 'a\\nb']"},
    {"trim_length_lower_upper",
     "[{{ '  H\xc3\xa9"" \xe3\x80\x80""'|trim }}] {{ 'h\xc3\xa9""llo'|length }} {{ 'AbC'|lower }} {{ 'abc'|upper }} {{ [1, 2]|length }} {{ {'a': 1}|length }}",
     "{}",
     "[H\xc3\xa9""] 5 abc ABC 2 1"},
    {"default_filter",
     "{{ x|default('d') }} {{ ''|default('e') }} {{ ''|default('f', true) }} {{ none|d('g') }}",
     "{}",
     "d  f None"},
    {"join_first_last_list",
     "{{ [1, 2, 3]|join(', ') }} {{ users|join('/', attribute='name') }} {{ [4, 5]|first }} {{ [4, 5]|last }} {{ 'ab'|list }}",
     "{\"users\": [{\"name\": \"a\"}, {\"name\": \"b\"}]}",
     "1, 2, 3 a/b 4 5 ['a', 'b']"},
    {"replace_filter",
     "{{ 'aaa'|replace('a', 'b') }} {{ 'aaa'|replace('a', 'b', 2) }}",
     "{}",
     "bbb bba"},
    {"selectattr_rejectattr",
     "{{ xs|selectattr('on')|map(attribute='n')|join }} {{ xs|rejectattr('on')|map(attribute='n')|join }} {{ xs|selectattr('n', 'equalto', 'b')|map(attribute='n')|join }}",
     "{\"xs\": [{\"n\": \"a\", \"on\": true}, {\"n\": \"b\", \"on\": false}, {\"n\": \"c\", \"on\": true}]}",
     "ac b b"},
    {"select_reject_map",
     "{{ [1, 2, 3, 4]|select('odd')|list }} {{ [1, 2, 3, 4]|reject('odd')|list }} {{ ['a', 'b']|map('upper')|join }}",
     "{}",
     "[1, 3] [2, 4] AB"},
    {"safe_int_float",
     "{{ 5|safe }} {{ '42'|int + 1 }} {{ '3.9'|int }} {{ 'x'|int(7) }} {{ '2.5'|float }} {{ 3|float }}",
     "{}",
     "5 43 3 7 2.5 3.0"},
    {"reverse_sort_unique",
     "{{ [3, 1, 2]|reverse|list }} {{ 'abc'|reverse }} {{ ['b', 'A', 'c']|sort }} {{ [3, 1, 2]|sort(reverse=true) }} {{ ['a', 'A', 'b']|unique|list }}",
     "{}",
     "[2, 1, 3] cba ['A', 'b', 'c'] [3, 2, 1] ['a', 'b']"},
    {"capitalize_title_indent",
     "{{ 'hELLO world'|capitalize }} {{ 'hello big-world'|title }}|{{ 'a\nb\n\nc'|indent(2) }}|{{ 'x\ny'|indent(2, true) }}",
     "{}",
     "Hello world Hello Big-World|a\n  b\n\n  c|  x\n  y"},
    {"numeric_filters",
     "{{ -3|abs }} {{ 2.567|round(2) }} {{ 2.5|round }} {{ 2.1|round(method='ceil') }} {{ [1, 2, 3]|sum }} {{ [3, 1, 2]|min }} {{ [3, 1, 2]|max }}",
     "{}",
     "3 2.57 2.0 3.0 6 1 3"},
    {"dictsort_and_format",
     "{{ {'b': 1, 'a': 2}|dictsort }} {{ '%s-%d-%.2f'|format('x', 3, 1.5) }} {{ '%s=%r' % ('k', 'v') }}",
     "{}",
     "[('a', 2), ('b', 1)] x-3-1.50 k='v'"},
    {"tests_types",
     "{{ x is defined }}{{ y is undefined }}{{ none is none }}{{ 'a' is string }}{{ {} is mapping }}{{ [] is iterable }}{{ 'a' is sequence }}{{ 1 is number }}{{ 1 is integer }}{{ 1.5 is float }}{{ true is boolean }}{{ true is true }}{{ false is false }}{{ 1 is true }}{{ range is callable }}",
     "{\"x\": 1}",
     "TrueTrueTrueTrueTrueTrueTrueTrueTrueTrueTrueTrueTrueFalseTrue"},
    {"tests_values",
     "{{ 3 is odd }}{{ 4 is even }}{{ 9 is divisibleby 3 }}{{ 2 is in [1, 2] }}{{ 'a' is eq('a') }}{{ 1 is lt 2 }}{{ x is not none }}{{ none is sameas none }}{{ 'AB' is upper }}{{ 'ab' is lower }}",
     "{\"x\": 0}",
     "TrueTrueTrueTrueTrueTrueTrueTrueTrueTrue"},
    {"string_methods",
     "{{ 'abc'.startswith('a') }}{{ 'abc'.startswith(('x', 'ab')) }}{{ 'abc'.endswith('bc') }}|{{ '  x  '.strip() }}|{{ 'xxaxx'.strip('x') }}|{{ '\nx\n'.lstrip('\n') }}|{{ 'x\n\n'.rstrip('\n') }}|",
     "{}",
     "TrueTrueTrue|x|a|x\n|x|"},
    {"string_split_methods",
     "{{ 'a b  c'.split() }} {{ 'a,b,,c'.split(',') }} {{ 'a,b,c'.split(',', 1) }} {{ 'a,b,c'.rsplit(',', 1) }} {{ 'x</think>y'.split('</think>')[-1] }}",
     "{}",
     "['a', 'b', 'c'] ['a', 'b', '', 'c'] ['a', 'b,c'] ['a,b', 'c'] y"},
    {"string_misc_methods",
     "{{ 'aXa'.replace('a', 'b') }} {{ 'ab'.upper() }} {{ 'AB'.lower() }} {{ 'hello world'.title() }} {{ 'hello'.capitalize() }} {{ 'h\xc3\xa9""llo'.find('l') }} {{ 'banana'.count('an') }} {{ '-'.join(['a', 'b']) }} {{ '{}-{}'.format(1, 'x') }}",
     "{}",
     "bXb AB ab Hello World Hello 2 2 a-b 1-x"},
    {"index_and_slice",
     "{{ 'abc'[::-1] }} {{ [1, 2, 3][1:] }} {{ [1, 2, 3][-1] }} {{ 'h\xc3\xa9""llo'[1] }} {{ 'h\xc3\xa9""llo'[1:3] }} {{ [1, 2, 3, 4, 5][::2] }} {{ [1, 2, 3][5] is defined }} {{ [1, 2, 3][:-1] }}",
     "{}",
     "cba [2, 3] 3 \xc3\xa9"" \xc3\xa9""l [1, 3, 5] False [1, 2]"},
    {"messages_reverse_index",
     "{% for m in messages[::-1] %}{{ (messages|length - 1) - loop.index0 }}{{ m.role }} {% endfor %}",
     "{\"messages\": [{\"role\": \"a\"}, {\"role\": \"b\"}]}",
     "1b 0a "},
    {"in_and_not_in",
     "{{ 'a' in 'cat' }}{{ 2 in [1, 2] }}{{ 'k' in {'k': 1} }}{{ 'z' not in 'cat' }}{{ 3 not in [1, 2] }}",
     "{}",
     "TrueTrueTrueTrueTrue"},
    {"comparisons",
     "{{ 1 < 2 < 3 }}{{ 1 < 3 < 2 }}{{ 'a' < 'b' }}{{ 1 == 1.0 }}{{ [1, 2] == [1, 2] }}{{ 2 >= 3 }}{{ 1 != 2 }}",
     "{}",
     "TrueFalseTrueTrueTrueFalseTrue"},
    {"and_or_not_values",
     "{{ 0 or 'x' }} {{ 1 and 'y' }} {{ not 0 }} {{ '' or [] }} {{ none and 1 }}",
     "{}",
     "x y True [] None"},
    {"arithmetic",
     "{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 7 / 2 }} {{ 2 ** 10 }} {{ 'ab' * 3 }} {{ 1 + 2.5 }} {{ -(3) }} {{ 10 - 2 * 3 }} {{ [1] + [2] }}",
     "{}",
     "3 -4 1 2 3.5 1024 ababab 3.5 -3 4 [1, 2]"},
    {"tilde_concatenation",
     "{{ 'a' ~ 1 ~ none ~ true ~ x }}",
     "{}",
     "a1NoneTrue"},
    {"conditional_expression",
     "{{ 'y' if x else 'n' }} {{ 'y' if not x else 'n' }} [{{ 'only' if false }}]",
     "{\"x\": true}",
     "y n []"},
    {"dict_methods",
     "{{ d.get('a') }} {{ d.get('z') }} {{ d.get('z', 5) }} {{ d.keys()|list }} {{ d.values()|list }} {{ d['a'] }} {{ d.a }}",
     "{\"d\": {\"a\": 1, \"b\": 2}}",
     "1 None 5 ['a', 'b'] [1, 2] 1 1"},
    {"dict_literal_and_items_filter",
     "{% for k, v in {'x': 1, 'y': [2]}|items %}{{ k }}{{ v }}{% endfor %}",
     "{}",
     "x1y[2]"},
    {"string_literal_escapes",
     "{{ 'a\\nb' }}|{{ '\\u00e9\\t' }}|{{ \"q'\" }}|{{ 'ab' 'cd' }}",
     "{}",
     "a\nb|\xc3\xa9""\t|q'|abcd"},
    {"generation_block_passthrough",
     "{% generation %}x{% endgeneration %}",
     "{}",
     "x"},
    {"namespace_in_macro",
     "{% set ns = namespace(n=0) %}{% macro bump() %}{% set ns.n = ns.n + 1 %}{% endmacro %}{{ bump() }}{{ bump() }}{{ ns.n }}",
     "{}",
     "2"},
    {"loop_nested_outer_access",
     "{% for a in [1, 2] %}{% set outer = loop %}{% for b in [1] %}{{ outer.index }}{{ loop.index }}{% endfor %}{% endfor %}",
     "{}",
     "1121"},
    {"whitespace_in_realistic_template",
     "{%- for m in messages %}\n    {%- if m.role == 'user' %}\n        {{- '<u>' + m.content + '</u>\\n' }}\n    {%- endif %}\n{%- endfor %}\n{%- if add_generation_prompt %}\n    {{- '<a>' }}\n{%- endif %}\n",
     "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}], \"add_generation_prompt\": true}",
     "<u>hi</u>\n<a>"},
};

TEST(Jinja, ConstructsRenderAsJinja2Does) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(render(c.source, c.context), c.expected) << "template: " << c.source;
  }
}

TEST(Jinja, MessagesWalkLikeChatTemplates) {
  const std::string tmpl =
      "{%- set ns = namespace(last=-1) %}"
      "{%- for m in messages %}{%- if m.role == 'user' %}{%- set ns.last = loop.index0 %}{%- endif %}{%- endfor %}"
      "{%- for m in messages %}"
      "{{- '<|' + m.role + '|>' }}"
      "{%- if m.content is string %}{{ m.content | trim }}{% else %}{% for p in m.content %}{{ p.text }}{% endfor %}{% endif %}"
      "{%- if m.tool_calls %}{% for c in m.tool_calls %} [{{ c.function.name }} {{ c.function.arguments | tojson }}]{% endfor %}{% endif %}"
      "{%- if loop.index0 > ns.last %}*{% endif %}{{ '\\n' }}"
      "{%- endfor %}";
  const std::string ctx = R"({"messages": [
      {"role": "user", "content": "  hi  "},
      {"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
      {"role": "user", "content": "q"},
      {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": {"x": 1, "y": [true, null]}}}]}]})";
  EXPECT_EQ(render(tmpl, ctx), "<|user|>hi\n<|assistant|>ab\n<|user|>q\n<|assistant|> [f {\"x\": 1, \"y\": [true, null]}]*\n");
}

// ---- error paths --------------------------------------------------------------

TEST(JinjaErrors, UnknownFilterFailsWhenReached) {
  Status st = render_status("{{ 'x' | no_such_filter }}");
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(st.message().find("no filter named 'no_such_filter'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("line 1"), std::string::npos) << st.message();
  // Not reached: no error.
  EXPECT_EQ(render("{% if false %}{{ 'x' | no_such_filter }}{% endif %}ok"), "ok");
  EXPECT_EQ(render_status("{{ 1 is no_such_test }}").code(), ErrorCode::kInvalidArgument);
}

TEST(JinjaErrors, UnclosedBlocksAndTags) {
  Status st = render_status("line1\n{% if x %}never closed");
  EXPECT_EQ(st.code(), ErrorCode::kInvalidFile);
  EXPECT_NE(st.message().find("endif"), std::string::npos) << st.message();
  EXPECT_EQ(render_status("{% for x in y %}").code(), ErrorCode::kInvalidFile);
  EXPECT_EQ(render_status("{% macro m() %}").code(), ErrorCode::kInvalidFile);
  Status tag = render_status("a\nb {{ x");
  EXPECT_EQ(tag.code(), ErrorCode::kInvalidFile);
  EXPECT_NE(tag.message().find("line 2"), std::string::npos) << tag.message();
  EXPECT_EQ(render_status("{% if x ").code(), ErrorCode::kInvalidFile);
  EXPECT_EQ(render_status("{# comment").code(), ErrorCode::kInvalidFile);
  EXPECT_EQ(render_status("{{ 'unterminated }}").code(), ErrorCode::kInvalidFile);
  EXPECT_EQ(render_status("{% raw %}x").code(), ErrorCode::kInvalidFile);
}

TEST(JinjaErrors, SyntaxErrors) {
  for (const char* bad : {"{% endif %}", "{% frobnicate %}", "{{ 1 + }}", "{{ (1, }}", "{{ [1, 2 }}", "{{ a.}}",
                          "{% set %}", "{% for in x %}{% endfor %}", "{{ 1 ) }}", "{% break %}",
                          "{% if true %}{% else %}{% else %}{% endif %}", "{{ f(a=1, 2) }}", "{{ 'a' is }}",
                          "{{ 0x }}", "{{ 99999999999999999999 }}", "{{ '\\x4' }}", "{{ a ! b }}"}) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(render_status(bad).code(), ErrorCode::kInvalidFile);
  }
  EXPECT_EQ(render_status(std::string("{{ '\xff' }}")).code(), ErrorCode::kInvalidFile);  // not UTF-8
}

TEST(JinjaErrors, RaiseExceptionIsAnErrorStatus) {
  Status st = render_status("before{{ raise_exception('System message must be first.') }}after");
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(st.message().find("System message must be first."), std::string::npos) << st.message();
}

TEST(JinjaErrors, RuntimeTypeErrors) {
  EXPECT_EQ(render_status("{{ 'a' + 1 }}").code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(render_status("{{ undefined_name + 1 }}").code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(render_status("{{ 1 / 0 }}").code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(render_status("{{ 1 // 0 }}").code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(render_status("{{ [1] < 'a' }}").code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(render_status("{% for x in 5 %}{% endfor %}").code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(render_status("{{ nothing() }}").code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(render_status("{{ 'abc'.nomethod() }}").code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(render_status("{% set x = 1 %}{% set x.a = 2 %}").code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(render_status("{% set a, b = [1] %}").code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(render_status("{{ 9223372036854775807 + 1 }}").code(), ErrorCode::kOutOfRange);
  EXPECT_EQ(render_status("{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}").code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(render_status("{{ {1: 2} }}").code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(render_status("{{ x | tojson }}").code(), ErrorCode::kInvalidArgument);  // undefined is not JSON
}

TEST(JinjaErrors, UndefinedChainsStayUndefined) {
  // Documented leniency: attribute access on undefined yields undefined.
  EXPECT_EQ(render("[{{ a.b.c }}][{{ a['x'][0] }}][{{ a.b is defined }}]"), "[][][False]");
}

// ---- resource limits ------------------------------------------------------------

TEST(JinjaLimits, RecursionIsBounded) {
  Status st = render_status("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}");
  EXPECT_EQ(st.code(), ErrorCode::kOutOfRange) << st.to_string();
  // Deeply nested parentheses, unary operators and blocks fail to parse, cleanly.
  EXPECT_EQ(render_status("{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}").code(),
            ErrorCode::kInvalidFile);
  EXPECT_EQ(render_status("{{ " + std::string(5000, '-') + "1 }}").code(), ErrorCode::kInvalidFile);
  std::string nested;
  for (int i = 0; i < 3000; ++i) nested += "{% if true %}";
  EXPECT_EQ(render_status(nested).code(), ErrorCode::kInvalidFile);
  // A long left-deep chain is built without parser recursion: still refused.
  std::string chain = "{{ 1";
  for (int i = 0; i < 20000; ++i) chain += " + 1";
  EXPECT_EQ(render_status(chain + " }}").code(), ErrorCode::kInvalidFile);
  std::string filters = "{{ 'x'";
  for (int i = 0; i < 20000; ++i) filters += "|trim";
  EXPECT_EQ(render_status(filters + " }}").code(), ErrorCode::kInvalidFile);
}

TEST(JinjaLimits, WorkAndOutputAreBounded) {
  RenderLimits small;
  small.max_steps = 100'000;
  small.max_output_bytes = 1 << 16;
  EXPECT_EQ(render_status("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", "{}", small).code(),
            ErrorCode::kOutOfRange);
  EXPECT_EQ(render_status("{% for i in range(1000) %}{{ 'x' * 1000 }}{% endfor %}", "{}", small).code(),
            ErrorCode::kOutOfRange);
  EXPECT_EQ(render_status("{{ 'x' * 100000000000 }}", "{}", small).code(), ErrorCode::kOutOfRange);
  EXPECT_EQ(render_status("{{ range(100000000000) | length }}", "{}", small).code(), ErrorCode::kOutOfRange);
  EXPECT_EQ(render_status("{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
                          "{}", small).code(),
            ErrorCode::kOutOfRange);
  EXPECT_EQ(render_status("{% set ns = namespace(l=[1]) %}{% for i in range(64) %}{% set ns.l = ns.l + ns.l %}{% endfor %}",
                          "{}", small).code(),
            ErrorCode::kOutOfRange);
  // Nesting of values: [[[[...]]]] built in a loop.
  EXPECT_EQ(render_status("{% set ns = namespace(l=[]) %}{% for i in range(1000) %}{% set ns.l = [ns.l] %}{% endfor %}{{ ns.l|tojson }}").code(),
            ErrorCode::kOutOfRange);
}

TEST(JinjaLimits, NamespaceCyclesAreReleased) {
  // Under the sanitizer build a leak here would fail the test run.
  EXPECT_EQ(render("{% set ns = namespace() %}{% set ns.self = ns %}{% set ns.l = [ns, {'n': ns}] %}"
                   "{{ ns.self.self.l|length }}{{ ns }}"),
            "2<Namespace>");
}

// ---- Python string semantics ------------------------------------------------------

TEST(JinjaPyStr, FloatRepr) {
  EXPECT_EQ(py::format_float(2.5), "2.5");
  EXPECT_EQ(py::format_float(1.0), "1.0");
  EXPECT_EQ(py::format_float(-0.0), "-0.0");
  EXPECT_EQ(py::format_float(1e16), "1e+16");
  EXPECT_EQ(py::format_float(1234567890123456.0), "1234567890123456.0");
  EXPECT_EQ(py::format_float(0.0001), "0.0001");
  EXPECT_EQ(py::format_float(0.00001), "1e-05");
  EXPECT_EQ(py::format_float(1.5e-300), "1.5e-300");
  EXPECT_EQ(py::format_float(0.1 + 0.2), "0.30000000000000004");
}

TEST(JinjaPyStr, ReprAndWhitespace) {
  EXPECT_EQ(py::repr_string("a'b"), "\"a'b\"");
  EXPECT_EQ(py::repr_string("a'b\""), "'a\\'b\"'");
  EXPECT_EQ(py::repr_string("t\tn\n\x01"), "'t\\tn\\n\\x01'");
  EXPECT_EQ(py::strip("\xe3\x80\x80 x \xc2\xa0", std::nullopt, true, true), "x");  // U+3000, U+00A0
  EXPECT_EQ(py::strip("xxaxx", std::string("x"), true, false), "axx");
  EXPECT_EQ(py::upper("\xc3\xa9t\xc3\xa9 stra\xc3\x9f" "e"), "\xc3\x89T\xc3\x89 STRASSE");
  EXPECT_EQ(py::code_point_count("h\xc3\xa9llo \xf0\x9f\x98\x80"), 7u);
}

}  // namespace
}  // namespace kazeia::jinja
