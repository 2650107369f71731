"""The static gate for Triton candidates, with Python's own parser.

Problem: a Triton candidate is a Python file, and Python can reach any library in many ways;
the evaluation must only time kernels the candidate compiles with Triton. The runtime rule
(a foreign kernel in the call window rejects the turn) is the guarantee; this gate gives
early, precise feedback before the GPU step for the tricks that the original ptxbench's
validator rejects (reference §10).

Approach: parse with `ast`, walk the tree once, and report findings as JSON, one per
offending node with its 1-based line and column. Names bound to the torch and triton modules
are tracked from the imports, so `tl.softmax` (Triton's own JIT op) is told apart from
`x.softmax()` (a torch method call that launches a foreign kernel).

Invariants: the candidate is never imported or executed; a file that does not parse gives
exactly one finding (syntax_error); the output is one JSON object on stdout and the exit
status is 0 whenever the gate ran, 2 for a usage error.

Usage: python3 -m ptxbench_triton.gate KERNEL.py [--params A,B,C,M]
"""

import argparse
import ast
import json
import sys

BANNED_METHODS = frozenset({
    "addbmm", "addmm", "baddbmm", "bmm", "conv1d", "conv2d", "conv3d", "einsum", "linear",
    "matmul", "mm", "scaled_dot_product_attention", "softmax",
})
GUARDED_MODULES = ("torch", "triton")


def root_name(node):
    """The Name at the root of an attribute chain `a.b.c`, or None."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def dotted(node):
    """"a.b.c" for an attribute chain rooted at a Name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


class Gate(ast.NodeVisitor):
    def __init__(self, params):
        self.params = params
        self.findings = []
        self.triton_names = set()  # names bound to triton or one of its submodules
        self.allocator_functions = set()
        self.allocator_lambdas = set()
        self.has_triton_import = False
        self.has_jit_kernel = False
        self.run = None
        self.stack = []  # enclosing function nodes

    def add(self, node, rule, message):
        self.findings.append({"rule": rule, "line": getattr(node, "lineno", 0),
                              "col": getattr(node, "col_offset", -1) + 1, "message": message})

    # Pass 1: what the module binds and which functions serve as the Triton allocator.
    def prescan(self, tree):
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "triton":
                        self.triton_names.add(alias.asname or "triton")
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "triton":
                for alias in node.names:
                    self.triton_names.add(alias.asname or alias.name)
            elif isinstance(node, ast.Call) and dotted(node.func) == "triton.set_allocator":
                for arg in node.args:
                    if isinstance(arg, ast.Name):
                        self.allocator_functions.add(arg.id)
                    elif isinstance(arg, ast.Lambda):
                        self.allocator_lambdas.add(id(arg))

    def in_allocator(self):
        return any((isinstance(f, ast.Lambda) and id(f) in self.allocator_lambdas) or
                   (not isinstance(f, ast.Lambda) and f.name in self.allocator_functions)
                   for f in self.stack)

    def check_binding(self, node, name, what):
        if name in GUARDED_MODULES:
            self.add(node, "rebinds_module", f"{what} rebinds `{name}`; the names `torch` and "
                     "`triton` must keep meaning the modules")

    def visit_Import(self, node):
        for alias in node.names:
            top = alias.name.split(".")[0]
            if "cutlass" in alias.name.lower():
                self.add(node, "cutlass_import", f"`import {alias.name}`: CUTLASS (and CuTe DSL) "
                         "may not be used; write the kernel in Triton")
            elif top == "torch" and alias.asname:
                self.add(node, "torch_alias", f"`import {alias.name} as {alias.asname}`: import "
                         "torch only as `import torch`")
            elif alias.asname and alias.asname != alias.name:
                self.check_binding(node, alias.asname, f"`import {alias.name} as {alias.asname}`")
            if alias.name == "triton" or (top == "triton" and not alias.asname):
                self.has_triton_import = True
        self.generic_visit(node)

    def visit_ImportFrom(self, node):
        module = node.module or ""
        if "cutlass" in module.lower() or any("cutlass" in a.name.lower() for a in node.names):
            self.add(node, "cutlass_import", f"`from {module} import ...`: CUTLASS (and CuTe DSL) "
                     "may not be used; write the kernel in Triton")
        elif module.split(".")[0] == "torch":
            self.add(node, "from_torch_import", f"`from {module} import ...`: use torch only "
                     "through `import torch` and `torch.cuda.*`")
        for alias in node.names:
            self.check_binding(node, alias.asname or alias.name, f"`from {module} import "
                               f"{alias.name}`")
        self.generic_visit(node)

    def visit_function(self, node):
        if not isinstance(node, ast.Lambda):
            self.check_binding(node, node.name, f"`def {node.name}`")
            for decorator in node.decorator_list:
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                name = dotted(target) or ""
                head, _, tail = name.rpartition(".")
                if tail == "jit" and (head in self.triton_names or name in self.triton_names):
                    self.has_jit_kernel = True
        for arg in ast.walk(node.args):
            if isinstance(arg, ast.arg):
                self.check_binding(arg, arg.arg, f"parameter `{arg.arg}`")
        self.stack.append(node)
        self.generic_visit(node)
        self.stack.pop()

    visit_FunctionDef = visit_function
    visit_AsyncFunctionDef = visit_function
    visit_Lambda = visit_function

    def visit_ClassDef(self, node):
        self.check_binding(node, node.name, f"`class {node.name}`")
        self.generic_visit(node)

    def visit_Name(self, node):
        if not isinstance(node.ctx, ast.Load):
            self.check_binding(node, node.id, "an assignment" if isinstance(node.ctx, ast.Store)
                               else "`del`")

    def visit_Attribute(self, node):
        if not isinstance(node.ctx, ast.Load) and root_name(node) in GUARDED_MODULES:
            self.add(node, "rebinds_module", f"assigning `{dotted(node)}` patches the "
                     f"`{root_name(node)}` module")
        self.generic_visit(node)

    def visit_Global(self, node):
        for name in node.names:
            self.check_binding(node, name, f"`global {name}`")

    def visit_Nonlocal(self, node):
        for name in node.names:
            self.check_binding(node, name, f"`nonlocal {name}`")

    def visit_BinOp(self, node):
        if isinstance(node.op, ast.MatMult):
            self.add(node, "matmul_operator", "the `@` operator runs torch's matmul (cuBLAS); "
                     "compute the product in a Triton kernel with tl.dot")
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        if isinstance(node.op, ast.MatMult):
            self.add(node, "matmul_operator", "the `@=` operator runs torch's matmul (cuBLAS); "
                     "compute the product in a Triton kernel with tl.dot")
        self.generic_visit(node)

    def visit_Call(self, node):
        func = node.func
        name = dotted(func)
        if isinstance(func, ast.Name) and func.id == "__import__":
            self.add(node, "dynamic_import", "`__import__(...)`: import modules with `import`")
        elif name == "importlib.import_module" or (isinstance(func, ast.Name) and
                                                   func.id == "import_module"):
            self.add(node, "dynamic_import", "`importlib.import_module(...)`: import modules "
                     "with `import`")
        elif isinstance(func, ast.Name) and func.id == "getattr" and node.args and \
                root_name(node.args[0]) == "torch":
            self.add(node, "getattr_torch", "`getattr(torch, ...)`: torch functions may not be "
                     "reached by name")
        elif name is not None and name.startswith("torch."):
            self.check_torch_call(node, name)
        elif isinstance(func, ast.Attribute) and func.attr in BANNED_METHODS and \
                root_name(func) not in self.triton_names:
            self.add(node, "banned_method", f"`.{func.attr}(...)` runs a torch library kernel; "
                     "compute it in a Triton kernel")
        self.generic_visit(node)

    def check_torch_call(self, node, name):
        if name.startswith("torch.cuda."):
            return
        if name == "torch.empty" and self.in_allocator():
            return
        self.add(node, "torch_call", f"`{name}(...)`: no torch calls except torch.cuda.* and "
                 "torch.empty inside the function given to triton.set_allocator; outputs are "
                 "preallocated, compute everything in Triton kernels")

    def finish(self, tree):
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "run":
                self.run = node
        if not self.has_triton_import:
            self.add(tree, "missing_triton_import", "the file never does `import triton`")
        if not self.has_jit_kernel:
            self.add(tree, "missing_jit_kernel", "no function is decorated with @triton.jit; "
                     "the work must be done by Triton kernels")
        if self.run is None:
            self.add(tree, "missing_run", "no top-level `def run(...)`")
        elif self.params is not None:
            self.check_run_signature(self.run)

    def check_run_signature(self, run):
        args = run.args
        names = [a.arg for a in args.posonlyargs + args.args]
        extra = args.vararg or args.kwarg or args.kwonlyargs
        if isinstance(run, ast.AsyncFunctionDef) or names != self.params or extra:
            got = ", ".join(names + (["*" + args.vararg.arg] if args.vararg else []) +
                            [a.arg for a in args.kwonlyargs] +
                            (["**" + args.kwarg.arg] if args.kwarg else []))
            self.add(run, "run_signature", f"`run({got})` does not match the signature "
                     f"`def run({', '.join(self.params)})` (inputs, outputs, variable axes)")


def check_source(source, params=None):
    """The findings for one candidate's source text, in line order."""
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        return [{"rule": "syntax_error", "line": error.lineno or 0, "col": error.offset or 0,
                 "message": f"the file does not parse: {error.msg}"}]
    except ValueError as error:  # e.g. NUL bytes
        return [{"rule": "syntax_error", "line": 0, "col": 0,
                 "message": f"the file does not parse: {error}"}]
    gate = Gate(params)
    gate.prescan(tree)
    gate.visit(tree)
    gate.finish(tree)
    return sorted(gate.findings, key=lambda f: (f["line"], f["col"], f["rule"]))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kernel", help="the candidate kernel.py ('-' for stdin)")
    parser.add_argument("--params", help="the expected `run` parameters, comma-separated")
    options = parser.parse_args(argv)
    try:
        if options.kernel == "-":
            source = sys.stdin.buffer.read()
        else:
            with open(options.kernel, "rb") as handle:
                source = handle.read()
    except OSError as error:
        print(f"gate: cannot read {options.kernel}: {error.strerror}", file=sys.stderr)
        return 2
    params = options.params.split(",") if options.params else None
    json.dump({"findings": check_source(source, params)}, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
