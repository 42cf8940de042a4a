import { ErrorNotice } from '../../components/ErrorNotice';

/**
 * The console's error notice under the name the run views (run-view.tsx, run-actions.tsx) import; the shared
 * ErrorNotice shows the fields an error's type adds (a drifted patch's path, expected and found) itself.
 */
export function TaskError({ error, title }: { error: unknown; title?: string }) {
  return <ErrorNotice error={error} title={title} />;
}
