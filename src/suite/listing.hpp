// What `ptxbench problems` prints: a text table for people and a stable JSON array for tools.
// The JSON keys and their order are part of the interface; add keys at the end only.
#pragma once

#include "suite/suite.hpp"

#include <nlohmann/json.hpp>
#include <string>

namespace ptxbench::suite {

// "A[8192,5120] bfloat16" style; scalars read "sm_scale float32 (scalar)".
std::string describe_tensor(const ResolvedTensor& tensor);

nlohmann::ordered_json problem_json(const Problem& problem);
// A JSON array of problem_json, indented by 2, trailing newline.
std::string render_problems_json(const Suite& suite);
// One header line, then per problem a summary row and an indented shape line.
std::string render_problems_text(const Suite& suite);

} // namespace ptxbench::suite
