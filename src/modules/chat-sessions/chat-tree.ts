import type { TreeLink } from './chat-rows';

// Pure tree walks over the light (id, parent, sequence) rows of a session.

/** Deepest descendant of `fromId` following the most recent child at each level (docs/api.md §3 "switch branch"). */
export function latestLeaf(links: TreeLink[], fromId: string): string {
  const latestChild = new Map<string, TreeLink>();
  for (const l of links) {
    if (!l.parentId) continue;
    const prev = latestChild.get(l.parentId);
    if (!prev || prev.sequence < l.sequence) latestChild.set(l.parentId, l);
  }
  let id = fromId;
  for (let next = latestChild.get(id); next; next = latestChild.get(id)) id = next.id;
  return id;
}
