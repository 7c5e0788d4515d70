export const cases = [
  {
    name: 'smoke',
    about: 'one keyed entry',
    source: 'world-info.js:4782-4810',
    books: { A: { entries: { '0': { uid: 0, key: ['dragon'], content: 'Dragons breathe fire.', position: 0, order: 100 } } } },
    global_books: ['A'],
    scans: [{ messages: [{ name: 'User', text: 'Tell me about the dragon.' }] }],
  },
];
