// @fastify/sensible: shared HTTP helpers (reply.vary, request.is, assertions). API errors themselves go
// through ApiError and the error-envelope plugin, so that every one carries a code and an Italian message.
import sensible from '@fastify/sensible'

export default sensible
