import type { ReactNode } from 'react';
import { ErrorNotice } from './ErrorNotice';
import { Loading } from './Loading';
import type { Resource } from './useResource';

/**
 * A read's states in one place: its error (with Try again), "Loading …" until the first answer, then what `children`
 * makes of the data. The data stays while a reload runs or after one failed (the notice then says the refresh failed).
 */
export function Loaded<T>({
  resource,
  what,
  title,
  children,
}: {
  resource: Resource<T>;
  /** What is loading, as in "Loading the keys…". */
  what: string;
  /** The notice's title when nothing could be loaded. */
  title?: string;
  children: (data: T) => ReactNode;
}) {
  const { data, error, loading, reload } = resource;
  return (
    <>
      <ErrorNotice error={error} onRetry={reload} title={data === undefined ? title : 'The last refresh failed'} />
      {data === undefined ? loading && <Loading what={what} /> : children(data)}
    </>
  );
}
