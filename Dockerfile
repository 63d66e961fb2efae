# One image for both production processes: `npm run start:api` (default) and `npm run start:worker`.
FROM node:22-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY workflows ./workflows
COPY activities ./activities
COPY workers ./workers
COPY scripts ./scripts
USER node
EXPOSE 3000
CMD ["npm", "run", "start:api"]
