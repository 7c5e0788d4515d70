// Which books apply and in which order: world-info.js:4363-4530.
import { entry, chat, book, SERAPHINA } from '../case-lib.mjs';

const msg = chat('dragon');
const k = (uid, order, content, over = {}) => entry(uid, { key: ['dragon'], order, content, ...over });
// A tight budget makes the sorted order visible: only the first two four-word entries fit (max_context 40 -> 10 words).
const books = {
    Global: book(k(0, 100, 'global order one hundred'), k(1, 300, 'global order three hundred')),
    Char: book(k(0, 200, 'character order two hundred'), k(1, 50, 'character order fifty')),
    ChatBook: book(k(0, 1, 'chat book order one')),
    Persona: book(k(0, 2, 'persona book order two')),
};
const base = (name, about, source, strategy, more = {}) => ({
    name, about, source,
    character: SERAPHINA,
    books,
    global_books: ['Global'],
    character_books: ['Char'],
    settings: { world_info_character_strategy: strategy },
    scans: [{ messages: msg }],
    ...more,
});

export const cases = [
    base('books-character-first', 'Strategy 1 (character_first, default): character entries sorted, then global sorted.', 'world-info.js:4497-4499', 1),
    base('books-global-first', 'Strategy 2 (global_first).', 'world-info.js:4500-4502', 2),
    base('books-evenly', 'Strategy 0 (evenly): global and character merged and sorted by order.', 'world-info.js:4494-4496', 0),
    base('books-budget-order', 'The strategy decides who gets the budget: character_first under a 10-word budget.', 'world-info.js:4497-4499, 4942', 1, { max_context: 40 }),
    base('books-chat-persona-first', 'Chat lore then persona lore come first whatever their order and strategy.', 'world-info.js:4513', 0,
        { chat_book: 'ChatBook', persona_book: 'Persona', max_context: 40 }),
    base('books-load-once', 'A book loads once: a character book also global counts as global; a chat book also global is skipped; a persona book equal to the chat book is skipped.',
        'world-info.js:4380-4393, 4439-4442, 4457-4465', 1,
        { global_books: ['Global', 'Char', 'ChatBook'], chat_book: 'ChatBook', persona_book: 'ChatBook' }),
    base('books-persona-global', 'A persona book that is also global is loaded as global only.', 'world-info.js:4462-4465', 1,
        { global_books: ['Global', 'Persona'], persona_book: 'Persona' }),
    base('books-character-extra', 'Extra character books (charLore) follow the character\'s own book; one that is also the chat book is skipped.',
        'world-info.js:4367-4378, 4385-4388', 1,
        { character_books: ['Char', 'Persona', 'ChatBook'], chat_book: 'ChatBook', global_books: [] }),
    base('books-no-character', 'Without a character only global, chat and persona books apply.', 'world-info.js:4363-4378', 1,
        { character: null, character_books: [], chat_book: 'ChatBook' }),
    {
        name: 'books-key-order',
        about: 'Entries with equal order keep the book\'s key order: integer-like keys ascending first, then the other keys as written; placement then reverses them.',
        source: 'world-info.js:88, 4386 (Object.keys), 5084-5098',
        character: SERAPHINA,
        books: {
            World: {
                entries: {
                    b: { uid: 'b', key: ['dragon'], content: 'key b', position: 0, order: 100 },
                    10: { uid: 10, key: ['dragon'], content: 'key 10', position: 0, order: 100 },
                    a: { uid: 'a', key: ['dragon'], content: 'key a', position: 0, order: 100 },
                    2: { uid: 2, key: ['dragon'], content: 'key 2', position: 0, order: 100 },
                    '007': { uid: '007', key: ['dragon'], content: 'key 007', position: 0, order: 100 },
                },
            },
        },
        global_books: ['World'],
        scans: [{ messages: msg }],
    },
];

cases.push(base('books-strategy-unknown', 'An unknown strategy number (5) sorts as evenly (the switch\'s default).', 'world-info.js:4505-4508', 5));
