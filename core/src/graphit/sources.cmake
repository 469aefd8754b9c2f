# The GraphiT encoder, its gradients and training (thesis ch. 3).
target_sources(inductive_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/graphit_config.cpp
  ${CMAKE_CURRENT_LIST_DIR}/graphit_params.cpp
  ${CMAKE_CURRENT_LIST_DIR}/graphit_attention.cpp
  ${CMAKE_CURRENT_LIST_DIR}/graphit_forward.cpp
  ${CMAKE_CURRENT_LIST_DIR}/graphit_backward.cpp
  ${CMAKE_CURRENT_LIST_DIR}/graphit_model.cpp
  ${CMAKE_CURRENT_LIST_DIR}/graphit_train.cpp
  ${CMAKE_CURRENT_LIST_DIR}/graphit_stepper_cpu.cpp
  ${CMAKE_CURRENT_LIST_DIR}/graphit_protocol.cpp
  ${CMAKE_CURRENT_LIST_DIR}/graphit_data.cpp
  ${CMAKE_CURRENT_LIST_DIR}/graphit_report.cpp
  ${CMAKE_CURRENT_LIST_DIR}/graphit_inputs.cpp
  ${CMAKE_CURRENT_LIST_DIR}/graphit_head_fit.cpp
)
