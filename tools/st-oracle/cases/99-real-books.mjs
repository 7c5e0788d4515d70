// Real books (tests/fixtures/world_info/, their sources in its README) with realistic chats.
import { readFileSync } from 'node:fs';
import { SERAPHINA } from '../case-lib.mjs';

const fixture = (name) => JSON.parse(readFileSync(new URL(`../../../tests/fixtures/world_info/${name}`, import.meta.url), 'utf8'));
const eldoria = fixture('Eldoria.json');
const sakana = fixture('Sakana_converted.json');
const v10 = fixture('Eldoria_V10_reduced.json');

const seraphinaChat = [
    { name: 'Seraphina', text: '*You wake in a soft bed of moss. A woman with amber eyes watches you.* You are safe now, traveler. The Shadowfangs will not reach you here.' },
    { name: 'User', text: 'Where am I? What is this place?' },
    { name: 'Seraphina', text: 'This is my glade, a refuge deep in the forest. I found you wounded near the river.' },
    { name: 'User', text: 'Thank you... How did you heal me so quickly? Is it some kind of magic?' },
];

export const cases = [
    {
        name: 'real-eldoria-chat',
        about: 'SillyTavern\'s Eldoria book (character book of Seraphina) over the start of her default chat, default global settings.',
        source: 'default/content/Eldoria.json @51ad27f; world-info.js:4597-5159',
        character: SERAPHINA,
        books: { Eldoria: eldoria },
        character_books: ['Eldoria'],
        scans: [
            { messages: seraphinaChat.slice(0, 2) },
            { messages: seraphinaChat },
        ],
    },
    {
        name: 'real-eldoria-shipped-settings',
        about: 'The same chat with SillyTavern\'s shipped settings (whole words on, recursion on) and a scanned author\'s note.',
        source: 'default/content/settings.json:14-22; world-info.js:4597-5159',
        character: SERAPHINA,
        books: { Eldoria: eldoria },
        character_books: ['Eldoria'],
        settings: { world_info_match_whole_words: true, world_info_recursive: true },
        scans: [
            { messages: seraphinaChat, extension_prompts: [{ key: '2_floating_prompt', value: '[{{char}} fears the Shadowfang beasts.]', scan: true }] },
        ],
    },
    {
        name: 'real-sakana-assistant',
        about: 'The Sakana-WI card book (converted by SillyTavern\'s import) with secondary keys, over an assistant chat; whole words on.',
        source: 'SillyTavern-Content contest_Assistant_Sakana.png; world-info.js:4812-4878',
        character: { name: 'Sakana', avatar: 'contest_Assistant_Sakana.png', tags: [] },
        books: { 'Sakana-WI': sakana },
        character_books: ['Sakana-WI'],
        settings: { world_info_match_whole_words: true, world_info_depth: 4 },
        scans: [
            { messages: [
                { name: 'Sakana', text: 'Hello, master! What shall we do today?' },
                { name: 'User', text: 'Can you write a script that checks my code for bugs?' },
                { name: 'Sakana', text: 'Of course! Show me the function.' },
                { name: 'User', text: 'Also, do you like me? *I hold your left hand.*' },
            ] },
        ],
    },
    {
        name: 'real-eldoria-v10-chinese',
        about: 'An excerpt of a large Chinese book (constants before/at depth, 40 after-char, 105 at depth 2, sparse entries without role or probability) over a Chinese chat.',
        source: 'soranokiseki1437/eldoria-worldbook Eldoria_V10.28.1.json (reduced); world-info.js:4597-5159',
        character: SERAPHINA,
        books: { Eldoria_V10: v10 },
        global_books: ['Eldoria_V10'],
        settings: { world_info_depth: 3 },
        max_context: 200000,
        scans: [
            { messages: [
                { name: 'User', text: '我在森林里找到了一把守护者法杖，上面有灰金色的光。' },
                { name: 'Seraphina', text: '那是Thalion的法杖。它与森林意志共鸣。你还记得第2章发生的事吗？' },
                { name: 'User', text: '请告诉我精灵王国的历史，还有银塔是怎么陷落的。' },
            ] },
        ],
    },
    {
        name: 'real-sakana-chat-types',
        about: 'Sakana-WI over a growing chat with JS default settings (substring matching), scanned for continue, impersonate and quiet generations, names excluded.',
        source: 'SillyTavern-Content contest_Assistant_Sakana.png; world-info.js:4694-4700, 4812-4878',
        character: { name: 'Sakana', avatar: 'contest_Assistant_Sakana.png', tags: [] },
        books: { 'Sakana-WI': sakana },
        character_books: ['Sakana-WI'],
        settings: { world_info_include_names: false, world_info_depth: 3 },
        scans: [
            { messages: [{ name: 'User', text: 'I am bored, nothing to do.' }], generation_type: 'continue' },
            { messages: [{ name: 'User', text: 'I am bored, nothing to do.' }, { name: 'Sakana', text: 'Then let us write a program together!' }], generation_type: 'impersonate' },
            { messages: [{ name: 'User', text: 'I am bored, nothing to do.' }, { name: 'Sakana', text: 'Then let us write a program together!' }, { name: 'User', text: 'You baka, I have no money for that.' }], generation_type: 'quiet' },
        ],
    },
];
