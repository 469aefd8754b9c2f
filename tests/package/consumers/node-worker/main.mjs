// (e) Memory hygiene in a Worker: load, use and dispose 1000 OTKE and 1000 GraphiT models, then embed 10^5
// sequences, and report how much wasm memory and JS heap grew after a warm-up.
// Run as `node --expose-gc main.mjs OTKE_MODEL GRAPHIT_MODEL`; prints one JSON line.
import { Worker } from 'node:worker_threads';

const worker = new Worker(new URL('./worker.mjs', import.meta.url), {
  workerData: { model: process.argv[2], graphit: process.argv[3] },
});
worker.on('message', (report) => console.log(JSON.stringify(report)));
worker.on('error', (e) => {
  console.error(`error: ${e.stack ?? e}`);
  process.exitCode = 2;
});
