// Fields of unexpected JSON types, read with JavaScript truthiness, ?? and strict equality.
import { entry, chat, simple } from '../case-lib.mjs';

const msg = chat('The knight draws a sword.');

export const cases = [
    simple('coerce-selective-logic-string', 'selectiveLogic "3" (a string) equals no logic (strict ===): never activates with secondary keys; "0" neither.',
        'world-info.js:4826-4861',
        [entry(0, { key: ['knight'], keysecondary: ['sword'], selectiveLogic: '3', content: 'Logic "3": no.' }),
            entry(1, { key: ['knight'], keysecondary: ['sword'], selectiveLogic: '0', content: 'Logic "0": no.' }),
            entry(2, { key: ['knight'], keysecondary: ['sword'], selectiveLogic: null, content: 'Logic null is AND_ANY: yes.' })], msg),
    simple('coerce-truthy-strings', 'constant "false" is truthy (constant); useProbability "false" is truthy (rolls probability 0: fails); disable "true" is not == true.',
        'world-info.js:4688, 4768, 4913',
        [entry(0, { constant: 'false', content: 'constant "false": yes.' }),
            entry(1, { key: ['knight'], useProbability: 'false', probability: 0, content: 'useProbability "false": no.' }),
            entry(2, { key: ['knight'], disable: 'true', content: 'disable "true": yes.' })], msg),
    simple('coerce-falsy-overrides', 'Per-entry overrides 0 and false are used as given (?? only replaces null/undefined): caseSensitive 0 is insensitive under a case-sensitive global; matchWholeWords 0 turns whole words off; scanDepth false scans nothing.',
        'world-info.js:270, 280, 347',
        [entry(0, { key: ['KNIGHT'], caseSensitive: 0, content: 'caseSensitive 0: yes.' }),
            entry(1, { key: ['kni'], caseSensitive: false, matchWholeWords: 0, content: 'matchWholeWords 0: yes.' }),
            entry(2, { key: ['knight'], scanDepth: false, content: 'scanDepth false: no.' }),
            entry(3, { key: ['KNIGHT'], content: 'Global case-sensitive: no.' })], msg,
        { settings: { world_info_case_sensitive: true, world_info_match_whole_words: true } }),
    simple('coerce-odd-containers', 'triggers with an unknown name never fire; a characterFilter that is a string, and keysecondary that is a string, are ignored.',
        'world-info.js:4694-4729, 4812-4816',
        [entry(0, { key: ['knight'], triggers: ['sometimes'], content: 'Unknown trigger: no.' }),
            entry(1, { key: ['knight'], characterFilter: 'Bob', content: 'characterFilter a string: yes.' }),
            entry(2, { key: ['knight'], keysecondary: 'dragon', content: 'keysecondary a string: yes.' })], msg),
    simple('coerce-negative-sticky', 'sticky -1 is truthy: the effect ends one message before it starts and ends at the next scan.',
        'world-info.js:604-611, 647-652',
        [entry(0, { key: ['knight'], sticky: -1, content: 'Negative sticky.' })], msg, {
            settings: { world_info_depth: 1 },
            scans: [{ messages: chat('knight') }, { messages: chat('knight', 'calm') }, { messages: chat('knight', 'calm', 'calm') }],
        }),
];
