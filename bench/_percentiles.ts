/** Percentiles of one sample, as the reply benchmarks (inbound, media) report them. */

/** The `p` quantile (0..1) of `xs`, nearest rank; NaN for none. */
export function pct(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))] ?? NaN;
}

export const median = (xs: readonly number[]) => pct(xs, 0.5);
