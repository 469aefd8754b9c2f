# Graph data, kernels on graphs, LapPE and GCKN path features (thesis ch. 3). Owned by the graph-data work.
target_sources(inductive_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/graph.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tu_dataset.cpp
  ${CMAKE_CURRENT_LIST_DIR}/graph_folds.cpp
  ${CMAKE_CURRENT_LIST_DIR}/graph_kernels.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gckn_paths.cpp
  ${CMAKE_CURRENT_LIST_DIR}/graph_cache.cpp
)
