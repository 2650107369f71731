// The bundle stage: one deterministic .tar.gz of a data set's files, for handing a data set
// to a training job or archiving it next to a paper's numbers.
//
// Problem: two bundles of the same data must be byte-identical (so a checksum names a data
// set), which ordinary tar does not give: it records mtimes, owners and directory order.
//
// Approach: every regular file under DIR/<kind>/ except the repair run store (a live SQLite
// database: report/export read it, it is not data) is put in the archive as
// ptxbench-data/<kind>/<relative path>, in byte order of the path, as POSIX ustar entries with
// mode 0644, uid/gid 0, empty owner names and mtime 0, followed by ptxbench-data/BUNDLE.json
// (each file's size and sha256). The tar stream is gzip-compressed by zlib at level 9 with an
// empty gzip header (mtime 0, no name), so the bytes depend only on the files' contents and
// paths. A path that does not fit ustar's 100 + 155 byte name fields is an error.
#pragma once

#include "adapt/dataset.hpp"
#include "util/error.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace ptxbench::adapt {

struct BundleEntry {
  std::string name; // path inside the archive
  std::string content;
};

// A ustar archive of `entries` (in the given order) with its two zero end blocks.
util::Expected<std::string> ustar_archive(const std::vector<BundleEntry>& entries);
// gzip of `data` with a fixed header.
util::Expected<std::string> gzip_bytes(const std::string& data);

struct BundleResult {
  std::int64_t files = 0;
  std::string sha256; // of the .tar.gz
};

util::Expected<BundleResult> write_bundle(const std::filesystem::path& dir, DatasetKind kind,
                                          const std::filesystem::path& out);

} // namespace ptxbench::adapt
