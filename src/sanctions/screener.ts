import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { sql } from 'kysely';
import { LRUCache } from 'lru-cache';
import pg from 'pg';
import type { Config } from '../config';
import type { Db } from '../db';
import type { Logger } from '../logger';
import { SanctionsMatcher, type Match, type ScreeningQuery } from './matcher';
import { SOURCES, parseSource, sourceById, type SourceDefinition } from './sources';
import type { ListedEntity } from './types';

export interface ListVersion {
  id: number;
  source: string;
  sha256: string;
  publishedOn: string | null;
  entityCount: number;
}

export interface ScreeningOutcome {
  status: 'clear' | 'potential_match';
  matches: MatchEntry[];
  dataSourcesChecked: number;
  listVersionIds: number[];
}

/** A match as the API shows it (spec 2.6), plus the listing's id and how the score was reached. */
export interface MatchEntry {
  score: number;
  source: string;
  source_name: string;
  matched_name: string;
  match_type: Match['matchType'];
  entity_type: string;
  sanctions_programs: string[];
  listed_on: string | null;
  remarks: string | null;
  listing_id: string;
  score_details: { name: number; date_of_birth: number | null; country: number | null };
}

interface LoadedLists {
  entities: ListedEntity[];
  loaded: { def: SourceDefinition; files: Record<string, Buffer>; entityCount: number; publishedOn?: string; sha256: string }[];
}

/**
 * Reads every source present in `dir`: `{dir}/{source id}/{file}` as `lists sync` writes them, or the
 * files a `{dir}/manifest.json` names ({"sources": {"us_ofac_sdn": {"sdn.csv": "path", …}}}).
 */
export async function readListsFromDirectory(dir: string): Promise<LoadedLists> {
  const manifestPath = path.join(dir, 'manifest.json');
  const parsedManifest = fs.existsSync(manifestPath) ? JSON.parse(fs.readFileSync(manifestPath, 'utf8')) : undefined;
  const manifest: Record<string, Record<string, string>> | undefined = parsedManifest?.sources;
  // A list's publication date where its format carries none (a snapshot's manifest says it).
  const publishedOn: Record<string, string> = parsedManifest?.published_on ?? {};
  const out: LoadedLists = { entities: [], loaded: [] };
  for (const def of SOURCES) {
    const files: Record<string, Buffer> = {};
    let complete = true;
    for (const file of def.files) {
      const rel = manifest ? manifest[def.id]?.[file.name] : path.join(def.id, file.name);
      const full = rel ? path.resolve(dir, rel) : undefined;
      if (full && fs.existsSync(full)) files[file.name] = full.endsWith('.gz') ? gunzipSync(fs.readFileSync(full)) : fs.readFileSync(full);
      else if (!file.optional) complete = false;
    }
    if (!complete) continue;
    const parsed = await parseSource(def, files);
    const hash = createHash('sha256');
    for (const name of Object.keys(files).sort()) hash.update(name).update(files[name]);
    out.entities.push(...parsed.entities);
    out.loaded.push({ def, files, entityCount: parsed.entities.length, publishedOn: parsed.publishedOn ?? publishedOn[def.id], sha256: hash.digest('hex') });
  }
  return out;
}

/** The snapshot shipped with the code (scripts/build-sanctions-snapshot.ts). */
export const SHIPPED_SNAPSHOT_DIR = path.join(__dirname, '../../data/sanctions-snapshot');

/** A process's screener as its configuration says: SANCTIONS_DATA_DIR, and the shipped snapshot unless SANCTIONS_SNAPSHOT=off. */
export function configuredScreener(
  config: Pick<Config, 'sanctionsDataDir' | 'SANCTIONS_MATCH_THRESHOLD' | 'SANCTIONS_SNAPSHOT' | 'SANCTIONS_SNAPSHOT_MAX_AGE_DAYS'>, db: Db, log?: Logger,
): SanctionsScreener {
  return new SanctionsScreener({
    db, dataDir: config.sanctionsDataDir, threshold: config.SANCTIONS_MATCH_THRESHOLD, log,
    snapshot: config.SANCTIONS_SNAPSHOT === 'auto' ? { dir: SHIPPED_SNAPSHOT_DIR, maxAgeDays: config.SANCTIONS_SNAPSHOT_MAX_AGE_DAYS } : undefined,
  });
}

/**
 * The screening engine of one process: the lists, their recorded versions, and the matcher.
 * `load` builds a complete new state and swaps it in with one assignment, so screenings running
 * during a reload use the old lists or the new ones, never a mix.
 */
/** Lists loaded from the shipped snapshot (data/sanctions-snapshot): dated, and not the official lists. */
export interface ListsSnapshot {
  /** The publication date of its oldest list. */
  oldestList: string;
}

const DAY_MS = 86_400_000;

/** How many screenings' outcomes a process keeps for queries asked again (payees paid again, say). */
const RECENT_OUTCOMES = 10_000;

/** A query's identity for the outcomes kept: every field the matcher reads. */
const queryKey = (q: ScreeningQuery) => JSON.stringify([q.name, q.type ?? null, q.dateOfBirth ?? null, q.country ?? null]);

export class SanctionsScreener {
  /**
   * What is loaded, replaced whole by a load. `outcomes` keeps recent screenings' outcomes against
   * these lists: the matcher is deterministic, so a query asked again gets the same outcome without
   * its work (about 0.7 ms for a common name), and new lists start with none.
   */
  private state?: {
    matcher: SanctionsMatcher; versions: ListVersion[]; addresses: Map<string, ListedAddress>; snapshot?: ListsSnapshot;
    outcomes: LRUCache<string, ScreeningOutcome>;
  };
  private loading?: Promise<ListVersion[]>;
  private nextLoad?: Promise<ListVersion[]>;

  constructor(private readonly opts: {
    db: Db; dataDir: string; threshold: number; log?: Logger;
    /** Loaded when `dataDir` holds no lists; production will not screen on it once older than `maxAgeDays`. */
    snapshot?: { dir: string; maxAgeDays: number };
  }) {}

  get ready() {
    return this.state !== undefined && this.state.versions.length > 0;
  }

  /** The shipped snapshot, when that is what is loaded (no synced lists). */
  get snapshot(): (ListsSnapshot & { ageDays: number }) | undefined {
    const snapshot = this.state?.snapshot;
    return snapshot && { ...snapshot, ageDays: Math.floor((Date.now() - Date.parse(snapshot.oldestList)) / DAY_MS) };
  }

  /**
   * Whether screenings of this environment may rely on the lists: some are loaded, and production
   * does not clear anybody on a snapshot older than the allowed age (the lists count as unavailable).
   */
  readyFor(environment: 'sandbox' | 'production'): boolean {
    const snapshot = this.snapshot;
    return this.ready && !(environment === 'production' && snapshot && snapshot.ageDays > (this.opts.snapshot?.maxAgeDays ?? 0));
  }

  /** Why screenings of this environment cannot run now (for a 503, a hold reason, a log line). */
  unavailableReason(environment: 'sandbox' | 'production'): string {
    const snapshot = this.snapshot;
    if (this.ready && snapshot && environment === 'production') {
      return `The sanctions lists loaded are the shipped snapshot, its oldest list ${snapshot.ageDays} days old (production allows `
        + `${this.opts.snapshot?.maxAgeDays ?? 0}): run \`npm run cli -- lists sync\` or point SANCTIONS_DATA_DIR at current lists`;
    }
    return new NoListsLoadedError().message;
  }

  get versions(): ListVersion[] {
    return this.state?.versions ?? [];
  }

  /**
   * Loads the lists from the data directory. Loads run one at a time: a load asked for while one
   * runs (a SIGHUP or NOTIFY during the first load) runs once after it, since the files may have
   * changed after that load read them; every caller meanwhile shares it.
   */
  load(): Promise<ListVersion[]> {
    if (!this.loading) {
      this.loading = this.loadNow().finally(() => {
        this.loading = undefined;
      });
      return this.loading;
    }
    this.nextLoad ??= this.loading.catch(() => undefined).then(() => {
      this.nextLoad = undefined;
      return this.load();
    });
    return this.nextLoad;
  }

  private async loadNow(): Promise<ListVersion[]> {
    const started = Date.now();
    this.opts.log?.info({ dir: this.opts.dataDir }, 'loading sanctions lists');
    let lists = fs.existsSync(this.opts.dataDir) ? await readListsFromDirectory(this.opts.dataDir) : { entities: [], loaded: [] };
    let snapshot: ListsSnapshot | undefined;
    if (lists.loaded.length === 0 && this.opts.snapshot && fs.existsSync(path.join(this.opts.snapshot.dir, 'manifest.json'))) {
      lists = await readListsFromDirectory(this.opts.snapshot.dir);
      const dates = lists.loaded.map((l) => l.publishedOn).filter((d): d is string => Boolean(d)).sort();
      snapshot = { oldestList: dates[0] ?? '1970-01-01' };
    }
    const versions: ListVersion[] = [];
    for (const l of lists.loaded) versions.push(await this.recordVersion(l.def.id, l.sha256, l.publishedOn ?? null, l.entityCount));
    const matcher = new SanctionsMatcher(lists.entities, { threshold: this.opts.threshold, maxMatches: 10 });
    const addresses = new Map<string, ListedAddress>();
    for (const e of lists.entities) {
      for (const a of e.cryptoAddresses) {
        addresses.set(addressKey(a.address), { address: a.address, currency: a.currency, entityId: e.id, name: e.names[0]?.value ?? e.id, source: e.source });
      }
    }
    this.state = { matcher, versions, addresses, snapshot, outcomes: new LRUCache({ max: RECENT_OUTCOMES }) };
    this.opts.log?.info(
      { sources: versions.length, entities: lists.entities.length, names: matcher.nameCount, ms: Date.now() - started },
      versions.length ? 'sanctions lists loaded' : `no sanctions lists found in ${this.opts.dataDir}`,
    );
    const warning = this.snapshotWarning();
    if (warning) this.opts.log?.warn({ oldestList: snapshot!.oldestList }, warning);
    return versions;
  }

  private async recordVersion(source: string, sha256: string, publishedOn: string | null, entityCount: number): Promise<ListVersion> {
    const row = await sql<{ id: number; published_on: string | null }>`
      insert into sanctions_list_versions (source, sha256, published_on, entity_count, first_loaded_at)
      values (${source}, ${sha256}, ${publishedOn}, ${entityCount}, ${new Date()})
      on conflict (source, sha256) do update set entity_count = excluded.entity_count
      returning id, published_on`.execute(this.opts.db);
    return { id: row.rows[0].id, source, sha256, publishedOn, entityCount };
  }

  /**
   * A process's start: listens for updates first, then loads, so that a SIGHUP or NOTIFY during
   * the first load (seconds on the full lists) reloads once it is done instead of being lost or,
   * for SIGHUP, ending the process. Returns a function that stops listening.
   */
  async loadAndWatch(databaseUrl: string): Promise<() => Promise<void>> {
    const stopWatching = await this.watchForUpdates(databaseUrl);
    try {
      await this.load();
    } catch (err) {
      await stopWatching();
      throw err;
    }
    return stopWatching;
  }

  /**
   * Reloads when `lists sync` announces new files (PostgreSQL NOTIFY on `sanctions_lists_updated`)
   * and on SIGHUP. Returns a function that stops listening.
   */
  async watchForUpdates(databaseUrl: string): Promise<() => Promise<void>> {
    const reload = () => {
      this.load().catch((err) => this.opts.log?.error({ err: String(err) }, 'sanctions list reload failed; previous lists kept'));
    };
    process.on('SIGHUP', reload);
    const client = new pg.Client({ connectionString: databaseUrl });
    try {
      await client.connect();
      client.on('error', () => undefined);
      client.on('notification', reload);
      await client.query('listen sanctions_lists_updated');
    } catch (err) {
      this.opts.log?.warn({ err: String(err) }, 'cannot LISTEN for list updates; reload with SIGHUP');
    }
    return async () => {
      process.off('SIGHUP', reload);
      await client.end().catch(() => undefined);
    };
  }

  /** What start-up output and /readyz say when the lists are the shipped snapshot. */
  snapshotWarning(): string | undefined {
    const snapshot = this.snapshot;
    if (!snapshot) return undefined;
    return `sanctions lists: no synced lists in ${this.opts.dataDir}, so the shipped snapshot is loaded; its oldest list was published `
      + `${snapshot.oldestList}, ${snapshot.ageDays} days ago (run \`npm run cli -- lists sync\`; production will not clear anybody on a snapshot `
      + `older than ${this.opts.snapshot?.maxAgeDays ?? 0} days)`;
  }

  /** The listing that names this digital-currency address, if any list does. */
  listedAddress(address: string): ListedAddress | undefined {
    if (!this.state || this.state.versions.length === 0) throw new NoListsLoadedError();
    return this.state.addresses.get(addressKey(address));
  }

  screen(query: ScreeningQuery): ScreeningOutcome {
    const state = this.state;
    if (!state || state.versions.length === 0) throw new NoListsLoadedError();
    const key = queryKey(query);
    let outcome = state.outcomes.get(key);
    if (!outcome) {
      const matches = state.matcher.screen(query).map(toEntry);
      outcome = {
        status: matches.length > 0 ? 'potential_match' : 'clear',
        matches,
        dataSourcesChecked: state.versions.length,
        listVersionIds: state.versions.map((v) => v.id),
      };
      state.outcomes.set(key, outcome);
    }
    // Callers get arrays of their own; the entries are read, never changed.
    return { ...outcome, matches: [...outcome.matches], listVersionIds: [...outcome.listVersionIds] };
  }
}

export interface ListedAddress {
  address: string;
  currency: string;
  entityId: string;
  name: string;
  source: string;
}

/** EVM addresses are hex and case-insensitive; other chains' addresses are case-sensitive. */
const addressKey = (address: string) => (/^0x[0-9a-fA-F]{40}$/.test(address) ? address.toLowerCase() : address);

export class NoListsLoadedError extends Error {
  constructor() {
    super('No sanctions lists are loaded: run `npm run cli -- lists sync` or point SANCTIONS_DATA_DIR at the list files');
  }
}

function toEntry(m: Match): MatchEntry {
  return {
    score: m.score,
    source: m.entity.source,
    source_name: sourceById.get(m.entity.source)?.name ?? m.entity.source,
    matched_name: m.matchedName,
    match_type: m.matchType,
    entity_type: m.entity.entityType,
    sanctions_programs: m.entity.programs,
    listed_on: m.entity.listedOn && /^\d{4}-\d{2}-\d{2}$/.test(m.entity.listedOn) ? m.entity.listedOn : null,
    remarks: m.entity.remarks ?? null,
    listing_id: m.entity.id,
    score_details: { name: m.nameScore, date_of_birth: m.adjustments.dateOfBirth ?? null, country: m.adjustments.country ?? null },
  };
}
