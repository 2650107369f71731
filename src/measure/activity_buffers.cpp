#include "measure/activity_buffers.hpp"

#include <cstdlib>

namespace ptxbench::measure {
namespace {

constexpr std::size_t kRecordAlignment = 8; // CUPTI's requirement for activity buffers

} // namespace

ActivityBuffers::ActivityBuffers(std::size_t buffer_bytes, std::size_t max_idle)
    : m_buffer_bytes((buffer_bytes + kRecordAlignment - 1) / kRecordAlignment * kRecordAlignment),
      m_max_idle(max_idle) {}

ActivityBuffers::~ActivityBuffers() {
  for (std::uint8_t* buffer : m_idle)
    std::free(buffer);
}

std::uint8_t* ActivityBuffers::take() {
  {
    const std::lock_guard lock(m_mutex);
    if (!m_idle.empty()) {
      std::uint8_t* buffer = m_idle.back();
      m_idle.pop_back();
      return buffer;
    }
  }
  return static_cast<std::uint8_t*>(std::aligned_alloc(kRecordAlignment, m_buffer_bytes));
}

void ActivityBuffers::give_back(std::uint8_t* buffer) {
  if (buffer == nullptr)
    return;
  {
    const std::lock_guard lock(m_mutex);
    if (m_idle.size() < m_max_idle) {
      m_idle.push_back(buffer);
      return;
    }
  }
  std::free(buffer);
}

std::size_t ActivityBuffers::idle() const {
  const std::lock_guard lock(m_mutex);
  return m_idle.size();
}

} // namespace ptxbench::measure
