// qwen3: the llama block plus a per-head RMSNorm of q and k before rotary;
// NEOX rotary pairing (i, i + d/2); usually tied embeddings.
#include "models/architectures.h"
#include "models/dense_transformer.h"

namespace kazeia {
namespace {

class Qwen3Model final : public DenseTransformer {
 public:
  Status init(const gguf::File& file) {
    KZ_ASSIGN_OR_RETURN(config_, read_common_config(file, "qwen3"));
    config_.rope_pairing = RopePairing::kNeox;
    config_.layers.assign(static_cast<size_t>(config_.n_layer), LayerKind::kAttention);
    KZ_RETURN_IF_ERROR(config_.validate());
    return bind_weights(file, /*qk_norm=*/true);
  }
};

}  // namespace

Result<std::unique_ptr<Model>> load_qwen3(const gguf::File& file) {
  auto model = std::make_unique<Qwen3Model>();
  KZ_RETURN_IF_ERROR(model->init(file));
  return std::unique_ptr<Model>(std::move(model));
}

}  // namespace kazeia
