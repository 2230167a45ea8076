/** Milliseconds in a day, for the fake and demo data that is dated in days. */
export const DAY_MS = 86_400_000
