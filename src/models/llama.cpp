// llama: RMSNorm -> attention -> residual -> RMSNorm -> SwiGLU -> residual.
// Rotary on adjacent pairs (GGUF converters permute Q/K rows for that);
// untied or tied output. (stories260K, SmolLM2, Llama 2/3.)
#include "models/architectures.h"
#include "models/dense_transformer.h"

namespace kazeia {
namespace {

class LlamaModel final : public DenseTransformer {
 public:
  Status init(const gguf::File& file) {
    KZ_ASSIGN_OR_RETURN(config_, read_common_config(file, "llama"));
    config_.rope_pairing = RopePairing::kAdjacent;
    config_.layers.assign(static_cast<size_t>(config_.n_layer), LayerKind::kAttention);
    KZ_RETURN_IF_ERROR(config_.validate());
    return bind_weights(file, /*qk_norm=*/false);
  }
};

}  // namespace

Result<std::unique_ptr<Model>> load_llama(const gguf::File& file) {
  auto model = std::make_unique<LlamaModel>();
  KZ_RETURN_IF_ERROR(model->init(file));
  return std::unique_ptr<Model>(std::move(model));
}

}  // namespace kazeia
