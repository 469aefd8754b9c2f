// Unsupervised OTKE learning (thesis ch. 2): anchors by spherical k-means++ on sampled local features, references
// by k-means on embedded features (q = 1) or 2-Wasserstein k-means over sets (q > 1), optionally refined into
// Wasserstein barycenters.
#include <algorithm>
#include <functional>
#include <cmath>
#include <numeric>
#include <random>
#include <unordered_map>

#include "inductive/communicator.h"
#include "inductive/kmeans.h"
#include "inductive/otke.h"
#include "inductive/random.h"
#include "inductive/sinkhorn.h"

namespace inductive {

namespace {

// `take` = min(total, limit) of 0..total-1, drawn uniformly without replacement: a partial Fisher-Yates over a
// virtual 0..total-1 whose displaced entries live in a hash map, so memory is O(take) whatever the total (a
// million sequences have 10^8 k-mers). The same draws as the dense shuffle, hence the same picks.
std::vector<int64_t> sample_indices(int64_t total, int64_t limit, std::mt19937_64& rng) {
  const int64_t take = std::min(total, limit);
  std::unordered_map<int64_t, int64_t> moved;
  moved.reserve(static_cast<size_t>(2 * take));
  auto at = [&](int64_t i) {
    const auto it = moved.find(i);
    return it == moved.end() ? i : it->second;
  };
  std::vector<int64_t> picks(static_cast<size_t>(take));
  for (int64_t t = 0; t < take; ++t) {
    const int64_t j = t + static_cast<int64_t>(uniform_below(rng, static_cast<uint64_t>(total - t)));
    const int64_t vt = at(t), vj = at(j);
    moved[j] = vt;
    moved[t] = vj;
    picks[static_cast<size_t>(t)] = vj;
  }
  return picks;
}

// Where flat index i of rows enumerated set by set (counts[b] rows in set b) lies: (set, row).
struct RowIndex {
  std::vector<int64_t> start;  // prefix sums, size sets + 1
  explicit RowIndex(const std::vector<int64_t>& counts) : start(counts.size() + 1, 0) {
    for (size_t b = 0; b < counts.size(); ++b) start[b + 1] = start[b] + counts[b];
  }
  int64_t total() const { return start.back(); }
  std::pair<int, int64_t> operator()(int64_t i) const {
    const auto b = std::upper_bound(start.begin(), start.end(), i) - start.begin() - 1;
    return {static_cast<int>(b), i - start[b]};
  }
};

// A sample of local features, with each row's position in its set (for the sinusoidal encoding).
struct Sample {
  MatF rows;
  std::vector<int64_t> positions;
};

// Up to `limit` valid rows of a batch, drawn uniformly without replacement (all of them when there are fewer).
Sample sample_rows(const SetBatch& x, int64_t limit, std::mt19937_64& rng) {
  const RowIndex index(std::vector<int64_t>(x.n.begin(), x.n.end()));
  const std::vector<int64_t> picks = sample_indices(index.total(), limit, rng);
  Sample out{MatF(static_cast<Eigen::Index>(picks.size()), x.dim), std::vector<int64_t>(picks.size())};
  for (size_t t = 0; t < picks.size(); ++t) {
    const auto [b, i] = index(picks[t]);
    out.rows.row(static_cast<Eigen::Index>(t)) = CMapF(x.row(b, static_cast<int>(i)), 1, x.dim);
    out.positions[t] = i;
  }
  return out;
}

// The same sample from sequences, building only the sampled k-mers' one-hot features (kmer_features' rows).
Sample sample_kmers(const std::vector<std::vector<int8_t>>& encoded, int alphabet_size, int k, int64_t limit,
                    std::mt19937_64& rng) {
  std::vector<int64_t> counts(encoded.size());
  for (size_t s = 0; s < encoded.size(); ++s) counts[s] = static_cast<int64_t>(encoded[s].size()) - k + 1;
  const RowIndex index(counts);
  const std::vector<int64_t> picks = sample_indices(index.total(), limit, rng);
  const float value = static_cast<float>(1.0 / std::sqrt(static_cast<double>(k)));  // unit-norm k-mers
  Sample out{MatF::Zero(static_cast<Eigen::Index>(picks.size()), k * alphabet_size),
             std::vector<int64_t>(picks.size())};
  for (size_t t = 0; t < picks.size(); ++t) {
    const auto [s, i] = index(picks[t]);
    for (int j = 0; j < k; ++j) out.rows(static_cast<Eigen::Index>(t), j * alphabet_size + encoded[s][i + j]) = value;
    out.positions[t] = i;
  }
  return out;
}

// The fit's whole sets: how many, their lengths, and their model inputs on demand (a chunk at a time).
struct SetSource {
  std::vector<int64_t> lengths;
  std::function<SetBatch(const std::vector<int>&)> inputs;
  int count() const { return static_cast<int>(lengths.size()); }
};

// Sets are embedded a chunk at a time: the Wasserstein k-means and the barycenter read every set, and holding every
// set's embedding at once takes n K floats per set (37 GB for a million 81-letter sequences at K = 128).
constexpr int kSetChunk = 256;

// The sets as pooling sees them: embedded, plus the sinusoidal encoding when the model has it.
SetLoader pooled_sets(const OtkeModel& model, const SetSource& sets) {
  return [&model, &sets](const std::vector<int>& ids) {
    SetBatch psi = model.embed_elements(sets.inputs(ids));
    return model.config.otk.sinusoidal ? add_sinusoidal_encoding(psi) : psi;
  };
}

// Calls visit(t, psi, i) for every set ids[t], psi holding it as its set i, a chunk of sets at a time.
template <typename Visit>
void for_each_pooled_set(const SetLoader& load, const std::vector<int>& ids, Visit visit) {
  for (size_t start = 0; start < ids.size(); start += kSetChunk) {
    const size_t end = std::min(ids.size(), start + kSetChunk);
    const SetBatch psi = load(std::vector<int>(ids.begin() + static_cast<std::ptrdiff_t>(start),
                                               ids.begin() + static_cast<std::ptrdiff_t>(end)));
    for (size_t t = start; t < end; ++t) visit(t, psi, static_cast<int>(t - start));
  }
}

// The rows k-means refits a reference on: every element of the member sets in order, or, when they are more than
// `limit`, `limit` of them drawn uniformly without replacement (in draw order), built without holding the rest.
MatF member_rows(const SetLoader& load, const SetSource& sets, const std::vector<int>& members, int dim, int64_t limit,
                 std::mt19937_64& rng) {
  std::vector<int64_t> counts(members.size());
  for (size_t t = 0; t < members.size(); ++t) counts[t] = sets.lengths[static_cast<size_t>(members[t])];
  const RowIndex index(counts);
  std::vector<int64_t> picks;
  if (index.total() > limit) {
    picks = sample_indices(index.total(), limit, rng);
  } else {
    picks.resize(static_cast<size_t>(index.total()));
    std::iota(picks.begin(), picks.end(), 0);
  }
  // Row t of the result is flat row picks[t]; walk the picks in flat order so each chunk of sets is loaded once.
  std::vector<size_t> order(picks.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return picks[a] < picks[b]; });
  MatF out(static_cast<Eigen::Index>(picks.size()), dim);
  size_t next = 0;
  for_each_pooled_set(load, members, [&](size_t t, const SetBatch& psi, int i) {
    for (; next < order.size() && picks[order[next]] < index.start[t + 1]; ++next)
      out.row(static_cast<Eigen::Index>(order[next])) =
          CMapF(psi.row(i, static_cast<int>(picks[order[next]] - index.start[t])), 1, dim);
  });
  return out;
}

// Entropic OT cost between a set (uniform) and a reference (uniform) under the squared Euclidean cost.
double w2_cost(const SetBatch& psi, int b, const MatF& z, double eps, int iters) {
  const int n = psi.n[b];
  CMapF x(psi.row(b, 0), n, psi.dim);
  MatF c = (-2.0f * (x * z.transpose())).rowwise() + z.rowwise().squaredNorm().transpose();
  c.colwise() += x.rowwise().squaredNorm();
  SinkhornOptions o;
  o.eps = eps;
  o.max_iter = iters;
  return sinkhorn_log<float>(c.data(), n, static_cast<int>(z.rows()), nullptr, nullptr, o).cost_value;
}

// Everything after the sample of local features: anchors (Nystrom), filters (conv), references. `sets` (all of
// them) are read only by the Wasserstein k-means of q > 1 and by the barycenter.
void fit_from_sample(OtkeModel& model, Sample sampled, const SetSource& sets, const OtkeFitOptions& options,
                     std::mt19937_64& rng) {
  MatF& sample = sampled.rows;
  OtkeConfig& c = model.config;
  auto progress = [&](const char* stage, double f) {
    if (options.progress) options.progress(stage, f);
  };

  if (c.embedding == OtkeEmbedding::kNystrom) {
    INDUCTIVE_CHECK(sample.rows() >= c.anchors, ErrorCode::kInvalidArgument, "otke fit: only ", sample.rows(),
                    " local features to learn ", c.anchors, " anchors; use fewer anchors or more data");
    MatF unit = sample;
    for (Eigen::Index r = 0; r < unit.rows(); ++r) unit.row(r) /= std::max(unit.row(r).norm(), 1e-2f);
    KMeansOptions ko;
    ko.k = c.anchors;
    ko.max_iter = options.kmeans_iters;
    ko.spherical = true;
    ko.seed = options.seed;
    ko.communicator = options.communicator;
    ko.progress = options.progress;
    ko.stage = "anchors (spherical k-means)";
    model.nystrom = Nystrom(kmeans(unit, ko).centers, c.nystrom);
    sample = model.nystrom.forward(sample);
  }
  if (c.embedding == OtkeEmbedding::kConv) {
    // He initialisation of the filters (seeded), then the references are fitted on the filtered features.
    const double sd = std::sqrt(2.0 / c.feature_dim());
    model.conv_weight.resize(c.filters, c.feature_dim());
    for (Eigen::Index i = 0; i < model.conv_weight.size(); ++i)
      model.conv_weight.data()[i] = static_cast<float>(sd * standard_normal(rng));
    model.conv_bias = VecF::Zero(c.filters);
    MatF filtered = (sample * model.conv_weight.transpose()).cwiseMax(0.0f);
    sample = std::move(filtered);
  }
  progress("anchors (spherical k-means)", 1.0);

  if (c.pooling != OtkePooling::kOtk) return;
  if (c.otk.sinusoidal) {
    // The references live where pooling sees the elements: embedded, plus the encoding of their positions.
    VecF pe(sample.cols());
    for (Eigen::Index r = 0; r < sample.rows(); ++r) {
      sinusoidal_encoding(sampled.positions[static_cast<size_t>(r)], static_cast<int>(sample.cols()), pe.data());
      sample.row(r) += pe.transpose();
    }
  }
  const int p = c.otk.p, q = c.otk.q;
  INDUCTIVE_CHECK(sample.rows() >= p, ErrorCode::kInvalidArgument, "otke fit: only ", sample.rows(),
                  " local features to learn ", p, " supports; use a smaller p or more data");
  KMeansOptions ko;
  ko.k = p;
  ko.max_iter = options.kmeans_iters;
  ko.seed = options.seed + 1;
  ko.communicator = options.communicator;
  std::vector<MatF> refs;
  const bool barycenter = options.reference_update == OtkeReferenceUpdate::kBarycenter;
  BarycenterOptions bo = options.barycenter;
  bo.communicator = options.communicator;
  const SetLoader load = pooled_sets(model, sets);
  if (q == 1) {
    ko.progress = options.progress;
    ko.stage = "reference (k-means)";
    refs.push_back(kmeans(sample, ko).centers);
    if (barycenter) {
      std::vector<int> all(sets.count());
      std::iota(all.begin(), all.end(), 0);
      refs[0] = wasserstein_barycenter(load, all, std::move(refs[0]), bo);
      progress("reference (Wasserstein barycenter)", 1.0);
    }
  } else {
    // 2-Wasserstein k-means over sets: start from a random partition of the sets, then alternate assigning each set
    // to its nearest reference (entropic W2) and refitting each reference by k-means on its sets' elements.
    const int count = sets.count();
    INDUCTIVE_CHECK(count >= q, ErrorCode::kInvalidArgument, "otke fit: ", count, " sets cannot make q = ", q,
                    " references");
    std::vector<int> order(count);
    std::iota(order.begin(), order.end(), 0);
    shuffle_range(order.begin(), order.end(), rng);
    std::vector<int> assign(count);
    for (int t = 0; t < count; ++t) assign[order[t]] = t % q;
    refs.assign(q, MatF());
    const int dim = static_cast<int>(sample.cols());
    for (int it = 0; it <= options.wkmeans_iters; ++it) {
      for (int r = 0; r < q; ++r) {
        std::vector<int> members;
        for (int b = 0; b < count; ++b)
          if (assign[b] == r) members.push_back(b);
        if (members.empty()) members.push_back(order[r]);  // keep every reference alive
        std::mt19937_64 sub(options.seed + 7 * r + it);
        MatF rows = member_rows(load, sets, members, dim, options.max_samples, sub);
        KMeansOptions kr = ko;
        kr.seed = options.seed + 1 + r;
        if (rows.rows() < p) rows = sample;  // too few elements for p supports: fall back to the global sample
        refs[r] = kmeans(rows, kr).centers;
        if (barycenter) refs[r] = wasserstein_barycenter(load, members, std::move(refs[r]), bo);
      }
      if (it == options.wkmeans_iters) break;
      // Each rank assigns its share of the sets (all of them in one process); the assignments are then summed into
      // everyone's hands, and every rank updates alike.
      const int ranks = options.communicator ? options.communicator->size() : 1;
      const Shard mine = shard_of(count, options.communicator ? options.communicator->rank() : 0, ranks);
      std::vector<int> share(static_cast<size_t>(mine.end - mine.begin));
      std::iota(share.begin(), share.end(), static_cast<int>(mine.begin));
      std::vector<double> nearest(count, 0.0);
      for_each_pooled_set(load, share, [&](size_t t, const SetBatch& psi, int i) {
        int best = 0;
        double best_cost = w2_cost(psi, i, refs[0], c.otk.eps, c.otk.iters);
        for (int r = 1; r < q; ++r) {
          const double cost = w2_cost(psi, i, refs[r], c.otk.eps, c.otk.iters);
          if (cost < best_cost) best_cost = cost, best = r;
        }
        nearest[static_cast<size_t>(share[t])] = best;
      });
      if (ranks > 1) options.communicator->allreduce_sum(nearest.data(), count);
      bool changed = false;
      for (int b = 0; b < count; ++b) {
        changed |= assign[b] != static_cast<int>(nearest[b]);
        assign[b] = static_cast<int>(nearest[b]);
      }
      progress("references (Wasserstein k-means)", double(it + 1) / options.wkmeans_iters);
      if (!changed) break;
    }
  }
  model.pooling = OtkPooling(std::move(refs), c.otk);
  progress("reference (k-means)", 1.0);
}

}  // namespace

void fit_otke_unsupervised(OtkeModel& model, const SetBatch& features, const OtkeFitOptions& options) {
  OtkeConfig& c = model.config;
  c.validate();
  features.validate("otke fit");
  INDUCTIVE_CHECK(features.dim == c.input_width(), ErrorCode::kShapeMismatch, "otke fit: features have dimension ",
                  features.dim, ", expected ", c.input_width());
  INDUCTIVE_CHECK(options.max_samples >= 1, ErrorCode::kInvalidArgument, "otke fit: max_samples must be >= 1");
  std::mt19937_64 rng(options.seed);
  const auto V = static_cast<Eigen::Index>(c.tokens.size());
  if (c.input_type == OtkeInput::kTokens &&
      !(model.token_table.rows() == V && model.token_table.cols() == c.input_dim)) {
    // No pretrained vectors: N(0, 1/E) entries, so a row has norm about 1 and <x, z> / eps stays O(1) for eps ~ 1.
    const double sd = 1.0 / std::sqrt(static_cast<double>(c.input_dim));
    model.token_table.resize(V, c.input_dim);
    for (Eigen::Index i = 0; i < model.token_table.size(); ++i)
      model.token_table.data()[i] = static_cast<float>(sd * standard_normal(rng));
  }
  SetBatch looked_up;  // tokens: the table rows of the indices (other inputs are their own local features)
  if (c.input_type == OtkeInput::kTokens) looked_up = model.local_features(features);
  Sample sample = sample_rows(c.input_type == OtkeInput::kTokens ? looked_up : features, options.max_samples, rng);
  looked_up = SetBatch();
  SetSource sets{std::vector<int64_t>(features.n.begin(), features.n.end()),
                 [&features](const std::vector<int>& ids) { return features.gather(ids); }};
  fit_from_sample(model, std::move(sample), sets, options, rng);
}

void fit_otke_unsupervised(OtkeModel& model, const std::vector<std::string>& sequences,
                           const std::vector<std::string>& names, const OtkeFitOptions& options) {
  const OtkeConfig& c = model.config;
  c.validate();
  // Tokens look their rows up in a table: they go through the features of every sentence.
  if (c.input_type != OtkeInput::kSequence)
    return fit_otke_unsupervised(model, model.sequence_features(sequences, names), options);
  INDUCTIVE_CHECK(!sequences.empty(), ErrorCode::kInvalidArgument, "otke: no sequence given");
  INDUCTIVE_CHECK(options.max_samples >= 1, ErrorCode::kInvalidArgument, "otke fit: max_samples must be >= 1");
  const Alphabet alphabet = Alphabet::from_name(c.alphabet);
  std::vector<std::vector<int8_t>> encoded(sequences.size());
  for (size_t s = 0; s < sequences.size(); ++s) {
    const std::string what = s < names.size() ? "sequence '" + names[s] + "'" : "sequence " + std::to_string(s);
    encoded[s] = encode_sequence(alphabet, sequences[s], what);
    INDUCTIVE_CHECK(static_cast<int>(encoded[s].size()) >= c.kmer, ErrorCode::kInvalidArgument, "k-mers: sequence ",
                    (s < names.size() ? "'" + names[s] + "'" : std::to_string(s)), " is shorter than k: got length ",
                    encoded[s].size(), ", expected >= ", c.kmer);
  }
  std::mt19937_64 rng(options.seed);
  Sample sample = sample_kmers(encoded, alphabet.size(), c.kmer, options.max_samples, rng);
  // Whole sequences (q > 1, barycenter) are turned into k-mer features a chunk at a time, from their letters.
  SetSource sets;
  sets.lengths.resize(encoded.size());
  for (size_t s = 0; s < encoded.size(); ++s) sets.lengths[s] = static_cast<int64_t>(encoded[s].size()) - c.kmer + 1;
  sets.inputs = [&encoded, &c, size = alphabet.size()](const std::vector<int>& ids) {
    std::vector<std::vector<int8_t>> some(ids.size());
    for (size_t t = 0; t < ids.size(); ++t) some[t] = encoded[static_cast<size_t>(ids[t])];
    return kmer_features(some, size, c.kmer);
  };
  fit_from_sample(model, std::move(sample), sets, options, rng);
}

}  // namespace inductive
