// cairo, loaded at run time instead of linked. `ptxbench` also runs on GPU machines whose images
// have no libcairo2, and only figures need it; every other command must keep starting there.
// The declarations come from the libcairo2-dev headers, so each pointer has cairo's own type.
#pragma once

#include "util/error.hpp"

#include <cairo-svg.h>
#include <cairo.h>

namespace ptxbench::report {

// Every cairo function the report module (and its tests) call.
#define PTXBENCH_CAIRO_FUNCTIONS(X)                                                                \
  X(cairo_create)                                                                                  \
  X(cairo_destroy)                                                                                 \
  X(cairo_status)                                                                                  \
  X(cairo_status_to_string)                                                                        \
  X(cairo_save)                                                                                    \
  X(cairo_restore)                                                                                 \
  X(cairo_scale)                                                                                   \
  X(cairo_translate)                                                                               \
  X(cairo_rotate)                                                                                  \
  X(cairo_set_source_rgba)                                                                         \
  X(cairo_set_line_width)                                                                          \
  X(cairo_set_line_join)                                                                           \
  X(cairo_set_dash)                                                                                \
  X(cairo_new_path)                                                                                \
  X(cairo_move_to)                                                                                 \
  X(cairo_line_to)                                                                                 \
  X(cairo_close_path)                                                                              \
  X(cairo_rectangle)                                                                               \
  X(cairo_stroke)                                                                                  \
  X(cairo_fill)                                                                                    \
  X(cairo_paint)                                                                                   \
  X(cairo_clip)                                                                                    \
  X(cairo_select_font_face)                                                                        \
  X(cairo_set_font_size)                                                                           \
  X(cairo_text_extents)                                                                            \
  X(cairo_show_text)                                                                               \
  X(cairo_surface_destroy)                                                                         \
  X(cairo_surface_finish)                                                                          \
  X(cairo_surface_flush)                                                                           \
  X(cairo_surface_status)                                                                          \
  X(cairo_surface_write_to_png_stream)                                                             \
  X(cairo_image_surface_create)                                                                    \
  X(cairo_image_surface_create_from_png_stream)                                                    \
  X(cairo_image_surface_get_data)                                                                  \
  X(cairo_image_surface_get_format)                                                                \
  X(cairo_image_surface_get_width)                                                                 \
  X(cairo_image_surface_get_height)                                                                \
  X(cairo_image_surface_get_stride)                                                                \
  X(cairo_svg_surface_create_for_stream)                                                           \
  X(cairo_svg_surface_set_document_unit)

struct CairoApi {
#define PTXBENCH_CAIRO_POINTER(name)                                                               \
  decltype(&::name) name = nullptr; // NOLINT(bugprone-macro-parentheses): a declarator
  PTXBENCH_CAIRO_FUNCTIONS(PTXBENCH_CAIRO_POINTER)
#undef PTXBENCH_CAIRO_POINTER
};

// The process's cairo, loaded once on first use; not_found, naming the Debian package, when
// libcairo.so.2 cannot be loaded; unsupported when it lacks one of the functions above.
util::Expected<const CairoApi*> cairo_api();

} // namespace ptxbench::report
