"""`ptxbench serve --port 0` in the background for the Python tests (its URL is the first line
on stdout), its state, cache and rollouts in a temporary folder; and the candidate sources the
tests send: one that builds in seconds (and is wrong on a GPU), one that does not compile."""

import os
import shutil
import subprocess
import tempfile

GEMM = "gemm_n7168_k5120"


def fill_kernel(marker):
    return ("#include <cuda_bf16.h>\n#include <cuda_runtime.h>\n#include <cstdint>\n// " + marker +
            "\n__global__ void fill(__nv_bfloat16* C, int64_t n) {\n"
            "  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;\n"
            "  if (i < n) C[i] = __float2bfloat16(0.0f);\n}\n"
            "void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M,\n"
            "         cudaStream_t stream) {\n"
            "  int64_t n = M * 7168;\n"
            "  fill<<<unsigned((n + 255) / 256), 256, 0, stream>>>(C, n);\n}\n")


def compile_error_kernel():
    return fill_kernel("broken") + "\nint broken = ;\n"


def fenced(code):
    return "Here is my kernel.\n```cuda\n" + code + "```\n"


class Serve:
    """The server; `rollouts` is the folder of its rollouts' run stores."""

    def __init__(self, binary, token=None):
        if not binary:
            raise RuntimeError("the ptxbench binary is not known (pass it as the first argument)")
        self.binary = binary
        self.dir = tempfile.mkdtemp(prefix="ptxbench_client_")
        self.state = os.path.join(self.dir, "state")
        self.rollouts = os.path.join(self.state, "rollouts")
        self.env = dict(os.environ, PTXBENCH_CACHE=os.path.join(self.dir, "cache"),
                        PATH=os.environ.get("PATH", "") + ":/usr/local/cuda/bin")
        self.env.pop("PTXBENCH_SERVICE_TOKEN", None)
        if token:
            self.env["PTXBENCH_SERVICE_TOKEN"] = token
        self.process = subprocess.Popen(
            [binary, "serve", "--port", "0", "--state", self.state],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=self.env, text=True)
        self.url = self.process.stdout.readline().strip()
        self.process.stdout.close()
        if not self.url.startswith("http://"):
            self.stop()
            raise RuntimeError(f"ptxbench serve printed no URL: {self.url!r}")

    def run_folders(self):
        """The rollouts' run folders (each holds run.sqlite)."""
        if not os.path.isdir(self.rollouts):
            return []
        return sorted(os.path.join(self.rollouts, name) for name in os.listdir(self.rollouts)
                      if os.path.isfile(os.path.join(self.rollouts, name, "run.sqlite")))

    def ptxbench(self, *args):
        """Runs another ptxbench command with this server's environment."""
        return subprocess.run([self.binary, *args], env=self.env, capture_output=True, text=True)

    def kill(self):
        self.process.kill()
        self.process.wait()

    def stop(self):
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)
