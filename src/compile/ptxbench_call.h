/* The uniform call record the harness hands to a candidate's shim (docs/abi.md).
 * Plain C so the harness, the generated shim and any other binding share one definition; the
 * shim embeds this text verbatim. A change to the layout bumps PTXBENCH_CALL_VERSION. */
#ifndef PTXBENCH_CALL_H
#define PTXBENCH_CALL_H

#include <stdint.h>

#define PTXBENCH_CALL_VERSION 1u

/* ptxbench_invoke returns cudaGetLastError() after `run`, or one of these (never a cudaError). */
#define PTXBENCH_INVOKE_BAD_CALL (-1)  /* null record, wrong version or wrong counts */
#define PTXBENCH_INVOKE_EXCEPTION (-2) /* `run` threw a C++ exception */

/* One scalar argument. 16-bit and 8-bit floating types travel as their raw bits (u16 / u8);
 * bool travels as u8 (0 or 1). */
typedef union PtxbenchScalar {
  float f32;
  double f64;
  int64_t i64;
  int32_t i32;
  int16_t i16;
  int8_t i8;
  uint16_t u16;
  uint8_t u8;
} PtxbenchScalar;

typedef struct PtxbenchCall {
  uint32_t version;      /* PTXBENCH_CALL_VERSION */
  uint32_t num_buffers;  /* tensor inputs, then outputs, in argument order */
  uint32_t num_scalars;  /* scalar inputs, in argument order */
  uint32_t num_var_axes; /* var axes, in definition axes order */
  void* const* buffers;  /* device pointers */
  const PtxbenchScalar* scalars;
  const int64_t* var_axes;
  void* stream; /* cudaStream_t */
} PtxbenchCall;

typedef int (*PtxbenchInvokeFn)(const PtxbenchCall* call);
typedef const char* (*PtxbenchAbiSignatureFn)(void);

#endif /* PTXBENCH_CALL_H */
