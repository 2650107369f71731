#include "report/plot_cairo.hpp"

#include <array>
#include <cmath>
#include <fmt/core.h>
#include <numbers>

namespace ptxbench::report {
namespace {

constexpr double kPngScale = 2.0;
constexpr const char* kFont = "DejaVu Sans";

// Owns one cairo surface.
class Surface {
public:
  Surface(const CairoApi& api, cairo_surface_t* surface) : m_api(api), m_surface(surface) {}
  ~Surface() { m_api.cairo_surface_destroy(m_surface); }
  Surface(const Surface&) = delete;
  Surface& operator=(const Surface&) = delete;
  cairo_surface_t* get() const { return m_surface; }

private:
  const CairoApi& m_api;
  cairo_surface_t* m_surface;
};

// Owns one cairo context.
class Context {
public:
  Context(const CairoApi& api, cairo_surface_t* target)
      : m_api(api), m_context(api.cairo_create(target)) {}
  ~Context() { m_api.cairo_destroy(m_context); }
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  cairo_t* get() const { return m_context; }

private:
  const CairoApi& m_api;
  cairo_t* m_context;
};

cairo_status_t append_bytes(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  return CAIRO_STATUS_SUCCESS;
}

// Cairo fails only on exhausted memory or misuse: broken set-up or a bug, never input.
void require(const CairoApi& api, cairo_status_t status, std::string_view what) {
  if (status != CAIRO_STATUS_SUCCESS)
    throw util::Fatal(fmt::format("cairo: {}: {}", what, api.cairo_status_to_string(status)));
}

// White background, then the painter, then the context's sticky status.
void paint_on(const CairoApi& api, cairo_t* cr, const Painter& paint) {
  api.cairo_set_source_rgba(cr, 1, 1, 1, 1);
  api.cairo_paint(cr);
  Canvas canvas(api, cr);
  paint(canvas);
  require(api, api.cairo_status(cr), "drawing");
}

std::string draw_png(const CairoApi& api, double width, double height, const Painter& paint) {
  Surface surface(api, api.cairo_image_surface_create(
                           CAIRO_FORMAT_ARGB32, static_cast<int>(std::ceil(width * kPngScale)),
                           static_cast<int>(std::ceil(height * kPngScale))));
  require(api, api.cairo_surface_status(surface.get()), "image surface");
  {
    Context cr(api, surface.get());
    api.cairo_scale(cr.get(), kPngScale, kPngScale);
    paint_on(api, cr.get(), paint);
  }
  api.cairo_surface_flush(surface.get());
  std::string png;
  require(api, api.cairo_surface_write_to_png_stream(surface.get(), append_bytes, &png),
          "writing PNG");
  return png;
}

std::string draw_svg(const CairoApi& api, double width, double height, const Painter& paint) {
  std::string svg;
  Surface surface(api, api.cairo_svg_surface_create_for_stream(append_bytes, &svg, width, height));
  require(api, api.cairo_surface_status(surface.get()), "SVG surface");
  api.cairo_svg_surface_set_document_unit(surface.get(), CAIRO_SVG_UNIT_PX);
  {
    Context cr(api, surface.get());
    paint_on(api, cr.get(), paint);
  }
  api.cairo_surface_finish(surface.get());
  require(api, api.cairo_surface_status(surface.get()), "writing SVG");
  return svg;
}

// The document's accessible name (cairo draws text as glyph outlines, so no text is searchable
// otherwise), as the root element's first child.
std::string with_title(std::string svg, std::string_view title, std::string_view description) {
  const std::size_t root = svg.find("<svg");
  const std::size_t end = root == std::string::npos ? root : svg.find('>', root);
  if (end == std::string::npos)
    throw util::Fatal("cairo wrote an SVG without a root element");
  std::string head = "\n<title>" + xml_escape(title) + "</title>";
  if (!description.empty())
    head += "\n<desc>" + xml_escape(description) + "</desc>";
  svg.insert(end + 1, head);
  return svg;
}

} // namespace

Colour mix(Colour a, Colour b, double t) {
  return Colour{a.r + (b.r - a.r) * t, a.g + (b.g - a.g) * t, a.b + (b.b - a.b) * t};
}

void Canvas::set_colour(Colour c, double alpha) {
  m_api.cairo_set_source_rgba(m_cr, c.r, c.g, c.b, alpha);
}

void Canvas::set_font(double size, Weight weight) {
  m_api.cairo_select_font_face(m_cr, kFont, CAIRO_FONT_SLANT_NORMAL,
                               weight == Weight::bold ? CAIRO_FONT_WEIGHT_BOLD
                                                      : CAIRO_FONT_WEIGHT_NORMAL);
  m_api.cairo_set_font_size(m_cr, size);
}

void Canvas::trace_path(std::span<const Point> points) {
  m_api.cairo_new_path(m_cr);
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (i == 0)
      m_api.cairo_move_to(m_cr, points[i].x, points[i].y);
    else
      m_api.cairo_line_to(m_cr, points[i].x, points[i].y);
  }
}

void Canvas::fill_rect(const Rect& rect, Colour fill, double alpha) {
  m_api.cairo_new_path(m_cr);
  m_api.cairo_rectangle(m_cr, rect.x, rect.y, rect.width, rect.height);
  set_colour(fill, alpha);
  m_api.cairo_fill(m_cr);
}

void Canvas::stroke_rect(const Rect& rect, Colour line, double width) {
  m_api.cairo_new_path(m_cr);
  m_api.cairo_rectangle(m_cr, rect.x, rect.y, rect.width, rect.height);
  set_colour(line, 1.0);
  m_api.cairo_set_line_width(m_cr, width);
  m_api.cairo_stroke(m_cr);
}

void Canvas::line(Point from, Point to, Colour line, double width, Stroke stroke) {
  static constexpr std::array<double, 2> kDashed{5.0, 3.0};
  static constexpr std::array<double, 2> kDotted{1.5, 2.5};
  const std::array points{from, to};
  trace_path(points);
  set_colour(line, 1.0);
  m_api.cairo_set_line_width(m_cr, width);
  if (stroke == Stroke::dashed)
    m_api.cairo_set_dash(m_cr, kDashed.data(), 2, 0);
  if (stroke == Stroke::dotted)
    m_api.cairo_set_dash(m_cr, kDotted.data(), 2, 0);
  m_api.cairo_stroke(m_cr);
  m_api.cairo_set_dash(m_cr, nullptr, 0, 0);
}

void Canvas::polyline(std::span<const Point> points, Colour line, double width) {
  trace_path(points);
  set_colour(line, 1.0);
  m_api.cairo_set_line_width(m_cr, width);
  m_api.cairo_set_line_join(m_cr, CAIRO_LINE_JOIN_MITER);
  m_api.cairo_stroke(m_cr);
}

void Canvas::fill_polygon(std::span<const Point> points, Colour fill, double alpha) {
  trace_path(points);
  m_api.cairo_close_path(m_cr);
  set_colour(fill, alpha);
  m_api.cairo_fill(m_cr);
}

void Canvas::text(Point at, std::string_view text, const TextStyle& style) {
  const std::string utf8(text);
  set_font(style.size, style.weight);
  cairo_text_extents_t extents{};
  m_api.cairo_text_extents(m_cr, utf8.c_str(), &extents);
  double dx = 0;
  if (style.align == Align::middle)
    dx = -extents.x_advance / 2;
  if (style.align == Align::end)
    dx = -extents.x_advance;
  // Offsets from the font size, not the ink, so that labels of one row share a baseline.
  double dy = 0;
  if (style.anchor == Anchor::middle)
    dy = style.size * 0.36;
  if (style.anchor == Anchor::top)
    dy = style.size * 0.76;
  m_api.cairo_save(m_cr);
  m_api.cairo_translate(m_cr, at.x, at.y);
  m_api.cairo_rotate(m_cr, -style.angle_degrees * std::numbers::pi / 180.0);
  m_api.cairo_new_path(m_cr);
  m_api.cairo_move_to(m_cr, dx, dy);
  set_colour(style.colour, 1.0);
  m_api.cairo_show_text(m_cr, utf8.c_str());
  m_api.cairo_restore(m_cr);
}

double Canvas::text_width(std::string_view text, double size, Weight weight) {
  const std::string utf8(text);
  set_font(size, weight);
  cairo_text_extents_t extents{};
  m_api.cairo_text_extents(m_cr, utf8.c_str(), &extents);
  return extents.x_advance;
}

void Canvas::push_clip(const Rect& rect) {
  m_api.cairo_save(m_cr);
  m_api.cairo_new_path(m_cr);
  m_api.cairo_rectangle(m_cr, rect.x, rect.y, rect.width, rect.height);
  m_api.cairo_clip(m_cr);
}

void Canvas::pop_clip() {
  m_api.cairo_restore(m_cr);
}

util::Expected<Picture> render(double width, double height, std::string_view title,
                               const Painter& paint, std::string_view description) {
  PTXBENCH_TRY_ASSIGN(auto api, cairo_api());
  Picture picture;
  picture.png = draw_png(*api, width, height, paint);
  picture.svg = with_title(draw_svg(*api, width, height, paint), title, description);
  return picture;
}

std::string xml_escape(std::string_view text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

} // namespace ptxbench::report
