// Which SIMD the engine runs: relaxed SIMD's fused multiply-add (f32x4.relaxed_madd), or plain SIMD128 only.
//
// The package ships each module twice (wasm/CMakeLists.txt): with the kernels' multiply-adds as one relaxed
// instruction (inductive-relaxed, inductive-mt-relaxed) and as a multiply and an add (inductive, inductive-mt). A
// module with an instruction the engine does not know fails to compile as a whole, so the choice is made before
// loading, by validating this one-function module:
//   (module (func (param v128 v128 v128) (result v128)
//     local.get 0 local.get 1 local.get 2 f32x4.relaxed_madd))
// (wasm/relaxed_simd.mjs, which rewrites the relaxed modules at build time, checks with the same bytes.)
const RELAXED_MADD_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x01, 0x60, 0x03, 0x7b, 0x7b, 0x7b, 0x01, 0x7b, 0x03,
  0x02, 0x01, 0x00, 0x0a, 0x0d, 0x01, 0x0b, 0x00, 0x20, 0x00, 0x20, 0x01, 0x20, 0x02, 0xfd, 0x85, 0x02, 0x0b,
]);

// The one WebAssembly call used here (the package compiles against ES2022 and Node's types, which declare none).
declare const WebAssembly: { validate(bytes: Uint8Array): boolean };

/** 'relaxed': the modules with fused multiply-adds; 'simd128': the ones with a multiply and an add. */
export type SimdLevel = 'relaxed' | 'simd128';

/** Whether this engine validates relaxed SIMD (Chromium 114 and later; Node 20 only with a V8 flag). */
export function relaxedSimdSupported(): boolean {
  try {
    return WebAssembly.validate(RELAXED_MADD_PROBE);
  } catch {
    return false;
  }
}
