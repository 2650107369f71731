// The devices this process sees, and the owners' factories that check their creation.
#pragma once

#include "cuda/owned.hpp"
#include "util/error.hpp"

namespace ptxbench::cuda {

// How many CUDA devices the runtime sees; 0 without a driver or a device (CPU-only CI). The
// first call initialises the driver but creates no context.
int device_count();

// Success when the runtime sees at least one device; else an `unsupported` error that names the
// runtime's answer (no driver, no device).
util::Status require_device();

// A new stream (non-blocking by default: it never synchronises with the legacy default stream);
// a failure is an `unsupported` error.
util::Expected<Stream> create_stream(unsigned flags = cudaStreamNonBlocking);
// The same and a timing event, for code where a failure is a broken set-up: it throws
// (LibraryError).
Stream make_stream(unsigned flags = cudaStreamNonBlocking);
Event make_event();

} // namespace ptxbench::cuda
