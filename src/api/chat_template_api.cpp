// Public chat-template API over text::ChatTemplate; see include/kazeia/chat_template.h.
#include "kazeia/chat_template.h"

#include "format/gguf.h"
#include "text/chat_template.h"

namespace kazeia {

struct ChatTemplateRenderer::Impl {
  text::ChatTemplate tmpl;
};

ChatTemplateRenderer::ChatTemplateRenderer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
ChatTemplateRenderer::~ChatTemplateRenderer() = default;
ChatTemplateRenderer::ChatTemplateRenderer(const ChatTemplateRenderer&) = default;
ChatTemplateRenderer& ChatTemplateRenderer::operator=(const ChatTemplateRenderer&) = default;
ChatTemplateRenderer::ChatTemplateRenderer(ChatTemplateRenderer&&) noexcept = default;
ChatTemplateRenderer& ChatTemplateRenderer::operator=(ChatTemplateRenderer&&) noexcept = default;

Result<ChatTemplateRenderer> ChatTemplateRenderer::from_model(const std::string& model_path) {
  auto file = gguf::File::open(model_path);
  if (!file.ok()) return file.status().with_context("loading the chat template of " + model_path);
  return ChatTemplateRenderer(std::make_shared<const Impl>(Impl{text::ChatTemplate::from_gguf(*file)}));
}

ChatTemplateRenderer ChatTemplateRenderer::from_source(const std::string& source, const std::string& bos_token,
                                                       const std::string& eos_token) {
  return ChatTemplateRenderer(
      std::make_shared<const Impl>(Impl{text::ChatTemplate::from_source(source, bos_token, eos_token)}));
}

Result<std::string> ChatTemplateRenderer::render(const std::string& request_json) const {
  return impl_->tmpl.render_json(request_json);
}

ChatTemplateInfo ChatTemplateRenderer::info() const {
  const text::ChatTemplate& t = impl_->tmpl;
  ChatTemplateInfo info;
  info.family = text::chat_template_family_name(t.family());
  info.fallback = t.is_fallback();
  info.warnings = t.warnings();
  info.bos_token = t.bos_token();
  info.eos_token = t.eos_token();
  info.source = t.source();
  return info;
}

Result<std::string> render_chat_template(const std::string& model_path, const std::string& request_json) {
  KZ_ASSIGN_OR_RETURN(ChatTemplateRenderer renderer, ChatTemplateRenderer::from_model(model_path));
  return renderer.render(request_json);
}

}  // namespace kazeia
