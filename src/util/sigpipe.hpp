// A thread-scoped guard against SIGPIPE, for writes that cannot take a per-write flag.
#pragma once

#include <signal.h>

namespace ptxbench::util {

// Blocks SIGPIPE in the calling thread while it lives, for writes that cannot take a per-write
// flag (a pipe; OpenSSL's write(2) under libcurl, which with CURLOPT_NOSIGNAL may raise it,
// curl issue 3787). A SIGPIPE that became pending meanwhile is taken off the thread's pending
// set before the old mask returns; one already pending when the block began is left alone.
class SigpipeBlock {
public:
  SigpipeBlock();
  ~SigpipeBlock();
  SigpipeBlock(const SigpipeBlock&) = delete;
  SigpipeBlock& operator=(const SigpipeBlock&) = delete;

private:
  sigset_t m_pipe;
  sigset_t m_old;
  bool m_was_pending = false;
};

} // namespace ptxbench::util
