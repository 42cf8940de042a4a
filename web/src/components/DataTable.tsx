import { Fragment, type Key, type ReactNode } from 'react';

/** One column: its header and how a row fills its cell. */
export interface Column<T> {
  /** The header; with `hideHeader` it is read to screen readers only (an actions column). */
  header: string;
  hideHeader?: boolean;
  /** Figures: right-aligned, tabular digits. */
  num?: boolean;
  /** The cell that names its row (`<th scope="row">`): a row's accessible name starts with it. */
  rowHeader?: boolean;
  cell: (row: T) => ReactNode;
}

/**
 * The console's table: a caption that names it (read to screen readers, hidden on screen unless `showCaption`), a
 * header per column, a row per item; `empty`, when given, stands in place of the table when there are no rows. `detail`
 * is a full-width row under an item when it gives one (an artifact opened in place).
 */
export function DataTable<T>({
  caption,
  showCaption = false,
  columns,
  rows,
  rowKey,
  empty,
  detail,
}: {
  caption: string;
  showCaption?: boolean;
  columns: ReadonlyArray<Column<T>>;
  rows: readonly T[];
  rowKey: (row: T, index: number) => Key;
  empty?: ReactNode;
  detail?: (row: T) => ReactNode;
}) {
  if (rows.length === 0 && empty !== undefined) return <>{empty}</>;
  return (
    <table>
      <caption className={showCaption ? undefined : 'visually-hidden'}>{caption}</caption>
      <thead>
        <tr>
          {columns.map((c, i) => (
            <th key={i} scope="col" className={c.num ? 'num' : undefined}>
              {c.hideHeader ? <span className="visually-hidden">{c.header}</span> : c.header}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((row, index) => {
          const more = detail?.(row);
          return (
            <Fragment key={rowKey(row, index)}>
              <tr>
                {columns.map((c, i) =>
                  c.rowHeader ? (
                    <th key={i} scope="row">
                      {c.cell(row)}
                    </th>
                  ) : (
                    <td key={i} className={c.num ? 'num' : undefined}>
                      {c.cell(row)}
                    </td>
                  ),
                )}
              </tr>
              {more != null && more !== false && (
                <tr>
                  <td colSpan={columns.length}>{more}</td>
                </tr>
              )}
            </Fragment>
          );
        })}
      </tbody>
    </table>
  );
}
