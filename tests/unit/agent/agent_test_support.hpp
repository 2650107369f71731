// Scratch folders for the agent tests that write files (registries, replay recordings).
#pragma once

#include "support/scratch_dir.hpp"
#include "util/fs.hpp"

#include <algorithm>
#include <filesystem>
#include <gtest/gtest.h>
#include <string>
#include <unistd.h>

namespace ptxbench::agent::testing {

using test_support::ScratchDir;

} // namespace ptxbench::agent::testing
