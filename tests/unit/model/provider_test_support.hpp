// Registry entries, dependencies and observers for the provider tests.
#pragma once

#include "model/factory.hpp"
#include "model/registry.hpp"

#include <gtest/gtest.h>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ptxbench::model::testing {

inline constexpr const char* kTestKeyEnv = "PTXBENCH_TEST_API_KEY";
inline constexpr const char* kTestKey = "sk-test-SECRET-0123456789abcdef";

inline ModelSpec spec_for(std::string provider, std::string base_url, std::string model = "m-1") {
  ModelSpec spec;
  spec.name = "test-model";
  spec.provider = std::move(provider);
  spec.base_url = std::move(base_url);
  spec.model = std::move(model);
  spec.api_key_env = kTestKeyEnv;
  spec.timeout = std::chrono::seconds(10);
  spec.max_attempts = 4;
  return spec;
}

// Retries in milliseconds, the key from a fake environment (the one thing tests must not read
// from the real one), the real libcurl transport.
struct TestDeps {
  std::unique_ptr<HttpTransport> transport = make_curl_transport();
  ClientDeps deps() const {
    ClientDeps d;
    d.transport = transport.get();
    d.env = [](const std::string& name) -> std::optional<std::string> {
      if (name == kTestKeyEnv)
        return std::string(kTestKey);
      return std::nullopt;
    };
    d.retry.initial_delay = std::chrono::milliseconds(1);
    d.retry.max_delay = std::chrono::milliseconds(5);
    return d;
  }
};

inline std::unique_ptr<ModelClient> client_for(const ModelSpec& spec, const ClientDeps& deps) {
  auto client = make_client(spec, deps);
  if (!client)
    throw util::Fatal(client.error().message);
  return std::move(*client);
}

// Collects every attempt report, copying what outlives the callback.
struct AttemptLog {
  struct Entry {
    int attempt = 0;
    std::optional<int> http_status;
    std::optional<util::Error> error;
    bool succeeded = false;
    std::string request_sha256;
  };
  std::mutex mutex;
  std::vector<Entry> entries;

  AttemptObserver observer() {
    return [this](const AttemptRecord& record) {
      std::lock_guard lock(mutex);
      entries.push_back(Entry{record.attempt, record.http_status, record.error,
                              record.response != nullptr, record.request_sha256});
    };
  }
};

inline std::vector<Message> sample_messages() {
  return {{Role::system, "You are an expert CUDA kernel developer."},
          {Role::user, "Write a GEMM."},
          {Role::assistant, "```cpp\n// first try\n```"},
          {Role::user, "Evaluation FAILED: compile error"}};
}

} // namespace ptxbench::model::testing
