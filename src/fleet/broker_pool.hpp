// Broker connections shared by the threads of one client: the turns of a run
// (agent/broker_executor.hpp) or the requests of an HTTP service fronting the fleet
// (service/broker_service.hpp).
//
// Problem. A fleet::Broker is one PostgreSQL connection and serves one thread at a time, while a
// client has many threads that each submit, wait for minutes and submit again; a connection
// per call would pay a connect (and the schema check) every time.
//
// Approach. take() hands out an idle connection, or opens one; the handle gives it back when
// it goes out of scope. Connections are never closed while the pool lives, so the pool holds
// as many as its users ran at once (the HTTP service's thread count bounds it).
#pragma once

#include "fleet/broker.hpp"

#include <memory>
#include <mutex>
#include <vector>

namespace ptxbench::fleet {

class BrokerPool {
public:
  explicit BrokerPool(BrokerOptions options) : m_options(std::move(options)) {}
  BrokerPool(const BrokerPool&) = delete;
  BrokerPool& operator=(const BrokerPool&) = delete;

  // A connection taken from the pool; back in it on destruction.
  class Handle {
  public:
    Handle(BrokerPool& pool, std::unique_ptr<Broker> broker)
        : m_pool(&pool), m_broker(std::move(broker)) {}
    Handle(Handle&& other) noexcept = default;
    Handle& operator=(Handle&&) = delete;
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;
    ~Handle() {
      if (m_broker)
        m_pool->give_back(std::move(m_broker));
    }
    Broker& operator*() const { return *m_broker; }
    Broker* operator->() const { return m_broker.get(); }

  private:
    BrokerPool* m_pool;
    std::unique_ptr<Broker> m_broker;
  };

  // An idle connection, or a new one (transport when the server cannot be reached).
  util::Expected<Handle> take();
  const BrokerOptions& options() const { return m_options; }

private:
  void give_back(std::unique_ptr<Broker> broker);

  BrokerOptions m_options;
  std::mutex m_mutex;
  std::vector<std::unique_ptr<Broker>> m_idle;
};

} // namespace ptxbench::fleet
