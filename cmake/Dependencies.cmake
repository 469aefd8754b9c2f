# Third-party dependencies, all from Debian's archive (installed by scripts/setup.sh).
#
# Natively they come through their CMake packages. Under Emscripten, -I/usr/include would replace the wasm
# sysroot, so each header tree is reached through a folder of symlinks in the build directory instead.
if(EMSCRIPTEN)
  set(INDUCTIVE_WASM_INCLUDE "${CMAKE_BINARY_DIR}/wasm-include")
  file(MAKE_DIRECTORY "${INDUCTIVE_WASM_INCLUDE}")
  foreach(pair "xsimd=/usr/include/xsimd" "Eigen=/usr/include/eigen3/Eigen" "nlohmann=/usr/include/nlohmann")
    string(REPLACE "=" ";" kv "${pair}")
    list(GET kv 0 name)
    list(GET kv 1 target)
    if(NOT EXISTS "${target}")
      message(FATAL_ERROR "missing ${target}: run scripts/setup.sh (apt packages libxsimd-dev libeigen3-dev nlohmann-json3-dev)")
    endif()
    file(CREATE_LINK "${target}" "${INDUCTIVE_WASM_INCLUDE}/${name}" SYMBOLIC)
  endforeach()
  add_library(inductive_deps INTERFACE)
  target_include_directories(inductive_deps SYSTEM INTERFACE "${INDUCTIVE_WASM_INCLUDE}")
  # Eigen's x86 intrinsics do not compile for wasm; xsimd's SSE4.1 backend lowers to wasm SIMD128.
  target_compile_definitions(inductive_deps INTERFACE EIGEN_DONT_VECTORIZE)
  target_compile_options(inductive_deps INTERFACE -msimd128 -msse4.1)
  # C++ exceptions, set per core (core/CMakeLists.txt) and carried to whatever links it. The one-thread core uses
  # WebAssembly's own instructions (try/catch; every engine since 2021-22: Chrome 95, Firefox 100, Safari 15.2,
  # Node 17) rather than emscripten's JavaScript emulation, where every call that may throw out of a frame with a
  # destructor or a catch went out to a JS trampoline (invoke_*) and back: 5 % of a GraphiT prediction's samples
  # under Node, and a fifth of the module's size. The threaded core keeps the emulation: in emscripten 3.1.6,
  # -pthread with -fwasm-exceptions catches a thrown std::runtime_error only in catch (...), never by its type
  # (tests/wasm/threaded_core_test.cpp checks that a core Error keeps its type there): Debian's LLVM 14 addresses the
  # unwinder's __wasm_lpad_context as a plain global, emscripten 3.1.6's libunwind-mt declares it thread_local, so
  # landing pads read the selector from the wrong address (bench/README.md, "C++ exceptions as wasm instructions").
  # INDUCTIVE_WASM_EH=js gives
  # the one-thread core the emulation too (a comparison build).
  set(INDUCTIVE_WASM_EH "wasm" CACHE STRING "C++ exceptions in the one-thread wasm core: wasm (instructions) or js")
  set_property(CACHE INDUCTIVE_WASM_EH PROPERTY STRINGS wasm js)
  if(INDUCTIVE_WASM_EH STREQUAL "wasm")
    set(INDUCTIVE_WASM_EXCEPTIONS -fwasm-exceptions)
  elseif(INDUCTIVE_WASM_EH STREQUAL "js")
    set(INDUCTIVE_WASM_EXCEPTIONS -fexceptions)
  else()
    message(FATAL_ERROR "INDUCTIVE_WASM_EH must be wasm or js, got '${INDUCTIVE_WASM_EH}'")
  endif()
  set(INDUCTIVE_WASM_EXCEPTIONS_MT -fexceptions)
elseif(INDUCTIVE_VENDORED_DEPS)
  # A GPU machine without our Debian packages (bench/gpu/check.sh): the headers bench/gpu/vendor_deps.sh copied.
  set(vendored "${INDUCTIVE_VENDORED_DEPS}/include")
  if(NOT EXISTS "${vendored}/Eigen/Core")
    message(FATAL_ERROR "INDUCTIVE_VENDORED_DEPS=${INDUCTIVE_VENDORED_DEPS} has no include/Eigen: run bench/gpu/vendor_deps.sh")
  endif()
  foreach(target Eigen3::Eigen xsimd nlohmann_json::nlohmann_json CLI11::CLI11)
    add_library(${target} INTERFACE IMPORTED GLOBAL)
    set_target_properties(${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${vendored}")
  endforeach()
else()
  find_package(Eigen3 3.4 REQUIRED NO_MODULE)
  # Debian's xsimdTargets.cmake names a bare "xtl" it never defines (links would fail with -lxtl).
  if(NOT TARGET xtl)
    add_library(xtl INTERFACE IMPORTED)
  endif()
  find_package(xsimd REQUIRED)
  find_package(nlohmann_json 3.10 REQUIRED)
endif()
if(NOT EMSCRIPTEN)
  # Native builds, from Debian's packages or the vendored headers alike.
  add_library(inductive_deps INTERFACE)
  target_link_libraries(inductive_deps INTERFACE Eigen3::Eigen xsimd nlohmann_json::nlohmann_json)
  # Eigen's own threading slows small GEMMs on 2 cores; we parallelise over batches instead.
  target_compile_definitions(inductive_deps INTERFACE EIGEN_DONT_PARALLELIZE)
  if(INDUCTIVE_OPENMP)
    find_package(OpenMP)
    if(OpenMP_CXX_FOUND)
      target_link_libraries(inductive_deps INTERFACE OpenMP::OpenMP_CXX)
    endif()
  endif()
endif()
