// Timestamps leave PostgreSQL already as the API writes them: ISO 8601 in UTC, milliseconds, `Z`.

/** SQL for `expression` (a timestamptz) as `YYYY-MM-DDTHH:MM:SS.mmmZ`. */
export const isoUtc = (expression: string) =>
  `to_char(${expression} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

/**
 * SQL for `expression` with its microseconds, as the contacts list's cursor: `…SS.mmmuuuZ`, or `…SS.mmmZ` when
 * the microseconds of the millisecond are zero (a createdAt stored before they were kept).
 */
export const isoUtcMicros = (expression: string) => {
  // The format chosen by a comparison, not a regexp over the text: the regexp cost a page of 51 contacts about
  // 150 µs of the database's CPU, as much as the rest of the page.
  const utc = `(${expression} AT TIME ZONE 'UTC')`
  return `to_char(${utc}, CASE WHEN date_trunc('milliseconds', ${utc}) = ${utc}
    THEN 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"' ELSE 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"' END)`
}

/**
 * The same as isoUtc, through the database's IMMUTABLE function iso_utc (a migration's): for RETURNING lists, which
 * a distributed PostgreSQL (Citus) runs on its nodes only when they call immutable functions alone. A SELECT keeps
 * isoUtc, which PostgreSQL computes inline, without a function call per value.
 */
export const isoUtcReturned = (expression: string) => `iso_utc(${expression})`
