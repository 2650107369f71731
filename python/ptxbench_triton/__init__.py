"""ptxbench's Python side for Triton candidates: the static gate (gate.py) and, later, the
child entry point that lets the C++ evaluator call a candidate's `run` (docs/evaluation.md)."""
