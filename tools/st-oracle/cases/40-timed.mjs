// Timed effects over several scans in a row (state carried in chat_metadata.timedWorldInfo):
// world-info.js:479-793 (WorldInfoTimedEffects), 4731-4745, 5155.
import { entry, chat, book, SERAPHINA } from '../case-lib.mjs';

/** Messages 1..n of a chat whose i-th text is texts[i] (later scans see the chat grown). */
const grow = (...texts) => texts.map((_, i) => chat(...texts.slice(0, i + 1)));
const D1 = { world_info_depth: 1 };
const seq = (name, about, source, entries, chats, more = {}) => ({
    name, about, source,
    character: SERAPHINA,
    books: { World: book(...entries) },
    global_books: ['World'],
    settings: D1,
    scans: chats.map((messages) => ({ messages })),
    ...more,
});

export const cases = [
    seq('timed-sticky', 'sticky 2: stays active for two more messages without its key, then ends (no cooldown).',
        'world-info.js:604-611, 619-660, 730-736, 4774-4778',
        [entry(0, { key: ['dragon'], sticky: 2, content: 'Sticky dragon.' }), entry(1, { key: ['dragon'], content: 'Plain dragon.' })],
        grow('A dragon!', 'It flew away.', 'Quiet now.', 'Still quiet.')),
    seq('timed-cooldown', 'cooldown 2: after activating, suppressed for two messages even when its key is present.',
        'world-info.js:4740-4743, 730-736',
        [entry(0, { key: ['dragon'], cooldown: 2, content: 'Cooling dragon.' })],
        grow('dragon', 'dragon', 'dragon', 'dragon', 'dragon')),
    seq('timed-sticky-then-cooldown', 'sticky 1 + cooldown 2: when the sticky ends a protected cooldown starts at once.',
        'world-info.js:493-505, 518-529',
        [entry(0, { key: ['dragon'], sticky: 1, cooldown: 2, content: 'Sticky then cooling.' })],
        grow('dragon', 'dragon', 'dragon', 'dragon', 'dragon')),
    seq('timed-sticky-beats-cooldown', 'A sticky entry still in its first cooldown window is activated (cooldown suppresses only when not sticky).',
        'world-info.js:4740-4743',
        [entry(0, { key: ['dragon'], sticky: 2, cooldown: 1, content: 'Both.' })],
        grow('dragon', 'nothing', 'nothing', 'dragon', 'dragon')),
    {
        name: 'timed-dry-run',
        about: 'A dry run neither reads nor writes sticky/cooldown state; delay still applies.',
        source: 'world-info.js:631-637, 713-715',
        character: SERAPHINA,
        books: { World: book(entry(0, { key: ['dragon'], sticky: 3, cooldown: 3, content: 'Sticky.' }), entry(1, { constant: true, delay: 2, content: 'Delayed constant.' })) },
        global_books: ['World'],
        settings: D1,
        scans: [
            { messages: chat('dragon') },
            { messages: chat('dragon', 'calm'), dry_run: true },
            { messages: chat('dragon', 'calm', 'dragon'), dry_run: true },
            { messages: chat('dragon', 'calm', 'calm') },
        ],
    },
    {
        name: 'timed-swipe-same-length',
        about: 'A scan on a chat no longer than an effect\'s start (a swipe) drops the unprotected effect.',
        source: 'world-info.js:622-626',
        character: SERAPHINA,
        books: { World: book(entry(0, { key: ['dragon'], sticky: 3, content: 'Sticky.' })) },
        global_books: ['World'],
        settings: D1,
        scans: [
            { messages: chat('hello', 'a dragon') },
            { messages: chat('hello', 'a bird'), generation_type: 'swipe' },
            { messages: chat('hello', 'a bird', 'more') },
        ],
    },
    {
        name: 'timed-edited-entry',
        about: 'Editing a sticky entry changes its hash: the stored effect no longer finds it (kept until it expires), so it is not sticky.',
        source: 'world-info.js:619-645, 4518-4521',
        character: SERAPHINA,
        books: { World: book(entry(0, { key: ['dragon'], sticky: 2, content: 'Sticky v1.' })) },
        global_books: ['World'],
        settings: D1,
        scans: [
            { messages: chat('dragon') },
            { messages: chat('dragon', 'calm'), books: { World: book(entry(0, { key: ['dragon'], sticky: 2, content: 'Sticky v2.' })) } },
            { messages: chat('dragon', 'calm', 'calm') },
            { messages: chat('dragon', 'calm', 'calm', 'calm') },
        ],
    },
    {
        name: 'timed-key-order-hash',
        about: 'The hash covers the entry JSON in its key order: the same entry with keys reordered loses its sticky (facts §7).',
        source: 'world-info.js:4518-4521; facts §7',
        character: SERAPHINA,
        books: { World: { entries: { 0: { uid: 0, key: ['dragon'], content: 'Sticky.', position: 0, sticky: 3 } } } },
        global_books: ['World'],
        settings: D1,
        scans: [
            { messages: chat('dragon') },
            { messages: chat('dragon', 'calm'), books: { World: { entries: { 0: { uid: 0, content: 'Sticky.', key: ['dragon'], position: 0, sticky: 3 } } } } },
        ],
    },
    {
        name: 'timed-same-entry-other-book',
        about: 'Two books holding byte-identical entries differ in hash (the book name is hashed); each keeps its own effect.',
        source: 'world-info.js:4386, 4518-4521, 548-550',
        character: SERAPHINA,
        books: {
            A: book(entry(0, { key: ['dragon'], sticky: 2, content: 'Same.' })),
            B: book(entry(0, { key: ['wyrm'], sticky: 2, content: 'Same.' })),
        },
        global_books: ['A', 'B'],
        settings: D1,
        scans: [
            { messages: chat('dragon') },
            { messages: chat('dragon', 'wyrm') },
            { messages: chat('dragon', 'wyrm', 'calm') },
            { messages: chat('dragon', 'wyrm', 'calm', 'calm') },
        ],
    },
    {
        name: 'timed-initial-junk',
        about: 'Stored state with junk (a non-object effect, a non-object type, an effect of an unknown entry) is cleaned as SillyTavern cleans it.',
        source: 'world-info.js:515-540, 627-633',
        character: SERAPHINA,
        books: { World: book(entry(0, { key: ['dragon'], sticky: 2, content: 'Sticky.' })) },
        global_books: ['World'],
        settings: D1,
        timed_initial: {
            sticky: { 'Other.5': { hash: 12345, start: 1, end: 3, protected: false }, 'World.9': null },
            cooldown: 'junk',
        },
        scans: [
            { messages: chat('calm', 'calm') },
            { messages: chat('calm', 'calm', 'dragon') },
        ],
    },
    {
        name: 'timed-imported-state',
        about: 'State written by SillyTavern (its hashes) for an entry is honoured: the entry is sticky without its key.',
        source: 'world-info.js:619-660, 4518-4521',
        character: SERAPHINA,
        books: { World: book(entry(0, { key: ['dragon'], sticky: 2, content: 'Sticky dragon.' }), entry(1, { key: ['dragon'], content: 'Plain dragon.' })) },
        global_books: ['World'],
        settings: D1,
        timed_initial_from: ['timed-sticky', 0],
        scans: [{ messages: chat('A dragon!', 'It flew away.') }],
    },
    {
        name: 'timed-sticky-group',
        about: 'In an inclusion group a sticky member keeps the group; the override member is dropped.',
        source: 'world-info.js:5218-5245, 5300-5306',
        character: SERAPHINA,
        books: {
            World: book(
                entry(0, { key: ['dragon'], sticky: 3, group: 'beast', content: 'Sticky member.' }),
                entry(1, { key: ['knight'], group: 'beast', groupOverride: true, order: 200, content: 'Override member.' })),
        },
        global_books: ['World'],
        settings: D1,
        scans: [
            { messages: chat('dragon') },
            { messages: chat('dragon', 'dragon knight') },
            { messages: chat('dragon', 'dragon knight', 'knight') },
        ],
    },
    {
        name: 'timed-sticky-first',
        about: 'Sticky entries are sorted first in a pass, ahead of higher-order entries (budget order and final order).',
        source: 'world-info.js:4884-4890',
        character: SERAPHINA,
        books: {
            World: book(
                entry(0, { key: ['dragon'], sticky: 3, order: 10, content: 'Low order sticky.' }),
                entry(1, { key: ['knight'], order: 500, content: 'High order knight.' })),
        },
        global_books: ['World'],
        settings: D1,
        scans: [
            { messages: chat('dragon') },
            { messages: chat('dragon', 'knight') },
        ],
    },
];

cases.push(
    {
        name: 'timed-protected-survives-swipe',
        about: 'A protected cooldown (started by an ending sticky) survives a scan on a chat that did not grow; an unprotected sticky would not.',
        source: 'world-info.js:518-529, 622-626',
        character: SERAPHINA,
        books: { World: book(entry(0, { key: ['dragon'], sticky: 1, cooldown: 2, content: 'Sticky then cooling.' })) },
        global_books: ['World'],
        settings: D1,
        scans: [
            { messages: chat('dragon') },
            { messages: chat('dragon', 'dragon') },
            { messages: chat('dragon', 'dragon again'), generation_type: 'swipe' },
            { messages: chat('dragon', 'dragon again', 'dragon') },
            { messages: chat('dragon', 'dragon again', 'dragon', 'dragon') },
        ],
    },
    {
        name: 'timed-group-sticky-holds',
        about: 'While one sticky member holds its group, other sticky-capable members and an override member matching later are dropped every scan.',
        source: 'world-info.js:5218-5245, 5300-5306',
        character: SERAPHINA,
        books: {
            World: book(
                entry(0, { key: ['dragon'], group: 'g', sticky: 3, content: 'Sticky A.' }),
                entry(1, { key: ['wyrm'], group: 'g', sticky: 3, content: 'Sticky B: no.' }),
                entry(2, { key: ['drake'], group: 'g', groupOverride: true, order: 900, content: 'Override C: no.' })),
        },
        global_books: ['World'],
        settings: D1,
        scans: [
            { messages: chat('dragon') },
            { messages: chat('dragon', 'wyrm') },
            { messages: chat('dragon', 'wyrm', 'drake') },
        ],
    },
);
