// Budget: world-info.js:4624-4629, 4894-4957. Tokens are counted as whitespace-separated words on both sides.
import { entry, chat, simple } from '../case-lib.mjs';

const msg = chat('dragon');
const four = (uid, order, over = {}) => entry(uid, { key: ['dragon'], order, content: `entry ${uid} four words`, ...over });

export const cases = [
    simple('budget-basic', 'budget = round(25% x 40) = 10 words: the third four-word entry overflows and the rest stop.',
        'world-info.js:4624, 4940-4955',
        [four(0, 400), four(1, 300), four(2, 200), four(3, 100)], msg, { max_context: 40 }),
    simple('budget-exact', 'Reaching the budget exactly rejects the entry (>=).',
        'world-info.js:4942',
        [four(0, 400), four(1, 300)], msg, { max_context: 32 }),
    simple('budget-ignore', 'ignoreBudget entries go in after the overflow; others after it are skipped.',
        'world-info.js:4896-4907',
        [four(0, 400), four(1, 300), four(2, 200), four(3, 150, { ignoreBudget: true }), four(4, 100), four(5, 50, { ignoreBudget: true })],
        msg, { max_context: 40 }),
    simple('budget-cap', 'world_info_budget_cap lowers the budget.',
        'world-info.js:4626-4629',
        [four(0, 400), four(1, 300), four(2, 200)], msg, { max_context: 1000, settings: { world_info_budget_cap: 9 } }),
    simple('budget-min-one', 'A budget rounding to 0 becomes 1: every entry of a word or more overflows.',
        'world-info.js:4624 (|| 1)',
        [four(0, 400), four(1, 300, { ignoreBudget: true })], msg, { max_context: 1 }),
    simple('budget-percent', 'world_info_budget percent and rounding: round(10% x 85) = 9 (8.5 rounds up).',
        'world-info.js:4624',
        [four(0, 400), four(1, 300), four(2, 200)], msg, { max_context: 85, settings: { world_info_budget: 10 } }),
    simple('budget-recursion', 'Text activated in earlier passes counts against the budget; an overflow stops recursion.',
        'world-info.js:4892, 4942, 4995, 5023',
        [entry(0, { key: ['dragon'], content: 'one two three castle' }),
            entry(1, { key: ['castle'], order: 300, content: 'five six seven treasure' }),
            entry(2, { key: ['castle'], order: 200, content: 'eight nine ten eleven' }),
            entry(3, { key: ['treasure'], content: 'Pass 3 never runs: no.' })],
        msg, { max_context: 44, settings: { world_info_recursive: true } }),
    simple('budget-order-by-sort', 'The budget is spent in sorted order (order descending), not uid order.',
        'world-info.js:88, 4884-4890',
        [four(0, 10), four(1, 20), four(2, 30)], msg, { max_context: 40 }),
];
