#include "measure/batch_attribution.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <unordered_map>

namespace ptxbench::measure {
namespace {

struct Span {
  std::uint64_t start = UINT64_MAX;
  std::uint64_t end = 0;
};

struct MemsetRef {
  std::size_t boundary = 0;
  std::size_t memset = 0;
};

std::string describe(const GpuActivity& a) {
  return fmt::format("{} `{}` on stream {} (correlation {})",
                     a.kind == GpuActivity::Kind::kernel   ? "kernel"
                     : a.kind == GpuActivity::Kind::memcpy ? "copy"
                                                           : "memset",
                     a.name, a.stream_id, a.correlation_id);
}

double span_ms(const std::vector<GpuActivity>& activities) {
  std::uint64_t first = UINT64_MAX, last = 0;
  for (const GpuActivity& a : activities) {
    first = std::min(first, a.start_ns);
    last = std::max(last, a.end_ns);
  }
  return last > first ? static_cast<double>(last - first) * 1e-6 : 0.0;
}

// Indexes the marked ids; fills each boundary's host id range. Empty, or why not usable.
std::string index_marks(const std::vector<std::vector<MarkedMemset>>& boundaries,
                        std::unordered_map<std::uint32_t, MemsetRef>& marked,
                        std::vector<std::uint32_t>& first_id, std::vector<std::uint32_t>& last_id) {
  for (std::size_t b = 0; b < boundaries.size(); ++b) {
    first_id[b] = UINT32_MAX;
    last_id[b] = 0;
    for (std::size_t m = 0; m < boundaries[b].size(); ++m)
      for (std::uint32_t id : boundaries[b][m]) {
        marked[id] = {b, m};
        first_id[b] = std::min(first_id[b], id);
        last_id[b] = std::max(last_id[b], id);
      }
    if (first_id[b] > last_id[b])
      return fmt::format("boundary {} enqueued no memset", b);
    if (b > 0 && first_id[b] <= last_id[b - 1])
      return fmt::format("boundary {} was enqueued out of order", b);
  }
  return {};
}

// The boundaries' device spans, or why they cannot serve as boundaries.
std::string boundary_spans(const std::vector<GpuActivity>& records,
                           const std::unordered_map<std::uint32_t, MemsetRef>& marked,
                           const std::vector<std::vector<MarkedMemset>>& boundaries,
                           std::vector<Span>& spans) {
  std::vector<std::vector<int>> seen(boundaries.size());
  for (std::size_t b = 0; b < boundaries.size(); ++b)
    seen[b].assign(boundaries[b].size(), 0);
  for (const GpuActivity& a : records) {
    auto found = marked.find(a.correlation_id);
    if (found == marked.end())
      continue;
    Span& span = spans[found->second.boundary];
    span.start = std::min(span.start, a.start_ns);
    span.end = std::max(span.end, a.end_ns);
    ++seen[found->second.boundary][found->second.memset];
  }
  for (std::size_t b = 0; b < boundaries.size(); ++b) {
    for (std::size_t m = 0; m < seen[b].size(); ++m)
      if (seen[b][m] != 1)
        return fmt::format("boundary {}: memset {} has {} records (expected 1)", b, m, seen[b][m]);
    if (b > 0 && spans[b].start + kBoundarySlackNs < spans[b - 1].end)
      return fmt::format("boundary {} overlaps boundary {} on the call stream", b, b - 1);
  }
  return {};
}

} // namespace

BatchAttribution attribute_batch(std::vector<GpuActivity> records,
                                 const std::vector<std::vector<MarkedMemset>>& boundaries,
                                 std::uint64_t close_ns) {
  BatchAttribution out;
  const std::size_t n = boundaries.size();
  out.calls.resize(n);
  out.latency_ms.assign(n, 0.0);
  if (n == 0)
    return out;
  std::unordered_map<std::uint32_t, MemsetRef> marked;
  std::vector<std::uint32_t> first_id(n), last_id(n);
  std::vector<Span> spans(n);
  out.unattributable = index_marks(boundaries, marked, first_id, last_id);
  if (out.unattributable.empty())
    out.unattributable = boundary_spans(records, marked, boundaries, spans);
  if (!out.unattributable.empty())
    return out;
  for (GpuActivity& a : records) {
    if (marked.contains(a.correlation_id))
      continue;
    if (a.correlation_id < first_id[0]) {
      if (a.end_ns <= spans[0].start + kBoundarySlackNs)
        continue; // finished before the batch
      out.unattributable = describe(a) + " was issued before the batch and ran into it";
      return out;
    }
    const auto after = std::upper_bound(first_id.begin(), first_id.end(), a.correlation_id);
    const auto call = static_cast<std::size_t>(after - first_id.begin()) - 1;
    if (a.correlation_id <= last_id[call]) {
      out.unattributable = describe(a) + fmt::format(" was issued during boundary {}", call);
      return out;
    }
    const std::uint64_t lower = spans[call].end;
    const std::uint64_t upper = call + 1 < n ? spans[call + 1].start : close_ns;
    if (a.start_ns + kBoundarySlackNs < lower) {
      out.unattributable =
          fmt::format("call {}: {} started {:.1f} µs before its boundary ended", call, describe(a),
                      static_cast<double>(lower - a.start_ns) * 1e-3);
      return out;
    }
    if (a.end_ns > upper + kBoundarySlackNs) {
      out.unattributable = fmt::format("call {}: {} was still running {:.1f} µs after {}", call,
                                       describe(a), static_cast<double>(a.end_ns - upper) * 1e-3,
                                       call + 1 < n ? "the next call's boundary started"
                                                    : "the call stream synchronised");
      return out;
    }
    if (a.start_ns >= lower)
      out.min_gap_ns = std::min(out.min_gap_ns, a.start_ns - lower);
    if (upper >= a.end_ns)
      out.min_gap_ns = std::min(out.min_gap_ns, upper - a.end_ns);
    out.calls[call].push_back(std::move(a));
  }
  for (std::size_t i = 0; i < n; ++i) {
    std::sort(out.calls[i].begin(), out.calls[i].end(),
              [](const GpuActivity& x, const GpuActivity& y) { return x.start_ns < y.start_ns; });
    out.latency_ms[i] = span_ms(out.calls[i]);
  }
  return out;
}

} // namespace ptxbench::measure
