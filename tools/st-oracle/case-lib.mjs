// Helpers for writing conformance cases (cases/*.mjs). Not SillyTavern's code.

/** An entry as SillyTavern's editor saves it (every field present, its defaults), with `over` applied. */
export function entry(uid, over = {}) {
    return {
        uid,
        key: [],
        keysecondary: [],
        comment: '',
        content: '',
        constant: false,
        vectorized: false,
        selective: true,
        selectiveLogic: 0,
        addMemo: true,
        order: 100,
        position: 0,
        disable: false,
        ignoreBudget: false,
        excludeRecursion: false,
        preventRecursion: false,
        matchPersonaDescription: false,
        matchCharacterDescription: false,
        matchCharacterPersonality: false,
        matchCharacterDepthPrompt: false,
        matchScenario: false,
        matchCreatorNotes: false,
        delayUntilRecursion: 0,
        probability: 100,
        useProbability: true,
        depth: 4,
        outletName: '',
        group: '',
        groupOverride: false,
        groupWeight: 100,
        scanDepth: null,
        caseSensitive: null,
        matchWholeWords: null,
        useGroupScoring: null,
        automationId: '',
        role: 0,
        sticky: 0,
        cooldown: 0,
        delay: 0,
        triggers: [],
        displayIndex: uid,
        characterFilter: { isExclude: false, names: [], tags: [] },
        ...over,
    };
}

/** A book file: `entries` keyed by each entry's uid. */
export function book(...entries) {
    return { entries: Object.fromEntries(entries.map((e) => [String(e.uid), e])) };
}

/** A chat, oldest first, alternating User and Seraphina. */
export function chat(...texts) {
    return texts.map((text, i) => ({ name: i % 2 === 0 ? 'User' : 'Seraphina', text }));
}

/** The character most cases talk to. */
export const SERAPHINA = { name: 'Seraphina', avatar: 'Seraphina.png', tags: [] };

/** A case with one global book "World" holding `entries` and one scan of `messages`. */
export function simple(name, about, source, entries, messages, more = {}) {
    const { scan = {}, ...rest } = more;
    return {
        name,
        about,
        source,
        character: SERAPHINA,
        books: { World: book(...entries) },
        global_books: ['World'],
        scans: [{ messages, ...scan }],
        ...rest,
    };
}
