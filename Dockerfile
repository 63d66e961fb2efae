# One image for both production processes: `npm run start:api` (default) and `npm run start:worker`.
FROM node:22-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
# `npm install`, not `npm ci`: the lock file holds the platform packages of native dependencies
# (@swc/core, …) for Linux only, as the registry it was made against serves, and `npm ci` refuses a
# lock without the others. Installed versions still come from the lock file.
RUN npm install --omit=dev --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
# The stablecoin ABI the chain adapters read (the Solidity source is only for `npm run contracts:compile`).
COPY contracts/Stablecoin.json ./contracts/
COPY workflows ./workflows
COPY activities ./activities
COPY workers ./workers
COPY scripts ./scripts
# The sanctions-list snapshot, loaded only while SANCTIONS_DATA_DIR holds no lists (production
# does not clear anybody on it once older than SANCTIONS_SNAPSHOT_MAX_AGE_DAYS).
COPY data/sanctions-snapshot ./data/sanctions-snapshot
# The workflow code bundled once here, so that a worker starts without webpack (workers/workflow-bundle.ts).
RUN npm run build:workflows -- /app/dist/workflow-bundle.js
ENV WORKFLOW_BUNDLE_PATH=/app/dist/workflow-bundle.js
# Sanctions lists (`npm run cli -- lists sync`) are written here; docker-compose mounts a volume on it
# that the API and the worker share. A volume takes the owner of the folder it is mounted on.
ENV SANCTIONS_DATA_DIR=/app/.data/sanctions
RUN mkdir -p /app/.data/sanctions && chown -R node:node /app/.data
USER node
EXPOSE 3000
CMD ["npm", "run", "start:api"]
