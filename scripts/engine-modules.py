#!/usr/bin/env python3
"""Checks that the engine's parts depend on each other one way only.

Module graph of src/engine: one node per top-level module of the engine
(engine::X, with X's submodules folded into X; `engine` itself is the root
mod.rs). An edge A -> B when a file of A names B through `super::B`,
`super::super::B` (from a submodule) or `crate::engine::B`. Test modules
(tests.rs, tests/, fake_store) are left out. Prints edges and cycles.

Methods hide ties that paths do not show (the chat operations all extend
`Chats`), so the commit path is also checked by method: a `self.name(`
call in a file of `commit` naming a method defined in `jobs`, `job_queue`,
`debounce` or `recall`, or reaching the job queue's handle (`inner.jobs`,
`.jobs()`), fails the check (a commit says what follows; its caller does
it). Between the parts that are types (`Lorebooks`, `Jobs`, `Chats`,
`JobDriver`, `WorldInfo`) the compiler keeps the arrows: a part holds only
the handles of the parts below it."""
import os, re, sys, itertools
root = sys.argv[1] if len(sys.argv) > 1 else 'src/engine'
mods = set()
for f in os.listdir(root):
    if f.endswith('.rs') and f != 'mod.rs': mods.add(f[:-3])
    elif os.path.isdir(os.path.join(root, f)) and os.path.exists(os.path.join(root, f, 'mod.rs')): mods.add(f)
edges = {}
def owner(path):
    rel = os.path.relpath(path, root)
    parts = rel.split(os.sep)
    if parts == ['mod.rs']: return 'engine', 0
    top = parts[0][:-3] if parts[0].endswith('.rs') else parts[0]
    depth = len(parts) - 1  # files inside a module's directory
    if parts[-1] == 'mod.rs': depth -= 1
    return top, depth
def strip_tests(text):
    # drop `#[cfg(test)] mod x;` lines and cfg(test) use lines
    return re.sub(r'#\[cfg\(test\)\]\s*(pub(\([^)]*\))?\s*)?(mod|use)[^;]*;', '', text)
for dirpath, _, files in os.walk(root):
    for f in files:
        if not f.endswith('.rs'): continue
        path = os.path.join(dirpath, f)
        rel = os.path.relpath(path, root)
        if f == 'tests.rs' or '/tests/' in '/' + rel or f == 'fake_store.rs': continue
        a, depth = owner(path)
        text = strip_tests(open(path).read())
        text = re.sub(r'//[^\n]*', '', text)  # comments and docs
        if a == 'engine':
            pat = r'(?:\bsuper::|crate::engine::)'  # root: self-children via plain paths
            names = set(re.findall(r'(?<![:\w])(' + '|'.join(mods) + r')::', text))
        else:
            sup = r'super::' * (depth + 1)
            names = set(re.findall(r'(?:(?<![:\w])' + sup + r'|crate::engine::)(\w+)', text))
            # `super::{a, b}` groups
            for grp in re.findall(r'(?:(?<![:\w])' + sup + r'|crate::engine::)\{([^}]*)\}', text):
                names |= set(re.findall(r'(?:^|,)\s*(\w+)', grp))
            names = {n if n in mods else 'engine' for n in names}
        for b in names:
            if b != a: edges.setdefault(a, set()).add(b)
for a in sorted(edges):
    print(f'{a} -> {", ".join(sorted(edges[a]))}')
# cycles among the non-root modules (the root declares every module)
nodes = sorted(mods)
g = {a: {b for b in edges.get(a, ()) if b != 'engine'} for a in nodes}
index = {}; low = {}; stack = []; on = set(); sccs = []; counter = [0]
def strong(v):
    index[v] = low[v] = counter[0]; counter[0] += 1; stack.append(v); on.add(v)
    for w in g[v]:
        if w not in index: strong(w); low[v] = min(low[v], low[w])
        elif w in on: low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop(); on.discard(w); comp.append(w)
            if w == v: break
        if len(comp) > 1: sccs.append(sorted(comp))
for v in nodes:
    if v not in index: strong(v)
print('cycles among engine modules:', sccs if sccs else 'none')

# Method-level ties of the commit path.
def sources(module):
    for dirpath, _, files in os.walk(root):
        for f in files:
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, root)
            if not f.endswith('.rs') or f == 'tests.rs' or '/tests/' in '/' + rel or f == 'fake_store.rs':
                continue
            if owner(path)[0] == module:
                yield path
defined = {}
for m in mods:
    for path in sources(m):
        for name in re.findall(r'\bfn\s+(\w+)', strip_tests(open(path).read())):
            defined.setdefault(name, set()).add(m)
FORBIDDEN = {'jobs', 'job_queue', 'debounce', 'recall'}
ties = set()
for path in sources('commit'):
    text = re.sub(r'//[^\n]*', '', strip_tests(open(path).read()))
    for name in set(re.findall(r'\bself\.(\w+)\(', text)):
        owners = defined.get(name, set())
        if 'commit' not in owners:
            ties |= {(name, m) for m in owners & FORBIDDEN}
    # The parts' handles: reaching the job machinery through its handle
    # (`inner.jobs`, `.jobs()`) is a tie too.
    for handle in set(re.findall(r'(?:\binner\.jobs\b|\.jobs\(\))', text)):
        ties.add((handle, 'jobs'))
print('commit path calls into jobs/job_queue/debounce/recall:',
      ', '.join(f'{n} ({m})' for n, m in sorted(ties)) if ties else 'none')
sys.exit(1 if sccs or ties else 0)
