// (b) A Vite app whose page runs the package in a module Worker, the way web/README.md tells users to.
const status = document.getElementById('status');
const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
worker.onmessage = ({ data }) => {
  status.textContent = JSON.stringify(data);
  document.body.dataset.done = data.ok ? 'ok' : 'error';
};
worker.onerror = (e) => {
  status.textContent = JSON.stringify({ ok: false, error: `worker error: ${e.message}` });
  document.body.dataset.done = 'error';
};
worker.postMessage({
  model: new URL('./otke.safetensors', document.baseURI).href,
  graphitModel: new URL('./graphit.safetensors', document.baseURI).href,
});
