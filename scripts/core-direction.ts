// The direction of imports between the core's folders (docs/ARCHITECTURE.md, "The core's order"):
// each folder of src/ below the HTTP layer has a tier, and a folder imports only folders of lower
// tiers. ESLint's layer rule sees layers, not the order inside the core; this sees that. The arrows
// that still run up are listed in UPWARD_TODAY, each to be taken away (issue 67); a new one fails
// `npm run check:direction`, and so does one listed that no longer exists (the list only shrinks).
// Usage: tsx scripts/core-direction.ts
import fs from 'node:fs';
import path from 'node:path';

/** The core's tiers, highest first: a folder (or a top-level file of src/) imports only those of the tiers after its own. */
export const CORE_TIERS: string[][] = [
  ['payment-routes', 'kyc', 'external-accounts'],
  ['signer'],
  ['mpc'],
  ['transfers'],
  ['wallets'],
  ['reconciliation', 'bank-files', 'sandbox-bank', 'temporal'],
  // What a process shares with the core (PlatformDeps): the providers, the screener, the configuration.
  ['deps.ts'],
  ['providers'],
  ['chains'],
  ['accounts'],
  ['customers', 'sanctions'],
  ['config.ts'],
  ['config-bank-files.ts', 'config-solana.ts'],
  ['domain'],
  ['webhooks'],
  ['ledger', 'payments'],
  ['db', 'keys'],
  ['errors.ts', 'ids.ts', 'crypto.ts', 'logger.ts', 'config-bitcoin.ts', 'config-timers.ts'],
];

/**
 * Today's arrows that run up, `from -> to`, each with why (docs/ARCHITECTURE.md, "The core's
 * order"): each is to become a fact one side publishes and the other consumes, a port injected at
 * the composition root or an event on the outbox (issue 67).
 */
export const UPWARD_TODAY: string[] = [
  // A notification of change (C01) read from the bank corrects the external account it names.
  'bank-files -> external-accounts',
  // A deposit to a virtual account or a liquidation address, and a reviewed one, carry on along its route.
  'transfers -> payment-routes',
  // An MPC wallet is created with its key-generation session.
  'wallets -> mpc',
  // The wallet watcher hands deposits to standing routes' addresses on to them.
  'wallets -> payment-routes',
  // An event is recorded with its webhook deliveries (domain/events -> webhooks/fan-out), and a delivery serializes the event.
  'webhooks -> domain',
];

export interface Arrow { from: string; to: string; file: string }

/** The core room a path of src/ belongs to (its first folder, or the file itself at the top); null outside the core. */
export function coreRoom(file: string, tiers: string[][] = CORE_TIERS): string | null {
  const parts = path.relative('src', file).split(path.sep);
  if (parts[0] === '..' || parts.length === 0) return null;
  const room = parts[0]!;
  return tiers.some((t) => t.includes(room)) ? room : null;
}

/** The arrows that run up or sideways (a tier imports only lower ones), one per pair of rooms, with a file that draws it. */
export function upwardArrows(arrows: Arrow[], tiers: string[][] = CORE_TIERS): Arrow[] {
  const tierOf = new Map(tiers.flatMap((t, i) => t.map((room) => [room, i] as const)));
  const found = new Map<string, Arrow>();
  for (const a of arrows) {
    if (a.from === a.to) continue;
    const [from, to] = [tierOf.get(a.from), tierOf.get(a.to)];
    if (from === undefined || to === undefined || to > from) continue;
    const key = `${a.from} -> ${a.to}`;
    if (!found.has(key)) found.set(key, a);
  }
  return [...found.values()].sort((x, y) => `${x.from} -> ${x.to}`.localeCompare(`${y.from} -> ${y.to}`));
}

/** What the check says: arrows up that are not listed, and listed ones that are gone. */
export function directionFindings(arrows: Arrow[], listed: string[], tiers: string[][] = CORE_TIERS) {
  const up = upwardArrows(arrows, tiers);
  const keys = new Set(up.map((a) => `${a.from} -> ${a.to}`));
  return {
    added: up.filter((a) => !listed.includes(`${a.from} -> ${a.to}`)),
    gone: listed.filter((k) => !keys.has(k)),
  };
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s+(type\s+)?[^'";]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

/** The imports between core rooms in the source files under src/ (type-only imports count: they tie the folders too). */
export function coreArrows(root: string): Arrow[] {
  const arrows: Arrow[] = [];
  const walk = (dir: string): string[] => fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'migrations' ? [] : walk(full);
    return /\.ts$/.test(e.name) && !/\.d\.ts$/.test(e.name) ? [full] : [];
  });
  for (const full of walk(path.join(root, 'src'))) {
    const file = path.relative(root, full);
    const from = coreRoom(file);
    if (!from) continue;
    const text = fs.readFileSync(full, 'utf8');
    for (const m of text.matchAll(IMPORT)) {
      const spec = m[2] ?? m[3]!;
      if (!spec.startsWith('.')) continue;
      // `../config` is src/config.ts; `../db` is the folder src/db.
      const resolved = path.relative(root, path.resolve(path.dirname(full), spec));
      const to = coreRoom(`${resolved}.ts`) ?? coreRoom(resolved);
      if (to) arrows.push({ from, to, file });
    }
  }
  return arrows;
}

if (require.main === module) {
  const { added, gone } = directionFindings(coreArrows(process.cwd()), UPWARD_TODAY);
  for (const a of added) console.error(`core direction (docs/ARCHITECTURE.md): ${a.from} imports ${a.to}, a folder of its own tier or above (${a.file})`);
  for (const k of gone) console.error(`core direction: ${k} is listed in UPWARD_TODAY (scripts/core-direction.ts) but no longer exists: take it off the list`);
  process.exit(added.length + gone.length > 0 ? 1 : 0);
}
