"""The static gate for Triton candidates, with Python's own parser.

Problem: a Triton candidate is a Python file, and Python can reach any library in many ways;
the evaluation must only time kernels the candidate compiles with Triton. The runtime rule
(a foreign kernel in the call window rejects the turn) is the guarantee; this gate gives
early, precise feedback before the GPU step for the tricks that the original ptxbench's
validator rejects (reference §10) and for the other spellings of the same call (issue 29).

Approach: parse with `ast`, walk the tree once, and report findings as JSON, one per
offending node with its 1-based line and column. Names bound to the torch and triton modules
are tracked from the imports, so `tl.softmax` (Triton's own JIT op) is told apart from
`x.softmax()` (a torch method call that launches a foreign kernel). Names bound to torch or to
something reached from it (`t = torch`, `mm = torch.mm`, `import torch.nn.functional as F`,
`from torch import matmul`, an attribute named `torch` on any module) are followed through
assignments anywhere in the file, so every expression has a canonical `torch.a.b` path when
it reaches torch: a call on such a path is allowed only under `torch.cuda.*` (and
`torch.empty` in the allocator), and a path used as a value (bound to a name, passed, stored)
only for dtypes, `torch.cuda` and a few types. What the gate cannot follow is rejected rather
than guessed: reflection (`getattr` with a computed name, `vars`, `globals`, `__dict__` and
every other dunder attribute, `exec`/`eval`/`compile`) and the modules that reach functions by
name (`importlib`, `operator`, `sys`, `pickle`...). Method names of torch's library kernels
(`.mm`, `.__matmul__`...) are rejected on any object not bound to triton, called or not.

Invariants: the candidate is never imported or executed; a file that does not parse (or nests
deeper than Python's parser allows) gives exactly one finding (syntax_error), one that nests
deeper than the walk can follow exactly one too_deep; the output is one JSON object on stdout
and the exit status is 0 whenever the gate ran, 2 for a usage error.

Usage: python3 -m ptxbench_triton.gate KERNEL.py [--params A,B,C,M]
"""

import argparse
import ast
import json
import sys

# Methods and functions that run a torch library kernel (cuBLAS, cuDNN, torch's attention),
# with their operator forms; `x.addmm_` is `addmm` in place.
BANNED_METHODS = frozenset({
    "__imatmul__", "__matmul__", "__rmatmul__", "_scaled_mm", "addbmm", "addmm", "addmv",
    "baddbmm", "bmm", "chain_matmul", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
    "conv_transpose2d", "conv_transpose3d", "einsum", "linear", "log_softmax", "matmul", "mm",
    "multi_dot", "mv", "scaled_dot_product_attention", "softmax", "tensordot",
})
GUARDED_MODULES = ("torch", "triton")
# Modules that reach other modules and functions by name (sys.modules, operator.matmul,
# pickle's globals, ctypes...): nothing the candidate does with them can be followed.
REFLECTIVE_MODULES = frozenset({
    "builtins", "code", "codeop", "copyreg", "ctypes", "gc", "imp", "importlib", "inspect",
    "marshal", "operator", "pickle", "pkgutil", "runpy", "sys", "types", "zipimport",
})
# Builtins that reach names or run code the gate cannot see.
BY_NAME = "dynamic attribute access the gate cannot verify; use plain names and attributes"
AS_TEXT = "code the gate cannot see; write it in the file"
DYNAMIC_BUILTINS = {
    "compile": f"compiles {AS_TEXT}", "delattr": f"deletes attributes by name: {BY_NAME}",
    "eval": f"runs {AS_TEXT}", "exec": f"runs {AS_TEXT}",
    "getattr": f"reads attributes by name: {BY_NAME}",
    "globals": f"reads the module's names by name: {BY_NAME}",
    "locals": f"reads a namespace by name: {BY_NAME}",
    "setattr": f"sets attributes by name: {BY_NAME}",
    "vars": f"reads a namespace by name: {BY_NAME}",
}
ALLOWED_DUNDER_ATTRIBUTES = frozenset({"__doc__", "__init__", "__name__", "__qualname__",
                                       "__version__"})
ALLOWED_DUNDER_NAMES = frozenset({"__doc__", "__file__", "__name__"})
# torch.X that may be used as a value (bound to a name, passed as an argument): dtypes (and
# their attributes), torch.cuda and anything under it, and these types.
TORCH_DTYPES = frozenset({
    "bfloat16", "bool", "complex128", "complex64", "double", "float", "float16", "float32",
    "float64", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
    "float8_e8m0fnu", "half", "int", "int16", "int32", "int64", "int8", "long", "short",
    "uint16", "uint32", "uint64", "uint8",
})
TORCH_VALUE_TYPES = frozenset({"Size", "Tensor", "__version__", "device", "dtype"})
# Python's own limit on the walk's recursion (3 frames a level of the tree): enough for any tree
# that ast.parse builds under the default limit.
WALK_RECURSION_LIMIT = 30000
ALLOCATOR_MESSAGE = ("no torch calls except torch.cuda.* and torch.empty inside the function "
                     "given to triton.set_allocator; outputs are preallocated, compute "
                     "everything in Triton kernels")


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


def is_dunder(name):
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def banned_method(attr):
    return attr in BANNED_METHODS or (attr.endswith("_") and not is_dunder(attr) and
                                      attr[:-1] in BANNED_METHODS)


def torch_value_allowed(path):
    """Whether `torch.a.b`, used other than by calling it, names data rather than code."""
    parts = path.split(".")
    if len(parts) < 2:
        return False
    return parts[1] == "cuda" or parts[1] in TORCH_DTYPES or (len(parts) == 2 and
                                                               parts[1] in TORCH_VALUE_TYPES)


def binding_targets(node):
    """The names a plain binding `a = b = value` (or `a: T = value`, `(a := value)`) gives
    `value`, with that value; ([], None) for any other node."""
    if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
        return [t.id for t in node.targets], node.value
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
        return [node.target.id], node.value
    if isinstance(node, ast.NamedExpr):
        return [node.target.id], node.value
    return [], None


class Gate(ast.NodeVisitor):
    def __init__(self, params):
        self.params = params
        self.findings = []
        self.triton_names = set()  # names bound to triton or one of its submodules
        self.torch_aliases = {}  # name -> the torch path it is bound to ("torch.nn.functional")
        self.parents = {}  # id(node) -> its parent node
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
            for child in ast.iter_child_nodes(node):
                self.parents[id(child)] = node
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
        self.collect_torch_aliases(tree)

    def collect_torch_aliases(self, tree):
        """Every name bound to torch or to a path under it, in any scope, through any chain of
        plain bindings (flow-insensitive: a name bound to torch anywhere is torch everywhere)."""
        pending = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname and alias.name.split(".")[0] == "torch":
                        self.torch_aliases[alias.asname] = alias.name
            elif isinstance(node, ast.ImportFrom) and not node.level and \
                    (node.module or "").split(".")[0] == "torch":
                for alias in node.names:
                    if alias.name != "*":
                        self.torch_aliases[alias.asname or alias.name] = \
                            f"{node.module}.{alias.name}"
            else:
                names, value = binding_targets(node)
                pending.extend((name, value) for name in names if name != "torch")
        self.torch_aliases.pop("torch", None)
        changed = True
        while changed:
            changed = False
            for name, value in pending:
                path = self.torch_path(value) if name not in self.torch_aliases else None
                if path is not None:
                    self.torch_aliases[name] = path
                    changed = True

    def torch_path(self, node):
        """"torch.a.b" for an expression that names torch or something reached from it (an
        alias, a `:=`, an attribute named `torch` on any module), else None."""
        parts = []
        while True:
            if isinstance(node, ast.Attribute) and node.attr == "torch":
                base = "torch"
                break
            if isinstance(node, ast.Attribute):
                parts.append(node.attr)
                node = node.value
            elif isinstance(node, ast.NamedExpr):
                node = node.value
            elif isinstance(node, ast.Name):
                base = "torch" if node.id == "torch" else self.torch_aliases.get(node.id)
                if base is None:
                    return None
                break
            else:
                return None
        return ".".join([base] + parts[::-1])

    def in_allocator(self):
        return any((isinstance(f, ast.Lambda) and id(f) in self.allocator_lambdas) or
                   (not isinstance(f, ast.Lambda) and f.name in self.allocator_functions)
                   for f in self.stack)

    def check_binding(self, node, name, what, triton_import=False):
        if name in GUARDED_MODULES:
            self.add(node, "rebinds_module", f"{what} rebinds `{name}`; the names `torch` and "
                     "`triton` must keep meaning the modules")
        elif name in self.triton_names and not triton_import:
            self.add(node, "rebinds_module", f"{what} rebinds `{name}`, a name bound to triton; "
                     "names bound to torch and triton must keep meaning the modules")

    def check_reflective_import(self, node, module, statement):
        top = module.split(".")[0]
        if top.lstrip("_") not in REFLECTIVE_MODULES:
            return False
        self.add(node, "dynamic_import", f"`{statement}`: the `{top}` module reaches modules and "
                 "functions by name (sys.modules, operator.matmul, pickle...), dynamic access "
                 "the gate cannot verify; import only what the kernel needs")
        return True

    def visit_Import(self, node):
        for alias in node.names:
            top = alias.name.split(".")[0]
            if "cutlass" in alias.name.lower():
                self.add(node, "cutlass_import", f"`import {alias.name}`: CUTLASS (and CuTe DSL) "
                         "may not be used; write the kernel in Triton")
            elif self.check_reflective_import(node, alias.name, f"import {alias.name}"):
                pass
            elif top == "torch" and alias.asname:
                self.add(node, "torch_alias", f"`import {alias.name} as {alias.asname}`: import "
                         "torch only as `import torch`")
            elif alias.asname and alias.asname != alias.name:
                self.check_binding(node, alias.asname, f"`import {alias.name} as {alias.asname}`",
                                   triton_import=top == "triton")
            if alias.name == "triton" or (top == "triton" and not alias.asname):
                self.has_triton_import = True
        self.generic_visit(node)

    def visit_ImportFrom(self, node):
        module = node.module or ""
        if "cutlass" in module.lower() or any("cutlass" in a.name.lower() for a in node.names):
            self.add(node, "cutlass_import", f"`from {module} import ...`: CUTLASS (and CuTe DSL) "
                     "may not be used; write the kernel in Triton")
        elif not node.level and self.check_reflective_import(node, module,
                                                             f"from {module} import ..."):
            pass
        elif module.split(".")[0] == "torch":
            self.add(node, "from_torch_import", f"`from {module} import ...`: use torch only "
                     "through `import torch` and `torch.cuda.*`")
        for alias in node.names:
            self.check_binding(node, alias.asname or alias.name, f"`from {module} import "
                               f"{alias.name}`", triton_import=not node.level and
                               module.split(".")[0] == "triton")
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
            return
        parent = self.parents.get(id(node))
        called = isinstance(parent, ast.Call) and parent.func is node
        if node.id in DYNAMIC_BUILTINS and not (called and node.id == "getattr"):
            use = f"`{node.id}(...)`" if called else f"`{node.id}` used as a value"
            self.add(node, "dynamic_access", f"{use} {DYNAMIC_BUILTINS[node.id]}")
        elif is_dunder(node.id) and node.id not in ALLOWED_DUNDER_NAMES and \
                not (called and node.id == "__import__"):
            self.add(node, "dynamic_access", f"`{node.id}` reaches the interpreter's names: "
                     "dynamic attribute access the gate cannot verify")
        self.check_torch_value(node)

    def visit_Attribute(self, node):
        root = root_name(node)
        if not isinstance(node.ctx, ast.Load) and (root in GUARDED_MODULES or
                                                   root in self.triton_names or
                                                   self.torch_path(node.value) is not None):
            self.add(node, "rebinds_module", f"assigning `{dotted(node) or node.attr}` patches "
                     f"the `{self.torch_path(node.value) or root}` module")
        self.check_attribute(node, node.attr, node.value, f"`{dotted(node) or '.' + node.attr}`")
        if isinstance(node.ctx, ast.Load):
            self.check_torch_value(node)
        self.generic_visit(node)

    def check_attribute(self, node, attr, owner, shown):
        """The rules on an attribute name, for `owner.attr` and `getattr(owner, "attr")`."""
        if banned_method(attr):
            if root_name(owner) in self.triton_names or self.torch_reported(node):
                return
            parent = self.parents.get(id(node))
            call = "(...)" if isinstance(parent, ast.Call) and parent.func is node else ""
            self.add(node, "banned_method", f"{shown}: `.{attr}{call}` runs a torch library "
                     "kernel; compute it in a Triton kernel")
        elif is_dunder(attr) and attr not in ALLOWED_DUNDER_ATTRIBUTES:
            self.add(node, "dynamic_access", f"{shown}: the dunder attribute `{attr}` reaches "
                     "objects by name, dynamic attribute access the gate cannot verify")
        elif attr in REFLECTIVE_MODULES:
            self.add(node, "dynamic_access", f"{shown} reaches the `{attr}` module, which finds "
                     "modules and functions by name: dynamic access the gate cannot verify")

    def torch_reported(self, node):
        """Whether `node` is a torch path that check_torch_value or check_torch_call rejects
        (so a banned method name on it is not reported twice)."""
        path = self.torch_path(node)
        if path is None:
            return False
        parent = self.parents.get(id(node))
        if isinstance(parent, ast.Call) and parent.func is node:
            return not self.torch_call_allowed(path)
        return not torch_value_allowed(path)

    def check_torch_value(self, node):
        """A torch path used other than as a call or as the head of a longer attribute chain."""
        path = self.torch_path(node)
        if path is None or torch_value_allowed(path) or any(map(is_dunder, path.split("."))):
            return  # a dunder is reported by check_attribute
        parent = self.parents.get(id(node))
        if isinstance(parent, ast.Attribute) and parent.value is node:
            return  # part of a longer path, checked there
        if isinstance(parent, ast.Call) and (parent.func is node or (
                isinstance(parent.func, ast.Name) and parent.func.id in DYNAMIC_BUILTINS)):
            return  # a call, or the argument of a builtin reported by visit_Call or visit_Name
        shown = dotted(node) or path
        names, value = binding_targets(parent)
        if value is node:
            self.add(node, "torch_alias", f"`{' = '.join(names)} = {shown}` binds `{path}` to "
                     "another name: use torch only as `torch.<name>`")
        else:
            what = f"`{shown}`" if shown == path else f"`{shown}` (`{path}`)"
            self.add(node, "torch_alias", f"{what} is used other than by a call: torch may be "
                     "passed or stored only as dtypes, torch.cuda and torch.Tensor, Size, device "
                     "or dtype")

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
        path = self.torch_path(func)
        if isinstance(func, ast.Name) and func.id == "__import__":
            self.add(node, "dynamic_import", "`__import__(...)`: import modules with `import`")
        elif name == "importlib.import_module" or (isinstance(func, ast.Name) and
                                                   func.id == "import_module"):
            self.add(node, "dynamic_import", "`importlib.import_module(...)`: import modules "
                     "with `import`")
        elif isinstance(func, ast.Name) and func.id == "getattr":
            self.check_getattr(node)
        elif path is not None and not self.torch_call_allowed(path):
            call = f"`{name}(...)`" if name == path else f"`{name or '...'}(...)` is `{path}(...)`"
            self.add(node, "torch_call", f"{call}: {ALLOCATOR_MESSAGE}")
        self.generic_visit(node)

    def torch_call_allowed(self, path):
        return path.startswith("torch.cuda.") or (path == "torch.empty" and self.in_allocator())

    def check_getattr(self, node):
        args = node.args
        owner = args[0] if args and not isinstance(args[0], ast.Starred) else None
        attr = args[1].value if len(args) > 1 and isinstance(args[1], ast.Constant) else None
        if owner is not None and (self.torch_path(owner) is not None or attr in GUARDED_MODULES):
            self.add(node, "getattr_torch", "`getattr(torch, ...)`: torch functions may not be "
                     "reached by name")
        elif owner is not None and isinstance(attr, str):
            self.check_attribute(node, attr, owner, f"`getattr({dotted(owner) or '...'}, "
                                 f"{attr!r})`")
        else:
            self.add(node, "dynamic_access", f"`getattr({dotted(owner) or '...'}, ...)` with a "
                     "computed name: dynamic attribute access the gate cannot verify; write "
                     "`x.name`")

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
    except (RecursionError, MemoryError):
        return [{"rule": "syntax_error", "line": 0, "col": 0, "message": "the file does not "
                 "parse: it nests deeper than Python's parser allows"}]
    gate = Gate(params)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, WALK_RECURSION_LIMIT))
    try:
        gate.prescan(tree)
        gate.visit(tree)
        gate.finish(tree)
    except RecursionError:
        return [{"rule": "too_deep", "line": 0, "col": 0, "message": "the file nests deeper "
                 "than the gate can check; write plainer expressions"}]
    finally:
        sys.setrecursionlimit(limit)
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
