// The tenant's anchor row, shared by the features that write a tenant's contacts (creates, imports, erasures).
/**
 * The tenant's row in event_feeds, made when it has none (feed_anchor(), the migration feed_sequenced): an
 * INSERT … SELECT reads its tenant from it to run on one node of a distributed PostgreSQL (the batch import's
 * creates, a create in a tenant with erased addresses).
 */
export const FEED_ANCHOR_SQL = 'SELECT feed_anchor($1)'
