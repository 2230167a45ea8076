// The features, one line each, in the order of the document's tags, schemas and paths: app.ts registers them in
// this order, each with the same FeatureOptions. A line imports the feature's plugin.ts (docs/contributing.md,
// "Adding a feature"). Imported one by one rather than listed as `export … from` lines, because a module's
// exports iterate in alphabetical order, not in the order written.
import type { FastifyPluginAsync } from 'fastify'
import type { WebhookPluginOptions } from './webhooks/plugin.js'

/**
 * What the caller of buildApp hands every feature's plugin, the same object to each: a feature that takes
 * options reads its own member, named after it (tests stub how webhooks resolve hosts).
 */
export type FeatureOptions = WebhookPluginOptions

export const features: readonly FastifyPluginAsync<FeatureOptions>[] = [
  (await import('./contacts/plugin.js')).default,
  (await import('./events/plugin.js')).default,
  (await import('./webhooks/plugin.js')).default,
  (await import('./privacy/plugin.js')).default,
]
