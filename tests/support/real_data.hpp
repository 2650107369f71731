// The shipped problem suite and knowledge-pack manifest, loaded once per test binary.
#pragma once

#include "pack/manifest.hpp"
#include "suite/suite.hpp"
#include "util/error.hpp"

#include <utility>

namespace ptxbench::test_support {

inline const suite::Suite& real_suite() {
  static const suite::Suite suite = [] {
    auto loaded = suite::Suite::load_default();
    if (!loaded)
      throw util::Fatal(loaded.error().message);
    return std::move(*loaded);
  }();
  return suite;
}

inline const pack::Manifest& real_manifest() {
  static const pack::Manifest manifest = [] {
    auto loaded = pack::Manifest::load(pack::Manifest::default_path());
    if (!loaded)
      throw util::Fatal(loaded.error().message);
    return std::move(*loaded);
  }();
  return manifest;
}

} // namespace ptxbench::test_support
