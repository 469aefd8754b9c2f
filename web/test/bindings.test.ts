// The raw Embind module under the TS layer (wasm/bindings.cpp): errors come back as data, not as throws.
import { describe, expect, it } from 'vitest';
import type { InductiveModule, SinkhornCall } from '../wasm/inductive.mjs';
import { loadModule } from '../src/load.js';

const { module }: { module: InductiveModule } = await loadModule();

function call(fields: Partial<SinkhornCall>): SinkhornCall {
  return {
    cost: 0,
    n: 0,
    p: 0,
    a: 0,
    b: 0,
    batch: 1,
    nMax: 2,
    pMax: 2,
    eps: 0.5,
    maxIter: 10,
    tol: 0,
    similarity: false,
    plan: 0,
    f: 0,
    g: 0,
    nIter: 0,
    marginalError: 0,
    converged: 0,
    costValue: 0,
    ...fields,
  };
}

describe('wasm bindings', () => {
  it('report a core error as false plus lastErrorCode/lastErrorMessage, without throwing', () => {
    const buf = module._malloc(32);
    try {
      expect(module.sinkhornBatch(call({ cost: buf, plan: buf + 16, eps: -1 }))).toBe(false);
      expect(module.lastErrorCode()).toBe('invalid_argument');
      expect(module.lastErrorMessage()).toBe('sinkhorn: eps must be a finite number > 0: got -1');
      expect(module.modelInfo(buf, 3)).toBe('');
      expect(module.lastErrorCode()).toBe('bad_model_file');
    } finally {
      module._free(buf);
    }
  });

  it('leak nothing per error: after 5000 failing calls malloc hands out the same address again', () => {
    const probe = (): number => {
      const p = module._malloc(1024);
      module._free(p);
      return p;
    };
    const buf = module._malloc(32);
    const fail = () => module.sinkhornBatch(call({ cost: buf, plan: buf + 16, eps: -1 }));
    fail();
    const before = probe();
    for (let i = 0; i < 5000; ++i) expect(fail()).toBe(false);
    expect(probe()).toBe(before);
    module._free(buf);
  });

  it('name the version, the build and the SIMD kernels', () => {
    expect(module.version()).toMatch(/^\d+\.\d+\.\d+$/);
    expect(module.producer()).toBe(`inductive ${module.version()} wasm`);
    expect(module.simdKernel()).toBe('wasm-simd128');
  });
});
