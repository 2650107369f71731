#!/usr/bin/env python3
"""Rewrites error propagation to the one idiom of util/error.hpp (issue 30).

  auto x = f(); PTXBENCH_TRY(x);            -> PTXBENCH_TRY_ASSIGN(auto x, f());  (*x -> x, ...)
  auto x = f(); PTXBENCH_TRY(x);  (x unused) -> PTXBENCH_TRY(f());
  auto x = f(); if (!x) return x.take_error();   -> as above
  if (auto s = f(); !s) return s.take_error();  -> PTXBENCH_TRY(f());
  if (auto s = f(); !s) return s;               -> PTXBENCH_TRY(f());

Works on tokens (comments, strings, raw strings and preprocessor lines are opaque), so it is
idempotent and can be re-run on a tree changed in parallel. A site whose variable is used as an
Expected after the check (x.error(), !x, reassigned, redeclared in an inner scope, a bare use
other than return/std::move) is left as it is and listed with --report.

usage: migrate_try.py [--report] [--dry-run] FILE...
"""
import re
import sys

TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<pp>^[ \t]*\#(?:[^\n\\]|\\.)*(?:\\\n(?:[^\n\\]|\\.)*)*)
  | (?P<raw>(?:u8|u|U|L)?R"(?P<delim>[^(\s]*)\(.*?\)(?P=delim)")
  | (?P<str>(?:u8|u|U|L)?"(?:[^"\\\n]|\\.)*")
  | (?P<chr>(?:u8|u|U|L)?'(?:[^'\\\n]|\\.)*')
  | (?P<id>[A-Za-z_][A-Za-z_0-9]*)
  | (?P<num>\.?[0-9](?:[0-9A-Za-z_.']|[eEpP][+-])*)
  | (?P<op>->\*|<=>|<<=|>>=|\.\.\.|->|::|&&|\|\||==|!=|<=|>=|\+\+|--|<<|\+=|-=|\*=|/=|%=|&=|\|=|\^=|.)
    """,
    re.VERBOSE | re.DOTALL | re.MULTILINE,
)

KEYWORDS = {
    "return", "co_return", "co_yield", "case", "throw", "sizeof", "new", "delete", "else", "do",
    "typeid", "alignof", "not", "and", "or", "if", "while", "for", "switch", "noexcept", "decltype",
}
VALUE_END = {")", "]"}  # a token after which `*` is binary


class Tok:
    __slots__ = ("kind", "text", "start", "end")

    def __init__(self, kind, text, start, end):
        self.kind, self.text, self.start, self.end = kind, text, start, end

    def __repr__(self):
        return self.text


def tokenize(src):
    out = []
    pos = 0
    while pos < len(src):
        m = TOKEN.match(src, pos)
        if not m:
            raise ValueError(f"cannot tokenize at {pos}: {src[pos:pos + 20]!r}")
        kind = m.lastgroup if m.lastgroup != "delim" else "raw"
        if kind not in ("ws",):
            out.append(Tok(kind, m.group(), m.start(), m.end()))
        pos = m.end()
    return out


class File:
    def __init__(self, path, src):
        self.path, self.src = path, src
        self.all = tokenize(src)
        self.t = [x for x in self.all if x.kind not in ("comment", "pp")]
        self.edits = []  # (start, end, text)
        self.skipped = []

    def line(self, i):
        return self.src.count("\n", 0, self.t[i].start) + 1

    def text(self, a, b):  # source of tokens a..b-1, comments inside kept
        return self.src[self.t[a].start:self.t[b - 1].end]

    def comments_between(self, a_pos, b_pos, exclude=None):
        res = []
        for x in self.all:
            if x.kind == "comment" and a_pos <= x.start and x.end <= b_pos:
                if exclude and exclude[0] <= x.start < exclude[1]:
                    continue
                res.append(x.text)
        return res

    def match_close(self, i):  # index of the bracket closing t[i]
        pairs = {"(": ")", "[": "]", "{": "}"}
        opener, closer, depth = self.t[i].text, pairs[self.t[i].text], 0
        for j in range(i, len(self.t)):
            if self.t[j].text == opener:
                depth += 1
            elif self.t[j].text == closer:
                depth -= 1
                if depth == 0:
                    return j
        return None

    def statement_end(self, i):  # index of the `;` ending the statement starting at i
        depth = 0
        for j in range(i, len(self.t)):
            s = self.t[j].text
            if s in "([{" and self.t[j].kind == "op":
                depth += 1
            elif s in ")]}" and self.t[j].kind == "op":
                depth -= 1
                if depth < 0:
                    return None
            elif s == ";" and depth == 0:
                return j
        return None

    def block_end(self, i):  # index of the `}` closing the block that holds t[i]
        depth = 0
        for j in range(i, len(self.t)):
            s = self.t[j].text
            if s == "{":
                depth += 1
            elif s == "}":
                depth -= 1
                if depth < 0:
                    return j
        return len(self.t)


def is_id(tok, name=None):
    return tok.kind == "id" and (name is None or tok.text == name)


def guard_at(f, i, name):
    """Matches a propagation guard of `name` at t[i]; returns the index after it or None.

    PTXBENCH_TRY(name);  |  if (!name) return name.take_error();  |  if (!name) return name;
    (the return optionally in braces)."""
    t = f.t
    seq = [x.text for x in t[i:i + 6]]
    if seq[:5] == ["PTXBENCH_TRY", "(", name, ")", ";"]:
        return i + 5
    if seq[:5] == ["if", "(", "!", name, ")"]:
        return return_error_at(f, i + 5, name)
    return None


def return_error_at(f, i, name):
    """`return name.take_error();` or `return name;` or either in braces, at t[i]."""
    t = f.t
    braced = t[i].text == "{"
    j = i + 1 if braced else i
    seq = [x.text for x in t[j:j + 7]]
    if seq[:7] == ["return", name, ".", "take_error", "(", ")", ";"]:
        j += 7
    elif seq[:3] == ["return", name, ";"]:
        j += 3
    else:
        return None
    if braced:
        if t[j].text != "}":
            return None
        j += 1
    if j < len(t) and t[j].text == "else":
        return None
    return j


def decl_head(f, k, name_index):
    """The declaration's type tokens t[k:name_index], as text with Expected<T> unwrapped;
    None when they are not a type we know is an Expected (auto is accepted)."""
    toks = [x.text for x in f.t[k:name_index]]
    s = " ".join(toks).replace(" :: ", "::").replace(" <", "<").replace("< ", "<")
    s = s.replace(" >", ">").replace(" &", "&").replace(" *", "*")
    m = re.fullmatch(r"(const )?auto(&&|&)?", s)
    if m:
        return s
    m = re.fullmatch(r"(const )?(?:(?:ptxbench::)?util::)?Expected<(.*)>", s)
    if m:
        return (m.group(1) or "") + m.group(2)
    return None


BLOCK_BEFORE = {")", "]", "else", "do", ";", "{", "}", ":", "try", "mutable", "noexcept"}


def match_open(f, j):  # index of the bracket opening the closer t[j]
    pairs = {")": "(", "]": "[", "}": "{"}
    closer, opener, depth = f.t[j].text, pairs[f.t[j].text], 0
    for k in range(j, -1, -1):
        if f.t[k].text == closer:
            depth += 1
        elif f.t[k].text == opener:
            depth -= 1
            if depth == 0:
                return k
    return None


def normalize(toks):
    s = " ".join(toks)
    for a, b in ((" :: ", "::"), (":: ", "::"), (" ::", "::"), (" <", "<"), ("< ", "<"),
                 (" >", ">"), (" &", "&"), (" *", "*"), (" ,", ",")):
        s = s.replace(a, b)
    return s


def decl_head(f, k, name_index):
    """The declaration's type t[k:name_index] with Expected<T> unwrapped to T; "util::Ok" for a
    Status; None for any other type."""
    s = normalize([x.text for x in f.t[k:name_index]])
    if re.fullmatch(r"(const )?auto(&&|&)?", s):
        return s
    m = re.fullmatch(r"(const )?(?:(?:ptxbench::)?util::)?Expected<(.*)>", s)
    if m:
        inner = m.group(2)
        if "," in inner:  # a comma would split the macro's arguments
            return (m.group(1) or "") + "auto"
        return (m.group(1) or "") + inner
    if re.fullmatch(r"(const )?(?:(?:ptxbench::)?util::)?Status", s):
        return "util::Ok"
    return None


def find_decl(f, semi):
    """For the statement ending at t[semi], a declaration `TYPE name = init;`: returns
    (type_start, name_index, init_start, head) or None."""
    t = f.t
    j = semi - 1
    while j >= 0:
        s = t[j].text
        if t[j].kind == "op" and s in ")]}":
            o = match_open(f, j)
            if o is None:
                return None
            if s == "}" and (t[o - 1].text in BLOCK_BEFORE):
                break  # the end of the block statement before
            j = o - 1
            continue
        if t[j].kind == "op" and s in ("(", "[", "{", ";"):
            break
        if s in ("else", "case", "default", "public", "private", "protected"):
            return None
        j -= 1
    start = j + 1
    for n in range(start, semi):
        if t[n].text == "=":
            if not (is_id(t[n - 1]) and n - 1 > start):
                return None
            head = decl_head(f, start, n - 1)
            if head is None:
                return None
            return start, n - 1, n + 1, head
        if t[n].text in ("(", "{", "["):
            return None
    return None


def uses(f, name, a, b):
    """Classifies references to `name` in t[a:b]: list of (index, form) where form is
    deref (unary * before), arrow (-> after), value_call (.value() after), bare, bad."""
    t = f.t
    out = []
    for j in range(a, b):
        if not is_id(t[j], name):
            continue
        prev = t[j - 1].text
        nxt = t[j + 1].text if j + 1 < len(t) else ""
        if prev in (".", "->", "::") or nxt == "::":
            continue
        # redeclared (an inner variable, a parameter, a structured binding, init-capture)
        if prev == "auto" or (t[j - 1].kind == "id" and prev not in KEYWORDS) or (
                prev in ("&", "&&", "*") and (t[j - 2].text in ("auto", ">") or
                                              (t[j - 2].kind == "id" and
                                               t[j - 2].text not in KEYWORDS))):
            out.append((j, "bad"))
            continue
        if prev in ("[", ",") and nxt in ("=",):
            out.append((j, "bad"))
            continue
        # `*x->m`, `*x.m`, `*x[i]`, `*x(a)`: the star takes the postfix expression, not x
        if prev == "*" and nxt not in ("->", ".", "[", "(", "++", "--"):
            pp = t[j - 2]
            unary = not ((pp.kind in ("id", "num", "str", "chr", "raw") and pp.text not in KEYWORDS)
                         or pp.text in VALUE_END)
            if unary:
                out.append((j, "deref"))
                continue
        if nxt in ("=", "+=", "-="):  # the Expected itself reassigned
            out.append((j, "bad"))
            continue
        if nxt == "->":
            out.append((j, "arrow"))
            continue
        if nxt == ".":
            member = t[j + 2].text
            if member == "value" and t[j + 3].text == "(" and t[j + 4].text == ")":
                out.append((j, "value_call"))
            elif member in ("has_value", "error", "take_error", "value"):
                out.append((j, "bad"))
            else:
                out.append((j, "bad"))  # a member of Expected we do not know
            continue
        if prev == "return" and nxt == ";":
            out.append((j, "bare"))
            continue
        if prev == "(" and nxt == ")" and t[j - 2].text == "move" and t[j - 3].text == "::":
            out.append((j, "bare"))
            continue
        if prev in ("[", "&", ",", "=") and nxt in ("]", ","):  # a lambda capture?
            k = j - 1
            while t[k].text in (",", "&", "=", "this") or is_id(t[k]):
                k -= 1
            if t[k].text == "[" and not ((is_id(t[k - 1]) and t[k - 1].text not in KEYWORDS)
                                         or t[k - 1].text in (")", "]")):
                out.append((j, "capture"))
                continue
        out.append((j, "bad"))
    return out


def rewrite_uses(f, found):
    t = f.t
    for j, form in found:
        if form == "deref":
            star = j - 1
            # (*x) followed by . -> [ ) , ;  with a non-call paren: drop the parens too
            op, cl = star - 1, j + 1
            if (t[op].text == "(" and cl < len(t) and t[cl].text == ")" and
                    not (t[op - 1].kind == "id" and t[op - 1].text not in KEYWORDS) and
                    t[op - 1].text not in (")", "]", ">") and
                    t[cl + 1].text in (".", "->", "[", ")", ",", ";")):
                f.edits.append((t[op].start, t[star].end, ""))
                f.edits.append((t[cl].start, t[cl].end, ""))
            else:
                f.edits.append((t[star].start, t[star].end, ""))
        elif form == "arrow":
            f.edits.append((t[j + 1].start, t[j + 1].end, "."))
        elif form == "value_call":
            f.edits.append((t[j + 1].start, t[j + 4].end, ""))


def with_comments(new, comments):
    """`new` with the comments of the text it replaces: one trails it, several go before it."""
    if not comments:
        return new
    if len(comments) == 1:
        return new + " " + comments[0]
    return "\n".join(comments) + "\n" + new


def decl_site(f, i, report):
    """`DECL x = init;` directly followed by a guard of x at t[i]."""
    t = f.t
    if not (i > 0 and t[i - 1].text == ";"):
        return
    if t[i].text == "PTXBENCH_TRY":
        if not (is_id(t[i + 2]) and t[i + 3].text == ")"):
            return
        name = t[i + 2].text
    elif t[i + 1].text == "(" and t[i + 2].text == "!" and is_id(t[i + 3]):
        name = t[i + 3].text
    else:
        return
    after = guard_at(f, i, name)
    if after is None:
        return
    semi = i - 1
    decl = find_decl(f, semi)
    if decl is None or t[decl[1]].text != name:
        if t[i].text == "PTXBENCH_TRY":
            report.append(f"{f.path}:{f.line(i)}: PTXBENCH_TRY({name}) kept: no declaration of it "
                          "directly before")
        return
    start, _, init_start, head = decl
    found = uses(f, name, after, f.block_end(after))
    init = f.text(init_start, semi)
    comments = f.comments_between(t[start].start, t[after - 1].end,
                                  exclude=(t[init_start].start, t[semi - 1].end))
    if not found:
        new = f"PTXBENCH_TRY({init});"
    elif head == "util::Ok" or any(form == "bad" for _, form in found):
        bad = sorted({f.line(j) for j, form in found if form == "bad"})
        report.append(f"{f.path}:{f.line(i)}: {name} kept: used as an Expected at line(s) {bad}")
        return
    else:
        new = f"PTXBENCH_TRY_ASSIGN({head} {name}, {init});"
        rewrite_uses(f, found)
    f.edits.append((t[start].start, t[after - 1].end, with_comments(new, comments)))


def if_init_site(f, i, report):
    """if (DECL name = init; !name) return name.take_error();  (or `return name;`)"""
    t = f.t
    if not (t[i].text == "if" and t[i + 1].text == "("):
        return
    close = f.match_close(i + 1)
    if close is None:
        return
    if not (t[close - 3].text == ";" and t[close - 2].text == "!" and is_id(t[close - 1])):
        return
    name = t[close - 1].text
    semi = close - 3
    if f.statement_end(i + 2) != semi:
        return
    eq = next((n for n in range(i + 2, semi) if t[n].text == "="), None)
    if eq is None or t[eq - 1].text != name or eq - 1 == i + 2:
        return
    if decl_head(f, i + 2, eq - 1) is None:
        return
    after = return_error_at(f, close + 1, name)
    if after is None:
        return
    init = f.text(eq + 1, semi)
    comments = f.comments_between(t[i].start, t[after - 1].end,
                                  exclude=(t[eq + 1].start, t[semi - 1].end))
    f.edits.append((t[i].start, t[after - 1].end,
                    with_comments(f"PTXBENCH_TRY({init});", comments)))


def apply(f):
    edits = sorted(set(f.edits), key=lambda e: (e[0], e[1]))
    out = []
    pos = 0
    for a, b, text in edits:
        if a < pos:
            raise ValueError(f"{f.path}: overlapping edits at {a}")
        out.append(f.src[pos:a])
        out.append(text)
        pos = b
    out.append(f.src[pos:])
    return "".join(out)


def migrate(path, src, report):
    """The file's text with every site converted, last site first: a site's edits lie at or
    after its own start, so the sites before it keep their positions."""
    f = File(path, src)
    sites = [x.start for x in f.t if x.text in ("PTXBENCH_TRY", "if")]
    for pos in reversed(sites):
        i = next((k for k, x in enumerate(f.t) if x.start == pos), None)
        if i is None:  # inside text a later site replaced: the next pass sees it
            continue
        f.edits = []
        if_init_site(f, i, report)
        if not f.edits:
            decl_site(f, i, report)
        if f.edits:
            f = File(path, apply(f))
    return f.src


def main(argv):
    dry = "--dry-run" in argv or "--report" in argv
    paths = [a for a in argv if not a.startswith("--")]
    report = []
    changed = 0
    for path in paths:
        src = open(path, encoding="utf-8").read()
        new = src
        for _ in range(5):  # to a fixed point: a site inside a replaced statement
            lines = []
            again = migrate(path, new, lines)
            if again == new:
                report += lines
                break
            new = again
        if new != src:
            changed += 1
            if not dry:
                open(path, "w", encoding="utf-8").write(new)
    if "--report" in argv:
        print("\n".join(sorted(report)))
    print(f"{changed} file(s) {'would change' if dry else 'changed'}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
