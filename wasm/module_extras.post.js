// Inside the module's scope (--post-js), for the TS layer.

// Re-reads the heap views after a core call. In the threaded module another thread may have grown the shared
// memory; this thread's HEAP* views then keep the old length until something notices (emscripten checks only on
// its own JS paths).
Module['refreshHeapViews'] = function () {
  if (wasmMemory.buffer != buffer) updateGlobalBufferAndViews(wasmMemory.buffer);
};

// Stops the pool's Web Workers (Inductive.dispose). The core is first capped at one thread, so models that outlive
// the instance keep working, on the calling thread, and never wait for a worker that is gone.
Module['terminateThreads'] = function () {
  Module['setThreads'](1);
  if (typeof PThread != 'undefined') PThread.terminateAllThreads();
};
