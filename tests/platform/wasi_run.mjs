// Runs a wasm32-wasi program under Node's WASI, as a Wasm user runs one: the
// current directory is the program's "." (preopened, so it may read and write
// there and nowhere else), the environment and arguments are passed through,
// and node exits with the program's status.
//
//   node --no-warnings tests/platform/wasi_run.mjs PROGRAM.wasm [ARGS...]
import { readFile } from 'node:fs/promises';
import { WASI } from 'node:wasi';

const [program, ...args] = process.argv.slice(2);
if (!program) {
  console.error('usage: node wasi_run.mjs PROGRAM.wasm [ARGS...]');
  process.exit(2);
}
const wasi = new WASI({
  version: 'preview1',
  args: [program, ...args],
  env: process.env,
  preopens: { '.': process.cwd() },
  returnOnExit: true,
});
let module;
try {
  module = await WebAssembly.compile(await readFile(program));
} catch (e) {
  console.error(`wasi_run: ${program}: ${e.message}`);
  process.exit(2);
}
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
process.exitCode = wasi.start(instance);
