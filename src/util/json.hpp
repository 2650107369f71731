// The JSON value every module reads and writes: nlohmann's ordered_json, whose objects keep
// their keys in insertion order so that written files are stable and diff cleanly.
#pragma once

#include <nlohmann/json.hpp>

namespace ptxbench::util {

using Json = nlohmann::ordered_json;

} // namespace ptxbench::util
