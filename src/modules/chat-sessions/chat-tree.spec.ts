import { latestLeaf } from './chat-tree';

// r ─ a1 ─ u2 ─ a2
//   │         └ a2' ─ u3
//   └ a1'
const links = [
  { id: 'r', parentId: null, sequence: 0 },
  { id: 'a1', parentId: 'r', sequence: 1 },
  { id: 'u2', parentId: 'a1', sequence: 2 },
  { id: 'a2', parentId: 'u2', sequence: 3 },
  { id: 'a1b', parentId: 'r', sequence: 4 },
  { id: 'a2b', parentId: 'u2', sequence: 5 },
  { id: 'u3', parentId: 'a2b', sequence: 6 },
];

describe('chat tree walks', () => {
  it('finds the deepest descendant along the most recent children', () => {
    expect(latestLeaf(links, 'a1')).toBe('u3');
    expect(latestLeaf(links, 'r')).toBe('a1b');
    expect(latestLeaf(links, 'a2')).toBe('a2');
  });
});
