#!/usr/bin/env python3
"""Checks that the domain crate's top-level modules depend on each other one
way only (issue 42: a layered domain crate).

Module graph of crates/domain/src: one node per top-level module (crate::X,
with X's submodules folded into X; `lib` is the crate root, lib.rs, which
holds `DomainError` and `Limits`). The files are found by following the
`mod` declarations from lib.rs; test modules (`#[cfg(test)] mod x;` files,
inline `#[cfg(test)]` items) are left out. An edge A -> B when a file of A
names B through `crate::B`, `recapd_domain::B`, a `crate::{.., B::..}` group,
or enough `super::`s to climb to the crate root and come down into B.
Prints the edges (with -v, the files behind each), then the cycles; exits
1 on any cycle."""
import os
import re
import sys

args = [a for a in sys.argv[1:] if a != '-v']
verbose = len(args) < len(sys.argv) - 1  # -v: which file names each edge
root = args[0] if args else 'crates/domain/src'
IDENT = r'[A-Za-z_]\w*'


def strip(text):
    """Drops comments, string contents and `#[cfg(test)]` items."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('//', i):
            j = text.find('\n', i)
            i = n if j < 0 else j
        elif text.startswith('/*', i):
            j = text.find('*/', i + 2)
            i = n if j < 0 else j + 2
        elif c == 'r' and re.match(r'r#*"', text[i:i + 10]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == '_')):
            m = re.match(r'r(#*)"', text[i:])
            end = text.find('"' + m.group(1), i + len(m.group(0)))
            out.append('""')
            i = n if end < 0 else end + 1 + len(m.group(1))
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == '\\' else 1
            out.append('""')
            i = j + 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'|'\\u\{[0-9a-fA-F]+\}'|'\\x..'", text[i:i + 12]):
            m = re.match(r"'(\\.|[^\\'])'|'\\u\{[0-9a-fA-F]+\}'|'\\x..'", text[i:i + 12])
            out.append("' '")
            i += len(m.group(0))
        else:
            out.append(c)
            i += 1
    text = ''.join(out)
    # `#[cfg(test)]` items: up to the first `;` or the matching `}`
    while True:
        m = re.search(r'#\[cfg\(test\)\]', text)
        if not m:
            return text
        j = m.end()
        while j < len(text) and text[j] not in ';{':
            j += 1
        if j < len(text) and text[j] == '{':
            depth = 0
            while j < len(text):
                if text[j] == '{':
                    depth += 1
                elif text[j] == '}':
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
        text = text[:m.start()] + text[j + 1:]


def module_files():
    """(file, top-level module, depth) for every non-test file of the crate,
    following `mod x;` declarations from lib.rs."""
    found = []

    def visit(path, top, depth, is_dir_owner):
        text = strip(open(path).read())
        found.append((path, top, depth, text))
        here = os.path.dirname(path) if is_dir_owner else path[:-3]
        for name in re.findall(r'(?<![\w])mod\s+(' + IDENT + r')\s*;', text):
            flat = os.path.join(here, name + '.rs')
            nested = os.path.join(here, name, 'mod.rs')
            child_top = name if top == 'lib' else top
            if os.path.exists(flat):
                visit(flat, child_top, depth + 1, False)
            elif os.path.exists(nested):
                visit(nested, child_top, depth + 1, True)
            else:
                sys.exit(f'{path}: mod {name}; has no file')

    visit(os.path.join(root, 'lib.rs'), 'lib', 0, True)
    return found


def group_heads(text, i):
    """The first segment of each item of the use-tree group opening at
    text[i] == '{'."""
    heads, depth, item = [], 0, ''
    for j in range(i, len(text)):
        c = text[j]
        if c == '{':
            depth += 1
            if depth == 1:
                continue
        elif c == '}':
            depth -= 1
            if depth == 0:
                heads.append(item)
                break
        if depth == 1 and c == ',':
            heads.append(item)
            item = ''
        elif depth >= 1:
            item += c
    names = []
    for h in heads:
        m = re.match(r'\s*(' + IDENT + r')', h)
        if m:
            names.append(m.group(1))
    return names


def inline_depth(text, pos):
    """How many inline `mod x { ... }` blocks enclose text[pos]."""
    d = 0
    for m in re.finditer(r'(?<![\w])mod\s+' + IDENT + r'\s*\{', text[:pos]):
        depth, j = 0, m.end() - 1
        while j < len(text):
            if text[j] == '{':
                depth += 1
            elif text[j] == '}':
                depth -= 1
                if depth == 0:
                    break
            j += 1
        if j > pos:
            d += 1
    return d


files = module_files()
mods = sorted({top for _, top, _, _ in files if top != 'lib'})
edges, why = {}, {}
for path, a, depth, text in files:
    names = set()
    # `super::` chains long enough to reach the crate root
    for m in re.finditer(r'(?<![\w:])((?:super::)+)', text):
        climb = m.group(1).count('super::')
        if climb < depth + inline_depth(text, m.start()):
            continue
        rest = m.end()
        if rest < len(text) and text[rest] == '{':
            names |= set(group_heads(text, rest))
        else:
            h = re.match(IDENT, text[rest:])
            if h:
                names.add(h.group(0))
    for m in re.finditer(r'(?<![\w:])(?:crate|recapd_domain)::', text):
        rest = m.end()
        if rest < len(text) and text[rest] == '{':
            names |= set(group_heads(text, rest))
        else:
            h = re.match(IDENT, text[rest:])
            if h:
                names.add(h.group(0))
    for b in names:
        b = b if b in mods else 'lib'
        if b != a:
            edges.setdefault(a, set()).add(b)
            why.setdefault((a, b), set()).add(os.path.relpath(path, root))

for a in sorted(edges):
    print(f'{a} -> {", ".join(sorted(edges[a]))}')
    if verbose:
        for b in sorted(edges[a]):
            print(f'    {b}: {", ".join(sorted(why[(a, b)]))}')

# Strongly connected components (Tarjan), then one concrete cycle in each.
nodes = ['lib'] + mods
g = {a: sorted(edges.get(a, ())) for a in nodes}
index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]
sys.setrecursionlimit(10000)


def strong(v):
    index[v] = low[v] = counter[0]
    counter[0] += 1
    stack.append(v)
    on.add(v)
    for w in g[v]:
        if w not in index:
            strong(w)
            low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop()
            on.discard(w)
            comp.append(w)
            if w == v:
                break
        if len(comp) > 1:
            sccs.append(sorted(comp))


for v in nodes:
    if v not in index:
        strong(v)


def a_cycle(comp):
    """A shortest cycle through the component's first node (breadth-first)."""
    members, start = set(comp), comp[0]
    prev, frontier = {start: None}, [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in g[v]:
                if w == start:
                    path = [v]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    return [start] + path[::-1][1:] + [start] if len(path) > 1 else [start, v, start] if v != start else [start, start]
                if w in members and w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return comp


if sccs:
    for comp in sccs:
        print(f'cycle among {len(comp)} domain modules: {", ".join(comp)}')
        print('  for example: ' + ' -> '.join(a_cycle(comp)))
    sys.exit(1)
print('cycles among domain modules: none')
