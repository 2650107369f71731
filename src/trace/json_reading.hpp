// The JSON reader kit (util/json_reader.hpp) under the names the trace readers use. Included only
// by the readers in json_io_*.cpp; not part of the module's interface.
#pragma once

#include "util/json_reader.hpp"

namespace ptxbench::trace {

using util::Emptiness;
using util::index_path;
using util::JsonReader;
using util::key_path;

} // namespace ptxbench::trace
