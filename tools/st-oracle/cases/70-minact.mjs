// Min activations: world-info.js:4982-5008.
import { entry, chat, simple } from '../case-lib.mjs';

const long = chat('m1 oak', 'm2 birch', 'm3 cedar', 'm4 elm', 'm5 fir');

export const cases = [
    simple('minact-grows-depth', 'Min activations: the scan goes one message deeper per pass until enough entries activate.',
        'world-info.js:4990-5006, 386-388',
        [entry(0, { key: ['birch'], content: 'Birch, 4th newest.' }), entry(1, { key: ['oak'], content: 'Oak, 5th newest: no.' })],
        long, { settings: { world_info_depth: 1, world_info_min_activations: 1 } }),
    simple('minact-depth-cap', 'The depth cap is checked before growing: history is scanned to depth_max + 1 messages (facts §7).',
        'world-info.js:4993-4997; facts §7',
        [entry(0, { key: ['cedar'], content: 'Cedar, 3rd newest: yes.' }), entry(1, { key: ['birch'], content: 'Birch, 4th newest: no.' })],
        long, { settings: { world_info_depth: 1, world_info_min_activations: 2, world_info_min_activations_depth_max: 2 } }),
    simple('minact-chat-length', 'Min activations stop once the depth passes the chat length.',
        'world-info.js:4996',
        [entry(0, { key: ['oak'], content: 'Oak: yes.' }), entry(1, { key: ['willow'], content: 'Absent: no.' })],
        long, { settings: { world_info_depth: 1, world_info_min_activations: 5 } }),
    simple('minact-satisfied', 'Constants count: no extra pass when enough entries are active.',
        'world-info.js:4988',
        [entry(0, { constant: true, content: 'Constant.' }), entry(1, { key: ['oak'], content: 'Oak, deep: no.' })],
        long, { settings: { world_info_depth: 1, world_info_min_activations: 1 } }),
    simple('minact-no-recursion-buffer', 'Recursion passes run first; then a deeper min-activations pass, which does not scan the recursion buffer.',
        'world-info.js:322-325, 4982-4986',
        [entry(0, { key: ['fir'], content: 'The wind.' }),
            entry(1, { key: ['wind'], scanDepth: 1, content: 'Wind from recursion: yes.' }),
            entry(2, { key: ['elm'], content: 'Elm, 2nd newest.' }),
            entry(3, { key: ['wind'], excludeRecursion: true, content: 'Wind only in the recursion buffer, excluded from recursion passes, min-activation pass does not see it: no.' })],
        long, { settings: { world_info_depth: 1, world_info_min_activations: 3, world_info_recursive: true } }),
    simple('minact-max-steps', 'Max recursion steps also end min-activation passes.',
        'world-info.js:4656-4660',
        [entry(0, { key: ['oak'], content: 'Oak, 5th newest: no.' }), entry(1, { key: ['cedar'], content: 'Cedar, 3rd newest: yes.' })],
        long, { settings: { world_info_depth: 1, world_info_min_activations: 2, world_info_max_recursion_steps: 3 } }),
];
