#include "exec/cubin_folder.hpp"

#include "measure/cubin_symbols.hpp"
#include "util/fs.hpp"
#include "util/hash.hpp"

#include <algorithm>
#include <cstring>

namespace ptxbench::exec {

std::vector<std::filesystem::path> list_cubins(const std::filesystem::path& cache) {
  std::vector<std::filesystem::path> found;
  std::error_code error;
  if (!std::filesystem::is_directory(cache, error))
    return found;
  for (auto it = std::filesystem::recursive_directory_iterator(cache, error);
       !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error))
    if (it->is_regular_file(error) && it->path().extension() == ".cubin")
      found.push_back(it->path());
  std::sort(found.begin(), found.end());
  return found;
}

std::vector<std::string> cubin_kernel_names(const std::vector<std::filesystem::path>& cubins) {
  std::vector<std::string> names;
  for (const std::filesystem::path& cubin : cubins) {
    auto text = util::read_file(cubin);
    if (!text)
      continue;
    std::vector<std::byte> image(text->size());
    std::memcpy(image.data(), text->data(), text->size());
    for (std::string& name : measure::cubin_function_names(image))
      if (std::find(names.begin(), names.end(), name) == names.end())
        names.push_back(std::move(name));
  }
  return names;
}

std::vector<std::string> cubin_hashes(const std::vector<std::filesystem::path>& cubins) {
  std::vector<std::string> hashes;
  for (const std::filesystem::path& cubin : cubins)
    if (auto image = util::read_file(cubin))
      hashes.push_back(util::sha256_hex(*image));
  std::sort(hashes.begin(), hashes.end());
  return hashes;
}

std::vector<std::filesystem::path> new_cubins(const std::vector<std::filesystem::path>& before,
                                              const std::vector<std::filesystem::path>& after) {
  std::vector<std::filesystem::path> added;
  for (const std::filesystem::path& cubin : after)
    if (std::find(before.begin(), before.end(), cubin) == before.end())
      added.push_back(cubin);
  return added;
}

} // namespace ptxbench::exec
