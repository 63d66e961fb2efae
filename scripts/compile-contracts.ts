/**
 * Compiles contracts/Stablecoin.sol with solc-js into contracts/Stablecoin.json (ABI and bytecode),
 * which is committed so that starting the platform needs no compiler. Run after changing the source:
 * `npm run contracts:compile`. A test recompiles and checks the committed artifact is current.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import solc from 'solc';

const root = path.resolve(__dirname, '..');

export function compileStablecoin(): { abi: unknown[]; bytecode: `0x${string}`; compiler: string } {
  const input = {
    language: 'Solidity',
    sources: { 'Stablecoin.sol': { content: readFileSync(path.join(root, 'contracts/Stablecoin.sol'), 'utf8') } },
    settings: { optimizer: { enabled: true, runs: 200 }, evmVersion: 'cancun', outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
  };
  const findImports = (p: string) => {
    try {
      return { contents: readFileSync(require.resolve(p, { paths: [root] }), 'utf8') };
    } catch {
      return { error: `not found: ${p}` };
    }
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports }));
  const errors = (output.errors ?? []).filter((e: { severity: string }) => e.severity === 'error');
  if (errors.length) throw new Error(errors.map((e: { formattedMessage: string }) => e.formattedMessage).join('\n'));
  const contract = output.contracts['Stablecoin.sol'].Stablecoin;
  return { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}`, compiler: solc.version() };
}

if (require.main === module) {
  const artifact = compileStablecoin();
  writeFileSync(path.join(root, 'contracts/Stablecoin.json'), JSON.stringify(artifact, null, 1) + '\n');
  console.log(`contracts/Stablecoin.json written (${(artifact.bytecode.length - 2) / 2} bytes, solc ${artifact.compiler})`);
}
