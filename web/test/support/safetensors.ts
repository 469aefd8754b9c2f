// Writes model files by the format spec alone (core/include/inductive/model_file.h), independently of the
// core's writer: u64 LE header length, a JSON header space-padded to a multiple of 8, then raw LE data.

export interface SpecTensor {
  name: string;
  dtype: 'F32' | 'I32';
  shape: number[];
  data: Float32Array | Int32Array;
}

export interface SpecFile {
  metadata: Record<string, string>;
  tensors: SpecTensor[];
}

export function inductiveMetadata(model: string, config: object, formatVersion = 1): Record<string, string> {
  return {
    format: 'inductive',
    format_version: String(formatVersion),
    model,
    config: JSON.stringify(config),
    producer: 'inductive 0.1.0 test',
  };
}

export function safetensorsBytes(file: SpecFile): Uint8Array {
  const header: Record<string, unknown> = { __metadata__: file.metadata };
  let offset = 0;
  for (const t of file.tensors) {
    header[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + t.data.byteLength] };
    offset += t.data.byteLength;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - ((8 + json.length) % 8)) % 8);
  const headerBytes = new TextEncoder().encode(json);
  const out = new Uint8Array(8 + headerBytes.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(headerBytes.length), true);
  out.set(headerBytes, 8);
  let at = 8 + headerBytes.length;
  for (const t of file.tensors) {
    out.set(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength), at);
    at += t.data.byteLength;
  }
  return out;
}
