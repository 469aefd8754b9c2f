// Appended to inductive.mjs at top level: the URL emscripten fetches the wasm from, written with the same
// `new URL(..., import.meta.url)` pattern so bundlers rewrite both to the emitted asset. The TS layer uses it to
// report a failed fetch with its HTTP status (emscripten 3.1.6 does not).
export const wasmUrl = new URL("inductive.wasm", import.meta.url).toString();
