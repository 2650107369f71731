// A real PostgreSQL server for one test: initdb into a fresh folder, started on a free loopback
// port, stopped (immediately) and removed on destruction. The binaries are Debian's
// (scripts/setup.sh installs postgresql); as root, which initdb refuses, the server runs as the
// `postgres` user. restart() and kill() let a test take the broker away mid-run. A
// PostgresNetwork lets clients beyond loopback in (a network namespace's link).
#pragma once

#include <arpa/inet.h>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <netinet/in.h>
#include <stdexcept>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace ptxbench::test_support {

// Where the server listens besides 127.0.0.1, and whom it lets in there without a password.
struct PostgresNetwork {
  std::vector<std::string> listen_addresses;
  std::vector<std::string> trusted_subnets; // CIDRs: one `host all all CIDR trust` line each
};

class PostgresServer {
public:
  PostgresServer() : PostgresServer(PostgresNetwork{}) {}
  explicit PostgresServer(PostgresNetwork network) : m_network(std::move(network)) {
    m_bin = bin_dir();
    char pattern[] = "/tmp/ptxbench_pg_XXXXXX";
    if (::mkdtemp(pattern) == nullptr)
      throw std::runtime_error("mkdtemp failed");
    m_root = pattern;
    m_data = m_root / "data";
    m_port = free_port();
    if (::geteuid() == 0) {
      m_as = "runuser -u postgres -- ";
      sh("chown postgres " + m_root.string());
    }
    sh(m_as + (m_bin / "initdb").string() + " -D " + m_data.string() +
       " -U ptxbench --auth=trust -E UTF8 --no-sync > " + (m_root / "initdb.log").string() +
       " 2>&1");
    for (const std::string& subnet : m_network.trusted_subnets)
      sh("echo 'host all all " + subnet + " trust' >> " + (m_data / "pg_hba.conf").string());
    start();
  }
  ~PostgresServer() {
    run(m_as + (m_bin / "pg_ctl").string() + " -D " + m_data.string() +
        " -m immediate -w stop > /dev/null 2>&1");
    std::error_code error;
    std::filesystem::remove_all(m_root, error);
  }
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  // postgresql://ptxbench@127.0.0.1:PORT/postgres
  std::string url() const { return url_at("127.0.0.1"); }
  // The same at another of its listen addresses.
  std::string url_at(const std::string& address) const {
    return "postgresql://ptxbench@" + address + ":" + std::to_string(m_port) + "/postgres";
  }
  int port() const { return m_port; }

  void start() {
    std::string listen = "127.0.0.1";
    for (const std::string& address : m_network.listen_addresses)
      listen += "," + address;
    sh(m_as + (m_bin / "pg_ctl").string() + " -D " + m_data.string() + " -l " +
       (m_root / "server.log").string() + " -w -t 60 -o \"-p " + std::to_string(m_port) + " -k " +
       m_root.string() + " -c listen_addresses=" + listen + " -c fsync=off\" start > /dev/null");
  }
  // Stops at once (every connection cut, as a crash would), without starting again.
  void kill() {
    sh(m_as + (m_bin / "pg_ctl").string() + " -D " + m_data.string() +
       " -m immediate -w stop > /dev/null");
  }
  // A fast shutdown (connections cut) and a start on the same port.
  void restart() {
    kill();
    start();
  }
  // Runs `sql` through psql; its output (an error's text when it fails: a poll may ask before
  // the schema exists or while the server restarts).
  std::string psql(const std::string& sql) const {
    const std::filesystem::path out = m_root / ("psql." + std::to_string(::gettid()) + ".out");
    run("psql -X -A -t -q \"" + url() + "\" -c \"" + sql + "\" > " + out.string() + " 2>&1");
    std::string text;
    if (FILE* file = std::fopen(out.c_str(), "r")) {
      char buffer[4096];
      for (std::size_t n; (n = std::fread(buffer, 1, sizeof(buffer), file)) > 0;)
        text.append(buffer, n);
      std::fclose(file);
    }
    while (!text.empty() && text.back() == '\n')
      text.pop_back();
    return text;
  }

private:
  static int run(const std::string& command) { return std::system(command.c_str()); }
  static void sh(const std::string& command) {
    if (run(command) != 0)
      throw std::runtime_error("PostgreSQL fixture: `" + command + "` failed");
  }
  static std::filesystem::path bin_dir() {
    for (const auto& entry : std::filesystem::directory_iterator("/usr/lib/postgresql"))
      if (std::filesystem::exists(entry.path() / "bin" / "initdb"))
        return entry.path() / "bin";
    throw std::runtime_error("PostgreSQL server binaries not found under /usr/lib/postgresql "
                             "(scripts/setup.sh installs postgresql)");
  }
  static int free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof(address);
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) != 0)
      throw std::runtime_error("no free port");
    ::close(fd);
    return ntohs(address.sin_port);
  }

  PostgresNetwork m_network;
  std::filesystem::path m_bin, m_root, m_data;
  std::string m_as;
  int m_port = 0;
};

} // namespace ptxbench::test_support
