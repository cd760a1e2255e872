// A practical subset of JSON Schema, for checking tool-call arguments.
//
// Models call tools with arguments they generated; when those are wrong the
// most useful thing we can do is say exactly what is wrong, in words the
// model can act on in its next turn:
//
//   argument 'minutes': expected integer >= 1, got -5
//   missing required argument 'expression'
//   unknown argument 'unit'; expected one of: seconds, minutes, label
//
// Supported keywords: type (string, integer, number, boolean, object, array,
// null, or an array of those), required, properties, additionalProperties
// (false, true, or a schema), enum, const, minimum, maximum,
// exclusiveMinimum, exclusiveMaximum (numeric form), minLength, maxLength
// (in Unicode code points), pattern (ECMAScript-like, via PCRE2, unanchored
// as the spec says), items (one schema for every element), minItems,
// maxItems. Annotations (description, title, default, examples, format) are
// accepted and ignored. Combinators and references (anyOf, oneOf, allOf, not,
// $ref, if/then/else, ...) are rejected by check_schema() instead of being
// silently ignored, so a tool author never believes a rule is enforced when
// it is not.
//
// An integer-valued float (3.0) satisfies "integer", as in JSON Schema.
#pragma once

#include <nlohmann/json.hpp>

#include "kazeia/status.h"

namespace kazeia::agent {

using json = nlohmann::ordered_json;

// Checks that `schema` only uses the supported subset and that every
// keyword has a value of the right shape ("minimum" is a number, "required"
// lists strings, ...). For tool registration: a bad schema is the tool
// author's bug and is reported with the JSON pointer of the offending part.
Status check_schema(const json& schema);

// Validates `value` against `schema` (assumed to have passed check_schema)
// and returns the first violation found, as InvalidArgument with a message
// in the style above. Object members are visited in the schema's property
// order, so the message is deterministic.
Status validate_arguments(const json& schema, const json& value);

}  // namespace kazeia::agent
