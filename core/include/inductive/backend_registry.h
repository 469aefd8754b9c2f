// inductive/backend_registry.h - making a backend by name ("cpu", "cuda", "cuda:<device>").
//
// Front ends (the CLI, benches, tests) call make_backend; the methods never do (they take a Backend*), which is
// why this lives apart from the interface (inductive/backend.h): its implementation knows every method's CPU code
// and sits on core's top floor (core/src/backends). Asking for a backend this build or machine lacks throws
// Error{kBackend}; there is no silent CPU fallback.
#pragma once

#include <memory>
#include <string>

#include "inductive/backend.h"
#include "inductive/sinkhorn.h"  // what Backend::sinkhorn_log takes

namespace inductive {

std::unique_ptr<Backend> make_cpu_backend();

// "cpu" or "cuda" / "cuda:<device>". CUDA is available only when the CLI/native build registered it
// (see register_backend_factory); otherwise Error{kBackend} says why. A bare "cuda" is cuda:0, or, in a process an MPI
// launcher started with several ranks, cuda:<local rank> (one GPU per rank on each host, launched_local_rank()).
std::unique_ptr<Backend> make_backend(const std::string& spec);

// Native builds with CUDA register the "cuda" factory at start-up (core itself has no CUDA code).
using BackendFactory = std::unique_ptr<Backend> (*)(int device);
void register_backend_factory(const std::string& kind, BackendFactory factory);

}  // namespace inductive
