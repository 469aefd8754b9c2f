// native/cli/main.cpp - `inductive <command> [options]`.
//
// Contract (ARCHITECTURE.md): exit 0 on success; exit 2 with one line "error: ..." on stderr for bad input or
// arguments; outputs written atomically, so a failed run leaves no partial file behind.
#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include <CLI/CLI.hpp>

#include "cli_common.h"
#include "cmd_otke.h"
#include "inductive/error.h"
#include "inductive/heap.h"
#include "inductive/model_kinds.h"
#include "inductive/version.h"

#ifdef INDUCTIVE_HAVE_CUDA
namespace inductive::cuda {
void register_cuda_backend();  // native/cuda/backend_registration.cpp
}
#endif
#ifdef INDUCTIVE_HAVE_MPI
#include "mpi_communicator.h"
#endif

namespace {

constexpr int kExitBadInput = 2;
constexpr int kExitInternal = 70;  // EX_SOFTWARE: a bug, not the user's fault

// One line, whatever the message holds, so scripts can `grep ^error:`. Under mpirun with several ranks, the
// failing rank then ends every rank (MPI_Abort) so that none waits forever in a collective for it.
void print_error(const std::string& message) {
  std::string line = message;
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  std::fprintf(stderr, "error: %s\n", line.c_str());
  std::fflush(stderr);
#ifdef INDUCTIVE_HAVE_MPI
  inductive::mpi::abort_if_distributed(kExitBadInput);
#endif
}

}  // namespace

int main(int argc, char** argv) {
  inductive::keep_batch_buffers_in_heap();
  inductive::register_core_model_kinds();  // `info` and every reader check files of core's kinds
#ifdef INDUCTIVE_HAVE_CUDA
  inductive::cuda::register_cuda_backend();
#endif
#ifdef INDUCTIVE_HAVE_MPI
  inductive::mpi::register_mpi_communicator();
#endif
  CLI::App app{"inductive: optimal-transport kernel embeddings, graph transformers and safe sample screening"};
  app.require_subcommand(1);
  app.set_version_flag("--version", inductive::producer());
  app.set_help_all_flag("--help-all", "Print help for every command");
  inductive::cli::add_info_command(app);
  inductive::cli::add_capabilities_command(app);
  inductive::cli::add_sinkhorn_command(app);
  inductive::cli::add_otke_command(app);
  inductive::cli::add_screen_command(app);
  inductive::cli::add_graph_kernel_command(app);
  inductive::cli::add_path_command(app);
  inductive::cli::add_compress_command(app);
  inductive::cli::add_smiles_command(app);
  inductive::cli::add_graphit_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    print_error(e.what() + std::string(" (see --help)"));
    return kExitBadInput;
  } catch (const inductive::Error& e) {
    if (e.code() == inductive::ErrorCode::kInternal) {
      print_error(std::string("internal error, please report it: ") + e.what());
      return kExitInternal;
    }
    print_error(e.what());
    return kExitBadInput;
  } catch (const std::bad_alloc&) {
    print_error("out of memory (the input is too large for this machine)");
    return kExitBadInput;
  } catch (const std::exception& e) {
    print_error(std::string("internal error, please report it: ") + e.what());
    return kExitInternal;
  }
  return 0;
}
