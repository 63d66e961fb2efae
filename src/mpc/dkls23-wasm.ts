import { readFileSync } from 'node:fs';
import path from 'node:path';
import type * as Dkls23Wasm from '@0xcarbon/dkls23-wasm';

// The DKLs23 library (@0xcarbon/dkls23-wasm: WebAssembly bindings of the 0xCarbon DKLs23 crate),
// loaded once per process. Its entry is an ES module without a package "exports" field: required by
// path (Node loads ES modules with require since 20.19; Jest compiles it, see jest.config.js).
// Everything else about it (its message shapes, its missing checks) is handled in dkls23.ts.

type Wasm = typeof Dkls23Wasm;

let loaded: Wasm | undefined;

export function dkls23(): Wasm {
  if (!loaded) {
    const entry = require.resolve('@0xcarbon/dkls23-wasm/dkls23_wasm.js');
    const wasm = require('@0xcarbon/dkls23-wasm/dkls23_wasm.js') as Wasm;
    // Its start-up greets on the console ("WASM logger initialized"): not our logs' business.
    const quiet = silenceConsole();
    try {
      wasm.initSync(readFileSync(path.join(path.dirname(entry), 'dkls23_wasm_bg.wasm')));
    } finally {
      quiet.restore();
    }
    loaded = wasm;
  }
  return loaded;
}

function silenceConsole() {
  const saved = { log: console.log, info: console.info, debug: console.debug };
  console.log = console.info = console.debug = () => undefined;
  return { restore: () => Object.assign(console, saved) };
}
