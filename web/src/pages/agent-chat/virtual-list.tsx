import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState, type ReactNode } from 'react';

interface VirtualListProps {
  count: number;
  /** A stable key per item (measured heights are kept by key). */
  keyOf(index: number): string;
  render(index: number): ReactNode;
  /** The height assumed for an item not measured yet. */
  estimate?: number;
  /** Items rendered beyond each edge of the viewport. */
  overscan?: number;
  label: string;
  /** Changes when the last item's content grows (a streamed reply): the list keeps to the bottom if it was there. */
  tailVersion?: unknown;
}

/** How close to the bottom counts as "at the bottom" (px): the list then follows new content. */
const STICK_PX = 48;

/**
 * A vertically virtualised list of items of varying height: only the items in (and near) the viewport are in the
 * DOM, each measured once rendered (ResizeObserver); an item above the viewport that changes height moves the
 * scroll position by as much, so what is on screen stays put. It opens at the bottom and follows new content while
 * the reader is at the bottom. Written here rather than taken from a library: it is one small component, and the
 * console keeps its dependencies few (web/README.md).
 */
export function VirtualList({ count, keyOf, render, estimate = 96, overscan = 6, label, tailVersion }: VirtualListProps) {
  const scroller = useRef<HTMLDivElement>(null);
  const heights = useRef(new Map<string, number>());
  // Bumped when measured heights change: a render lays the items out again.
  const [, setMeasureVersion] = useState(0);
  const [viewport, setViewport] = useState({ top: 0, height: 600 });
  const atBottom = useRef(true);
  const pendingBump = useRef(false);

  // Where each item starts: recomputed every render (a few thousand additions), from the heights measured so far.
  const offsets = new Float64Array(count + 1);
  for (let i = 0; i < count; i++) offsets[i + 1] = offsets[i] + (heights.current.get(keyOf(i)) ?? estimate);
  const total = offsets[count];
  const first = Math.max(0, lowerBound(offsets, viewport.top) - 1 - overscan);
  const last = Math.min(count, lowerBound(offsets, viewport.top + viewport.height) + overscan);

  const onScroll = useCallback(() => {
    const el = scroller.current;
    if (!el) return;
    atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < STICK_PX;
    setViewport({ top: el.scrollTop, height: el.clientHeight });
  }, []);

  const observer = useMemo(
    () =>
      typeof ResizeObserver === 'undefined'
        ? undefined
        : new ResizeObserver((entries) => {
            const el = scroller.current;
            let changed = false;
            let shift = 0;
            for (const entry of entries) {
              const node = entry.target as HTMLElement;
              const key = node.dataset.key!;
              // The observed box, not offsetHeight: reading layout here would force it once per row.
              const h = Math.round(entry.borderBoxSize?.[0]?.blockSize ?? node.offsetHeight);
              // A node on its way out of the DOM reports no size: it keeps the height it had.
              if (h === 0) continue;
              const was = heights.current.get(key);
              if (was === h) continue;
              heights.current.set(key, h);
              changed = true;
              // An item wholly above what is shown changed: keep the view where it was.
              const top = Number(node.dataset.top);
              if (el && !atBottom.current && top + (was ?? estimate) <= el.scrollTop) shift += h - (was ?? estimate);
            }
            if (!changed) return;
            if (el && shift !== 0) el.scrollTop += shift;
            if (pendingBump.current) return;
            pendingBump.current = true;
            requestAnimationFrame(() => {
              pendingBump.current = false;
              setMeasureVersion((v) => v + 1);
            });
          }),
    [estimate],
  );
  useEffect(() => () => observer?.disconnect(), [observer]);

  // A ref callback's cleanup (React 19) stops observing the item when it leaves the DOM.
  const measure = useCallback(
    (node: HTMLDivElement | null) => {
      if (!node || !observer) return;
      observer.observe(node);
      return () => observer.unobserve(node);
    },
    [observer],
  );

  // Follow the bottom: new items, a growing last item, or heights settling while the reader is there.
  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el || !atBottom.current) return;
    el.scrollTop = el.scrollHeight;
    setViewport((v) => (v.top === el.scrollTop && v.height === el.clientHeight ? v : { top: el.scrollTop, height: el.clientHeight }));
  }, [count, total, tailVersion]);

  useEffect(() => {
    const el = scroller.current;
    if (!el || typeof ResizeObserver === 'undefined') return;
    const ro = new ResizeObserver(() => setViewport({ top: el.scrollTop, height: el.clientHeight }));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  const items: ReactNode[] = [];
  for (let i = first; i < last; i++) {
    const key = keyOf(i);
    items.push(
      <div
        key={key}
        ref={measure}
        data-key={key}
        data-top={offsets[i]}
        className="vl-item"
        style={{ transform: `translateY(${offsets[i]}px)` }}
        role="listitem"
        aria-posinset={i + 1}
        aria-setsize={count}
      >
        {render(i)}
      </div>,
    );
  }

  return (
    <div ref={scroller} className="vl-scroller" onScroll={onScroll} tabIndex={0} aria-label={label} role="region">
      <div className="vl-space" style={{ height: total }} role="list">
        {items}
      </div>
    </div>
  );
}

/** The first index i with offsets[i] > y (offsets ascending). */
function lowerBound(offsets: Float64Array, y: number): number {
  let lo = 0;
  let hi = offsets.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (offsets[mid] <= y) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
