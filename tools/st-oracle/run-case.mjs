// Runs one conformance case through SillyTavern's checkWorldInfo and prints
// what it produced, scan by scan, as JSON on stdout.
// Usage: ST_ORACLE_PUBLIC=<checkout>/public node --import ./register.mjs run-case.mjs <case.json> <random value|none>
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { installStubs } from './stubs.mjs';

const publicDir = path.resolve(process.env.ST_ORACLE_PUBLIC);
const [caseFile, randomArg] = process.argv.slice(2);
const c = JSON.parse(readFileSync(caseFile, 'utf8'));

const state = installStubs(publicDir, {
    user: c.user ?? 'User',
    character: c.character ?? null,
    characterBooks: c.character_books ?? [],
    chatBook: c.chat_book ?? null,
    personaBook: c.persona_book ?? null,
    timedInitial: c.timed_initial,
});
state.randomValue = randomArg && randomArg !== 'none' ? Number(randomArg) : null;

// Silence SillyTavern's console chatter; stdout carries only the result.
for (const k of ['log', 'debug', 'info', 'warn', 'error', 'table', 'group', 'groupEnd']) console[k] = () => { };

const wi = await import(pathToFileURL(path.join(publicDir, 'scripts', 'world-info.js')).href);

const setBooks = (books) => {
    for (const [name, data] of Object.entries(books ?? {})) wi.worldInfoCache.set(name, data);
};
setBooks(c.books);
// Books given as file text (number spellings, escapes, duplicate members): parsed as SillyTavern's server hands them over.
for (const [name, text] of Object.entries(c.books_raw ?? {})) wi.worldInfoCache.set(name, JSON.parse(text));

const characterBooks = c.character_books ?? [];
const charLore = c.character && characterBooks.length > 1
    ? [{ name: c.character.avatar.replace(/\.[^/.]+$/, ''), extraBooks: characterBooks.slice(1) }]
    : [];
wi.setWorldInfoSettings(
    { ...(c.settings ?? {}), world_info: { globalSelect: c.global_books ?? [], charLore } },
    { world_names: [...Object.keys(c.books ?? {}), ...Object.keys(c.books_raw ?? {})] },
);

const out = [];
for (const scan of c.scans) {
    if (scan.settings) wi.updateWorldInfoSettings(scan.settings);
    setBooks(scan.books);
    state.extensionPrompts = Object.fromEntries((scan.extension_prompts ?? []).map((p) => [p.key, { value: p.value, scan: p.scan, position: 1, depth: 0, role: 0 }]));
    state.scanPromptsSeen = [];
    const before = state.randomCalls;

    const chat = (scan.messages ?? [])
        .filter((m) => !m.is_system)
        .map((m) => (wi.world_info_include_names ? `${m.name}: ${m.text}` : m.text))
        .reverse();
    const t = scan.global_texts ?? {};
    const globalScanData = {
        personaDescription: t.persona_description ?? '',
        characterDescription: t.character_description ?? '',
        characterPersonality: t.character_personality ?? '',
        characterDepthPrompt: t.character_depth_prompt ?? '',
        scenario: t.scenario ?? '',
        creatorNotes: t.creator_notes ?? '',
        trigger: scan.generation_type ?? 'normal',
    };
    const r = await wi.checkWorldInfo(chat, c.max_context, !!scan.dry_run, globalScanData);

    const nullable = (v) => (v === undefined ? null : v);
    // script.js 4608-4614: one extension prompt per (depth, role) key, a later group overwriting an earlier one.
    const depthPrompts = new Map();
    for (const e of r.WIDepthEntries ?? []) {
        depthPrompts.set(`customDepthWI_${e.depth}_${e.role}`, { depth: nullable(e.depth), role: nullable(e.role), text: e.entries.join('\n') });
    }
    const examplesTop = [];
    const examplesBottom = [];
    // script.js 4582-4596: a "before" example is unshifted, an "after" one pushed.
    for (const e of r.EMEntries ?? []) {
        if (!e.content) continue;
        if (e.position === wi.wi_anchor_position.before) examplesTop.unshift(e.content); else examplesBottom.push(e.content);
    }
    out.push({
        activated: [...r.allActivatedEntries].map((e) => ({
            world: e.world,
            uid: String(e.uid),
            position: nullable(e.position),
            depth: nullable(e.depth),
            role: nullable(e.role),
            order: nullable(e.order),
            content: e.content,
        })),
        world_info_before: r.worldInfoBefore,
        world_info_after: r.worldInfoAfter,
        depth_entries: (r.WIDepthEntries ?? []).map((e) => ({ depth: nullable(e.depth), role: nullable(e.role), entries: e.entries })),
        depth_prompts: [...depthPrompts.values()]
            .filter((p) => typeof p.depth === 'number')
            .sort((a, b) => a.depth - b.depth || a.role - b.role),
        an_top: r.ANBeforeEntries ?? [],
        an_bottom: r.ANAfterEntries ?? [],
        examples: r.EMEntries ?? [],
        examples_top: examplesTop,
        examples_bottom: examplesBottom,
        outlets: r.outletEntries ?? {},
        timed: structuredClone(state.chatMetadata.timedWorldInfo ?? null),
        scan_prompts: state.scanPromptsSeen,
        random_calls: state.randomCalls - before,
    });
}
process.stdout.write(JSON.stringify(out));
