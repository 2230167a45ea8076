// @fastify/sensible: rubrica uses its reply helpers (reply.cacheControl for the API's no-store responses).
// Its httpErrors and reply.notFound() & co. are deliberately not used: every API error must carry a machine code
// and an Italian message, which ApiError and the error-envelope plugin give; an http-errors error has neither.
import sensible from '@fastify/sensible'

export default sensible
