// The committed OTKE model (data/models/README.md), served as a static asset: Vite copies it into the build under
// a hashed name and this URL points at it, so the page works from plain files with no server logic.

import url from '../../../../data/models/otke-promoters-ecoli.safetensors?url';

export const MODEL_FILE_NAME = 'otke-promoters-ecoli.safetensors';
export const modelUrl: string = url;
