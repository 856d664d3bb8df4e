// Prisma CLI configuration (Prisma 7 reads the connection URL from here, not from the schema).
// The application itself does not use this file: it resolves its database in src/db/resolve-database.ts.
import { defineConfig } from 'prisma/config';

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: {
    // Only `prisma migrate deploy` / `prisma studio` need it; `prisma generate` does not connect.
    url: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/durable_inbox',
  },
});
