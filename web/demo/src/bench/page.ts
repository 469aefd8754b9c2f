// The demo's benchmark page (`?bench`): the workloads of workloads.json on one thread (the one-thread module) and
// on every core (the threaded module, when the page is cross-origin isolated), each in a fresh Worker. Prints a
// table and the figures as JSON (#bench-json), which web/demo/e2e/bench.e2e.mjs reads and compares with the
// native build's (bench/parity_bench.cpp). No timing is asserted anywhere.
import type { BenchRow } from './bench_worker';
import { workloads } from './inputs';

// `?bench&simd=simd128` runs the SIMD128 modules even where relaxed SIMD is there (init's `simd` option), so that
// bench.e2e.mjs can time both builds in the same browser.
function runInWorker(threads: number, simd: 'auto' | 'simd128'): Promise<BenchRow> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./bench_worker.ts', import.meta.url), {
      type: 'module',
      name: `bench-${threads}`,
    });
    worker.onmessage = ({ data }: MessageEvent<{ ok: boolean; row?: BenchRow; error?: string }>) => {
      worker.terminate();
      if (data.ok && data.row) resolve(data.row);
      else reject(new Error(data.error ?? 'the benchmark worker failed'));
    };
    worker.onerror = (e) => {
      worker.terminate();
      reject(new Error(`the benchmark worker failed to start: ${e.message}`));
    };
    worker.postMessage({ threads, simd });
  });
}

const fmt = (v: number): string => (v >= 100 ? v.toFixed(0) : v.toPrecision(3));

export async function mountBenchPage(root: HTMLElement): Promise<void> {
  const w = workloads;
  root.innerHTML = `
    <section class="bench">
      <h2>Benchmark</h2>
      <p>Throughput of the wasm core in this browser, one Worker per row (median of ${w.repeats} runs after a
      warm-up). Workloads: Sinkhorn, ${w.sinkhorn.batch} problems of ${w.sinkhorn.n} x ${w.sinkhorn.p}, eps
      ${w.sinkhorn.eps}, ${w.sinkhorn.maxIter} iterations; OTKE, ${w.otke.sequences} random DNA sequences of
      ${w.otke.length} through the promoter model; GraphiT, molecules from SMILES through the MUTAG model.
      <code>bench/parity_bench</code> runs the same natively.</p>
      <p id="bench-status" data-testid="bench-status">running…</p>
      <table id="bench-table" data-testid="bench-table"><thead><tr><th>threads</th><th>Sinkhorn problems/s</th>
      <th>OTKE sequences/s</th><th>GraphiT molecules/s</th><th>wasm memory</th></tr></thead><tbody></tbody></table>
      <pre id="bench-json" data-testid="bench-json" hidden></pre>
    </section>`;
  const status = root.querySelector<HTMLElement>('#bench-status')!;
  const body = root.querySelector<HTMLElement>('#bench-table tbody')!;
  const rows: BenchRow[] = [];
  const simd = new URLSearchParams(location.search).get('simd') === 'simd128' ? 'simd128' : 'auto';
  try {
    const cores = Math.max(1, Math.min(navigator.hardwareConcurrency || 1, 8));
    const counts = globalThis.crossOriginIsolated && cores > 1 ? [1, cores] : [1];
    for (const threads of counts) {
      status.textContent = `running on ${threads} thread(s)…`;
      const row = await runInWorker(threads, simd);
      rows.push(row);
      const tr = document.createElement('tr');
      for (const v of [
        String(row.threads),
        fmt(row.sinkhorn_problems_per_s),
        fmt(row.otke_sequences_per_s),
        fmt(row.graphit_molecules_per_s),
        `${(row.wasm_memory_bytes / 2 ** 20).toFixed(1)} MiB`,
      ]) {
        const td = document.createElement('td');
        td.textContent = v;
        tr.append(td);
      }
      tr.title = [row.simd, row.threadsNote].filter(Boolean).join('; ');
      body.append(tr);
    }
    status.textContent = counts.length > 1 ? 'done' : `done (one thread only: ${rows[0]?.threadsNote ?? ''})`;
    root.querySelector<HTMLElement>('#bench-json')!.textContent = JSON.stringify({ build: 'wasm', rows });
    document.body.dataset.benchDone = 'ok';
  } catch (e) {
    status.textContent = `failed: ${(e as Error).message}`;
    document.body.dataset.benchDone = 'error';
  }
}
