// `ptxbench pack list`: every component and variant of the selected architectures with their
// approximate token counts (compose.hpp says how they are estimated), as text or JSON.
#pragma once

#include "pack/manifest.hpp"
#include "util/error.hpp"

#include <string>
#include <string_view>

namespace ptxbench::pack {

// `arch` empty: every architecture of the manifest; otherwise invalid_input if unknown.
util::Expected<std::string> render_list_text(const Manifest& manifest, std::string_view arch);
util::Expected<std::string> render_list_json(const Manifest& manifest, std::string_view arch);

} // namespace ptxbench::pack
