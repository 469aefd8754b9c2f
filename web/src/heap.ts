// Moving arrays in and out of wasm memory: each call copies its inputs in once, lets the core write its
// outputs in place, and copies those out once into arrays that JS owns.
//
// All arrays of one call share a single malloc'd block (one allocation, one free, no fragmentation from many
// small ones). Views on wasm memory are taken afresh at every access: when memory grows (any malloc, or the
// core's own allocations) the old ArrayBuffer is detached and every view on it reads as empty.
import type { InductiveModule } from '../wasm/inductive.mjs';
import { InductiveError, lastError } from './errors.js';

// wasm32 memory grows up to 2 GiB in this build; asking for more cannot succeed.
const MAX_HEAP_BYTES = 2 ** 31;

/**
 * The module with its heap views current. In the threaded module another thread may have grown the shared memory
 * during the last call, leaving the views on this thread one size too short; every access goes through here.
 */
export function views(module: InductiveModule): InductiveModule {
  module.refreshHeapViews?.();
  return module;
}

export type ElementType = 'f64' | 'f32' | 'i32' | 'u8';
const BYTES: Record<ElementType, number> = { f64: 8, f32: 4, i32: 4, u8: 1 };

/** One array of a block: its element type and length (0 allowed: such a slot gets address 0, i.e. "absent"). */
export interface Slot {
  type: ElementType;
  length: number;
}

export class HeapBlock {
  readonly #module: InductiveModule;
  readonly #base: number;
  readonly #slots: Slot[];
  readonly addresses: number[];

  /** Allocates room for every slot (8-byte aligned each); throws InductiveError('out_of_memory') if it can't. */
  constructor(module: InductiveModule, slots: Slot[], where: string) {
    this.#module = module;
    this.#slots = slots;
    const offsets: number[] = [];
    let total = 0;
    for (const s of slots) {
      offsets.push(total);
      total += Math.ceil((s.length * BYTES[s.type]) / 8) * 8;
    }
    const base = total < MAX_HEAP_BYTES ? module._malloc(Math.max(total, 8)) : 0;
    if (base === 0) {
      throw new InductiveError(
        'out_of_memory',
        `${where}: cannot allocate ${mib(total)} of wasm memory (it grows up to 2 GiB); use smaller inputs or batches`,
      );
    }
    this.#base = base;
    this.addresses = slots.map((s, i) => (s.length > 0 ? base + (offsets[i] ?? 0) : 0));
  }

  /** Copies `data` into slot `i` (whose type and length the caller declared to match). */
  write(i: number, data: Float32Array | Int32Array | Uint8Array): void {
    if (data.length === 0) return;
    const address = this.addresses[i] ?? 0;
    if (data instanceof Float32Array) views(this.#module).HEAPF32.set(data, address >>> 2);
    else if (data instanceof Int32Array) views(this.#module).HEAP32.set(data, address >>> 2);
    else views(this.#module).HEAPU8.set(data, address);
  }

  /** A JS-owned copy of slot `i` (slice() copies into a fresh ArrayBuffer that memory growth cannot detach). */
  readF32(i: number): Float32Array {
    const start = (this.addresses[i] ?? 0) >>> 2;
    return views(this.#module).HEAPF32.slice(start, start + this.#length(i));
  }

  readF64(i: number): Float64Array {
    const start = (this.addresses[i] ?? 0) >>> 3;
    return views(this.#module).HEAPF64.slice(start, start + this.#length(i));
  }

  readI32(i: number): Int32Array {
    const start = (this.addresses[i] ?? 0) >>> 2;
    return views(this.#module).HEAP32.slice(start, start + this.#length(i));
  }

  readU8(i: number): Uint8Array {
    const start = this.addresses[i] ?? 0;
    return views(this.#module).HEAPU8.slice(start, start + this.#length(i));
  }

  free(): void {
    this.#module._free(this.#base);
  }

  #length(i: number): number {
    return this.#slots[i]?.length ?? 0;
  }
}

/** Runs `body` with a block for `slots`, freeing it afterwards whatever happens. */
export function withBlock<R>(module: InductiveModule, slots: Slot[], where: string, body: (block: HeapBlock) => R): R {
  const block = new HeapBlock(module, slots, where);
  try {
    return body(block);
  } finally {
    block.free();
  }
}

function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

/** A handle that writes its model file into wasm memory (OtkeHandle, GraphitHandle). */
interface SerializingHandle {
  serialize(): boolean;
  bytesAddress(): number;
  bytesSize(): number;
  releaseBytes(): void;
}

/** The model file of a handle, copied out into a JS-owned array (the handle's copy is released either way). */
export function modelFileBytes(module: InductiveModule, handle: SerializingHandle): Uint8Array {
  if (!handle.serialize()) throw lastError(module);
  try {
    const address = handle.bytesAddress();
    return views(module).HEAPU8.slice(address, address + handle.bytesSize());
  } finally {
    handle.releaseBytes();
  }
}
