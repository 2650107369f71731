#include "sass/families.hpp"

#include <algorithm>

namespace ptxbench::sass {
namespace {

bool is_one_of(std::string_view root, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), root) != names.end();
}

bool matches(Family family, std::string_view root) {
  switch (family) {
  case Family::gmma:
    return root.find("GMMA") != std::string_view::npos;
  case Family::tma:
    return is_one_of(root, {"UTMALDG", "UTMASTG", "UTMAREDG"});
  case Family::tcgen05:
    return root.starts_with("UTC") || is_one_of(root, {"LDTM", "STTM"});
  case Family::warpgroup:
    return root == "WARPGROUP";
  case Family::mbarrier:
    return root == "SYNCS";
  case Family::setmaxnreg:
    return root == "USETMAXREG";
  case Family::matrix_smem:
    return is_one_of(root, {"LDSM", "STSM"});
  case Family::legacy_mma:
    return is_one_of(root, {"HMMA", "IMMA", "DMMA", "BMMA"});
  case Family::bulk_copy:
    return root.starts_with("UBLK");
  case Family::tma_aux:
    return root.starts_with("UTMA");
  case Family::elect:
    return root == "ELECT";
  case Family::cluster_barrier:
    return root.starts_with("UCGABAR");
  }
  return false;
}

} // namespace

std::string_view root_opcode(std::string_view opcode) {
  return opcode.substr(0, opcode.find('.'));
}

std::optional<Family> classify(std::string_view opcode) {
  const std::string_view root = root_opcode(opcode);
  for (const FamilyInfo& row : kFamilies) {
    if (matches(row.family, root))
      return row.family;
  }
  return std::nullopt;
}

} // namespace ptxbench::sass
