import type { TreeLink } from './chat-rows';

/** Pure tree walks over the light (id, parent, sequence) rows of a session. */

export interface SiblingInfo {
  siblingIndex: number;
  siblingCount: number;
  childrenIds: string[];
}

/** Children, sibling index and sibling count of every message, from the light tree rows. */
export function siblingInfo(links: TreeLink[]): Map<string, SiblingInfo> {
  const byParent = new Map<string | null, string[]>();
  for (const l of links) {
    const list = byParent.get(l.parentId);
    if (list) list.push(l.id);
    else byParent.set(l.parentId, [l.id]);
  }
  const out = new Map<string, SiblingInfo>();
  for (const [, ids] of byParent) ids.forEach((id, i) => out.set(id, { siblingIndex: i, siblingCount: ids.length, childrenIds: [] }));
  for (const l of links) {
    const children = byParent.get(l.id);
    if (children) out.get(l.id)!.childrenIds = children;
  }
  return out;
}

/** Deepest descendant of `fromId` following the most recent child at each level (seed 002 "switch branch"). */
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

/** The chain from the root to `leafId`, root first. */
export function pathTo<T extends TreeLink>(nodes: T[], leafId: string | null): T[] {
  if (!leafId) return [];
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const out: T[] = [];
  for (let n = byId.get(leafId); n; n = n.parentId ? byId.get(n.parentId) : undefined) out.push(n);
  return out.reverse();
}
