// Medians, the harness's one statistic: over rounds, over cold starts.

/** The middle item by `key`; of an even count, the lower of the two middle ones. */
export function middle<T>(items: readonly T[], key: (item: T) => number): T | undefined {
  const sorted = [...items].sort((a, b) => key(a) - key(b))
  return sorted[Math.floor((sorted.length - 1) / 2)]
}

export const median = (values: readonly number[]): number | undefined => middle(values, (value) => value)
