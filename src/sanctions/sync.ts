import fs from 'node:fs';
import path from 'node:path';
import { SOURCES, type SourceDefinition } from './sources';

export type FetchFile = (url: string) => Promise<Buffer>;

/** Downloads with a timeout; any non-2xx is an error naming the status. */
export const httpFetchFile: FetchFile = async (url) => {
  const res = await fetch(url, { signal: AbortSignal.timeout(120_000), headers: { 'User-Agent': 'financial-platform-lists-sync/1' } });
  if (!res.ok) throw new Error(`HTTP ${res.status} from ${url}`);
  return Buffer.from(await res.arrayBuffer());
};

/** INTERPOL serves red notices page by page: follow `_links.next` and keep every page. */
async function fetchInterpolPages(url: string, fetchFile: FetchFile): Promise<Buffer> {
  const pages: unknown[] = [];
  let next: string | undefined = url;
  while (next && pages.length < 200) {
    const page = JSON.parse((await fetchFile(next)).toString('utf8')) as { _links?: { next?: { href?: string } } };
    pages.push(page);
    next = page._links?.next?.href;
  }
  return Buffer.from(JSON.stringify(pages));
}

async function downloadSource(def: SourceDefinition, dir: string, fetchFile: FetchFile) {
  const partial = path.join(dir, `${def.id}.partial`);
  fs.rmSync(partial, { recursive: true, force: true });
  fs.mkdirSync(partial, { recursive: true });
  for (const file of def.files) {
    try {
      const body = def.format === 'interpol_json' ? await fetchInterpolPages(file.url, fetchFile) : await fetchFile(file.url);
      fs.writeFileSync(path.join(partial, file.name), body);
    } catch (err) {
      if (!file.optional) {
        fs.rmSync(partial, { recursive: true, force: true });
        throw err;
      }
    }
  }
  // A source's files change together or not at all: the new folder replaces the old in one rename.
  const target = path.join(dir, def.id);
  const old = path.join(dir, `${def.id}.old`);
  fs.rmSync(old, { recursive: true, force: true });
  if (fs.existsSync(target)) fs.renameSync(target, old);
  fs.renameSync(partial, target);
  fs.rmSync(old, { recursive: true, force: true });
}

/**
 * Downloads the official files of every source (or the ones named) into `{dir}/{source id}/`.
 * Sources that fail keep their previous files; the result says which failed and why.
 */
export async function syncLists(opts: { dir: string; sources?: string[]; fetchFile?: FetchFile; onProgress?: (line: string) => void }) {
  const fetchFile = opts.fetchFile ?? httpFetchFile;
  fs.mkdirSync(opts.dir, { recursive: true });
  const selected = opts.sources?.length ? SOURCES.filter((s) => opts.sources!.includes(s.id)) : SOURCES;
  const unknown = (opts.sources ?? []).filter((id) => !SOURCES.some((s) => s.id === id));
  if (unknown.length > 0) throw new Error(`unknown source(s): ${unknown.join(', ')}`);
  const synced: string[] = [];
  const failed: { source: string; error: string }[] = [];
  for (const def of selected) {
    try {
      await downloadSource(def, opts.dir, fetchFile);
      synced.push(def.id);
      opts.onProgress?.(`${def.id}: ok`);
    } catch (err) {
      const e = err as Error & { cause?: { code?: string; message?: string } };
      const reason = e.cause?.code ? `${e.message} (${e.cause.code})` : e.message;
      failed.push({ source: def.id, error: reason });
      opts.onProgress?.(`${def.id}: FAILED: ${reason}`);
    }
  }
  return { synced, failed };
}
