// SASS instruction families: which opcodes prove that a binary holds Hopper (wgmma, TMA) or
// Blackwell (tcgen05) target instructions, plus informational families shown in reports.
//
// A family is decided from the root opcode (the text before the first '.'), so modifiers such
// as `.64x128x16.F32.BF16` never change the answer. The target families follow the original
// PTXBench paper exactly: GMMA = root contains "GMMA"; TMA = root in {UTMALDG, UTMASTG,
// UTMAREDG} (prefetch UTMAPF and descriptor-cache UTMACCTL do NOT count); TCGEN05 = root starts
// with "UTC" or is LDTM/STTM. Every opcode falls into at most one family; the table order is the
// order of the checks, so TMA is tried before the catch-all TMA_AUX.
#pragma once

#include "util/enum_table.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ptxbench::sass {

// Persisted (JSON reports, run store): values are explicit and never reused.
enum class Family : std::uint8_t {
  gmma = 1,             // wgmma.mma_async
  tma = 2,              // cp.async.bulk.tensor loads/stores, cp.reduce.async.bulk.tensor
  tcgen05 = 3,          // tcgen05.* (mma, commit, alloc/dealloc, ld/st, cp, shift)
  warpgroup = 4,        // wgmma.fence / wgmma.wait_group
  mbarrier = 5,         // mbarrier.* (SYNCS.*)
  setmaxnreg = 6,       // setmaxnreg.inc/.dec
  matrix_smem = 7,      // ldmatrix / stmatrix
  legacy_mma = 8,       // mma.sync / wmma (pre-Hopper tensor cores)
  bulk_copy = 9,        // non-tensor cp.async.bulk / cp.reduce.async.bulk
  tma_aux = 10,         // tensor prefetch, tensormap prefetch, bulk-group flush
  elect = 11,           // elect.sync (also inserted by ptxas around single-thread issue)
  cluster_barrier = 12, // barrier.cluster.arrive / wait
};

// Which static verdict a family feeds.
enum class FamilyRole : std::uint8_t {
  hopper_target = 1,
  blackwell_target = 2,
  informational = 3,
};

struct FamilyInfo {
  Family family;
  std::string_view name; // JSON key and table header
  FamilyRole role;
  std::string_view observed; // PTX -> SASS as seen with nvcc/cuobjdump 13.0 on tests/kernels
};

inline constexpr std::array kFamilies{
    FamilyInfo{Family::gmma, "GMMA", FamilyRole::hopper_target,
               "wgmma.mma_async m64nNk16 bf16 -> HGMMA.64xNx16.F32.BF16 (last of a commit group "
               "carries gsb0; wgmma.commit_group itself emits nothing)"},
    FamilyInfo{Family::tma, "TMA", FamilyRole::hopper_target,
               "cp.async.bulk.tensor.2d load -> UTMALDG.2D; store -> UTMASTG.2D; "
               "cp.reduce.async.bulk.tensor add -> UTMAREDG.2D.ADD"},
    FamilyInfo{Family::tcgen05, "TCGEN05", FamilyRole::blackwell_target,
               "tcgen05.mma kind::f16 -> UTCHMMA; tcgen05.commit -> UTCBAR; tcgen05.ld "
               "32x32b.x32 -> LDTM.x32; tcgen05.alloc -> UTCATOMSWS.FIND_AND_SET.ALIGN; "
               "tcgen05.dealloc -> UTCATOMSWS.AND; tcgen05.fence::* emits nothing"},
    FamilyInfo{Family::warpgroup, "WARPGROUP", FamilyRole::informational,
               "wgmma.fence -> WARPGROUP.ARRIVE; wgmma.wait_group N -> WARPGROUP.DEPBAR.LE gsb0"},
    FamilyInfo{Family::mbarrier, "MBARRIER", FamilyRole::informational,
               "mbarrier.init -> SYNCS.EXCH.64; arrive.expect_tx -> SYNCS.ARRIVE.TRANS64; "
               "try_wait.parity -> SYNCS.PHASECHK.TRANS64.TRYWAIT; inval -> SYNCS.CCTL.IV"},
    FamilyInfo{Family::setmaxnreg, "SETMAXNREG", FamilyRole::informational,
               "setmaxnreg.inc -> USETMAXREG.TRY_ALLOC.CTAPOOL; .dec -> "
               "USETMAXREG.DEALLOC.CTAPOOL"},
    FamilyInfo{Family::matrix_smem, "LDSM_STSM", FamilyRole::informational,
               "ldmatrix m8n8.x4 -> LDSM.16.M88.4; stmatrix m8n8.x4 -> STSM.16.M88.4"},
    FamilyInfo{Family::legacy_mma, "LEGACY_MMA", FamilyRole::informational,
               "mma.sync m16n8k16 bf16 -> HMMA.16816.F32.BF16 (also IMMA, DMMA, BMMA)"},
    FamilyInfo{Family::bulk_copy, "BULK_COPY", FamilyRole::informational,
               "cp.async.bulk global->shared -> UBLKCP.S.G (also UBLKRED, UBLKPF)"},
    FamilyInfo{Family::tma_aux, "TMA_AUX", FamilyRole::informational,
               "cp.async.bulk.prefetch.tensor -> UTMAPF.L2.2D; prefetch.tensormap -> "
               "UTMACCTL.PF; cp.async.bulk.commit_group -> UTMACMDFLUSH"},
    FamilyInfo{Family::elect, "ELECT", FamilyRole::informational,
               "elect.sync -> ELECT; ptxas also adds ELECT before single-thread tcgen05/TMA issue"},
    FamilyInfo{Family::cluster_barrier, "CLUSTER_BARRIER", FamilyRole::informational,
               "barrier.cluster.arrive.release -> UCGABAR_ARV; .wait.acquire -> UCGABAR_WAIT"},
};

inline constexpr std::size_t kFamilyCount = kFamilies.size();

// The table is complete and in value order: a new family without a row fails to compile.
consteval bool families_complete() {
  for (std::size_t i = 0; i < kFamilies.size(); ++i) {
    if (static_cast<std::size_t>(kFamilies[i].family) != i + 1)
      return false;
  }
  return true;
}
static_assert(families_complete(), "kFamilies must list every Family in value order");
static_assert(util::no_enumerator_after<Family, kFamilies.size()>(),
              "kFamilies lacks a row for an enumerator after its last");

constexpr const FamilyInfo& info(Family family) {
  return kFamilies[static_cast<std::size_t>(family) - 1];
}
constexpr std::string_view to_string(Family family) {
  return info(family).name;
}
constexpr std::size_t index_of(Family family) {
  return static_cast<std::size_t>(family) - 1;
}

// The root opcode: `HGMMA.64x128x16.F32.BF16` -> `HGMMA`.
std::string_view root_opcode(std::string_view opcode);

// The family of an opcode (with or without modifiers); nullopt for ordinary instructions.
std::optional<Family> classify(std::string_view opcode);

} // namespace ptxbench::sass
