// Things an Evaluator keeps between evaluations, leased one evaluation at a time: the seeded
// input sets with their reference outputs (per problem, workload, seed and set count) and
// the library references (per problem).
//
// An entry is taken out of the cache for the length of one evaluation (take), so two
// evaluations never share one — the second builds its own — and put back afterwards
// (give_back). Idle entries count against a budget (bytes for buffers); giving back evicts the
// least recently used idle entries until the idle total fits, and an entry larger than the
// whole budget is not kept. When two evaluations give back the same key, the newer entry
// stays. Thread-safe; entries are destroyed on the calling thread (GPU entries: the caller
// holds the GPU lock shared).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace ptxbench::exec {

template <typename T> class WarmCache {
public:
  explicit WarmCache(std::size_t budget) : m_budget(budget) {}

  // The idle entry under `key`, now leased to the caller, or null.
  std::unique_ptr<T> take(const std::string& key) {
    std::lock_guard guard(m_mutex);
    auto found = m_entries.find(key);
    if (found == m_entries.end())
      return nullptr;
    std::unique_ptr<T> value = std::move(found->second.value);
    m_idle_cost -= found->second.cost;
    m_entries.erase(found);
    return value;
  }

  // Keeps `value` (of `cost`) as the idle entry under `key`, evicting as the budget needs.
  void give_back(const std::string& key, std::unique_ptr<T> value, std::size_t cost) {
    if (!value || cost > m_budget)
      return;
    std::lock_guard guard(m_mutex);
    if (auto found = m_entries.find(key); found != m_entries.end()) {
      m_idle_cost -= found->second.cost;
      m_entries.erase(found);
    }
    m_entries[key] = Entry{std::move(value), cost, ++m_clock};
    m_idle_cost += cost;
    while (m_idle_cost > m_budget)
      evict_oldest();
  }

  std::size_t idle_cost() const {
    std::lock_guard guard(m_mutex);
    return m_idle_cost;
  }
  std::size_t idle_entries() const {
    std::lock_guard guard(m_mutex);
    return m_entries.size();
  }
  bool contains(const std::string& key) const {
    std::lock_guard guard(m_mutex);
    return m_entries.contains(key);
  }
  void clear() {
    std::lock_guard guard(m_mutex);
    m_entries.clear();
    m_idle_cost = 0;
  }

private:
  struct Entry {
    std::unique_ptr<T> value;
    std::size_t cost = 0;
    std::uint64_t last_use = 0;
  };

  void evict_oldest() {
    auto oldest = m_entries.begin();
    for (auto it = m_entries.begin(); it != m_entries.end(); ++it)
      if (it->second.last_use < oldest->second.last_use)
        oldest = it;
    m_idle_cost -= oldest->second.cost;
    m_entries.erase(oldest);
  }

  mutable std::mutex m_mutex;
  std::map<std::string, Entry> m_entries;
  std::size_t m_budget = 0;
  std::size_t m_idle_cost = 0;
  std::uint64_t m_clock = 0;
};

} // namespace ptxbench::exec
