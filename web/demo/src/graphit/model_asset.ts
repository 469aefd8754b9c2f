// The committed GraphiT model (data/models/README.md: MUTAG atom types, mutagenicity), served as a static asset:
// Vite copies it into the build under a hashed name and this URL points at it.

import url from '../../../../data/models/graphit-mutag.safetensors?url';

export const MODEL_FILE_NAME = 'graphit-mutag.safetensors';
export const modelUrl: string = url;
