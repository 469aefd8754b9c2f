// native/cli/cli_common.h - what every CLI command shares: registration and argument checks.
#pragma once

#include <CLI/CLI.hpp>

namespace inductive::cli {

// Each command adds its subcommand to the app and sets its callback; errors surface as inductive::Error and are
// turned into "error: ..." + exit 2 by main().
void add_info_command(CLI::App& app);
void add_capabilities_command(CLI::App& app);  // cmd_info.cpp
void add_sinkhorn_command(CLI::App& app);
void add_screen_command(CLI::App& app);
void add_graph_kernel_command(CLI::App& app);  // cmd_graph.cpp
void add_path_command(CLI::App& app);
void add_compress_command(CLI::App& app);
void add_smiles_command(CLI::App& app);
void add_graphit_command(CLI::App& app);

}  // namespace inductive::cli
