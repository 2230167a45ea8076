// The one prefix of the versioned API: routes, Location headers and examples derive from it.
export const API_PREFIX = '/api/v1'
