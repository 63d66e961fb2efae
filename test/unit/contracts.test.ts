import { readFileSync } from 'node:fs';
import path from 'node:path';
import { compileStablecoin } from '../../scripts/compile-contracts';

// The committed artifact the chains deploy is what contracts/Stablecoin.sol compiles to.

test('contracts/Stablecoin.json is current (npm run contracts:compile)', () => {
  const committed = JSON.parse(readFileSync(path.join(__dirname, '../../contracts/Stablecoin.json'), 'utf8'));
  const fresh = compileStablecoin();
  expect(fresh.bytecode).toBe(committed.bytecode);
  expect(fresh.abi).toEqual(committed.abi);
  expect(fresh.abi.map((item: any) => item.name)).toEqual(expect.arrayContaining(['mint', 'setBlocked', 'blocked', 'transfer', 'AddressBlocked']));
}, 60_000);
