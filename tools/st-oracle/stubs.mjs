// Stand-ins for what world-info.js imports from the rest of SillyTavern's
// front end. Only what checkWorldInfo reads at run time is modelled; the
// editor, slash commands and popups get an inert object that accepts any
// use. Two pure helpers (getStringHash, escapeRegex) are taken from the
// checkout's own utils.js at run time, so that hashes and escaping are
// SillyTavern's exactly; none of SillyTavern's code is kept here.
import { readFileSync } from 'node:fs';
import path from 'node:path';

/** An object that accepts anything: calls, `new`, properties, awaits stop at it. */
function inert() {
    const target = function () { };
    const handler = {
        get(_t, prop) {
            if (prop === 'then') return undefined;
            if (prop === Symbol.toPrimitive) return () => '';
            if (prop === Symbol.iterator) return function* () { };
            return proxy;
        },
        apply() { return proxy; },
        construct() { return proxy; },
        set() { return true; },
        has() { return false; },
    };
    const proxy = new Proxy(target, handler);
    return proxy;
}

/** A top-level function of `public/scripts/utils.js`, evaluated on its own. */
function functionFromUtils(publicDir, name) {
    const text = readFileSync(path.join(publicDir, 'scripts', 'utils.js'), 'utf8');
    const start = text.indexOf(`export function ${name}(`);
    if (start < 0) throw new Error(`st-oracle: ${name} not found in utils.js`);
    const end = text.indexOf('\n}\n', start);
    const source = text.slice(start + 'export '.length, end + 2);
    return new Function(`${source}\nreturn ${name};`)();
}

/** The macro stand-in: {{user}} and {{char}} (case-insensitive), nothing else. The Rust runner does the same. */
export function makeSubstitute(user, char) {
    return (text) => {
        if (typeof text !== 'string') return text;
        return text.replace(/\{\{user\}\}/gi, user).replace(/\{\{char\}\}/gi, char);
    };
}

/** The tokenizer stand-in: whitespace-separated words. The Rust runner does the same. */
export function countWords(text) {
    return String(text).split(/\s+/).filter((w) => w.length > 0).length;
}

/**
 * Installs globalThis.__stOracle for one case.
 * @param {string} publicDir the checkout's public/ directory
 * @param {object} world the case's world: { user, character, books, chatBook, personaBook }
 */
export function installStubs(publicDir, world) {
    const substitute = makeSubstitute(world.user, world.character?.name ?? '');
    const character = world.character
        ? { name: world.character.name, avatar: world.character.avatar, data: { extensions: { world: world.characterBooks[0] } } }
        : null;
    const characters = character ? [character] : [];
    const thisChid = character ? 0 : undefined;
    const tagMap = {};
    if (character && Array.isArray(world.character.tags)) {
        tagMap[character.avatar] = [...world.character.tags];
    }
    const chatMetadata = {};
    if (world.chatBook) chatMetadata.world_info = world.chatBook;
    if (world.timedInitial !== undefined) chatMetadata.timedWorldInfo = structuredClone(world.timedInitial);
    const powerUser = { persona_description_lorebook: world.personaBook ?? undefined, wi_key_input_plaintext: true };

    const state = {
        extensionPrompts: {},
        scanPromptsSeen: [],
        randomValue: null,
        randomCalls: 0,
        chatMetadata,
    };

    const avatarStem = (avatar) => avatar?.replace(/\.[^/.]+$/, '') ?? null;
    const context = {
        get extensionPrompts() { return state.extensionPrompts; },
        get tagMap() { return tagMap; },
        characters,
        characterId: thisChid,
        groupId: undefined,
        setExtensionPrompt() { },
    };

    const eventSource = { on() { }, once() { }, emit: async () => { }, removeListener() { } };
    const event_types = new Proxy({}, { get: (_t, p) => String(p) });

    const modules = {
        'lib.js': {},
        'script.js': {
            substituteParams: substitute,
            chat_metadata: chatMetadata,
            this_chid: thisChid,
            characters,
            eventSource,
            event_types,
            name1: world.user,
            extension_prompt_roles: { SYSTEM: 0, USER: 1, ASSISTANT: 2 },
            getExtensionPromptByName: async (key) => {
                const prompt = state.extensionPrompts[key];
                if (!key || !prompt) return '';
                const text = substitute(prompt.value);
                // What the scan buffer receives (it skips an empty text, world-info.js:4610).
                if (text) state.scanPromptsSeen.push(text);
                return text;
            },
            saveSettings: async () => { },
            saveMetadata: async () => { },
            saveCharacterDebounced: () => { },
            getCurrentChatId: () => 'conformance-chat',
            getRequestHeaders: () => ({}),
        },
        'scripts/utils.js': {
            getStringHash: functionFromUtils(publicDir, 'getStringHash'),
            escapeRegex: functionFromUtils(publicDir, 'escapeRegex'),
            getCharaFilename: (chid = null) => avatarStem(characters[chid ?? thisChid]?.avatar),
            debounce: (fn) => { const f = () => { }; f.original = fn; return f; },
            cancelDebounce: () => { },
            onlyUnique: (v, i, a) => a.indexOf(v) === i,
        },
        'scripts/extensions.js': {
            extension_settings: { note: { allowWIScan: false } },
            getContext: () => context,
        },
        'scripts/authors-note.js': {
            NOTE_MODULE_NAME: '2_floating_prompt',
            metadata_keys: { prompt: 'note_prompt', interval: 'note_interval', depth: 'note_depth', position: 'note_position', role: 'note_role' },
            // The AN wrap is read from checkWorldInfo's returned ANBefore/ANAfter lists instead.
            shouldWIAddPrompt: false,
        },
        'scripts/tokenizers.js': {
            getTokenCountAsync: async (text) => countWords(text),
        },
        'scripts/power-user.js': { power_user: powerUser },
        'scripts/tags.js': {
            // SillyTavern gives a character a tag-map entry ([] when it has none); no character, no key.
            getTagKeyForEntity: (chid) => {
                const c = characters[chid];
                if (!c) return undefined;
                if (!(c.avatar in tagMap)) tagMap[c.avatar] = [];
                return c.avatar;
            },
        },
        'scripts/constants.js': {
            debounce_timeout: { quick: 100, short: 200, standard: 300, relaxed: 1000, extended: 5000 },
            GENERATION_TYPE_TRIGGERS: ['normal', 'continue', 'impersonate', 'swipe', 'regenerate', 'quiet'],
        },
        'scripts/extensions/regex/engine.js': {
            // recapd has no regex scripts: content goes through unchanged.
            getRegexedString: (text) => text,
            regex_placement: { MD_DISPLAY: 0, USER_INPUT: 1, AI_OUTPUT: 2, SLASH_COMMAND: 3, WORLD_INFO: 5, REASONING: 6 },
        },
        'scripts/util/StructuredCloneMap.js': {
            StructuredCloneMap: class extends Map {
                constructor({ cloneOnGet = false, cloneOnSet = false } = {}) { super(); this.cg = cloneOnGet; this.cs = cloneOnSet; }
                get(k) { const v = super.get(k); return this.cg ? structuredClone(v) : v; }
                set(k, v) { return super.set(k, this.cs ? structuredClone(v) : v); }
            },
        },
    };

    globalThis.$ = inert();
    globalThis.jQuery = globalThis.$;
    globalThis.toastr = inert();
    globalThis.document = inert();
    globalThis.window = globalThis;
    globalThis.fetch = async () => ({ ok: false, status: 404, json: async () => null, text: async () => '' });
    Math.random = () => {
        state.randomCalls++;
        if (state.randomValue === null) throw new Error('st-oracle: Math.random called but the case allows no randomness');
        return state.randomValue;
    };

    globalThis.__stOracle = {
        module(rel) {
            const m = modules[rel] ?? {};
            return (name) => (Object.hasOwn(m, name) ? m[name] : inert());
        },
    };
    return state;
}
