// Timestamps leave PostgreSQL already as the API writes them: ISO 8601 in UTC, milliseconds, `Z`.

/** SQL for `expression` (a timestamptz) as `YYYY-MM-DDTHH:MM:SS.mmmZ`. */
export const isoUtc = (expression: string) =>
  `to_char(${expression} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
