// Books given as file text: the entry hash (timed effects) covers the entry as JSON.parse reads it and
// JSON.stringify writes it back (world-info.js:4518-4521), whatever the file's spelling.
import { chat, SERAPHINA } from '../case-lib.mjs';

const raw = String.raw`{
  "entries": {
    "0": {"uid": 0, "key": ["dragon"], "content": "Caf\u00e9 \/ d\u00e9j\u00e0 vu \ud83d\udc09", "order": 100.0, "position": 0, "depth": 4e0,
          "probability": 1E2, "sticky": 2.0, "comment": "x\u2028y", "weight": -0.0, "big": 12345678901234567890, "tiny": 1e-7, "half": 0.5e1},
    "1": {"uid": "1", "key": ["wyrm"], "content": "first", "sticky": 2, "position": 0, "order": 50, "content": "second, duplicate member"},
    "2": {"key": ["wyrm"], "position": 1, "uid": 2, "sticky": 3, "extra": {"b": 1, "a": [1, 2.50, null, true]}, "content": "member order differs"}
  },
  "name": "Raw"
}`;

export const cases = [
    {
        name: 'raw-number-spellings-hash',
        about: 'Sticky entries whose file spells numbers as 100.0, 4e0, 1E2, -0.0, a 20-digit integer, escapes \\u and \\/, a surrogate pair, a duplicate member, a nested object: the stored hashes are SillyTavern\'s.',
        source: 'world-info.js:4518-4521; utils.js getStringHash',
        character: SERAPHINA,
        books: {},
        books_raw: { Raw: raw },
        global_books: ['Raw'],
        settings: { world_info_depth: 1 },
        scans: [
            { messages: chat('dragon wyrm') },
            { messages: chat('dragon wyrm', 'calm') },
        ],
    },
];
