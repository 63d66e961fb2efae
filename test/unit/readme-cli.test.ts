import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

// Every `npm run cli -- …` the README and docs/ show is a command the CLI's own help lists, with
// options it takes and ids of the kind it names.

const root = path.join(__dirname, '../..');

/** The help's entries: command words → the entry's text (its continuation lines included). */
function helpEntries(): Map<string, string> {
  const run = spawnSync(process.execPath, ['--import', 'tsx', path.join(root, 'src/cli/index.ts'), '--help'], { cwd: root, encoding: 'utf8' });
  const entries = new Map<string, string>();
  let current: string | undefined;
  for (const line of `${run.stdout}${run.stderr}`.split('\n').slice(1)) {
    const entry = /^ {2}([a-z][a-z-]*(?: [a-z][a-z-]*)?)(?=\s|$)(.*)$/.exec(line);
    if (entry && !line.startsWith('   ')) {
      current = entry[1];
      entries.set(current, line);
    } else if (current && line.trim()) {
      entries.set(current, `${entries.get(current)}\n${line}`);
    }
  }
  return entries;
}

/** Every command the docs show: the text after `npm run cli --` up to the end of the code span or line. */
function documentedCommands(): { file: string; command: string }[] {
  const files = ['README.md', ...fs.readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
  const found: { file: string; command: string }[] = [];
  for (const file of files) {
    const text = fs.readFileSync(path.join(root, file), 'utf8').replace(/\\\n\s*/g, ' ');
    for (const m of text.matchAll(/npm run cli -- ([^`\n#]+)/g)) found.push({ file, command: m[1].trim() });
  }
  return found;
}

const entries = helpEntries();
const documented = documentedCommands();

test('the help lists the commands, and the docs show some', () => {
  expect(entries.size).toBeGreaterThan(20);
  expect(documented.length).toBeGreaterThan(30);
});

test.each(documented.map((d) => [d.file, d.command]))('%s: npm run cli -- %s', (_file, command) => {
  const words = command.split(/\s+/);
  const name = entries.has(`${words[0]} ${words[1]}`) ? `${words[0]} ${words[1]}` : words[0];
  const entry = entries.get(name);
  expect(entry).toBeDefined();
  for (const option of command.match(/--[a-z][a-z-]*/g) ?? []) expect(entry).toContain(option);
  // Ids the docs show (`ext_…`, `dev_…`) are of a kind the entry names.
  for (const id of command.match(/\b[a-z]+_…/g) ?? []) expect(entry).toContain(id);
});
