// Entry point: starts the one solver worker, shows the library it loaded, and lays out the method panels.

import './style.css';
import { byId } from './dom';
import { mountPanels, type PanelDef } from './panels';
import { SolverClient } from './solver_client';
import { mountOtPanel } from './ot/panel';
import { mountGraphitPanel } from './graphit/panel';
import { mountOtkePanel } from './otke/panel';
import { mountScreeningPanel } from './screening/panel';

const PANELS: PanelDef[] = [
  { id: 'ot', title: 'Optimal transport', mount: mountOtPanel },
  { id: 'otke', title: 'Sequences (OTKE)', mount: mountOtkePanel },
  { id: 'screening', title: 'Screening', mount: mountScreeningPanel },
  { id: 'graphit', title: 'Molecules (GraphiT)', mount: mountGraphitPanel },
];

// A factory, not a worker: cancelling a long call on a page without shared memory restarts the worker.
const solver = new SolverClient(
  () => new Worker(new URL('./worker.ts', import.meta.url), { type: 'module', name: 'inductive-solver' }),
);

const version = byId('lib-version');
const simd = byId('lib-simd');
const threads = byId('lib-threads');
solver.ready.then(
  (info) => {
    version.textContent = info.version;
    simd.textContent = info.simd;
    threads.textContent = String(info.threads);
    // Why one thread (e.g. a host without the COOP/COEP headers), on hover.
    threads.title = info.threadsNote || `the core's parallel loops run on ${info.threads} threads`;
  },
  // Each panel also reports this error (with its code) in its own error box when its first request fails;
  // the header only says the library is unavailable.
  () => {
    version.textContent = 'unavailable';
    simd.textContent = 'unavailable';
    threads.textContent = 'unavailable';
  },
);

// `?bench`: the benchmark page instead of the panels (web/demo/src/bench/page.ts).
if (new URLSearchParams(location.search).has('bench')) {
  byId('tabs').hidden = true;
  void import('./bench/page').then(({ mountBenchPage }) => mountBenchPage(byId('panels')));
} else {
  mountPanels(byId('tabs'), byId('panels'), PANELS, { solver });
}
