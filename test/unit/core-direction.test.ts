import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CORE_TIERS, coreArrows, coreRoom, directionFindings, UPWARD_TODAY, upwardArrows } from '../../scripts/core-direction';

// The core's order (docs/ARCHITECTURE.md): a folder of the core imports only folders of lower tiers;
// the arrows still running up are listed, and the list only shrinks.

const root = path.join(__dirname, '../..');

test('the core as it stands: no arrow runs up but the 5 listed, and each listed one still exists', () => {
  expect(UPWARD_TODAY.length).toBeLessThanOrEqual(5);
  expect(directionFindings(coreArrows(root), UPWARD_TODAY)).toEqual({ added: [], gone: [] });
});

test('every folder and top-level file of src/ below the HTTP layer has its tier', () => {
  const outside = ['api', 'resources', 'main', 'cli', 'admin', 'cluster', 'embedded', 'types'];
  const rooms = fs.readdirSync(path.join(root, 'src'), { withFileTypes: true })
    .map((e) => e.name).filter((name) => !outside.includes(name) && (name.endsWith('.ts') || !name.includes('.')));
  expect(rooms.filter((r) => !CORE_TIERS.flat().includes(r))).toEqual([]);
});

test('a planted import from a lower folder up to a higher one, or sideways within a tier, is found, with its file', () => {
  const tree = fs.mkdtempSync(path.join(os.tmpdir(), 'direction-'));
  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(tree, file)), { recursive: true });
    fs.writeFileSync(path.join(tree, file), text);
  };
  write('src/ledger/ledger.ts', "import { x } from '../transfers/service';\nimport type { Db } from '../db';\nexport const y = x;\n");
  write('src/transfers/service.ts', "import { postTransaction } from '../ledger/ledger';\nexport const x = postTransaction;\n");
  write('src/kyc/submissions.ts', "export { z } from '../payment-routes/fees';\n");
  write('src/payment-routes/fees.ts', "export const z = await import('../config');\n");
  write('src/config.ts', 'export const c = 1;\n');
  write('src/db/index.ts', 'export type Db = 1;\n');
  const arrows = coreArrows(tree);
  expect(upwardArrows(arrows).map((a) => [`${a.from} -> ${a.to}`, a.file])).toEqual([
    ['kyc -> payment-routes', path.join('src', 'kyc', 'submissions.ts')],
    ['ledger -> transfers', path.join('src', 'ledger', 'ledger.ts')],
  ]);
  expect(arrows).toContainEqual({ from: 'payment-routes', to: 'config.ts', file: path.join('src', 'payment-routes', 'fees.ts') });
  // Listed, an arrow passes; listed when it is gone, the list is out of date.
  expect(directionFindings(arrows, ['kyc -> payment-routes', 'ledger -> transfers', 'wallets -> mpc'])).toEqual({ added: [], gone: ['wallets -> mpc'] });
  expect(directionFindings(arrows, []).added.map((a) => a.from)).toEqual(['kyc', 'ledger']);
});

test('a file belongs to the core room of its first folder, or to itself at the top of src/', () => {
  expect([coreRoom('src/transfers/service.ts'), coreRoom('src/config.ts'), coreRoom('src/api/app.ts'), coreRoom('activities/chains.ts')]).toEqual(['transfers', 'config.ts', null, null]);
});
