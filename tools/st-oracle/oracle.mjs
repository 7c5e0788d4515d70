// Writes the expected outputs of recapd's World Info conformance cases by
// running SillyTavern's own checkWorldInfo on them.
//
//   node oracle.mjs --st <SillyTavern checkout>          (a work tree)
//   node oracle.mjs --mirror <git dir> [--rev 51ad27f]    (a bare/mirror repo)
//   add --check to compare with the committed fixtures instead of writing them
//   add --only <substring> to run only matching cases
//
// Cases are defined in cases/*.mjs (each exports `cases`); the fixtures go to
// tests/fixtures/world_info/conformance/<case name>.json, input and expected
// output together, which the Rust runner
// crates/domain/tests/world_info_conformance.rs reads.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync, mkdirSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '..', '..');
const fixtureDir = path.join(repoRoot, 'tests', 'fixtures', 'world_info', 'conformance');

const args = process.argv.slice(2);
const opt = (name) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : undefined; };
const check = args.includes('--check');
const only = opt('--only');

// The files of SillyTavern the harness reads.
const ST_FILES = ['public/scripts/world-info.js', 'public/scripts/utils.js'];
let stRoot = opt('--st');
let tempRoot = null;
if (!stRoot) {
    const mirror = opt('--mirror') ?? process.env.ST_MIRROR;
    if (!mirror) {
        console.error('usage: node oracle.mjs (--st <checkout> | --mirror <git dir> [--rev <commit>]) [--check] [--only <text>]');
        process.exit(2);
    }
    const rev = opt('--rev') ?? '51ad27f';
    tempRoot = mkdtempSync(path.join(tmpdir(), 'st-oracle-'));
    for (const f of ST_FILES) {
        const text = execFileSync('git', ['-C', mirror, 'show', `${rev}:${f}`], { maxBuffer: 64 << 20 });
        mkdirSync(path.join(tempRoot, path.dirname(f)), { recursive: true });
        writeFileSync(path.join(tempRoot, f), text);
    }
    stRoot = tempRoot;
}
const publicDir = path.join(stRoot, 'public');
const wiText = readFileSync(path.join(publicDir, 'scripts', 'world-info.js'));
const provenance = {
    file: 'public/scripts/world-info.js',
    sha256: createHash('sha256').update(wiText).digest('hex'),
};

function runOnce(caseFile, random) {
    const r = spawnSync(process.execPath, ['--import', './register.mjs', 'run-case.mjs', caseFile, random], {
        cwd: here,
        env: { ...process.env, ST_ORACLE_PUBLIC: publicDir },
        encoding: 'utf8',
        maxBuffer: 256 << 20,
    });
    if (r.status !== 0) {
        throw new Error(`run-case failed (${r.status}): ${r.stderr.trim().split('\n').slice(0, 12).join('\n')}`);
    }
    return JSON.parse(r.stdout);
}

const caseFiles = readdirSync(path.join(here, 'cases')).filter((f) => f.endsWith('.mjs')).sort();
const all = [];
for (const f of caseFiles) {
    const mod = await import(pathToFileURL(path.join(here, 'cases', f)).href);
    for (const c of mod.cases) all.push({ ...c, group: f.replace(/\.mjs$/, '') });
}
const names = new Set();
for (const c of all) {
    if (!/^[a-z0-9][a-z0-9_-]*$/.test(c.name)) throw new Error(`bad case name ${c.name}`);
    if (names.has(c.name)) throw new Error(`duplicate case name ${c.name}`);
    names.add(c.name);
}

mkdirSync(fixtureDir, { recursive: true });
// A case may start from the timed state SillyTavern left after a scan of another case.
const results = new Map();
function timedFrom([caseName, scan]) {
    const r = results.get(caseName);
    if (!r) throw new Error(`timed_initial_from: case ${caseName} must come earlier and be run`);
    return r[scan].timed;
}
const work = mkdtempSync(path.join(tmpdir(), 'st-oracle-cases-'));
let failures = 0;
let stale = 0;
let written = 0;
for (const c of all) {
    if (only && !c.name.includes(only)) continue;
    const { expected_notes: _n, ...input } = c;
    const fixture = {
        name: c.name,
        group: c.group,
        about: c.about,
        source: c.source,
        user: c.user ?? 'User',
        character: c.character ?? null,
        books: c.books ?? {},
        ...(c.books_raw ? { books_raw: c.books_raw } : {}),
        global_books: c.global_books ?? [],
        character_books: c.character_books ?? [],
        chat_book: c.chat_book ?? null,
        persona_book: c.persona_book ?? null,
        settings: c.settings ?? {},
        max_context: c.max_context ?? 8192,
        ...(c.timed_initial !== undefined ? { timed_initial: c.timed_initial } : {}),
        ...(c.timed_initial_from ? { timed_initial: timedFrom(c.timed_initial_from) } : {}),
        scans: c.scans.map((s) => ({ ...s })),
    };
    if (c.timed_initial_from) fixture.timed_initial_from = c.timed_initial_from;
    const caseFile = path.join(work, `${c.name}.json`);
    writeFileSync(caseFile, JSON.stringify(fixture));
    let low, high;
    try {
        low = runOnce(caseFile, String(1e-9));
        high = runOnce(caseFile, String(1 - 1e-9));
    } catch (e) {
        console.error(`✗ ${c.name}: ${e.message}`);
        failures++;
        continue;
    }
    const strip = (o) => o.map(({ random_calls: _r, ...rest }) => rest);
    if (JSON.stringify(strip(low)) !== JSON.stringify(strip(high))) {
        console.error(`✗ ${c.name}: the result depends on Math.random (differs between draws near 0 and near 1); such cases cannot be compared with recapd's seeded draws`);
        failures++;
        continue;
    }
    results.set(c.name, low);
    fixture.oracle = { ...provenance, random_draws: low.map((s) => s.random_calls), note: 'random draws, if any, cannot change the result (checked with draws near 0 and near 1)' };
    fixture.scans = fixture.scans.map((s, i) => {
        const { random_calls: _r, ...expected } = low[i];
        return { ...s, expected };
    });
    if (c.expected_notes) fixture.expected_notes = c.expected_notes;
    const target = path.join(fixtureDir, `${c.name}.json`);
    const text = JSON.stringify(fixture, null, 2) + '\n';
    if (check) {
        if (!existsSync(target) || readFileSync(target, 'utf8') !== text) {
            console.error(`✗ ${c.name}: fixture differs from SillyTavern's output`);
            stale++;
        }
    } else {
        writeFileSync(target, text);
        written++;
    }
}
// Fixtures of cases that no longer exist.
if (!only) {
    for (const f of readdirSync(fixtureDir).filter((f) => f.endsWith('.json'))) {
        if (names.has(f.replace(/\.json$/, ''))) continue;
        if (check) {
            console.error(`✗ ${f}: no case defines it`);
            stale++;
        } else {
            rmSync(path.join(fixtureDir, f));
        }
    }
}
rmSync(work, { recursive: true, force: true });
if (tempRoot) rmSync(tempRoot, { recursive: true, force: true });
console.log(`${all.length} cases; ${check ? `${stale} stale` : `${written} written`}; ${failures} failed`);
process.exit(failures || stale ? 1 : 0);
