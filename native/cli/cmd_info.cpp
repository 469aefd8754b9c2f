// native/cli/cmd_info.cpp - `inductive info <model.safetensors>`: validate a model file and describe it.
#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "inductive/parallel.h"
#include "inductive/backend_registry.h"
#include "inductive/communicator.h"
#include "inductive/model_file.h"
#include "inductive/sinkhorn.h"
#include "inductive/version.h"
#ifdef INDUCTIVE_HAVE_CUDA
#include "nccl_allreduce.h"
#endif

namespace inductive::cli {

void add_info_command(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("info", "Validate a model file and print its format, config and tensors");
  cmd->add_option("model", *path, "Model file (.safetensors)")->required();
  cmd->callback([path] {
    std::vector<uint8_t> bytes = read_file_bytes(*path);
    try {
      ModelView view = read_model(bytes.data(), bytes.size());
      std::fputs(describe_model(view).c_str(), stdout);
    } catch (const Error& e) {
      throw Error(e.code(), *path + ": " + e.what());
    }
  });
}

void add_capabilities_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("capabilities", "Print what this build and machine can run (JSON): backends, MPI");
  cmd->callback([] {
    nlohmann::json cuda = {{"built", false}, {"available", false}};
#ifdef INDUCTIVE_HAVE_CUDA
    cuda["built"] = true;
    try {
      cuda["device"] = make_backend("cuda")->name();
      cuda["available"] = true;
    } catch (const Error& e) {
      cuda["reason"] = e.what();
    }
    try {
      cuda["nccl"] = cuda::nccl_version();  // what data-parallel GPU training needs
    } catch (const Error& e) {
      cuda["nccl"] = nullptr;
      cuda["nccl_reason"] = e.what();
    }
#endif
    nlohmann::json mpi = {{"built", false}, {"launched_ranks", launched_ranks()}};
#ifdef INDUCTIVE_HAVE_MPI
    mpi["built"] = true;
#endif
    const nlohmann::json out = {{"version", producer()},
                                {"sinkhorn_kernels", sinkhorn_kernel_name()},
                                {"threads", {{"runtime", parallel_runtime()}, {"max", parallel_threads()}}},
                                {"cuda", cuda},
                                {"mpi", mpi}};
    std::printf("%s\n", out.dump().c_str());
  });
}

}  // namespace inductive::cli
