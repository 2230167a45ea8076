import type { Prisma } from '../generated/prisma/client.js'

/** A Prisma client or the client of an interactive transaction: admin functions work inside either. */
export type PrismaExecutor = Prisma.TransactionClient
