// tests/nn/loader_test.cpp — DataLoader: epochs, seeded shuffling, drop_last, batch contents.
#include "nn/loader.h"

#include <algorithm>

#include "test_util.h"

namespace tg::nn {
namespace {

/// Features (n, 2) with row i = (i, 100 + i) and labels (n) with label i = i, so every batch
/// row says which sample it came from.
std::vector<Tensor> numbered(int64_t n) {
  std::vector<float> x;
  std::vector<int64_t> y;
  for (int64_t i = 0; i < n; ++i) {
    x.push_back(static_cast<float>(i));
    x.push_back(static_cast<float>(100 + i));
    y.push_back(i);
  }
  return {tensor(x, {n, 2}), tensor(y, {n})};
}

/// The sample ids of one epoch, batch by batch, checking that each batch's rows agree.
std::vector<std::vector<int64_t>> epoch_ids(DataLoader& loader) {
  std::vector<std::vector<int64_t>> out;
  for (const std::vector<Tensor>& batch : loader) {
    EXPECT_EQ(batch.size(), 2u);
    const auto ids = batch[1].to_vector<int64_t>();
    const auto x = batch[0].to_vector<float>();
    EXPECT_EQ(batch[0].shape(), Shape({static_cast<int64_t>(ids.size()), 2}));
    for (size_t r = 0; r < ids.size(); ++r) {
      EXPECT_EQ(x[2 * r], static_cast<float>(ids[r]));  // the same source row in both
      EXPECT_EQ(x[2 * r + 1], static_cast<float>(100 + ids[r]));
    }
    out.push_back(ids);
  }
  return out;
}

std::vector<int64_t> flat(const std::vector<std::vector<int64_t>>& batches) {
  std::vector<int64_t> out;
  for (const auto& b : batches) out.insert(out.end(), b.begin(), b.end());
  return out;
}

TEST(DataLoaderTest, WithoutShuffleBatchesAreInOrder) {
  Generator gen(0);
  DataLoader loader(numbered(7), {.batch_size = 3, .shuffle = false}, gen);
  EXPECT_EQ(loader.num_samples(), 7);
  EXPECT_EQ(loader.num_batches(), 3);
  const auto batches = epoch_ids(loader);
  EXPECT_EQ(batches, (std::vector<std::vector<int64_t>>{{0, 1, 2}, {3, 4, 5}, {6}}));
  EXPECT_EQ(gen.offset(), 0u);  // no randomness used
}

TEST(DataLoaderTest, EverySampleOncePerEpoch) {
  Generator gen(42);
  DataLoader loader(numbered(23), {.batch_size = 5}, gen);
  EXPECT_EQ(loader.num_batches(), 5);
  for (int epoch = 0; epoch < 3; ++epoch) {
    const auto batches = epoch_ids(loader);
    ASSERT_EQ(batches.size(), 5u);
    for (size_t b = 0; b < 4; ++b) EXPECT_EQ(batches[b].size(), 5u);
    EXPECT_EQ(batches[4].size(), 3u);  // the remainder
    std::vector<int64_t> all = flat(batches);
    std::ranges::sort(all);
    std::vector<int64_t> expected(23);
    for (int64_t i = 0; i < 23; ++i) expected[static_cast<size_t>(i)] = i;
    EXPECT_EQ(all, expected);
  }
}

TEST(DataLoaderTest, ShuffleDiffersPerEpochAndIsReproducible) {
  Generator g1(5);
  Generator g2(5);
  DataLoader a(numbered(50), {.batch_size = 8}, g1);
  DataLoader b(numbered(50), {.batch_size = 8}, g2);
  const auto a1 = flat(epoch_ids(a));
  const auto a2 = flat(epoch_ids(a));
  EXPECT_NE(a1, a2);                  // a fresh permutation each epoch
  EXPECT_EQ(flat(epoch_ids(b)), a1);  // same seed, same batches
  EXPECT_EQ(flat(epoch_ids(b)), a2);
  std::vector<int64_t> in_order(50);
  for (int64_t i = 0; i < 50; ++i) in_order[static_cast<size_t>(i)] = i;
  EXPECT_NE(a1, in_order);
  // The order is exactly tg::randperm's from the same generator state.
  Generator g3(5);
  EXPECT_EQ(a1, randperm(50, g3).to_vector<int64_t>());
  Generator other(6);
  DataLoader c(numbered(50), {.batch_size = 8}, other);
  EXPECT_NE(flat(epoch_ids(c)), a1);
}

TEST(DataLoaderTest, DropLastCounts) {
  struct Case {
    int64_t n, batch;
    bool drop_last;
    int64_t batches;
  };
  // PyTorch: len(DataLoader(range(n), batch_size, drop_last=...)).
  for (const Case c : {Case{10, 3, false, 4}, Case{10, 3, true, 3}, Case{9, 3, false, 3},
                       Case{9, 3, true, 3}, Case{2, 5, false, 1}, Case{2, 5, true, 0},
                       Case{0, 4, false, 0}, Case{0, 4, true, 0}, Case{1, 1, true, 1}}) {
    SCOPED_TRACE(fmt::format("n {} batch {} drop_last {}", c.n, c.batch, c.drop_last));
    Generator gen(1);
    DataLoader loader(numbered(c.n), {.batch_size = c.batch, .drop_last = c.drop_last}, gen);
    EXPECT_EQ(loader.num_batches(), c.batches);
    const auto batches = epoch_ids(loader);
    EXPECT_EQ(static_cast<int64_t>(batches.size()), c.batches);
    for (const auto& b : batches) {
      if (c.drop_last) {
        EXPECT_EQ(static_cast<int64_t>(b.size()), c.batch);
      }
    }
  }
}

TEST(DataLoaderTest, BatchRowsMatchSourceRowsOfEveryTensor) {
  Generator data_gen(9);
  const Tensor images = randn({12, 3, 4}, kFloat32, data_gen);
  const Tensor labels = randint(0, 10, {12}, kInt64, data_gen);
  Generator gen(11);
  DataLoader loader({images, labels}, {.batch_size = 5, .drop_last = true}, gen);
  Generator replay(11);
  const auto order = randperm(12, replay).to_vector<int64_t>();
  int64_t seen = 0;
  for (const std::vector<Tensor>& batch : loader) {
    ASSERT_EQ(batch[0].shape(), Shape({5, 3, 4}));
    ASSERT_EQ(batch[1].shape(), Shape({5}));
    for (int64_t r = 0; r < 5; ++r) {
      const int64_t src = order[static_cast<size_t>(seen + r)];
      EXPECT_EQ(batch[0].select(0, r).to_vector<float>(), images.select(0, src).to_vector<float>());
      EXPECT_EQ(batch[1].at<int64_t>({r}), labels.at<int64_t>({src}));
    }
    seen += 5;
  }
  EXPECT_EQ(seen, 10);
}

TEST(DataLoaderTest, NonContiguousSourcesAndOneTensor) {
  const Tensor base = arange(0.0, 12.0, 1.0, kFloat64).view({3, 4});
  Generator gen(0);
  DataLoader loader({base.t()}, {.batch_size = 3, .shuffle = false}, gen);  // rows are columns
  std::vector<std::vector<double>> rows;
  for (const auto& batch : loader) rows.push_back(batch[0].to_vector<double>());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], (std::vector<double>{0, 4, 8, 1, 5, 9, 2, 6, 10}));
  EXPECT_EQ(rows[1], (std::vector<double>{3, 7, 11}));
}

TEST(DataLoaderTest, Errors) {
  Generator gen(0);
  EXPECT_TG_THROW(DataLoader(numbered(4), {.batch_size = 0}, gen), ValueError, "DataLoader",
                  "batch_size must be positive", "got 0");
  EXPECT_TG_THROW(DataLoader(numbered(4), {.batch_size = -3}, gen), ValueError, "got -3");
  EXPECT_TG_THROW(DataLoader({zeros({10, 784}), zeros({9}, kInt64)}, {.batch_size = 2}, gen),
                  ShapeError, "DataLoader", "tensor 1 has shape (9)", "(10, 784)",
                  "same first dim");
  EXPECT_TG_THROW(DataLoader(std::vector<Tensor>{}, {.batch_size = 2}, gen), ValueError,
                  "DataLoader", "at least one tensor");
  EXPECT_TG_THROW(DataLoader({zeros({3}), scalar_tensor(1.0)}, {.batch_size = 2}, gen), ShapeError,
                  "tensor 1 is 0-d");
  EXPECT_TG_THROW(DataLoader({zeros({3}), Tensor()}, {.batch_size = 2}, gen), ValueError,
                  "tensor 1 is undefined");
}

// ---- datasets: where the samples come from

/// A dataset with no tensors behind it: sample i is the row (i, -i) and the label 3 * i.
/// It counts the batches asked of it, to show the loader gathers each batch in one call.
class Computed final : public Dataset {
 public:
  explicit Computed(int64_t n) : n_(n) {}
  int64_t size() const override { return n_; }
  std::vector<Tensor> get_batch(const Tensor& indices) const override {
    ++calls;
    std::vector<double> x;
    std::vector<int64_t> y;
    for (int64_t i : indices.to_vector<int64_t>()) {
      x.push_back(static_cast<double>(i));
      x.push_back(-static_cast<double>(i));
      y.push_back(3 * i);
    }
    return {tensor(x, {indices.numel(), 2}), tensor(y, {indices.numel()})};
  }
  mutable int calls = 0;

 private:
  int64_t n_;
};

TEST(DatasetTest, LoaderAsksTheDatasetForEachBatchInItsOrder) {
  auto data = std::make_shared<Computed>(10);
  Generator gen(3);
  DataLoader loader(data, {.batch_size = 4}, gen);
  EXPECT_EQ(loader.num_samples(), 10);
  EXPECT_EQ(loader.num_batches(), 3);
  Generator replay(3);
  const std::vector<int64_t> order = randperm(10, replay).to_vector<int64_t>();
  std::vector<int64_t> seen;
  for (const std::vector<Tensor>& batch : loader) {
    ASSERT_EQ(batch.size(), 2u);
    const std::vector<double> x = batch[0].to_vector<double>();
    for (int64_t y : batch[1].to_vector<int64_t>()) seen.push_back(y / 3);
    const std::vector<int64_t> y = batch[1].to_vector<int64_t>();
    ASSERT_EQ(x.size(), 2 * y.size());
    for (size_t r = 0; r < y.size(); ++r) {  // row r of the features is sample y[r] / 3's
      EXPECT_EQ(x[2 * r], static_cast<double>(y[r] / 3));
      EXPECT_EQ(x[2 * r + 1], -static_cast<double>(y[r] / 3));
    }
  }
  EXPECT_EQ(seen, order);
  EXPECT_EQ(data->calls, 3);  // one call per batch, not one per sample
}

TEST(DatasetTest, TensorDatasetGathersRowsOfEveryTensor) {
  const TensorDataset data(numbered(6));
  EXPECT_EQ(data.size(), 6);
  const std::vector<Tensor> batch = data.get_batch(tensor(std::vector<int64_t>{4, 0, 4}));
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_EQ(batch[0].to_vector<float>(), (std::vector<float>{4, 104, 0, 100, 4, 104}));
  EXPECT_EQ(batch[1].to_vector<int64_t>(), (std::vector<int64_t>{4, 0, 4}));
  // The tensors' constructor of DataLoader builds the same dataset: the same batches.
  Generator g1(8);
  Generator g2(8);
  DataLoader from_tensors(numbered(9), {.batch_size = 4}, g1);
  DataLoader from_dataset(std::make_shared<TensorDataset>(numbered(9)), {.batch_size = 4}, g2);
  EXPECT_EQ(epoch_ids(from_tensors), epoch_ids(from_dataset));
}

/// A dataset that gets its batches wrong: `mode` 0 returns no tensors, 1 one row too few,
/// 2 an undefined tensor, 3 a 0-d tensor.
class Broken final : public Dataset {
 public:
  explicit Broken(int mode) : mode_(mode) {}
  int64_t size() const override { return 5; }
  std::vector<Tensor> get_batch(const Tensor& indices) const override {
    switch (mode_) {
      case 0: return {};
      case 1: return {zeros({indices.numel() - 1, 3})};
      case 2: return {zeros({indices.numel()}), Tensor()};
      default: return {scalar_tensor(1.0)};
    }
  }

 private:
  int mode_;
};

TEST(DatasetTest, ABatchOfTheWrongShapeIsAnErrorNamingTheLoader) {
  Generator gen(0);
  auto first_batch = [&](int mode) {
    DataLoader loader(std::make_shared<Broken>(mode), {.batch_size = 2, .shuffle = false}, gen);
    return *loader.begin();
  };
  EXPECT_TG_THROW(first_batch(0), ValueError, "DataLoader", "get_batch returned no tensors",
                  "2 indices");
  EXPECT_TG_THROW(first_batch(1), ShapeError, "DataLoader", "tensor 0 of shape (1, 3)",
                  "batch of 2 indices", "first dim 2");
  EXPECT_TG_THROW(first_batch(2), ShapeError, "tensor 1 of shape (undefined)");
  EXPECT_TG_THROW(first_batch(3), ShapeError, "tensor 0 of shape ()");
}

TEST(DatasetTest, Errors) {
  Generator gen(0);
  EXPECT_TG_THROW(DataLoader(std::shared_ptr<const Dataset>(), {.batch_size = 2}, gen), ValueError,
                  "DataLoader", "dataset is null");
  EXPECT_TG_THROW(DataLoader(std::make_shared<Computed>(4), {.batch_size = 0}, gen), ValueError,
                  "DataLoader", "batch_size must be positive", "got 0");
  EXPECT_TG_THROW(TensorDataset({zeros({10, 784}), zeros({9}, kInt64)}), ShapeError,
                  "TensorDataset", "tensor 1 has shape (9)", "(10, 784)");
  EXPECT_TG_THROW(TensorDataset(std::vector<Tensor>{}), ValueError, "TensorDataset",
                  "at least one tensor");
  EXPECT_TG_THROW(TensorDataset({scalar_tensor(1.0)}), ShapeError, "TensorDataset",
                  "tensor 0 is 0-d");
  const TensorDataset data(numbered(3));
  EXPECT_TG_THROW(data.get_batch(tensor(std::vector<int64_t>{1, 3})), IndexError, "index_select",
                  "3");
}

}  // namespace
}  // namespace tg::nn

namespace tg::nn {
namespace {

// ---- sharded for data parallelism (num_replicas, rank)

/// Each rank's epoch, from loaders whose generators share one seed (as on every rank).
std::vector<std::vector<std::vector<int64_t>>> shard_epochs(int64_t n, int64_t p, int64_t batch,
                                                            bool drop_last, bool shuffle = true) {
  std::vector<std::vector<std::vector<int64_t>>> out;
  for (int64_t r = 0; r < p; ++r) {
    Generator gen(7);
    DataLoader loader(numbered(n),
                      {.batch_size = batch,
                       .shuffle = shuffle,
                       .drop_last = drop_last,
                       .num_replicas = p,
                       .rank = r},
                      gen);
    out.push_back(epoch_ids(loader));
  }
  return out;
}

TEST(LoaderShardTest, RanksTakeEveryPthSampleOfTheSharedOrder) {
  // Unshuffled, 6 samples over 2 ranks: rank 0 gets 0 2 4, rank 1 gets 1 3 5.
  const auto e = shard_epochs(6, 2, 2, false, /*shuffle=*/false);
  using V = std::vector<std::vector<int64_t>>;
  EXPECT_EQ(e[0], (V{{0, 2}, {4}}));
  EXPECT_EQ(e[1], (V{{1, 3}, {5}}));
}

TEST(LoaderShardTest, ShardsAreDisjointAndTogetherAreTheSingleLoadersBatches) {
  // 24 samples, 3 ranks of batch 2 = one loader of batch 6 over the same order.
  const auto shards = shard_epochs(24, 3, 2, false);
  Generator gen(7);
  DataLoader whole(numbered(24), {.batch_size = 6}, gen);
  const auto single = epoch_ids(whole);
  ASSERT_EQ(single.size(), 4u);
  std::vector<int64_t> seen;
  for (size_t k = 0; k < single.size(); ++k) {
    std::vector<int64_t> together;
    for (const auto& rank_epoch : shards) {
      ASSERT_EQ(rank_epoch.size(), single.size());
      together.insert(together.end(), rank_epoch[k].begin(), rank_epoch[k].end());
    }
    std::vector<int64_t> expected = single[k];
    std::ranges::sort(together);
    std::ranges::sort(expected);
    EXPECT_EQ(together, expected) << "global batch " << k;
    seen.insert(seen.end(), together.begin(), together.end());
  }
  std::ranges::sort(seen);
  EXPECT_EQ(std::ranges::adjacent_find(seen), seen.end()) << "a sample on two ranks";
  EXPECT_EQ(seen.size(), 24u);
}

TEST(LoaderShardTest, AnUnevenEpochIsPaddedFromItsStartOrCutWithDropLast) {
  // 7 samples over 2 ranks: padded to 8 by repeating the first sample of the order, so both
  // ranks run 4 samples; with drop_last cut to 6, 3 each.
  using V = std::vector<std::vector<int64_t>>;
  const auto padded = shard_epochs(7, 2, 4, false, /*shuffle=*/false);
  EXPECT_EQ(padded[0], (V{{0, 2, 4, 6}}));
  EXPECT_EQ(padded[1], (V{{1, 3, 5, 0}}));
  const auto cut = shard_epochs(7, 2, 2, true, /*shuffle=*/false);
  EXPECT_EQ(cut[0], (V{{0, 2}}));  // 3 samples each, and drop_last drops the short batch
  EXPECT_EQ(cut[1], (V{{1, 3}}));
  Generator gen(0);
  DataLoader loader(numbered(7), {.batch_size = 2, .num_replicas = 2, .rank = 1}, gen);
  EXPECT_EQ(loader.num_samples(), 4);
  EXPECT_EQ(loader.num_batches(), 2);
  // More ranks than samples: each still gets one (repeats), as PyTorch's sampler does.
  const auto tiny = shard_epochs(2, 3, 1, false, /*shuffle=*/false);
  EXPECT_EQ(tiny[2], (V{{0}}));
}

TEST(LoaderShardTest, ARankOutsideTheReplicasIsAValueError) {
  Generator gen(0);
  EXPECT_TG_THROW(DataLoader(numbered(4), {.batch_size = 2, .num_replicas = 2, .rank = 2}, gen),
                  ValueError, "DataLoader", "rank 2 of num_replicas 2");
  EXPECT_TG_THROW(DataLoader(numbered(4), {.batch_size = 2, .num_replicas = 0, .rank = 0}, gen),
                  ValueError, "num_replicas 0");
}

}  // namespace
}  // namespace tg::nn
