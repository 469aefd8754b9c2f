// Rewrites a module built with -mrelaxed-simd (the relaxed variants, core/CMakeLists.txt) from relaxed SIMD's
// prototype encoding to the final one, then checks the result. Run by the build after linking each relaxed module:
//
//   node wasm/relaxed_simd.mjs --objdump /usr/bin/llvm-objdump-14 --wasm inductive-relaxed.wasm --js inductive-relaxed.mjs
//
// Emscripten 3.1.6's clang 14 encodes f32x4.fma (the one relaxed instruction the kernels use, simd/madd.h) as
// 0xfd 0xaf 0x01, an opcode no shipping engine accepts; the final proposal's f32x4.relaxed_madd is 0xfd 0x85 0x02,
// the same length, so no offset in the module moves. The bytes are rewritten only when llvm-objdump's disassembly
// counts exactly as many f32x4.fma instructions as there are byte matches (so every match is that instruction,
// never an immediate or data that happens to hold the bytes) and no other relaxed instruction; the rewritten module
// must then validate in an engine with relaxed SIMD. On any failure the module's files are removed, so that the
// next build links them again, and the script exits 2 with one error line.
import { spawnSync } from 'node:child_process';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';

const PROTOTYPE_FMA = [0xfd, 0xaf, 0x01];
const RELAXED_MADD = [0xfd, 0x85, 0x02];
// (module (func (param v128 v128 v128) (result v128) local.get 0 local.get 1 local.get 2 f32x4.relaxed_madd)),
// the probe web/src/simd.ts validates too.
const PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x01, 0x60, 0x03, 0x7b, 0x7b, 0x7b, 0x01, 0x7b, 0x03,
  0x02, 0x01, 0x00, 0x0a, 0x0d, 0x01, 0x0b, 0x00, 0x20, 0x00, 0x20, 0x01, 0x20, 0x02, 0xfd, 0x85, 0x02, 0x0b,
]);
const FLAG = '--experimental-wasm-relaxed-simd';

const args = process.argv.slice(2);
const option = (name) => {
  const at = args.indexOf(name);
  return at >= 0 && at + 1 < args.length ? args[at + 1] : undefined;
};
const objdump = option('--objdump');
const wasm = option('--wasm');
const js = option('--js');

function fail(message) {
  for (const file of [wasm, js]) if (file) rmSync(file, { force: true });
  console.error(`error: relaxed_simd: ${message}`);
  process.exit(2);
}

if (!objdump || !wasm || !js) fail('usage: relaxed_simd.mjs --objdump PATH --wasm FILE.wasm --js FILE.mjs');

// Engines without relaxed SIMD by default (Node 20) have it behind a flag: run again with it.
if (!WebAssembly.validate(PROBE)) {
  if (process.execArgv.includes(FLAG)) fail(`this Node (${process.version}) cannot validate relaxed SIMD`);
  const again = spawnSync(process.execPath, [FLAG, ...process.argv.slice(1)], { stdio: 'inherit' });
  process.exit(again.status ?? 2);
}

function positions(bytes, pattern) {
  const found = [];
  for (
    let i = bytes.indexOf(pattern[0]);
    i >= 0 && i + pattern.length <= bytes.length;
    i = bytes.indexOf(pattern[0], i + 1)
  )
    if (pattern.every((b, k) => bytes[i + k] === b)) found.push(i);
  return found;
}

let bytes;
try {
  bytes = new Uint8Array(readFileSync(wasm));
} catch (e) {
  fail(`cannot read ${wasm}: ${e.message}`);
}
const listing = spawnSync(objdump, ['-d', wasm], { encoding: 'utf8', maxBuffer: 1 << 30 });
if (listing.status !== 0) fail(`${objdump} -d ${wasm} failed: ${(listing.stderr || String(listing.error)).trim()}`);
const lines = listing.stdout.split('\n');
const fmas = lines.filter((l) => /\bf32x4\.fma\b/.test(l)).length;
const others = lines.filter((l) => /\b(f32x4\.fms|f64x2\.fm[as]|relaxed_|laneselect)/.test(l));
if (others.length > 0) fail(`${wasm} holds other relaxed instructions this rewrite does not know: ${others[0].trim()}`);
const matches = positions(bytes, PROTOTYPE_FMA);
if (fmas === 0) fail(`${wasm} holds no f32x4.fma: was it built with INDUCTIVE_RELAXED_SIMD?`);
if (matches.length !== fmas) fail(`${matches.length} byte matches of f32x4.fma in ${wasm}, but ${fmas} instructions`);
for (const at of matches) bytes.set(RELAXED_MADD, at);
if (!WebAssembly.validate(bytes)) fail(`${wasm} does not validate after the rewrite`);
const tmp = `${wasm}.tmp`;
writeFileSync(tmp, bytes);
renameSync(tmp, wasm);
console.log(`relaxed_simd: ${wasm}: ${fmas} f32x4.fma rewritten to f32x4.relaxed_madd`);
