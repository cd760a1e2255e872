// matmul_many: several matrices times the same activations give, job by
// job, the bits of separate matmul calls - on every kernel table this CPU
// runs, for decode-sized and tiled batches, with runs of one type sharing
// a conversion and matrices of other types in between.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "kernel_test_util.h"
#include "kernels/dispatch.h"
#include "kernels/kernels.h"

namespace kazeia::kernels {
namespace {

using testing::make_matrix;
using testing::random_activations;
using testing::TestMatrix;

TEST(MatmulMany, EveryJobEqualsItsOwnMatmul) {
  constexpr int64_t kIn = 512;
  // Q4_0 twice (one group), then Q6_K, then Q4_0 again (a group of its own),
  // then F16: row counts off every strip size.
  const std::vector<TestMatrix> mats = {
      make_matrix(TensorType::Q4_0, kIn, 37, 1), make_matrix(TensorType::Q4_0, kIn, 16, 2),
      make_matrix(TensorType::Q6_K, kIn, 21, 3), make_matrix(TensorType::Q4_0, kIn, 5, 4),
      make_matrix(TensorType::F16, kIn, 9, 5)};
  std::vector<MatrixView> views;
  for (const auto& m : mats) views.push_back(m.view());
  ThreadPool pool(2);
  for (const KernelTable* table : available_kernel_tables()) {
    for (int64_t n_tokens : {1, 3, 5, 40}) {
      SCOPED_TRACE(std::string(table->name) + ", " + std::to_string(n_tokens) + " tokens");
      const auto x = random_activations(static_cast<size_t>(n_tokens * kIn), static_cast<uint32_t>(n_tokens));
      std::vector<std::vector<float>> many(mats.size()), alone(mats.size());
      std::vector<MatmulJob> jobs;
      for (size_t i = 0; i < mats.size(); ++i) {
        many[i].assign(static_cast<size_t>(n_tokens * mats[i].n_out), -1.0f);
        alone[i].assign(many[i].size(), -2.0f);
        jobs.push_back({&views[i], many[i].data()});
        ASSERT_TRUE(matmul_with(*table, views[i], x.data(), n_tokens, alone[i].data(), &pool).ok());
      }
      ASSERT_TRUE(matmul_many_with(*table, jobs, x.data(), n_tokens, &pool).ok());
      for (size_t i = 0; i < mats.size(); ++i)
        EXPECT_EQ(std::memcmp(many[i].data(), alone[i].data(), many[i].size() * sizeof(float)), 0) << "job " << i;
    }
  }
}

TEST(MatmulMany, ErrorsNameTheProblem) {
  const TestMatrix m = make_matrix(TensorType::Q4_0, 64, 4, 1);
  const MatrixView v = m.view();
  std::vector<float> x(64), y(4);
  const MatmulJob null_weight[] = {{&v, y.data()}, {nullptr, y.data()}};
  Status st = matmul_many(null_weight, x.data(), 1);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.to_string().find("null weight"), std::string::npos) << st.to_string();
  const MatmulJob null_output[] = {{&v, nullptr}};
  st = matmul_many(null_output, x.data(), 1);
  EXPECT_NE(st.to_string().find("null activation or output"), std::string::npos) << st.to_string();
  EXPECT_TRUE(matmul_many({}, x.data(), 1).ok());
}

}  // namespace
}  // namespace kazeia::kernels
