// A minimal static file server for the built demo, on 127.0.0.1 and a free port. It serves exactly what a static
// host would (no SPA fallback, no transforms), so the test proves `vite build` output works from plain files.

import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, resolve, sep } from 'node:path';

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  // application/wasm is what lets the browser stream-compile the module (instantiateStreaming).
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
};

// What `npm start` (vite preview) sends: they make the page cross-origin isolated, which the threaded wasm needs.
export const ISOLATION_HEADERS = {
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-embedder-policy': 'require-corp',
};

/**
 * Starts serving `root`; resolves to { url, requests, close }. `requests` logs "STATUS /path" for diagnostics.
 * `isolated` adds the COOP/COEP headers (a static host configured for threads); without, a plain static host.
 */
export async function startStaticServer(root, { isolated = false } = {}) {
  const base = resolve(root);
  const requests = [];
  const server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://localhost').pathname);
    let file = normalize(join(base, path));
    const reply = (status, body, type = 'text/plain; charset=utf-8') => {
      requests.push(`${status} ${path}`);
      res.writeHead(status, {
        'content-type': type,
        'cache-control': 'no-store',
        ...(isolated ? ISOLATION_HEADERS : {}),
      });
      res.end(body);
    };
    // Refuse anything that resolves outside the served folder (../ tricks).
    if (file !== base && !file.startsWith(base + sep)) return reply(403, 'forbidden');
    try {
      if ((await stat(file)).isDirectory()) file = join(file, 'index.html');
      const body = await readFile(file);
      reply(200, body, MIME[extname(file).toLowerCase()] ?? 'application/octet-stream');
    } catch {
      reply(404, 'not found');
    }
  });
  await new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', ok);
  });
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}/`,
    requests,
    close: () => new Promise((ok) => server.close(() => ok())),
  };
}
