import { useEffect, useId, type ReactNode } from 'react';

/** A page: its h1 (also the document title), optional actions beside it, and its content. */
export function Page({ title, actions, children }: { title: string; actions?: ReactNode; children: ReactNode }) {
  const id = useId();
  useEffect(() => {
    document.title = `${title} · Hecate`;
  }, [title]);
  return (
    <section className="page" aria-labelledby={id}>
      <div className="page-head">
        <h1 id={id}>{title}</h1>
        {actions && <div className="actions">{actions}</div>}
      </div>
      {children}
    </section>
  );
}
