import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * The fixture files of `dir` ending in `ext` are exactly those its README's table lists, each with
 * the sha256 listed (rows `| \`file\` | … | \`sha256\` |`): published files stay as published.
 */
export function expectFixturesAsListed(dir: string, ext: string) {
  const readme = fs.readFileSync(path.join(dir, 'README.md'), 'utf8');
  const listed = [...readme.matchAll(/^\| `([^`]+)` \|.*\| `([0-9a-f]{64})` \|$/gm)].map((m) => [m[1]!, m[2]!]);
  expect(listed.map(([name]) => name).sort()).toEqual(fs.readdirSync(dir).filter((f) => f.endsWith(ext)).sort());
  for (const [name, sha] of listed) expect([name, createHash('sha256').update(fs.readFileSync(path.join(dir, name))).digest('hex')]).toEqual([name, sha]);
}
