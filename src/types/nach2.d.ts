// The parts of nach2 (NACHA file writer, CommonJS, untyped) this project uses.
declare module 'nach2' {
  export class File {
    constructor(options: Record<string, string>);
    addBatch(batch: Batch): void;
    generateFile(done: (text: string) => void): void;
  }
  export class Batch {
    constructor(options: Record<string, string | Date>);
    addEntry(entry: Entry): void;
  }
  export class Entry {
    constructor(options: Record<string, string>);
  }
}

/** A record layout of nach2: each field's width and position (1-based order in the record). */
declare module 'nach2/lib/*' {
  const fields: Record<string, { name: string; width: number; position: number; type?: string }>;
  export = fields;
}
