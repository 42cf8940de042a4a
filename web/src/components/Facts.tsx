import type { ReactNode } from 'react';

/** Key figures: each a label over its value (`.facts` in web/src/app/app.css). */
export function Facts({ facts, label }: { facts: Array<[string, ReactNode]>; label?: string }) {
  return (
    <dl className="facts" aria-label={label}>
      {facts.map(([name, value]) => (
        <div key={name}>
          <dt>{name}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}
