// native/cli/cmd_graph.cpp - `inductive graph-kernel`: the GraphiT kernel (and optionally LapPE) of one graph of a
// TU dataset, NPY out. For inspecting inputs and for the scipy oracle (tests/oracle/test_graph_kernels_scipy.py).
#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "inductive/atomic_file.h"
#include "inductive/graph_kernels.h"
#include "inductive/npy.h"

namespace inductive::cli {
namespace {

// The kernel flags' defaults are core's (a default-constructed GraphKernelOptions).
const GraphKernelOptions kernel_defaults{};

struct GraphKernelArgs {
  std::string tu, name, kernel = graph_kernel_type_name(kernel_defaults.type), out, out_pe;
  int graph = 0;
  double beta = kernel_defaults.beta, gamma = kernel_defaults.gamma;
  int p = kernel_defaults.p, pe_dim = 0;
  bool zero_diagonal = kernel_defaults.zero_diagonal;
};

void run(const GraphKernelArgs& args) {
  const GraphDataset ds = read_tu_dataset(args.tu, args.name);
  INDUCTIVE_CHECK(args.graph >= 0 && args.graph < ds.n_graphs(), ErrorCode::kInvalidArgument, "--graph ", args.graph,
                  " is out of range: expected 0..", ds.n_graphs() - 1, " (", args.name, " has ", ds.n_graphs(),
                  " graphs)");
  INDUCTIVE_CHECK(args.out_pe.empty() || args.pe_dim >= 1, ErrorCode::kInvalidArgument,
                  "--out-pe needs --pe-dim >= 1: got ", args.pe_dim);
  GraphKernelOptions options;
  options.type = parse_graph_kernel_type(args.kernel);
  options.beta = args.beta;
  options.gamma = args.gamma;
  options.p = args.p;
  options.zero_diagonal = args.zero_diagonal;
  options.validate();
  const Graph& g = ds.graphs[args.graph];
  const GraphSpectrum spectrum = graph_spectrum(g);
  const MatF k = graph_kernel(spectrum, options);
  const int64_t n = g.n_nodes;
  std::vector<std::pair<std::string, std::vector<uint8_t>>> outputs;
  outputs.emplace_back(args.out, npy_bytes(k.data(), {n, n}));
  if (!args.out_pe.empty()) {
    const MatF pe = laplacian_pe(spectrum, args.pe_dim);
    outputs.emplace_back(args.out_pe, npy_bytes(pe.data(), {n, static_cast<int64_t>(args.pe_dim)}));
  }
  write_files_atomic(outputs);
  nlohmann::json summary = {{"dataset", args.name},   {"graph", args.graph},          {"n_nodes", g.n_nodes},
                            {"n_edges", g.n_edges()}, {"kernel", options.describe()}, {"label", g.label}};
  std::printf("%s\n", summary.dump().c_str());
}

}  // namespace

void add_graph_kernel_command(CLI::App& app) {
  auto args = std::make_shared<GraphKernelArgs>();
  CLI::App* cmd = app.add_subcommand("graph-kernel", "Kernel on one graph of a TU dataset (GraphiT), .npy out");
  cmd->add_option("--tu", args->tu, "TU dataset directory (holds NAME_A.txt, NAME_graph_indicator.txt, ...)")
      ->required();
  cmd->add_option("--name", args->name, "Dataset name, the prefix of its files (e.g. MUTAG)")->required();
  cmd->add_option("--graph", args->graph, "0-based graph index in file order")->capture_default_str();
  cmd->add_option("--kernel", args->kernel, "diffusion | pstep | adjacency")->capture_default_str();
  cmd->add_option("--beta", args->beta, "Diffusion: exp(-beta L)")->capture_default_str();
  cmd->add_option("--gamma", args->gamma, "p-step: (I - gamma L)^p")->capture_default_str();
  cmd->add_option("--p", args->p, "p-step: number of steps")->capture_default_str();
  cmd->add_flag("--zero-diagonal", args->zero_diagonal, "Set K_ii = 0");
  cmd->add_option("--out", args->out, "Output kernel (n x n), .npy float32")->required();
  cmd->add_option("--pe-dim", args->pe_dim, "LapPE dimension m for --out-pe");
  cmd->add_option("--out-pe", args->out_pe, "Output LapPE (n x m), .npy float32");
  cmd->callback([args] { run(*args); });
}

}  // namespace inductive::cli
