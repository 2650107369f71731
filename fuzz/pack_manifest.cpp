// Knowledge pack manifests (packs.json, a file users edit to add packs): the whole input as the
// manifest beside the shipped knowledge/ files. Invariants beyond "no crash, no exception": a
// refusal names the manifest's file and the JSON path of what is wrong; an accepted manifest
// resolves every variant it lists to components it knows, for an architecture it lists.
#include "pack/manifest.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace {

using namespace ptxbench;

bool keeps_promises(const pack::Manifest& manifest) {
  for (const pack::Variant& v : manifest.variants()) {
    if (std::ranges::find(manifest.arches(), v.arch) == manifest.arches().end() ||
        v.components.empty())
      return false;
    for (const std::string& id : v.components)
      if (manifest.component(id) == nullptr)
        return false;
  }
  return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::filesystem::path path = pack::Manifest::default_path();
  const std::string prefix = path.string() + ": $";
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto manifest = pack::Manifest::parse(text, path);
  if (!manifest) {
    if (!manifest.error().message.starts_with(prefix))
      std::abort();
    return 0;
  }
  if (!keeps_promises(*manifest))
    std::abort();
  return 0;
}
