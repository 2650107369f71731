// The operator shapes the references are built for, read from a problem's resolved tensors
// (so a test can shrink a problem by editing the dims) and checked against what each
// reference supports. Anything else is `unsupported`, with the reason.
#pragma once

#include "reference/shape_types.hpp"
#include "suite/problem.hpp"
#include "util/error.hpp"


namespace ptxbench::reference {

util::Expected<GemmShape> gemm_shape(const suite::Problem& problem);
util::Expected<MhaShape> mha_shape(const suite::Problem& problem);
util::Expected<GqaShape> gqa_shape(const suite::Problem& problem);

} // namespace ptxbench::reference
