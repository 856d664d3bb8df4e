FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production PRISMA_SCHEMA_ENGINE_BINARY=/nonexistent
COPY package.json package-lock.json ./
COPY scripts ./scripts
COPY prisma ./prisma
COPY prisma.config.ts tsconfig.json ./
# Dev dependencies too (tsx runs the entrypoints), but not the tests' browser (~200 MB unpacked).
RUN npm ci --include=dev --no-audit --no-fund && rm -rf node_modules/@sparticuz
# The product only: the emulators (emulators/) serve `npm run dev` and the tests, not the production stack.
COPY src ./src
# Prebuild the workflow bundle once, so workers start without bundling.
RUN npm run build:workflows
USER node
CMD ["npm", "run", "start:worker"]
