// Option defaults are the core's, once: `ind.defaults` holds the values the docs state, the native CLI's flags
// default to the same ones (both read default-constructed core option structs), and a left-out option behaves as
// that value given explicitly.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { init } from '../src/index.js';
import { promoters } from './support/otke.js';

const ind = await init();
const repo = (path: string): string => fileURLToPath(new URL(`../../${path}`, import.meta.url));
const CLI = process.env.INDUCTIVE_CLI ?? repo('build/native-release/bin/inductive');
if (!existsSync(CLI)) throw new Error(`defaults tests: the native CLI ${CLI} is missing (npm test builds it first)`);

/** The defaults a CLI command's --help prints, flag -> text ("--lambda FLOAT=0.1" -> "0.1"). */
function cliDefaults(...command: string[]): Map<string, string> {
  const help = execFileSync(CLI, [...command, '--help'], { encoding: 'utf8' });
  const out = new Map<string, string>();
  for (const m of help.matchAll(/^\s+(--[a-z0-9-]+) [A-Z]+(?::[^=\n]*)?=(\S+)/gm)) out.set(m[1] ?? '', m[2] ?? '');
  return out;
}

describe('ind.defaults', () => {
  it('states the documented defaults', () => {
    const d = ind.defaults;
    expect(d.sinkhorn).toEqual({ eps: 0.5, maxIter: 100, tol: 0, similarity: false });
    expect(d.batchSize).toBe(256);
    expect(d.headFit).toEqual({
      lambda: 0,
      minPerClass: 10,
      maxFolds: 5,
      maxIter: 500,
      tol: 1e-6,
      refit: false,
      holdoutFraction: 0,
      seed: 0,
      lambdaGrid: Array.from({ length: 22 }, (_, i) => 2 ** (1 - i)), // 2^1 .. 2^-20 (README "Fitting a head")
      holdoutLambdaGrid: Array.from({ length: 16 }, (_, i) => 2 ** (-5 - i)), // the thesis' 2^-5 .. 2^-20
    });
    expect(d.otkeFit).toEqual({
      seed: 0,
      kmeansIters: 100,
      maxSamples: 300000,
      referenceUpdate: 'kmeans',
      barycenterIters: 10,
      barycenterEps: 0.05,
    });
    expect(d.screen).toMatchObject({ loss: 'squared_hinge', penalty: 'l2', lambda: 0.1, dynamic: true });
    expect(d.screen.kernel).toEqual({ type: 'gaussian', gamma: 0, degree: 3, coef0: 1 });
    expect(d.path).toEqual({ lambdaMax: 1, ratio: 0.01, count: 20 });
    expect(d.csv).toEqual({ header: false, labelColumn: -1, delimiter: ',' });
    expect(d.compression).toEqual({
      testFraction: 0.2,
      seed: 0,
      fractions: [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9],
      rankings: ['screening', 'margin', 'random'],
    });
    expect(Object.isFrozen(d.headFit.lambdaGrid)).toBe(true);
  });

  it("are the native CLI's flag defaults", () => {
    const d = ind.defaults;
    const num = (m: Map<string, string>, flag: string): number => Number(m.get(flag));
    const screen = cliDefaults('screen');
    expect(screen.get('--loss')).toBe(d.screen.loss);
    expect(screen.get('--penalty')).toBe(d.screen.penalty);
    expect(num(screen, '--mu')).toBe(d.screen.mu);
    expect(num(screen, '--l1-ratio')).toBe(d.screen.l1Ratio);
    expect(num(screen, '--lambda')).toBe(d.screen.lambda);
    expect(num(screen, '--tol')).toBe(d.screen.tol);
    expect(num(screen, '--max-epochs')).toBe(d.screen.maxEpochs);
    expect(num(screen, '--ellipsoid-steps')).toBe(d.screen.ellipsoidSteps);
    expect(num(screen, '--label-column')).toBe(d.csv.labelColumn);
    expect(num(screen, '--gamma')).toBe(d.screen.kernel.gamma);
    expect(num(screen, '--degree')).toBe(d.screen.kernel.degree);
    expect(num(screen, '--coef0')).toBe(d.screen.kernel.coef0);
    const path = cliDefaults('path');
    expect([num(path, '--lambda-max'), num(path, '--ratio'), num(path, '--count')]).toEqual([
      d.path.lambdaMax,
      d.path.ratio,
      d.path.count,
    ]);
    const compress = cliDefaults('compress');
    expect(num(compress, '--test-fraction')).toBe(d.compression.testFraction);
    expect(num(compress, '--seed')).toBe(d.compression.seed);
    expect(compress.get('--fractions')?.split(',').map(Number)).toEqual(d.compression.fractions);
    expect(compress.get('--rankings')?.split(',')).toEqual(d.compression.rankings);
    const fit = cliDefaults('otke', 'fit');
    expect(num(fit, '--kmeans-iters')).toBe(d.otkeFit.kmeansIters);
    expect(num(fit, '--max-samples')).toBe(d.otkeFit.maxSamples);
    expect(fit.get('--reference-update')).toBe(d.otkeFit.referenceUpdate);
    expect(num(fit, '--barycenter-iters')).toBe(d.otkeFit.barycenterIters);
    expect(num(fit, '--barycenter-eps')).toBe(d.otkeFit.barycenterEps);
    expect(num(cliDefaults('sinkhorn'), '--eps')).toBe(d.sinkhorn.eps);
  });

  it('is what a left-out option does', () => {
    const cost = new Float32Array(12).map((_, i) => ((i * 7) % 5) / 4);
    const implicit = ind.sinkhorn(cost, 3, 4);
    const explicit = ind.sinkhorn(cost, 3, 4, ind.defaults.sinkhorn);
    expect(implicit.plan).toEqual(explicit.plan);

    const data = ind.loadDataset('+1 1:1 2:0.5\n-1 1:-1 2:0.25\n+1 1:0.8 2:-0.5\n-1 1:-0.7 2:0.1\n', {
      format: 'libsvm',
    });
    try {
      const { kernel: _kernel, ...screen } = ind.defaults.screen;
      const a = data.screen();
      const b = data.screen(screen);
      expect([a.nScreened, a.epochs, a.primal]).toEqual([b.nScreened, b.epochs, b.primal]);
    } finally {
      data.dispose();
    }

    const seqs = promoters('ecoli_prom_150.fa')
      .slice(0, 24)
      .map((r) => r.sequence);
    const small = { k: 4, anchors: 8, p: 4, kmeansIters: 5, maxSamples: 2000 };
    const model = ind.fitOtke(seqs, small);
    try {
      const { referenceUpdate: _update, ...fit } = ind.defaults.otkeFit;
      const explicit = ind.fitOtke(seqs, { ...fit, ...small, referenceUpdate: 'kmeans' });
      try {
        expect(Array.from(model.toBytes())).toEqual(Array.from(explicit.toBytes()));
      } finally {
        explicit.dispose();
      }
    } finally {
      model.dispose();
    }
  });
});
