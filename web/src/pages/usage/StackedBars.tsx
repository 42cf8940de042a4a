import { useId } from 'react';
import { DataTable } from '../../components/DataTable';

export interface Series {
  key: string;
  label: string;
  values: number[];
}

const WIDTH = 720;
const HEIGHT = 200;
const PAD = { left: 70, right: 8, top: 8, bottom: 24 };
/** Colour per series, in order (the legend and the table name each one too: colour is never the only cue). */
export const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#b07aa1', '#9c755f'];

/** A round upper bound for the axis: 1, 2 or 5 times a power of ten. */
function niceMax(value: number): number {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  return [1, 2, 5, 10].map((m) => m * power).find((m) => m >= value) ?? 10 * power;
}

/**
 * A small hand-written stacked bar chart (no charting library: the console's first load stays small). One bar per
 * bucket, one segment per series; a legend, hover titles, and the same numbers as a table for screen readers.
 */
export function StackedBars({
  title,
  buckets,
  bucketLabel,
  series,
  format,
}: {
  title: string;
  buckets: string[];
  bucketLabel: (at: string) => string;
  series: Series[];
  format: (value: number) => string;
}) {
  const id = useId();
  const totals = buckets.map((_, i) => series.reduce((sum, s) => sum + s.values[i], 0));
  const grand = totals.reduce((a, b) => a + b, 0);
  const max = niceMax(Math.max(0, ...totals));
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const step = plotW / Math.max(1, buckets.length);
  const barW = Math.max(1, step * 0.8);
  const y = (v: number) => PAD.top + plotH - (v / max) * plotH;
  const ticks = [0, max / 2, max];
  const labelEvery = Math.max(1, Math.ceil(buckets.length / 6));
  return (
    <figure className="chart" aria-labelledby={`${id}-caption`}>
      <figcaption id={`${id}-caption`}>
        {title}: {format(grand)} in total
      </figcaption>
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        role="img"
        aria-label={`${title} over time, ${format(grand)} in total, by ${series.map((s) => s.label).join(', ') || 'nothing'}`}
      >
        {ticks.map((t) => (
          <g key={t} className="tick">
            <line x1={PAD.left} x2={WIDTH - PAD.right} y1={y(t)} y2={y(t)} />
            <text x={PAD.left - 6} y={y(t) + 4} textAnchor="end">
              {format(t)}
            </text>
          </g>
        ))}
        {buckets.map((at, i) => {
          let base = 0;
          const x = PAD.left + i * step + (step - barW) / 2;
          return (
            <g key={at}>
              {series.map((s, si) => {
                const v = s.values[i];
                if (v <= 0) return null;
                const top = y(base + v);
                const h = y(base) - top;
                base += v;
                return (
                  <rect key={s.key} x={x} y={top} width={barW} height={Math.max(h, 0.5)} fill={PALETTE[si % PALETTE.length]}>
                    <title>{`${bucketLabel(at)} · ${s.label}: ${format(v)}`}</title>
                  </rect>
                );
              })}
              {i % labelEvery === 0 && (
                <text className="x-label" x={x + barW / 2} y={HEIGHT - 6} textAnchor="middle">
                  {bucketLabel(at)}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <ul className="legend" aria-label={`${title} legend`}>
        {series.map((s, si) => (
          <li key={s.key}>
            <span className="swatch" ref={(el) => paint(el, PALETTE[si % PALETTE.length])} aria-hidden="true" />
            {s.label}: {format(s.values.reduce((a, b) => a + b, 0))}
          </li>
        ))}
      </ul>
      <details>
        <summary>{title} as a table</summary>
        <DataTable
          caption={`${title} by bucket`}
          columns={[
            { header: 'Bucket', rowHeader: true, cell: (i: number) => bucketLabel(buckets[i]) },
            ...series.map((s) => ({ header: s.label, num: true, cell: (i: number) => format(s.values[i]) })),
          ]}
          rows={buckets.map((_, i) => i).filter((i) => totals[i] > 0)}
          rowKey={(i) => buckets[i]}
        />
      </details>
    </figure>
  );
}

/** Colours a legend swatch like its series (through the CSSOM: the page's CSP allows no inline style attribute). */
function paint(el: HTMLElement | null, colour: string): void {
  if (el) el.style.background = colour;
}
