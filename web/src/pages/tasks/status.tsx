import { StatusBadge } from '../../components/StatusBadge';
import { statusLabel, statusTone } from './types';

/** A task, run, approval or patch status as the console's shared badge. */
export function Status({ status }: { status: string }) {
  return <StatusBadge tone={statusTone(status)}>{statusLabel(status)}</StatusBadge>;
}
