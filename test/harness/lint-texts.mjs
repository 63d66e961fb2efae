// Lints source texts as if they were files of the project, all in one ESLint process (its flat config
// is an ES module, which jest's sandbox cannot load). Reads [{code, file}] as JSON on stdin, writes
// each text's import-rule messages [{ruleId, message}] as JSON on stdout.
import { ESLint } from 'eslint';

let input = '';
for await (const chunk of process.stdin) input += chunk;
const eslint = new ESLint({ cwd: process.cwd() });
const results = [];
for (const { code, file } of JSON.parse(input)) {
  const [report] = await eslint.lintText(code, { filePath: file });
  results.push(report.messages
    .filter((m) => m.ruleId === '@typescript-eslint/no-restricted-imports')
    .map(({ ruleId, message }) => ({ ruleId, message })));
}
process.stdout.write(JSON.stringify(results));
