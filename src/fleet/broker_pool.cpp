#include "fleet/broker_pool.hpp"

namespace ptxbench::fleet {

util::Expected<BrokerPool::Handle> BrokerPool::take() {
  {
    std::lock_guard lock(m_mutex);
    if (!m_idle.empty()) {
      Handle handle(*this, std::move(m_idle.back()));
      m_idle.pop_back();
      return handle;
    }
  }
  PTXBENCH_TRY_ASSIGN(auto broker, Broker::connect(m_options));
  return Handle(*this, std::move(broker));
}

void BrokerPool::give_back(std::unique_ptr<Broker> broker) {
  std::lock_guard lock(m_mutex);
  m_idle.push_back(std::move(broker));
}

} // namespace ptxbench::fleet
