#include "adapt/bundle.hpp"

#include "util/fs.hpp"
#include "util/hash.hpp"

#include <algorithm>
#include <cstring>
#include <fmt/core.h>
#include <zlib.h>

namespace ptxbench::adapt {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kBlock = 512;

void put_text(std::string& header, std::size_t offset, std::size_t width, std::string_view text) {
  std::memcpy(header.data() + offset, text.data(), std::min(width, text.size()));
}

// Zero-padded octal in `width - 1` digits and a NUL.
void put_octal(std::string& header, std::size_t offset, std::size_t width, std::uint64_t value) {
  put_text(header, offset, width, fmt::format("{:0{}o}", value, width - 1));
}

// name / prefix split of ustar; nullopt when the path does not fit.
std::optional<std::pair<std::string, std::string>> split_name(const std::string& path) {
  if (path.size() <= 100)
    return std::pair<std::string, std::string>{path, ""};
  for (std::size_t slash = path.find('/'); slash != std::string::npos;
       slash = path.find('/', slash + 1))
    if (slash <= 155 && path.size() - slash - 1 <= 100)
      return std::pair<std::string, std::string>{path.substr(slash + 1), path.substr(0, slash)};
  return std::nullopt;
}

util::Expected<std::string> ustar_header(const BundleEntry& entry) {
  auto name = split_name(entry.name);
  if (!name)
    return util::make_error(util::ErrorKind::invalid_input,
                            "path too long for a ustar archive: " + entry.name);
  std::string header(kBlock, '\0');
  put_text(header, 0, 100, name->first);
  put_octal(header, 100, 8, 0644);
  put_octal(header, 108, 8, 0);
  put_octal(header, 116, 8, 0);
  put_octal(header, 124, 12, entry.content.size());
  put_octal(header, 136, 12, 0);
  header[156] = '0';
  put_text(header, 257, 6, std::string_view("ustar\0", 6));
  put_text(header, 263, 2, "00");
  put_text(header, 345, 155, name->second);
  std::memset(header.data() + 148, ' ', 8);
  std::uint64_t sum = 0;
  for (unsigned char c : header)
    sum += c;
  put_text(header, 148, 8, fmt::format("{:06o}", sum));
  header[154] = '\0';
  header[155] = ' ';
  return header;
}

// The data set's files, sorted, with their archive names.
util::Expected<std::vector<BundleEntry>> dataset_entries(const fs::path& dir, DatasetKind kind) {
  const fs::path root = dir / std::string(to_string(kind));
  const fs::path skip = stage_dir(dir, kind, "repair") / "run";
  std::error_code ec;
  if (!fs::is_directory(root, ec))
    return util::make_error(util::ErrorKind::not_found, root.string() + ": no data set here");
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (it->path() == skip) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file())
      files.push_back(it->path());
  }
  if (ec)
    return util::make_error(util::ErrorKind::io, root.string() + ": " + ec.message());
  std::sort(files.begin(), files.end());
  std::vector<BundleEntry> entries;
  for (const fs::path& file : files) {
    PTXBENCH_TRY_ASSIGN(auto content, util::read_file(file));
    entries.push_back(BundleEntry{"ptxbench-data/" + fs::relative(file, dir).generic_string(),
                                  std::move(content)});
  }
  return entries;
}

BundleEntry bundle_manifest(const std::vector<BundleEntry>& entries, DatasetKind kind) {
  Json files = Json::array();
  for (const BundleEntry& e : entries)
    files.push_back(Json{
        {"path", e.name}, {"bytes", e.content.size()}, {"sha256", util::sha256_hex(e.content)}});
  return BundleEntry{"ptxbench-data/BUNDLE.json",
                     manifest_text(Json{{"kind", to_string(kind)}, {"files", files}})};
}

} // namespace

util::Expected<std::string> ustar_archive(const std::vector<BundleEntry>& entries) {
  std::string out;
  for (const BundleEntry& entry : entries) {
    PTXBENCH_TRY_ASSIGN(auto header, ustar_header(entry));
    out += header;
    out += entry.content;
    out.append((kBlock - entry.content.size() % kBlock) % kBlock, '\0');
  }
  out.append(2 * kBlock, '\0');
  return out;
}

util::Expected<std::string> gzip_bytes(const std::string& data) {
  z_stream stream{};
  // windowBits 15 + 16: a gzip wrapper with zlib's default header (mtime 0, no name).
  if (deflateInit2(&stream, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK)
    return util::make_error(util::ErrorKind::io, "zlib: deflateInit2 failed");
  std::string out(deflateBound(&stream, static_cast<uLong>(data.size())), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  if (rc != Z_STREAM_END)
    return util::make_error(util::ErrorKind::io, fmt::format("zlib: deflate returned {}", rc));
  return out;
}

util::Expected<BundleResult> write_bundle(const fs::path& dir, DatasetKind kind,
                                          const fs::path& out) {
  PTXBENCH_TRY_ASSIGN(auto entries, dataset_entries(dir, kind));
  if (entries.empty())
    return util::make_error(util::ErrorKind::invalid_input,
                            (dir / std::string(to_string(kind))).string() + ": no files to bundle");
  entries.push_back(bundle_manifest(entries, kind));
  PTXBENCH_TRY_ASSIGN(auto tar, ustar_archive(entries));
  PTXBENCH_TRY_ASSIGN(auto gz, gzip_bytes(tar));
  PTXBENCH_TRY(write_if_changed(out, gz));
  return BundleResult{static_cast<std::int64_t>(entries.size()), util::sha256_hex(gz)};
}

} // namespace ptxbench::adapt
