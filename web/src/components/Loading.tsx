/** A polite placeholder while something loads (announced once by screen readers). */
export function Loading({ what }: { what: string }) {
  return (
    <p className="loading" role="status">
      Loading {what}…
    </p>
  );
}
