// The operator shapes the references are built for, read from a problem's resolved tensors
// (so a test can shrink a problem by editing the dims) and checked against what each
// reference supports. Anything else is `unsupported`, with the reason.
#pragma once

#include "reference/shape_types.hpp"
#include "suite/problem.hpp"
#include "util/error.hpp"

#include <cstdint>
#include <vector>

namespace ptxbench::reference {

util::Expected<GemmShape> gemm_shape(const suite::Problem& problem);
util::Expected<MhaShape> mha_shape(const suite::Problem& problem);
util::Expected<GqaShape> gqa_shape(const suite::Problem& problem);

// The plan of a GQA layout from its index tensors (qo_indptr empty for decode): the longest
// query and KV sequence. invalid_input, naming the tensor, unless each indptr has
// shape.sequences + 1 entries, starts at 0, never decreases and ends at the total its tensor
// covers (q tokens; KV rows or page indices).
util::Expected<GqaPlan> gqa_plan(const GqaShape& shape, const std::vector<std::int32_t>& qo_indptr,
                                 const std::vector<std::int32_t>& kv_indptr);
// The indptr arrays of the problem's default workload, from the layout its index blobs were
// generated with (suite::build_index_layout); qo_indptr is empty for decode.
struct GqaIndptrs {
  std::vector<std::int32_t> qo_indptr;
  std::vector<std::int32_t> kv_indptr;
};
util::Expected<GqaIndptrs> gqa_indptrs(const suite::Problem& problem);
// The plan of the problem's default workload (gqa_indptrs, checked as above).
util::Expected<GqaPlan> gqa_plan(const suite::Problem& problem, const GqaShape& shape);

} // namespace ptxbench::reference
