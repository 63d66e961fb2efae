export function createCeilingActivities() {
  return {
    async noOp(): Promise<void> {},
  };
}
