# inductive_node_threaded(target output_dir [link options...]): `target`, linked against the threaded wasm core
# (inductive_core_mt), runs under Node on worker_threads (pthreads) with the real file system (NODERAWFS), as a .cjs
# script in output_dir. Emscripten writes its worker script next to it ending in .js, and the repository's
# package.json says "type": "module": a package.json there makes that folder CommonJS.
function(inductive_node_threaded target output_dir)
  target_link_libraries(${target} PRIVATE inductive_core_mt)
  target_link_options(${target} PRIVATE -sPTHREAD_POOL_SIZE=8 -Wno-pthreads-mem-growth -sENVIRONMENT=node,worker
    -sNODERAWFS=1 -sALLOW_MEMORY_GROWTH=1 -sEXIT_RUNTIME=1 ${ARGN})
  set_target_properties(${target} PROPERTIES SUFFIX ".cjs" RUNTIME_OUTPUT_DIRECTORY "${output_dir}")
  file(WRITE "${output_dir}/package.json" "{ \"type\": \"commonjs\" }\n")
endfunction()
