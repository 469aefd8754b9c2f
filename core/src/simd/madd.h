// a * b + c on xsimd batches, as the kernels' inner loops write it (small_gemm.cpp, graphit_attention.cpp,
// lse_kernels_xsimd.h). Natively this is xsimd::fma: a fused multiply-add on FMA ISAs, a multiply and an add on SSE2.
//
// In wasm, SIMD128 has no fused multiply-add, so xsimd::fma is a multiply and an add. Relaxed SIMD's
// f32x4.relaxed_madd is one instruction (the engine fuses it where the CPU can; the result may differ from the
// unfused one in the last bit). The package ships a second pair of modules built with INDUCTIVE_RELAXED_SIMD
// (core/CMakeLists.txt) for engines that validate it. Emscripten 3.1.6's clang 14 emits relaxed SIMD's prototype
// opcode for this builtin (0xfd 0xaf 0x01); wasm/relaxed_simd.mjs rewrites it to the final f32x4.relaxed_madd
// (0xfd 0x85 0x02), which computes operand 0 * operand 1 + operand 2 in the order the builtin takes them.
#pragma once

#include <type_traits>

#include <xsimd/xsimd.hpp>

namespace inductive::simd {

template <class B>
inline B madd(const B& a, const B& b, const B& c) {
#if defined(INDUCTIVE_RELAXED_SIMD)
  if constexpr (std::is_same_v<typename B::value_type, float> && B::size == 4) {
    using R = typename B::register_type;  // __m128: a vector of 4 floats in emscripten's SSE headers
    return B(static_cast<R>(__builtin_wasm_fma_f32x4(static_cast<R>(a), static_cast<R>(b), static_cast<R>(c))));
  }
#endif
  return xsimd::fma(a, b, c);
}

}  // namespace inductive::simd
