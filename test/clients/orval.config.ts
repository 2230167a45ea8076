// orval's configuration for the contract check (npm run clients:check): a fetch client from the committed
// document, whose requests go through rubrica-fetch.ts for the base URL and the key.
import { defineConfig } from 'orval'

export default defineConfig({
  rubrica: {
    input: '../../openapi.json',
    output: {
      target: 'generated/orval/rubrica.ts',
      client: 'fetch',
      override: { mutator: { path: './orval-fetch.ts', name: 'rubricaFetch' } },
    },
  },
})
