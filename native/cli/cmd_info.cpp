// native/cli/cmd_info.cpp - `inductive info <model.safetensors>`: validate a model file and describe it.
#include <cstdio>
#include <memory>
#include <string>

#include "cli_common.h"
#include "inductive/model_file.h"

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

}  // namespace inductive::cli
