// The KV cache's layout (model_state.h): every K and V value of every
// position and head has a place of its own inside the buffer allocated for
// the context, whatever the span - spans of several tiles, a short last
// span, one span for the whole context - and options that name partial
// tiles, or a state past the address space, are refused.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "models/model_config.h"
#include "models/model_state.h"

namespace kazeia {
namespace {

TEST(KvLayout, EveryValueHasAPlaceOfItsOwnInsideTheBuffer) {
  ModelConfig c;
  c.n_head_kv = 3;
  c.head_dim_k = 40;
  c.head_dim_v = 44;  // K and V of different widths: the larger sets the head stride; V's last panel is narrower
  c.layers = {LayerKind::kAttention};
  int checked = 0;
  for (KvType kv_type : {KvType::kF32, KvType::kF16}) {
    for (int64_t n_ctx : {int64_t{1}, int64_t{100}, int64_t{197}, int64_t{300}}) {
      for (int64_t span : {int64_t{0}, kKvTile, 3 * kKvTile, 8 * kKvTile}) {
        SCOPED_TRACE("n_ctx " + std::to_string(n_ctx) + ", span " + std::to_string(span));
        const ModelState state(c, {.n_ctx = n_ctx, .kv_type = kv_type, .kv_span = span});
        const KvLayout& l = state.kv_layout();
        const int64_t positions = state.padded_ctx();
        ASSERT_GE(l.n_spans * l.span, positions);
        // Exactly the padded context's values: no position lost, none extra.
        ASSERT_EQ(l.values(), positions * c.n_head_kv * c.head_dim_v);
        std::vector<int> k_uses(static_cast<size_t>(l.values())), v_uses(k_uses.size());
        for (int64_t pos = 0; pos < positions; ++pos) {
          for (int64_t g = 0; g < c.n_head_kv; ++g) {
            for (int64_t d = 0; d < c.head_dim_k; ++d) {
              const size_t at = kv_k_at(pos, l, g, c.head_dim_k, d);
              ASSERT_LT(at, k_uses.size()) << "K of position " << pos << ", head " << g << ", channel " << d;
              ++k_uses[at];
            }
            for (int64_t i = 0; i < c.head_dim_v; ++i) {
              const size_t at = kv_v_at(pos, l, g, c.head_dim_v, i);
              ASSERT_LT(at, v_uses.size()) << "V of position " << pos << ", head " << g << ", value " << i;
              ++v_uses[at];
            }
          }
        }
        for (size_t i = 0; i < k_uses.size(); ++i) ASSERT_LE(k_uses[i], 1) << "K place " << i << " shared";
        for (size_t i = 0; i < v_uses.size(); ++i) ASSERT_LE(v_uses[i], 1) << "V place " << i << " shared";
        // A tile's K and its V are one run each, in panels (the attention
        // multiplies panel by panel and prefetches past a panel's end): K's
        // panels hold kKvPanel positions per channel row, V's kKvPanel
        // values per position row (the last panel of V what is left).
        const int64_t dk = c.head_dim_k, dv = c.head_dim_v;
        for (int64_t j0 = 0; j0 < positions; j0 += kKvTile) {
          const size_t k0 = kv_k_at(j0, l, 1, dk, 0), v0 = kv_v_at(j0, l, 1, dv, 0);
          EXPECT_EQ(kv_k_at(j0 + kKvTile - 1, l, 1, dk, dk - 1), k0 + kKvTile * dk - 1);
          EXPECT_EQ(kv_k_at(j0 + kKvPanel + 3, l, 1, dk, 5), k0 + kKvPanel * dk + 5 * kKvPanel + 3);
          EXPECT_EQ(kv_v_at(j0 + kKvTile - 1, l, 1, dv, dv - 1), v0 + kKvTile * dv - 1);
          EXPECT_EQ(kv_v_at(j0 + 3, l, 1, dv, 5), v0 + 3 * kKvPanel + 5);
          EXPECT_EQ(kv_v_at(j0 + 3, l, 1, dv, kKvPanel + 5), v0 + kKvTile * kKvPanel + 3 * (dv - kKvPanel) + 5);
        }
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 32);
}

TEST(KvLayout, AnAutomaticSpanIsAbout2MiBOfOneLayersK) {
  ModelConfig c;
  c.n_head_kv = 8;
  c.head_dim_k = c.head_dim_v = 128;
  c.layers = {LayerKind::kAttention};
  // 8 heads x 128 values x 2 bytes: 1024 positions in 2 MiB.
  const ModelState f16(c, {.n_ctx = 4096, .kv_type = KvType::kF16});
  EXPECT_EQ(f16.kv_layout().span, 1024);
  EXPECT_EQ(f16.kv_layout().n_spans, 4);
  const ModelState f32(c, {.n_ctx = 4096, .kv_type = KvType::kF32});
  EXPECT_EQ(f32.kv_layout().span, 512);
  // A context shorter than that is one span.
  const ModelState small(c, {.n_ctx = 300, .kv_type = KvType::kF16});
  EXPECT_EQ(small.kv_layout().span, 320);
  EXPECT_EQ(small.kv_layout().n_spans, 1);
}

TEST(KvLayout, StateOptionsRejectPartialTiles) {
  const ModelConfig c;
  EXPECT_TRUE(check_state_options(c, {.n_ctx = 100, .kv_span = 0}).ok());
  EXPECT_TRUE(check_state_options(c, {.n_ctx = 100, .kv_span = 3 * kKvTile}).ok());
  const Status odd = check_state_options(c, {.n_ctx = 100, .kv_span = kKvTile + 1});
  EXPECT_FALSE(odd.ok());
  EXPECT_NE(odd.to_string().find("kv_span"), std::string::npos) << odd.to_string();
  EXPECT_FALSE(check_state_options(c, {.n_ctx = 100, .kv_span = -kKvTile}).ok());
  EXPECT_FALSE(check_state_options(c, {.n_ctx = 0}).ok());
}

// Each dimension a file gives is bounded (2^24), their products are not: a
// state whose size would wrap the index arithmetic, or could not exist in
// a 48-bit address space, is an error naming the shapes, not a wrapped
// allocation or an exception.
TEST(KvLayout, StateOptionsRejectStatesPastTheAddressSpace) {
  ModelConfig c;
  c.n_head_kv = 8;
  c.head_dim_k = c.head_dim_v = 128;
  c.layers = {LayerKind::kAttention, LayerKind::kGatedDeltaNet};
  c.ssm_n_v_heads = 16;
  c.ssm_head_dim = 128;
  EXPECT_TRUE(check_state_options(c, {.n_ctx = 1 << 20, .kv_type = KvType::kF16}).ok());
  // 8 heads x 128 values x 2 (K and V) x 2 bytes x 2^37 positions, one layer: 2^49 bytes.
  const Status kv = check_state_options(c, {.n_ctx = int64_t{1} << 37, .kv_type = KvType::kF16});
  EXPECT_EQ(kv.code(), ErrorCode::kOutOfRange) << kv.to_string();
  EXPECT_NE(kv.to_string().find("KV cache"), std::string::npos) << kv.to_string();
  // A context size near the int64 limit must not wrap when rounded up to a tile.
  EXPECT_FALSE(check_state_options(c, {.n_ctx = INT64_MAX}).ok());
  // KV heads x head dim at the per-dimension bound: the product wraps 64 bits.
  ModelConfig wide = c;
  wide.n_head_kv = wide.head_dim_k = wide.head_dim_v = int64_t{1} << 24;
  EXPECT_EQ(check_state_options(wide, {.n_ctx = 1 << 20}).code(), ErrorCode::kOutOfRange);
  // S of 2^24 heads of 2^24 x 2^24: 2^74 values.
  ModelConfig deep = c;
  deep.ssm_n_v_heads = deep.ssm_head_dim = int64_t{1} << 24;
  const Status s = check_state_options(deep, {.n_ctx = 64});
  EXPECT_EQ(s.code(), ErrorCode::kOutOfRange) << s.to_string();
  EXPECT_NE(s.to_string().find("recurrent state"), std::string::npos) << s.to_string();
  // Just under the bound: 2^14 heads of 2^14 x 2^14 floats, one layer, is 2^44 bytes.
  deep.ssm_n_v_heads = deep.ssm_head_dim = int64_t{1} << 14;
  EXPECT_TRUE(check_state_options(deep, {.n_ctx = 64}).ok());
}

}  // namespace
}  // namespace kazeia
