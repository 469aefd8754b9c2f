import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The demo must run from `vite build` output served as plain static files (any sub-path, no server logic),
// so every URL is relative and every asset is a real file next to the bundle.
const ISOLATION_HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};

export default defineConfig({
  // The root is this folder whatever the working directory: `npm start` runs `vite preview --config
  // web/demo/vite.config.ts` from the repository root, and without this Vite served the root's (absent) dist/.
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // Never inline assets as data: URIs. The wasm core is located through `new URL('inductive.wasm',
    // import.meta.url)`; it has to stay a separate file so the browser can stream-compile it as application/wasm.
    assetsInlineLimit: 0,
  },
  worker: {
    // The inductive package is ES modules (emscripten EXPORT_ES6 uses import.meta.url), which only an
    // ES-module worker bundle keeps intact.
    format: 'es',
  },
  optimizeDeps: {
    // Pre-bundling in dev would copy the package into node_modules/.vite/deps, away from its .wasm file,
    // and the import.meta.url-relative lookup of the wasm would then 404.
    exclude: ['inductive'],
  },
  // Cross-origin isolation (COOP + COEP) gives the page SharedArrayBuffer, through which a Cancel button stops a
  // long library call inside the worker (web/demo/src/solver_client.ts). Every resource of the demo is same-origin,
  // so require-corp costs nothing. A plain static host without these headers still works: cancelling then
  // restarts the worker instead.
  server: { host: '127.0.0.1', headers: ISOLATION_HEADERS },
  preview: { host: '127.0.0.1', headers: ISOLATION_HEADERS },
});
