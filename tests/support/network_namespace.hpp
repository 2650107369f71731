// A network namespace for one test, joined to this host by a veth pair: the host's end is
// 10.213.X.Y+1/30 and the namespace's end +2, so a process started through exec_prefix() reaches
// this host only over that link (its loopback is its own). partition() takes the host's end
// down: every packet either way is dropped and nobody sends a reset, as when a switch or cable
// between two hosts fails; heal() brings it back. Everything is removed on destruction.
//
// The /30 comes from the process id (parallel test processes differ), moved on while another
// interface already holds it. Creating a namespace takes CAP_NET_ADMIN (root in CI); a test
// asks may_create() first and skips with its reason.
#pragma once

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

namespace ptxbench::test_support {

class NetworkNamespace {
public:
  // Empty when this process may create a namespace; otherwise why it may not.
  static std::string may_create() {
    std::ifstream status("/proc/self/status");
    constexpr unsigned long long kNetAdmin = 1ull << 12; // CAP_NET_ADMIN
    for (std::string line; std::getline(status, line);)
      if (line.starts_with("CapEff:"))
        return std::stoull(line.substr(7), nullptr, 16) & kNetAdmin
                   ? ""
                   : "this process lacks CAP_NET_ADMIN, which creating a network namespace takes "
                     "(run the test as root)";
    return "/proc/self/status has no CapEff line";
  }

  NetworkNamespace()
      : m_name("ptxbench-" + std::to_string(::getpid())),
        m_host_link("pxb" + std::to_string(::getpid()) + "h") {
    remove(); // a namespace of an earlier process with this id that died before removing it
    const std::string inner = "pxb" + std::to_string(::getpid()) + "n";
    pick_subnet();
    sh("ip netns add " + m_name);
    sh("ip link add " + m_host_link + " type veth peer name " + inner + " netns " + m_name);
    sh("ip addr add " + m_host_address + "/30 dev " + m_host_link);
    sh("ip link set " + m_host_link + " up");
    sh("ip -n " + m_name + " addr add " + m_inner_address + "/30 dev " + inner);
    sh("ip -n " + m_name + " link set " + inner + " up");
    sh("ip -n " + m_name + " link set lo up");
  }
  ~NetworkNamespace() { remove(); }
  NetworkNamespace(const NetworkNamespace&) = delete;
  NetworkNamespace& operator=(const NetworkNamespace&) = delete;

  // This host's address on the link (what a process inside connects to).
  const std::string& host_address() const { return m_host_address; }
  // The link's subnet, "10.213.X.Y/30".
  const std::string& subnet() const { return m_subnet; }
  // The command words that run a program inside: `ip netns exec NAME`.
  std::vector<std::string> exec_prefix() const { return {"ip", "netns", "exec", m_name}; }

  void partition() { sh("ip link set " + m_host_link + " down"); }
  void heal() { sh("ip link set " + m_host_link + " up"); }

private:
  // Runs `command`; throws with its output when it fails.
  static std::string sh(const std::string& command) {
    FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
    if (pipe == nullptr)
      throw std::runtime_error("network namespace: popen failed");
    std::string out;
    std::array<char, 512> buffer{};
    for (std::size_t n; (n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0;)
      out.append(buffer.data(), n);
    if (::pclose(pipe) != 0)
      throw std::runtime_error("network namespace: `" + command + "` failed: " + out);
    return out;
  }

  void pick_subnet() {
    constexpr int kSubnets = 16384; // the /30s of 10.213.0.0/16
    for (int step = 0; step < kSubnets; ++step) {
      const int index = (::getpid() + step) % kSubnets;
      const std::string prefix = "10.213." + std::to_string(index / 64) + ".";
      const int first = index % 64 * 4;
      m_subnet = prefix + std::to_string(first) + "/30";
      if (sh("ip -o -4 addr show to " + m_subnet).empty()) {
        m_host_address = prefix + std::to_string(first + 1);
        m_inner_address = prefix + std::to_string(first + 2);
        return;
      }
    }
    throw std::runtime_error("network namespace: every /30 of 10.213.0.0/16 is in use");
  }

  void remove() const {
    (void)std::system(("ip netns del " + m_name + " > /dev/null 2>&1").c_str());
    (void)std::system(("ip link del " + m_host_link + " > /dev/null 2>&1").c_str());
  }

  std::string m_name, m_host_link, m_subnet, m_host_address, m_inner_address;
};

} // namespace ptxbench::test_support
