// Regex keys: JavaScript syntax and UTF-16 semantics a translation must keep (world-info.js:2821-2846, 339-343).
import { entry, simple } from '../case-lib.mjs';

const NONAMES = { world_info_include_names: false };
const one = (text) => [{ name: 'User', text }];

export const cases = [
    simple('regex-annex-b-escapes', 'Without u: \\p{L} is "p{L}", \\u{2} is two u, \\101 is octal "A", ] and { alone are literals, [\\b] is a backspace.',
        'world-info.js:2842',
        [entry(0, { key: ['/\\p{L}/'], content: '\\p{L} literal: yes.' }),
            entry(1, { key: ['/x\\u{2}y/'], content: '"xuuy": yes.' }),
            entry(2, { key: ['/\\101B/'], content: 'Octal A then B: yes.' }),
            entry(3, { key: ['/a]b{c/'], content: 'Literal ] and {: yes.' }),
            entry(4, { key: ['/[\\b]/'], content: 'Backspace: no.' }),
            entry(5, { key: ['/\\p{L}é/u'], content: 'With u, \\p{L} is a letter, as in "xé": yes.' })],
        one('p{L} xuuy AB a]b{c xé'), { settings: NONAMES }),
    simple('regex-utf16-units', 'Without u a regex sees UTF-16 units: . is half an astral character, a class of one emoji matches either half; with u it is one character.',
        'world-info.js:2842',
        [entry(0, { key: ['/\\x01.$/'], content: 'One dot for 🐉 without u: no.' }),
            entry(1, { key: ['/\\x01..$/'], content: 'Two dots without u: yes.' }),
            entry(2, { key: ['/\\x01.$/u'], content: 'One dot with u: yes.' }),
            entry(3, { key: ['/^\\x01[🐉]$/'], content: 'Class of the emoji, one unit, whole haystack without u: no.' }),
            entry(4, { key: ['/^\\x01[🐉][🐉]$/'], content: 'Two units each in the class: yes.' })],
        one('🐉'), { settings: NONAMES }),
    simple('regex-lookaround-lazy', 'Lookahead, negative lookbehind, lazy and counted quantifiers, empty alternatives.',
        'world-info.js:2842',
        [entry(0, { key: ['/sword(?= of)/'], content: 'Lookahead: yes.' }),
            entry(1, { key: ['/(?<!silver )shield/'], content: 'Negative lookbehind, only "silver shield" present: no.' }),
            entry(2, { key: ['/o{2,}/'], content: '"oo" in "wood": yes.' }),
            entry(3, { key: ['/zz|/'], content: 'Empty alternative matches: yes.' }),
            entry(4, { key: ['/(?:)/'], content: 'Empty group matches: yes.' }),
            entry(5, { key: ['/^\\x01s.+?d/'], content: 'Lazy: yes.' })],
        one('sword of wood, silver shield'), { settings: NONAMES }),
    simple('regex-case-insensitive-classes', 'With i and no u: ranges fold by toUpperCase; \\w does not take the Kelvin sign; with u and i, \\w does.',
        'world-info.js:2842',
        [entry(0, { key: ['/[a-z]{3}/i'], content: '"ABC" by range: yes.' }),
            entry(1, { key: ['/\\x01\\w/i'], content: 'Kelvin sign is not \\w with i alone: no.' }),
            entry(2, { key: ['/\\x01\\w/iu'], content: 'With iu, \\w takes the Kelvin sign: yes.' }),
            entry(3, { key: ['/[^k]BC/i'], content: 'Negated class with fold: "ABC" has A not k: yes.' })],
        one('\u212a ABC'), { settings: NONAMES }),
];
