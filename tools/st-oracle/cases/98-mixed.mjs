// Rules meeting each other: timed effects with recursion and budget, min activations with scanDepth,
// probability failures remembered across passes, persona books, and a longer chat over several scans.
import { readFileSync } from 'node:fs';
import { entry, chat, simple, book, SERAPHINA } from '../case-lib.mjs';

const REC = { world_info_recursive: true };
const eldoria = JSON.parse(readFileSync(new URL('../../../tests/fixtures/world_info/Eldoria.json', import.meta.url), 'utf8'));

/** Eldoria with timed effects and a group added, as a user might edit it. */
function eldoriaEdited() {
    const b = structuredClone(eldoria);
    b.entries['1'].sticky = 2;
    b.entries['1'].cooldown = 2;
    b.entries['2'].group = 'places';
    b.entries['0'].group = 'places';
    b.entries['0'].groupOverride = true;
    b.entries['3'].delay = 3;
    return b;
}
const story = [
    { name: 'User', text: 'What are those howls in the forest?' },
    { name: 'Seraphina', text: 'Shadowfangs. Corrupted beasts that roam Eldoria at night.' },
    { name: 'User', text: 'Can we rest somewhere safe?' },
    { name: 'Seraphina', text: 'My glade is a refuge. Come, before they find our trail.' },
    { name: 'User', text: 'How do you keep them away?' },
    { name: 'Seraphina', text: 'An old ability, a kind of magic woven into the trees.' },
];

export const cases = [
    simple('mixed-sticky-ignores-delay-until-recursion', 'A sticky entry activates in the first pass even with delayUntilRecursion (the delay gates skip sticky entries).',
        'world-info.js:4745-4753',
        [entry(0, { constant: true, content: 'alpha' }),
            entry(1, { key: ['alpha'], delayUntilRecursion: 1, sticky: 3, content: 'Delayed sticky.' }),
            entry(2, { key: ['nothing'], delayUntilRecursion: 2, content: 'Level holder.' })],
        chat('hi'), {
            scans: [{ messages: chat('hi') }, { messages: chat('hi', 'there') }],
            settings: REC,
        }),
    simple('mixed-probability-failure-remembered', 'An entry that failed its roll is not tried again in later passes of the same scan.',
        'world-info.js:4680-4682, 4931',
        [entry(0, { key: ['dragon'], content: 'The castle.' }),
            entry(1, { key: ['dragon', 'castle'], probability: 0, content: 'Failed in pass 1, key again in pass 2: no.' }),
            entry(2, { key: ['castle'], content: 'Castle in pass 2: yes.' })],
        chat('dragon'), { settings: REC }),
    simple('mixed-minact-entry-scan-depth', 'Min activations grow the global depth only: an entry with its own scanDepth keeps it.',
        'world-info.js:280, 386-388',
        [entry(0, { key: ['oak'], scanDepth: 1, content: 'Fixed depth 1: no.' }), entry(1, { key: ['oak'], content: 'Grows: yes.' })],
        chat('oak', 'birch', 'cedar'), { settings: { world_info_depth: 1, world_info_min_activations: 2 } }),
    simple('mixed-budget-sticky-first', 'Sticky entries take the budget first in their pass.',
        'world-info.js:4884-4890, 4942',
        [entry(0, { key: ['dragon'], sticky: 3, order: 1, content: 'sticky low order entry' }),
            entry(1, { key: ['knight'], order: 500, content: 'knight high order one' }),
            entry(2, { key: ['knight'], order: 400, content: 'knight high order two' })],
        chat('dragon'), {
            max_context: 40,
            settings: { world_info_depth: 1 },
            scans: [{ messages: chat('dragon') }, { messages: chat('dragon', 'knight') }],
        }),
    simple('mixed-group-scoring-sticky', 'A group with a sticky member skips scoring: the sticky member stays though it scores less.',
        'world-info.js:5179-5182, 5218-5245',
        [entry(0, { key: ['wyrm'], group: 'g', sticky: 3, content: 'Sticky, score 1.' }),
            entry(1, { key: ['fire', 'knight', 'dragon'], group: 'g', content: 'Score 3 in scan 1, absent in scan 0.' })],
        chat('dragon'), {
            settings: { world_info_use_group_scoring: true, world_info_depth: 1 },
            scans: [{ messages: chat('wyrm') }, { messages: chat('wyrm', 'wyrm dragon fire knight') }],
        }),
    {
        name: 'mixed-persona-book',
        about: 'A persona book with matchPersonaDescription entries, before the global book.',
        source: 'world-info.js:4452-4476, 4513, 299-301',
        character: SERAPHINA,
        books: {
            Persona: book(entry(0, { key: ['archer'], matchPersonaDescription: true, content: 'The user is an archer.' })),
            World: book(entry(0, { key: ['archer'], content: 'Archers (chat only): no.' }), entry(1, { constant: true, order: 999, content: 'World constant.' })),
        },
        global_books: ['World'],
        persona_book: 'Persona',
        scans: [{ messages: chat('hello'), global_texts: { persona_description: 'A quiet archer from the north.' } }],
    },
    {
        name: 'mixed-chat-book-timed',
        about: 'Timed effects of a chat book entry are keyed by that book\'s name; a dry run in between changes nothing.',
        source: 'world-info.js:548-550, 4432-4450',
        character: SERAPHINA,
        books: { Chatlore: book(entry(3, { key: ['omen'], sticky: 1, cooldown: 1, content: 'An omen.' })) },
        chat_book: 'Chatlore',
        settings: { world_info_depth: 1 },
        scans: [
            { messages: chat('an omen') },
            { messages: chat('an omen', 'omen'), dry_run: true },
            { messages: chat('an omen', 'omen') },
            { messages: chat('an omen', 'omen', 'omen') },
        ],
    },
    {
        name: 'mixed-eldoria-story',
        about: 'Eldoria edited with sticky/cooldown, a group with an override and a delay, over a six-message story scanned after each message, shipped settings.',
        source: 'default/content/Eldoria.json @51ad27f; world-info.js:479-793, 4597-5159, 5269-5356',
        character: SERAPHINA,
        books: { Eldoria: eldoriaEdited() },
        character_books: ['Eldoria'],
        settings: { world_info_match_whole_words: true, world_info_recursive: true },
        scans: story.map((_, i) => ({ messages: story.slice(0, i + 1) })),
    },
];
