// Checks on drawn figures shared by the figure and HTML tests: decoding a PNG with the same
// cairo the report draws with, counting pixels, and parsing an SVG with a real XML parser
// (Python's xml.etree, python3 being a set-up dependency).
#pragma once

#include "report/cairo_library.hpp"
#include "util/subprocess.hpp"

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ptxbench::report::testing {

// A figure's series, point by point, to 1e-12.
inline void expect_values(const std::vector<double>& actual, const std::vector<double>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(actual[i], expected[i], 1e-12) << "point " << i;
}

inline constexpr std::string_view kPngSignature{"\x89PNG\r\n\x1a\n", 8};

struct Image {
  int width = 0;
  int height = 0;
  std::vector<std::uint32_t> pixels; // 0xAARRGGBB, row-major
  // Pixels within `tolerance` (per channel) of 0xRRGGBB.
  std::int64_t count_near(std::uint32_t rgb, int tolerance) const {
    std::int64_t n = 0;
    for (const std::uint32_t p : pixels) {
      bool near = true;
      for (const int shift : {16, 8, 0})
        near = near && std::abs(static_cast<int>((p >> shift) & 0xff) -
                                static_cast<int>((rgb >> shift) & 0xff)) <= tolerance;
      n += near ? 1 : 0;
    }
    return n;
  }
  std::int64_t count_not_white() const {
    return static_cast<std::int64_t>(pixels.size()) - count_near(0xffffff, 8);
  }
};

struct ByteReader {
  const std::string* bytes;
  std::size_t at = 0;
};

inline cairo_status_t read_bytes(void* closure, unsigned char* data, unsigned int length) {
  auto* reader = static_cast<ByteReader*>(closure);
  if (reader->at + length > reader->bytes->size())
    return CAIRO_STATUS_READ_ERROR;
  std::copy_n(reader->bytes->data() + reader->at, length, data);
  reader->at += length;
  return CAIRO_STATUS_SUCCESS;
}

// The PNG decoded by cairo; empty (width 0) when cairo cannot read it.
inline Image decode_png(const std::string& png) {
  auto api = cairo_api();
  if (!api)
    throw util::Fatal(api.error().message);
  const CairoApi& c = **api;
  ByteReader reader{&png};
  cairo_surface_t* surface = c.cairo_image_surface_create_from_png_stream(read_bytes, &reader);
  Image image;
  if (c.cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS) {
    c.cairo_surface_flush(surface);
    image.width = c.cairo_image_surface_get_width(surface);
    image.height = c.cairo_image_surface_get_height(surface);
    const int stride = c.cairo_image_surface_get_stride(surface);
    const unsigned char* data = c.cairo_image_surface_get_data(surface);
    for (int y = 0; y < image.height; ++y) {
      const auto* row =
          reinterpret_cast<const std::uint32_t*>(data + static_cast<std::ptrdiff_t>(y) * stride);
      image.pixels.insert(image.pixels.end(), row, row + image.width);
    }
  }
  c.cairo_surface_destroy(surface);
  return image;
}

// What Python's XML parser makes of an SVG file: {"root", "title", "desc", "paths", "uses"}, or
// {"error": message} when it is not well-formed XML.
inline nlohmann::json parse_svg(const std::filesystem::path& file) {
  static constexpr const char* kScript = R"(
import json, sys, xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except ET.ParseError as e:
    print(json.dumps({"error": str(e)})); sys.exit(0)
ns = "{http://www.w3.org/2000/svg}"
title = root.find(ns + "title")
desc = root.find(ns + "desc")
print(json.dumps({"root": root.tag, "title": None if title is None else title.text,
                  "desc": None if desc is None else desc.text,
                  "paths": len(root.findall(".//" + ns + "path")),
                  "uses": len(root.findall(".//" + ns + "use"))}))
)";
  util::PosixProcessRunner runner;
  auto result = runner.run({"python3", "-c", kScript, file.string()}, {});
  if (!result)
    throw util::Fatal(result.error().message);
  if (!result->succeeded())
    throw util::Fatal("python3 failed: " + result->err);
  return nlohmann::json::parse(result->out);
}

} // namespace ptxbench::report::testing
