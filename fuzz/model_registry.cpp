// The model registry (a config file users edit): parse; every accepted model has a name, a
// known provider and a unique name; a refused file is invalid_input naming the file and the
// JSON path of what is wrong.
#include "model/registry.hpp"

#include <cstdint>
#include <cstdlib>
#include <set>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ptxbench::model;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto registry = parse_registry(text, "/fuzz/models.json");
  if (!registry) {
    if (registry.error().kind != ptxbench::util::ErrorKind::invalid_input ||
        !registry.error().message.starts_with("/fuzz/models.json: $"))
      std::abort();
    return 0;
  }
  std::set<std::string> names;
  for (const ModelSpec& model : registry->models) {
    if (model.name.empty() || model.provider.empty())
      std::abort();
    if (!names.insert(model.name).second)
      std::abort();
    if (registry->find(model.name) == nullptr)
      std::abort();
  }
  return 0;
}
