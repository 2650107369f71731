// Drawing with cairo, one set of calls for both outputs: a Canvas over a cairo context, and
// render(), which runs a painter once on a PNG surface and once on an SVG surface.
#pragma once

#include "report/cairo_library.hpp"
#include "util/error.hpp"

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

namespace ptxbench::report {

struct Colour {
  double r = 0;
  double g = 0;
  double b = 0;
};
// 0xRRGGBB.
constexpr Colour colour(std::uint32_t rgb) {
  return Colour{((rgb >> 16) & 0xff) / 255.0, ((rgb >> 8) & 0xff) / 255.0, (rgb & 0xff) / 255.0};
}
// The colour `t` of the way from `a` to `b` (t in [0, 1]).
Colour mix(Colour a, Colour b, double t);

struct Point {
  double x = 0;
  double y = 0;
};
struct Rect {
  double x = 0;
  double y = 0;
  double width = 0;
  double height = 0;
};

enum class Align : std::uint8_t { start = 1, middle = 2, end = 3 };     // along the text
enum class Anchor : std::uint8_t { baseline = 1, middle = 2, top = 3 }; // across the text
enum class Weight : std::uint8_t { normal = 1, bold = 2 };
enum class Stroke : std::uint8_t { solid = 1, dashed = 2, dotted = 3 };

struct TextStyle {
  double size = 12;
  Weight weight = Weight::normal;
  Align align = Align::start;
  Anchor anchor = Anchor::baseline;
  double angle_degrees = 0; // counter-clockwise, about the anchor point
  Colour colour{};
};

// Drawing operations in figure pixels. Cairo errors are sticky on the context and surface;
// render() checks them once at the end.
class Canvas {
public:
  Canvas(const CairoApi& api, cairo_t* context) : m_api(api), m_cr(context) {}

  void fill_rect(const Rect& rect, Colour fill, double alpha = 1.0);
  void stroke_rect(const Rect& rect, Colour line, double width);
  void line(Point from, Point to, Colour line, double width, Stroke stroke = Stroke::solid);
  void polyline(std::span<const Point> points, Colour line, double width);
  void fill_polygon(std::span<const Point> points, Colour fill, double alpha);
  void text(Point at, std::string_view text, const TextStyle& style);
  double text_width(std::string_view text, double size, Weight weight);
  // Everything drawn until pop_clip() is cut to `rect`.
  void push_clip(const Rect& rect);
  void pop_clip();

private:
  void set_colour(Colour c, double alpha);
  void set_font(double size, Weight weight);
  void trace_path(std::span<const Point> points);

  const CairoApi& m_api;
  cairo_t* m_cr;
};

using Painter = std::function<void(Canvas&)>;

// One drawing as PNG bytes (twice the pixel size, for sharp text) and an SVG document whose
// <title> is `title` and whose <desc>, when `description` is not empty, is `description` (the
// figure's data as text: cairo draws text as outlines).
struct Picture {
  std::string png;
  std::string svg;
};
util::Expected<Picture> render(double width, double height, std::string_view title,
                               const Painter& paint, std::string_view description = {});

// `text` with &, <, > and " replaced by entities, for XML and HTML.
std::string xml_escape(std::string_view text);

} // namespace ptxbench::report
