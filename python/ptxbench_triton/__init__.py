"""ptxbench's Python side for Triton candidates: the static gate (gate.py), the ahead-of-time
compile without a GPU for `check`'s SASS report (aot.py) and the prototype of the child entry
point that lets the C++ evaluator call a candidate's `run` (child.py; docs/evaluation.md)."""
