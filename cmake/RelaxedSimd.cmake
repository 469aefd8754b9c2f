# The relaxed-SIMD wasm builds (core/src/simd/madd.h): after a relaxed executable links, wasm/relaxed_simd.mjs
# rewrites clang 14's prototype f32x4.fma opcode to the final f32x4.relaxed_madd and checks the result (against
# llvm-objdump's disassembly, then by validating the module). Used by the package's relaxed modules (wasm/) and the
# relaxed run of the wasm core tests (tests/).
find_program(INDUCTIVE_LLVM_OBJDUMP NAMES llvm-objdump-14 llvm-objdump REQUIRED)
find_program(INDUCTIVE_NODE NAMES node nodejs REQUIRED)

# inductive_rewrite_relaxed(<target> <the .wasm file it links next to itself>)
function(inductive_rewrite_relaxed target wasm)
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${INDUCTIVE_NODE} "${PROJECT_SOURCE_DIR}/wasm/relaxed_simd.mjs" --objdump ${INDUCTIVE_LLVM_OBJDUMP}
      --wasm "${wasm}" --js "$<TARGET_FILE:${target}>"
    VERBATIM)
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS "${PROJECT_SOURCE_DIR}/wasm/relaxed_simd.mjs")
endfunction()
