// inductive/graph_cache.h - the per-graph inputs GraphiT needs, computed once per dataset and cached on disk.
//
// For each graph: the kernel K (n x n, inductive/graph_kernels.h), LapPE (n x m) and GCKN path features
// (n x k*n_filters, inductive/gckn_paths.h), each only when asked for; plus, when GCKN features are asked for, the
// fitted GcknPathFeatures (anchors, standardisation) so that a model can embed new graphs the same way.
//
// Cache file (one per dataset and option set): a file of the model-file container (inductive/model_file.h, the
// safetensors layout, so one reader - validated and fuzzed - serves models and caches), model kind "graph-cache":
// every graph's kernel, LapPE and GCKN features concatenated into one tensor per kind, the node counts, the GCKN
// model; the config holds the cache's format version, its key and an FNV-1a checksum of the tensor data (layout in
// graph_cache.cpp). The key is text: format version, dataset_hash(ds) and every option that changes the result
// (kernel, LapPE size, GCKN options and the hash of its training indices). load_or_precompute() uses a file only when
// its checksum, version and key all match; otherwise it recomputes and replaces the file atomically
// (inductive/atomic_file.h), and says why in the result. A cache is never used silently when stale or corrupt.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "inductive/gckn_paths.h"
#include "inductive/graph.h"
#include "inductive/graph_kernels.h"

namespace inductive {

class Communicator;  // inductive/communicator.h

inline constexpr uint32_t kGraphCacheVersion = 2;  // 1: a format of its own; 2: the model-file container

struct GraphPrecomputeOptions {
  bool kernel = true;
  GraphKernelOptions kernel_options;
  int lap_pe_dim = 0;  // 0: no LapPE
  bool gckn = false;
  GcknOptions gckn_options;
  std::vector<int32_t> gckn_train;  // graphs whose paths train the anchors and standardisation (e.g. a fold's train)
  // Data-parallel training: the GCKN fit's work split over the ranks (GcknPathFeatures::fit). Not part of describe():
  // the result is the one-process one.
  Communicator* communicator = nullptr;
  void validate(int n_graphs) const;
  std::string describe() const;  // every option, stable text
};

struct PrecomputedGraph {
  MatF kernel;  // n x n, or 0 x 0 when not asked for
  MatF lap_pe;  // n x lap_pe_dim, or 0 x 0
  MatF gckn;    // n x (path_size * n_filters), or 0 x 0
};

struct PrecomputedDataset {
  std::vector<PrecomputedGraph> graphs;
  GcknPathFeatures gckn;  // fitted when options.gckn
};

// Computes everything for every graph (one eigendecomposition per graph serves both the kernel and LapPE).
PrecomputedDataset precompute_graph_data(const GraphDataset& ds, const GraphPrecomputeOptions& options);

// "inductive-graph-cache v1 dataset=<name>:<hash hex>:<n graphs> <options>".
std::string graph_cache_key(const GraphDataset& ds, const GraphPrecomputeOptions& options);

std::vector<uint8_t> serialise_graph_cache(const std::string& key, const PrecomputedDataset& data,
                                           const GraphPrecomputeOptions& options);
// Throws Error{kBadModelFile} for a truncated or corrupt file (container, checksum, tensors, config) and
// Error{kUnsupportedVersion} for another format version; a different key throws Error{kInvalidArgument}
// ("stale: ..."). `what` names the file in messages.
PrecomputedDataset parse_graph_cache(const uint8_t* bytes, size_t size, const std::string& expected_key,
                                     const GraphPrecomputeOptions& options, const std::string& what);

enum class GraphCacheStatus { kHit, kMissing, kStale, kCorrupt };
const char* graph_cache_status_name(GraphCacheStatus status);

struct CachedGraphData {
  PrecomputedDataset data;
  GraphCacheStatus status = GraphCacheStatus::kMissing;
  std::string reason;  // why the cache was not used (empty on a hit)
};

// Uses `path` when it holds exactly this dataset and these options; otherwise computes and writes it atomically.
// Throws Error{kIo} when the new cache cannot be written.
CachedGraphData load_or_precompute(const std::string& path, const GraphDataset& ds,
                                   const GraphPrecomputeOptions& options);

}  // namespace inductive
