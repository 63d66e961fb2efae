/** The p-th percentile of an ascending array (nearest rank); NaN when empty. */
export const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;
