#!/usr/bin/env python3
"""Mechanical mutation testing of sim/model and sim/policy.

tests/mutants/*.mut hold the bugs we imagined; this script makes the ones
we did not: every relational operator flipped at its boundary (< <=, > >=,
and back), every == and != swapped, and every binary `+ 1` / `- 1` turned
into the other, one at a time, in sim/model/*.c and sim/policy/*.c.

Rebuilding once per mutant (some 850) would take hours, so the mutants are
compiled into one build as a schema (Untch et al., ISSTA 1993): each site
becomes

    ({ __auto_type l = (L); __auto_type r = (R); RS_MH(17);
       rs_mutant_id == 17 ? l <= r : l < r; })

which evaluates its operands once, as the original does, and takes the
mutant's branch only when the environment variable RS_MUTANT is 17. The
operands are found by scanning the tokens either side of the operator by C's
precedence. RS_MH records that the site ran: one run of the suite with
RS_MUT_HITS set tells which tests reach which sites, so each mutant runs
only the tests that reach it, the fastest first, and stops at the first
that fails (killed). A mutant that no test reaches survives unrun.

Sites are left out, with the reason printed, where a run-time choice cannot
stand: outside function bodies, in preprocessor lines, `case` labels,
`static` initialisers, assert() (compiled out with NDEBUG), and any line the
compiler refuses in the schema (a constant expression).

A survivor is either killed by a new test or explained in
tests/mutants/mechanical*.txt as equivalent (no output can change): one line
per mutant, `FILE | TEXT OF THE LINE | N | FROM>TO | reason`, where N counts
the operator's occurrences on that line (1 = the first). The key survives
edits elsewhere in the file. An entry that matches no site is stale and
fails the run.

Usage:
  scripts/mutagen.py sites                  list the sites and the left-out
  scripts/mutagen.py check                  every explanation names a live site (no build)
  scripts/mutagen.py run [--jobs N] [--only ID,ID-ID] [--keep DIR] [--report FILE]
                         [--max-test-seconds S] [--sanitize]
Exits 0 when every mutant run is killed or explained, 1 otherwise, 2 on
bad usage or a build that fails.
"""
import argparse
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIRS = ("sim/model", "sim/policy")
EXPLAINED = "tests/mutants/mechanical*.txt"
SKIP_TESTS = re.compile(r"^(browser|install|deps|serve|serve_api|rules|docs|mechanical)$")

TOKEN = re.compile(r"""
  (?P<ws>(?:\s|\\\n)+)
| (?P<comment>/\*.*?\*/|//[^\n]*)
| (?P<str>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
| (?P<num>\.?[0-9](?:[eEpP][+-]|[0-9a-zA-Z_.])*)
| (?P<id>[A-Za-z_][A-Za-z0-9_]*)
| (?P<op>\#\#|\#|\.\.\.|<<=|>>=|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||[*/%+\-&^|]=|[-+*/%<>=!~&|^?:;,.()\[\]{}])
""", re.S | re.X)

# binary precedence (higher binds tighter)
PREC = {"*": 13, "/": 13, "%": 13, "+": 12, "-": 12, "<<": 11, ">>": 11,
        "<": 10, ">": 10, "<=": 10, ">=": 10, "==": 9, "!=": 9, "&": 8, "^": 7,
        "|": 6, "&&": 5, "||": 4, "?": 3, ":": 3}
FLIP = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}
UNARY = {"-", "+", "!", "~", "*", "&", "++", "--", "sizeof"}
STOP_WORDS = {"return", "case", "else", "do", "if", "while", "for", "switch", "goto"}


class Tok:
    __slots__ = ("kind", "text", "start", "end", "line", "pp")

    def __init__(self, kind, text, start, end, line, pp):
        self.kind, self.text, self.start, self.end, self.line, self.pp = kind, text, start, end, line, pp


def tokenize(src):
    toks, pos, line = [], 0, 1
    pp_lines = set()
    for i, l in enumerate(src.split("\n"), 1):  # preprocessor lines and their continuations
        if l.lstrip().startswith("#") or (i - 1 in pp_lines and prev.endswith("\\")):
            pp_lines.add(i)
        prev = l
    while pos < len(src):
        m = TOKEN.match(src, pos)
        if not m:
            raise SystemExit(f"mutagen: cannot tokenize at offset {pos}: {src[pos:pos + 20]!r}")
        kind = m.lastgroup
        text = m.group()
        if kind not in ("ws", "comment"):
            toks.append(Tok(kind, text, pos, m.end(), line, line in pp_lines))
        line += text.count("\n")
        pos = m.end()
    return toks


def operand_end(t):
    return t.kind in ("id", "num", "str") and t.text not in STOP_WORDS and t.text != "sizeof" or t.text in (")", "]")


def matching(toks, i, step):
    """Index of the bracket matching toks[i], scanning by step (+1 or -1)."""
    opens, closes = ("(", "["), (")", "]")
    depth = 0
    while 0 <= i < len(toks):
        t = toks[i].text
        if t in (opens if step > 0 else closes):
            depth += 1
        elif t in (closes if step > 0 else opens):
            depth -= 1
            if depth == 0:
                return i
        i += step
    return None


def left_operand(toks, i, p):
    """First token index of the left operand of the binary operator at i."""
    j = i - 1
    while j >= 0:
        t = toks[j]
        if t.text in (")", "]"):
            m = matching(toks, j, -1)
            if m is None:
                return None
            j = m - 1
            continue
        if t.kind in ("id", "num", "str") and t.text not in STOP_WORDS:
            j -= 1
            continue
        if t.text in (".", "->", "!", "~", "++", "--"):
            j -= 1
            continue
        if t.text in PREC:
            binary = j > 0 and operand_end(toks[j - 1])
            if not binary or PREC[t.text] >= p:
                j -= 1
                continue
        return j + 1
    return 0


def right_operand(toks, i, p):
    """Last token index of the right operand of the binary operator at i."""
    j, n = i + 1, len(toks)
    while True:  # an operand: prefixes, a primary, postfixes
        while j < n and (toks[j].text in UNARY):
            j += 1
        if j >= n:
            return None
        t = toks[j]
        if t.text == "(":
            m = matching(toks, j, +1)
            if m is None:
                return None
            j = m + 1
            if j < n and (toks[j].kind in ("id", "num") or toks[j].text in UNARY | {"("}) and \
                    toks[j].text not in STOP_WORDS:
                continue  # it was a cast
        elif t.kind in ("id", "num", "str") and t.text not in STOP_WORDS:
            j += 1
        else:
            return None
        while j < n:  # postfixes
            if toks[j].text in ("(", "["):
                m = matching(toks, j, +1)
                if m is None:
                    return None
                j = m + 1
            elif toks[j].text in (".", "->"):
                j += 2
            elif toks[j].text in ("++", "--"):
                j += 1
            else:
                break
        if j < n and toks[j].text in PREC and toks[j].text not in ("?", ":") and PREC[toks[j].text] > p:
            j += 1
            continue
        return j - 1


def function_bodies(toks):
    """Token index ranges [open, close] of function bodies."""
    out, depth, i = [], 0, 0
    while i < len(toks):
        t = toks[i]
        if t.pp:
            i += 1
            continue
        if t.text == "{" and depth == 0 and i > 0 and toks[i - 1].text == ")":
            d, j = 0, i
            while j < len(toks):
                if not toks[j].pp and toks[j].text == "{":
                    d += 1
                elif not toks[j].pp and toks[j].text == "}":
                    d -= 1
                    if d == 0:
                        break
                j += 1
            out.append((i, j))
            i = j + 1
            continue
        if t.text == "{":
            depth += 1
        elif t.text == "}":
            depth -= 1
        i += 1
    return out


def code_of(line):
    """A line's code: without its comments and outer spaces (the key of an
    explanation survives an edited comment)."""
    return re.sub(r"/\*.*?(\*/|$)|//.*$", "", line).strip()


class Site:
    def __init__(self, **kw):
        self.__dict__.update(kw)

    def key(self):
        return (self.file, code_of(self.linetext), self.nth, f"{self.frm}>{self.to}")


def find_sites(path, rel):
    src = open(path, encoding="utf-8").read()
    lines = src.split("\n")
    toks = tokenize(src)
    bodies = function_bodies(toks)
    inbody = [False] * len(toks)
    for a, b in bodies:
        for k in range(a + 1, b):
            inbody[k] = True
    sites, left_out = [], []
    nth_on_line = {}
    # statement contexts where a run-time value is not allowed
    banned = [False] * len(toks)
    k = 0
    while k < len(toks):
        if toks[k].text in ("case", "static", "_Static_assert", "assert", "sizeof") and not toks[k].pp \
                and (inbody[k] or toks[k].text != "static"):
            why = toks[k].text
            end = k + 1
            if why in ("assert", "sizeof", "_Static_assert") and end < len(toks) and toks[end].text == "(":
                end = matching(toks, end, +1) or end
            else:
                while end < len(toks) and toks[end].text not in ((":",) if why == "case" else (";",)):
                    end += 1
            for q in range(k, min(end + 1, len(toks))):
                banned[q] = why
            k = end
        k += 1
    for i, t in enumerate(toks):
        kind = None
        if t.kind == "op" and t.text in FLIP:
            kind = "rel"
        elif t.kind == "num" and t.text == "1" and i >= 2 and toks[i - 1].text in ("+", "-") \
                and operand_end(toks[i - 2]):
            kind = "one"
        if kind is None or lines[t.line - 1].lstrip().startswith("#include"):
            continue
        opname = t.text if kind == "rel" else toks[i - 1].text + " 1"
        nk = (t.line, opname)
        nth_on_line[nk] = nth_on_line.get(nk, 0) + 1
        base = dict(file=rel, line=t.line, col=t.start - src.rfind("\n", 0, t.start),
                    linetext=lines[t.line - 1].strip(), nth=nth_on_line[nk])
        if kind == "rel":
            base.update(frm=t.text, to=FLIP[t.text])
        else:
            base.update(frm=opname, to=("-" if toks[i - 1].text == "+" else "+") + " 1")
        why = None
        if t.pp:
            why = "preprocessor line"
        elif not inbody[i]:
            why = "outside a function body (a constant expression)"
        elif banned[i]:
            why = f"inside {banned[i]} (a constant expression, or compiled out)"
        lo = hi = None
        if why is None and kind == "rel":
            p = PREC[t.text]
            lo, hi = left_operand(toks, i, p), right_operand(toks, i, p)
            if lo is None or hi is None or lo >= i or hi <= i:
                why = "operands not found by the scanner"
        s = Site(**base)
        if why:
            s.why = why
            left_out.append(s)
            continue
        if kind == "rel":
            s.kind, s.lo, s.hi, s.opstart, s.opend = "rel", toks[lo].start, toks[hi].end, t.start, t.end
        else:
            s.kind, s.lo, s.hi = "one", t.start, t.end
        sites.append(s)
    return src, sites, left_out


def all_sites(root):
    files = []
    for d in DIRS:
        for f in sorted(os.listdir(os.path.join(root, d))):
            if f.endswith(".c"):
                files.append(f"{d}/{f}")
    srcs, sites, left = {}, [], []
    for rel in files:
        src, s, lo = find_sites(os.path.join(root, rel), rel)
        srcs[rel] = src
        sites += s
        left += lo
    for n, s in enumerate(sites, 1):
        s.id = n
    return srcs, sites, left


def emit(src, sites, lo, hi):
    """The text of src[lo:hi] with every site inside it rewritten."""
    out, pos = [], lo
    inner = [s for s in sites if s.lo >= lo and s.hi <= hi]
    # outermost first: a site not inside another in this range
    inner.sort(key=lambda s: (s.lo, -s.hi))
    top, reach = [], -1
    for s in inner:
        if s.lo >= reach:
            top.append(s)
            reach = s.hi
    for s in top:
        out.append(src[pos:s.lo])
        rest = [x for x in inner if x is not s]
        if s.kind == "one":
            out.append(f"RS_MONE({s.id}, -1, 1)")
            # `x + 1` -> `x + RS_MONE` with -1: the mutant reads x - 1 (and back)
        else:
            L = emit(src, rest, s.lo, s.opstart)
            R = emit(src, rest, s.opend, s.hi)
            out.append(f"({{ __auto_type rs_l{s.id} = ({L}); __auto_type rs_r{s.id} = ({R}); RS_MH({s.id}); RS_ME({s.id}, rs_l{s.id} == rs_r{s.id}); "
                       f"rs_mutant_id == {s.id} ? rs_l{s.id} {s.to} rs_r{s.id} : rs_l{s.id} {s.frm} rs_r{s.id}; }})")
        pos = s.hi
    out.append(src[pos:hi])
    return "".join(out)


PRELUDE = """/* mutagen schema: see scripts/mutagen.py */
extern unsigned rs_mutant_id;
extern unsigned char rs_mutant_seen[];
void rs_mutant_hit(unsigned id);
#define RS_MH(id) (rs_mutant_seen[id] ? (void)0 : rs_mutant_hit(id))
extern unsigned char rs_mutant_edge_seen[];
void rs_mutant_edge(unsigned id);
#define RS_ME(id, eq) ((eq) && !rs_mutant_edge_seen[id] ? rs_mutant_edge(id) : (void)0)
#define RS_MONE(id, mut, orig) (RS_MH(id), rs_mutant_id == (id) ? (mut) : (orig))
#line 1
"""

RUNTIME = """#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
unsigned rs_mutant_id;
unsigned char rs_mutant_seen[%d];
unsigned char rs_mutant_edge_seen[%d];
static int rs_mutant_fd = -1;
static void rs_mutant_note(const char *tag, unsigned id)
{
    if (rs_mutant_fd >= 0) {
        char b[24];
        int n = snprintf(b, sizeof b, "%%s%%u\\n", tag, id);
        if (write(rs_mutant_fd, b, (size_t)n) != n)
            abort();
    }
}
void rs_mutant_edge(unsigned id)
{
    rs_mutant_edge_seen[id] = 1;
    rs_mutant_note("e", id);
}
void rs_mutant_hit(unsigned id)
{
    rs_mutant_seen[id] = 1;
    rs_mutant_note("", id);
}
__attribute__((constructor)) static void rs_mutant_init(void)
{
    const char *m = getenv("RS_MUTANT"), *h = getenv("RS_MUT_HITS");
    if (m)
        rs_mutant_id = (unsigned)strtoul(m, NULL, 10);
    if (h)
        rs_mutant_fd = open(h, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    else
        memset(rs_mutant_seen, 1, sizeof rs_mutant_seen), memset(rs_mutant_edge_seen, 1, sizeof rs_mutant_edge_seen);
}
"""


def write_schema(root, srcs, sites):
    for rel, src in srcs.items():
        mine = [s for s in sites if s.file == rel]
        with open(os.path.join(root, rel), "w", encoding="utf-8") as f:
            f.write(PRELUDE.replace("#line 1", f'#line 1 "{rel}"') + emit(src, mine, 0, len(src)))
    with open(os.path.join(root, "sim/engine/mutant_rt.c"), "w") as f:
        n = max(s.id for s in sites) + 2 if sites else 2
        f.write(RUNTIME % (n, n))
    cm = os.path.join(root, "CMakeLists.txt")
    text = open(cm).read()
    if "mutant_rt.c" not in text:
        text = text.replace("sim/engine/mem.c ", "sim/engine/mem.c sim/engine/mutant_rt.c ", 1)
        open(cm, "w").write(text)


def copy_tree(dst):
    files = subprocess.run(["git", "-C", ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           check=True, capture_output=True).stdout.decode().split("\0")
    for f in files:
        if f and os.path.exists(os.path.join(ROOT, f)):
            os.makedirs(os.path.join(dst, os.path.dirname(f)), exist_ok=True)
            shutil.copy2(os.path.join(ROOT, f), os.path.join(dst, f))


def explained():
    out = {}
    for path in sorted(glob.glob(os.path.join(ROOT, EXPLAINED))):
        rel = os.path.relpath(path, ROOT)
        for no, line in enumerate(open(path, encoding="utf-8"), 1):
            if not line.strip() or line.startswith("#"):
                continue
            parts = [p.strip() for p in line.rstrip("\n").split(" | ")]
            if len(parts) != 5 or not parts[2].isdigit() or len(parts[4]) < 20:
                raise SystemExit(f"mutagen: {rel}:{no}: expected FILE | LINE TEXT | N | FROM>TO | reason")
            key = (parts[0], code_of(parts[1]), int(parts[2]), parts[3])
            if key in out:
                raise SystemExit(f"mutagen: {rel}:{no}: explained twice (also {out[key][1]})")
            out[key] = (parts[4], f"{rel}:{no}")
    return out


def parse_only(spec, n):
    ids = set()
    for part in spec.split(","):
        a, _, b = part.partition("-")
        if not a.isdigit() or (b and not b.isdigit()):
            raise SystemExit(f"mutagen: --only {spec}: ids and ranges such as 1,5-9")
        ids.update(range(int(a), int(b or a) + 1))
    return {i for i in ids if 1 <= i <= n}


def build(b, log):
    r = subprocess.run(["cmake", "--build", b, "-j", str(os.cpu_count() or 2)], capture_output=True, text=True)
    open(log, "w").write(r.stdout + r.stderr)
    return r


KEEP_MARK = ".retrystorm-mutagen"


def keep_dir(d):
    """--keep DIR: created and marked here, or one this script marked before.
    Its src/ is replaced on every run, so a directory without the mark (a
    checkout, someone's files) is refused rather than emptied."""
    if os.path.lexists(d) and not os.path.isdir(d):
        raise SystemExit(f"mutagen: --keep {d}: not a directory")
    if os.path.isdir(d) and os.listdir(d) and not os.path.isfile(os.path.join(d, KEEP_MARK)):
        raise SystemExit(f"mutagen: --keep {d}: holds files this script did not make (no {KEEP_MARK}): "
                         "give a new or empty directory")
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, KEEP_MARK), "a").close()
    return d


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cmd", choices=["sites", "check", "run"])
    ap.add_argument("--jobs", type=int, default=2, help="mutants run at once (default 2)")
    ap.add_argument("--only", help="run these site ids only (1,5-9)")
    ap.add_argument("--keep", help="build in DIR and keep it (reused when it holds a schema build; a new or empty "
                    "directory, or one this script marked with .retrystorm-mutagen)")
    ap.add_argument("--report", help="write the per-mutant results to FILE (JSON lines)")
    ap.add_argument("--rerun-explained", action="store_true",
                    help="run the mutants explained as equivalent too (they are counted, not run, by default)")
    ap.add_argument("--previous", help="the --report of an earlier run on the same sim/: its kills stand, "
                    "and its other mutants run only the tests it did not run (new tests, slow ones it left out)")
    ap.add_argument("--probe", help="use this probe.json of another build of the same sim/ "
                    "(for --sanitize: the sanitizer build runs the suite three times slower)")
    ap.add_argument("--changed-since", metavar="REV", help="with --previous: the commit it ran at; "
                    "tests whose files changed since then run again")
    ap.add_argument("--sanitize", action="store_true",
                    help="run in the ASan + UBSan build, as CI's second build (reuses the probe of --keep DIR)")
    ap.add_argument("--max-test-seconds", type=float, default=0,
                    help="a first pass: leave out the tests slower than this without mutants")
    a = ap.parse_args()

    if a.sanitize and a.previous:
        ap.error("--previous with --sanitize: a test that passed in the Release build may fail in the sanitizer's")
    srcs, sites, left = all_sites(ROOT)
    if a.cmd == "sites":
        for s in sites:
            print(f"{s.id:4d} {s.file}:{s.line}:{s.col} {s.frm} -> {s.to}   {s.linetext}")
        for s in left:
            print(f"   - {s.file}:{s.line}:{s.col} {s.frm} -> {s.to}   left out: {s.why}")
        print(f"{len(sites)} sites, {len(left)} left out")
        return 0

    if a.cmd == "check":  # every explanation names a site that exists (no build: for CI)
        known, keys = explained(), {s.key() for s in sites}
        stale = [k for k in known if k not in keys]
        for k in stale:
            print(f"stale: {known[k][1]}: no site {k[0]} | {k[1]} | {k[2]} | {k[3]}")
        print(f"{len(sites)} sites ({len(left)} left out); {len(known)} explained as equivalent, {len(stale)} stale")
        return 1 if stale else 0

    work = keep_dir(a.keep) if a.keep else tempfile.mkdtemp(prefix="retrystorm-mutagen.")
    src, b = os.path.join(work, "src"), os.path.join(work, "build-asan" if a.sanitize else "build")
    kind = ["-DCMAKE_BUILD_TYPE=RelWithDebInfo", "-DRS_SANITIZE=ON"] if a.sanitize else ["-DCMAKE_BUILD_TYPE=Release"]
    slow = 3 if a.sanitize else 1
    if a.sanitize:  # as scripts/test.sh runs the sanitizer build
        os.environ.update(ASAN_OPTIONS="detect_leaks=1:abort_on_error=1",
                          UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    t0 = time.time()
    if os.path.exists(src):
        shutil.rmtree(src)
    copy_tree(src)
    # the schema; lines the compiler refuses are left out and it is retried
    refused = set()
    for attempt in range(6):
        live = [s for s in sites if (s.file, s.line) not in refused]
        write_schema(src, srcs, live)
        if not os.path.exists(os.path.join(b, "CMakeCache.txt")):
            subprocess.run(["cmake", "-S", src, "-B", b, *kind, "-DRS_LTO=OFF",
                            "-DRS_SERVE=OFF", "-DRS_WERROR=OFF", "-DBUILD_TESTING=ON"],
                           check=True, capture_output=True)
        r = build(b, os.path.join(work, "build.log"))
        if r.returncode == 0:
            break
        bad = set()
        for m in re.finditer(r"(sim/(?:model|policy)/[a-z_]+\.c):(\d+):\d+: error", r.stdout + r.stderr):
            bad.add((m.group(1), int(m.group(2))))
        if not bad - refused:
            sys.stderr.write((r.stdout + r.stderr)[-4000:])
            raise SystemExit(2)
        refused |= bad
    else:
        raise SystemExit("mutagen: the schema does not build")
    for s in sites:
        if (s.file, s.line) in refused:
            s.why = "the compiler refuses a run-time choice there (a constant expression)"
            left.append(s)
            print(f"left out: {s.file}:{s.line}:{s.col} {s.frm} -> {s.to}  {s.linetext}  ({s.why})")
    sites = [s for s in sites if (s.file, s.line) not in refused]
    # ids stay those of the schema that built (live), which equal s.id
    print(f"== schema of {len(sites)} sites built in {time.time() - t0:.0f} s ({len(left)} left out)", flush=True)

    tests = subprocess.run(["ctest", "--test-dir", b, "-N"], capture_output=True, text=True).stdout
    tests = [t for t in re.findall(r"Test +#\d+: (\S+)", tests) if not SKIP_TESTS.match(t)]
    env0 = dict(os.environ, RS_MUTANT="0")
    hits, edges, cost = {}, {}, {}

    def probe(t):
        h = os.path.join(work, f"hits-{t}")
        if os.path.exists(h):
            os.remove(h)
        t1 = time.time()
        r = subprocess.run(["ctest", "--test-dir", b, "-R", f"^{t}$", "--timeout", "900"],
                           env=dict(env0, RS_MUT_HITS=h), capture_output=True, text=True)
        return t, r.returncode, time.time() - t1, h, r.stdout

    # the probe is kept in --keep DIR for the same schema and tests
    digest = hashlib.sha256(json.dumps([tests, sorted(srcs.items()), [s.id for s in sites]]).encode()).hexdigest()
    saved = os.path.join(work, "probe.json")
    if a.probe:  # another build's probe: the same sites, perhaps fewer tests
        p = json.load(open(a.probe))
        cost, hits, edges = p["cost"], {t: set(v) for t, v in p["hits"].items()}, \
            {t: set(v) for t, v in p["edges"].items()}
        new = [t for t in tests if t not in cost]  # tests added since: run for every mutant
        for t in new:
            cost[t], hits[t], edges[t] = 0.0, {s.id for s in sites}, {s.id for s in sites}
        print(f"== the probe of {len(tests) - len(new)} tests read from {a.probe}; "
              f"{len(new)} tests not in it run for every mutant: {' '.join(new)}", flush=True)
    elif os.path.exists(saved) and json.load(open(saved)).get("digest") == digest:
        p = json.load(open(saved))
        cost, hits, edges = p["cost"], {t: set(v) for t, v in p["hits"].items()}, \
            {t: set(v) for t, v in p["edges"].items()}
        print(f"== the probe of {len(tests)} tests kept in {saved}", flush=True)
    else:
        with ThreadPoolExecutor(a.jobs) as ex:
            for t, rc, dt, h, out in ex.map(probe, tests):
                if rc != 0:
                    print(out[-3000:])
                    raise SystemExit(f"mutagen: test {t} fails without any mutant")
                cost[t] = dt
                words = open(h).read().split() if os.path.exists(h) else []
                hits[t] = {int(x) for x in words if x.isdigit()}
                edges[t] = {int(x[1:]) for x in words if x.startswith("e")}
        json.dump(dict(digest=digest, cost=cost, hits={t: sorted(v) for t, v in hits.items()},
                       edges={t: sorted(v) for t, v in edges.items()}), open(saved, "w"))
        print(f"== {len(tests)} tests pass without mutants, {sum(cost.values()):.0f} s; hits recorded", flush=True)
    if a.max_test_seconds:
        slowest = [t for t in tests if cost[t] > a.max_test_seconds]
        tests = [t for t in tests if t not in slowest]
        print(f"== a first pass without the {len(slowest)} tests slower than {a.max_test_seconds:g} s: "
              f"{' '.join(sorted(slowest))}", flush=True)

    known = explained()
    pick = sites if not a.only else [s for s in sites if s.id in parse_only(a.only, len(sites))]

    previous, changed = {}, set()
    if a.previous and a.changed_since:  # tests edited since: their passing then says nothing now
        names = subprocess.run(["git", "-C", ROOT, "diff", "--name-only", a.changed_since, "--", "tests/"],
                               check=True, capture_output=True, text=True).stdout.split()
        for f in names:
            m = re.match(r"tests/(?:test_(\w+)\.c|(\w+)_test\.sh)$", f)
            if m:
                changed.add(m.group(1) or m.group(2))
            elif f.endswith(".h"):
                changed.update(tests)
        print(f"== tests changed since {a.changed_since}, run again: {' '.join(sorted(changed)) or 'none'}", flush=True)
        if a.probe:  # the probe may predate their changes: they run for every mutant
            for t in changed & set(tests):
                hits[t], edges[t] = {s.id for s in sites}, {s.id for s in sites}
    if a.previous:
        for line in open(a.previous):
            p = json.loads(line)
            previous[(p["file"], code_of(p["text"]), p["nth"], f"{p['frm']}>{p['to']}")] = p

    def run(s):
        if s.key() in known and not a.rerun_explained:
            return s, "explained", None, 0.0, []
        before = previous.get(s.key())
        if before and before["verdict"] == "killed":
            return s, "killed", before["by"], 0.0, before.get("ran", [])
        covering = sorted((t for t in tests if s.id in hits[t]), key=lambda t: cost[t])
        if not covering:
            return s, "unreached", None, 0.0, []
        if s.kind == "rel" and s.frm not in ("==", "!="):
            # a flipped boundary differs from the original only where its
            # operands are equal: a test that never gets there runs exactly
            # as without the mutant, and cannot kill it
            covering = [t for t in covering if s.id in edges[t]]
            if not covering:
                return s, "no-edge", None, 0.0, []
        ran = [t for t in before.get("ran", []) if t not in changed] if before else []
        covering = [t for t in covering if t not in ran]  # deterministic: a test that passed passes again
        t1 = time.time()
        env = dict(os.environ, RS_MUTANT=str(s.id))
        for t in covering:
            limit = int(max(30, 5 * slow * cost[t] + 10))
            r = subprocess.run(["ctest", "--test-dir", b, "-R", f"^{t}$", "--timeout", str(limit)],
                               env=env, capture_output=True, text=True)
            ran.append(t)
            if r.returncode != 0:
                return s, "killed", t, time.time() - t1, ran
        return s, "survived", None, time.time() - t1, ran

    used, wrong = set(), []
    counts = {"killed": 0, "survived": 0, "unreached": 0, "no-edge": 0, "explained": 0}
    rep = open(a.report, "w") if a.report else None
    with ThreadPoolExecutor(a.jobs) as ex:
        for s, verdict, by, dt, ran in ex.map(run, pick):
            note = ""
            if verdict in ("explained", "survived", "no-edge", "unreached") and s.key() in known:
                used.add(s.key())
                note = known[s.key()][0]
                verdict_shown = "explained"
            else:
                verdict_shown = verdict
            if verdict == "killed" and s.key() in known:  # --rerun-explained: the reason is wrong
                used.add(s.key())
                wrong.append(f"{known[s.key()][1]}: explained as equivalent, but {by} kills it")
            counts[verdict_shown] += 1
            if verdict != "killed" or a.only:
                print(f"{verdict_shown:9} {s.id:4d} {s.file}:{s.line}:{s.col} {s.frm} -> {s.to}  "
                      f"{s.linetext}{'  -- ' + note if note else ''}", flush=True)
            if rep:
                rep.write(json.dumps(dict(id=s.id, file=s.file, line=s.line, col=s.col, frm=s.frm, to=s.to,
                                          text=s.linetext, nth=s.nth, verdict=verdict, by=by,
                                          seconds=round(dt, 2), ran=ran)) + "\n")
                rep.flush()
    stale = [k for k in known if k not in used and k not in {s.key() for s in sites}]
    for k in stale:
        print(f"stale: {known[k][1]}: no site {k[0]} | {k[1]} | {k[2]} | {k[3]}")
    for w in wrong:
        print("wrong:", w)
    n = len(pick)
    live = n - counts["explained"]
    score = 100.0 * counts["killed"] / live if live else 100.0
    print(f"== {counts['killed']} killed of {live} mutants not equivalent ({score:.1f} %; "
          f"{100.0 * counts['killed'] / n if n else 100:.1f} % of all {n}); {counts['explained']} explained as "
          f"equivalent in {EXPLAINED}; unexplained: {counts['survived']} survived the tests that reach them, "
          f"{counts['no-edge']} at boundaries no test reaches (operands never equal), {counts['unreached']} "
          f"reached by no test; {len(left)} sites left out; {time.time() - t0:.0f} s")
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if counts["survived"] + counts["unreached"] + counts["no-edge"] == 0 and not stale and not wrong else 1


if __name__ == "__main__":
    sys.exit(main())
