export default async function globalTeardown() {
  const stack = (globalThis as any).__STACK__ as { stop(keepDatabase?: boolean): Promise<void> } | undefined;
  await stack?.stop(Boolean(process.env.KEEP_TEST_DATABASE));
}
